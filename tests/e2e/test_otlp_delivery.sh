#!/usr/bin/env bash
# test_otlp_delivery.sh: metric points, log records and spans emitted into
# the telemetry store reach a real OTLP receiver (tests/receiver, decoded by
# OpenTelemetry's own definitions) exactly once, over gRPC and over
# HTTP/protobuf, plain and gzip, with headers, and split below the
# receiver's maximum message size.
. "$(dirname "$0")/otlp_lib.sh"

N=3000; NL=300; NS=300

for t in grpc http; do
  rcv_start "$t-plain"
  OTEL_EXPORTER_OTLP_HEADERS="x-test-key=abc%20def" \
    send "$t" "$TMP/$t.json" --points $N --logs $NL --spans $NS --windows 3
  exactly_once "$t" metrics $N
  exactly_once "$t" logs $NL
  exactly_once "$t" traces $NS
  [ "$(stat "$TMP/$t.json" metrics records)" = $N ] \
    || fail "$t: exporter counted $(stat "$TMP/$t.json" metrics records) records"
  # Requests the exporter counts as delivered = requests decoded.
  sent=$(jq '[.metrics.requests, .logs.requests, .traces.requests] | add' "$TMP/$t.json")
  got=$(grep -c . "$RCV_OUT")
  [ "$sent" = "$got" ] || fail "$t: exporter sent $sent requests, receiver decoded $got"
  svc=$(jq -r 'select(.signal=="metrics") | .request.resourceMetrics[0].resource.attributes[] | select(.key=="service.name") | .value.stringValue' "$RCV_OUT" | sort -u)
  [ "$svc" = otlp-e2e ] || fail "$t: service.name is '$svc'"
  hdr=$(jq -r '.headers["x-test-key"]' "$RCV_OUT" | sort -u)
  [ "$hdr" = "abc def" ] || fail "$t: header x-test-key arrived as '$hdr'"
  if [ "$t" = grpc ]; then
    enc=$(jq -r '.grpc_encoding' "$RCV_OUT" | sort -u)
    [ "$enc" = identity ] || fail "grpc plain: grpc-encoding '$enc'"
    # Keepalive within a default collector's policy: no pings at all in a
    # short run (pings come every 6 minutes, and only during calls).
    curl -sf "http://127.0.0.1:$RCV_CTL/stats" >"$TMP/stats.json"
    pings=$(jq .pings "$TMP/stats.json")
    [ "$pings" = 0 ] || fail "grpc: client sent $pings HTTP/2 pings"
  fi
  if [ "$t" = http ]; then
    ct=$(jq -r '.headers["content-type"]' "$RCV_OUT" | sort -u)
    [ "$ct" = application/x-protobuf ] || fail "http: content-type '$ct'"
  fi
  pass "$t: plain delivery"

  rcv_start "$t-gzip"
  OTEL_EXPORTER_OTLP_COMPRESSION=gzip \
    send "$t" "$TMP/$t-gz.json" --points $N --logs $NL --spans $NS --windows 2
  exactly_once "$t gzip" metrics $N
  exactly_once "$t gzip" logs $NL
  exactly_once "$t gzip" traces $NS
  if [ "$t" = http ]; then
    nz=$(jq -r 'select(.compressed != true)' "$RCV_OUT" | grep -c . || true)
    [ "$nz" = 0 ] || fail "http gzip: $nz requests not gzip-encoded"
    # gzip shrinks the repetitive test payload: wire bytes < protobuf bytes.
    wire=$(jq -s 'map(.bytes) | add' "$RCV_OUT")
    raw=$(jq '[.metrics.bytes, .logs.bytes, .traces.bytes] | add' "$TMP/$t-gz.json")
    [ "$wire" -lt "$raw" ] || fail "http gzip: $wire wire bytes >= $raw"
  else
    enc=$(jq -r '.grpc_encoding' "$RCV_OUT" | sort -u)
    [ "$enc" = gzip ] || fail "grpc gzip: grpc-encoding '$enc'"
  fi

  # A window larger than the receiver accepts is split below the limit.
  rcv_start "$t-split" --max-recv-bytes 40000
  send "$t" "$TMP/$t-split.json" --points 20000 --otlp-max-message-bytes 32768
  exactly_once "$t split" metrics 20000
  reqs=$(jq -r 'select(.signal=="metrics") | .bytes' "$RCV_OUT" | grep -c .)
  big=$(jq -r 'select(.bytes > 32768) | .bytes' "$RCV_OUT" | grep -c . || true)
  [ "$reqs" -gt 1 ] && [ "$big" = 0 ] \
    || fail "$t split: $reqs requests, $big above 32768 bytes"
  [ "$(stat "$TMP/$t-split.json" metrics dropped_failed)" = 0 ] \
    || fail "$t split: requests failed"
done

# IPv6 literal endpoints (when the machine has ::1).
if python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
  rcv_start v6 --host ::1
  for t in grpc http; do
    port=$RCV_HTTP proto=http/protobuf
    [ $t = grpc ] && { port=$RCV_GRPC; proto=grpc; }
    OTEL_EXPORTER_OTLP_PROTOCOL=$proto OTEL_EXPORTER_OTLP_ENDPOINT="http://[::1]:$port" \
      timeout 60 "$SEND" --points 100 >"$TMP/v6-$t.json" 2>"$TMP/v6-$t.err" \
      || fail "$t IPv6: otlp_send failed"
    [ "$(stat "$TMP/v6-$t.json" metrics requests)" = 1 ] || fail "$t IPv6: not delivered"
  done
  [ "$(received_ids metrics | grep -c .)" = 200 ] || fail "IPv6: $(received_ids metrics | grep -c .) of 200 points"
else
  echo "note: no IPv6 loopback, IPv6 case skipped"
fi
rcv_stop
finish
