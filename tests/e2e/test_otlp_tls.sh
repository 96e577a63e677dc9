#!/usr/bin/env bash
# test_otlp_tls.sh: OTLP over TLS to a receiver with a self-signed
# certificate (made here with openssl), over gRPC and HTTP/protobuf:
# trusted through OTEL_EXPORTER_OTLP_CERTIFICATE (and, for gRPC, the
# reference flags --otelcol-ssl --otelcol-certificate-store) every record
# arrives exactly once; not trusted, nothing is accepted, every record is
# counted as dropped and the exit stays bounded.
. "$(dirname "$0")/otlp_lib.sh"
command -v openssl >/dev/null || { echo "SKIP: openssl not installed"; exit 77; }

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1
TLSARGS=(--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem")
N=1000

# tls_send TRANSPORT OUT [args...]: like send, but to https://localhost.
tls_send() {
  local t=$1 out=$2; shift 2
  local port=$RCV_HTTP proto=http/protobuf
  [ "$t" = grpc ] && { port=$RCV_GRPC; proto=grpc; }
  local rc=0
  OTEL_EXPORTER_OTLP_PROTOCOL=$proto \
  OTEL_EXPORTER_OTLP_ENDPOINT=https://localhost:$port \
    timeout 60 "$SEND" "$@" >"$out" 2>"$out.err" || rc=$?
  [ $rc = 0 ] || { cat "$out.err"; fail "$t: otlp_send exited with $rc"; }
}

for t in grpc http; do
  rcv_start "$t-tls" "${TLSARGS[@]}"
  OTEL_EXPORTER_OTLP_CERTIFICATE=$TMP/cert.pem \
    tls_send "$t" "$TMP/$t-ok.json" --points $N --logs 100 --windows 2
  exactly_once "$t tls" metrics $N
  exactly_once "$t tls" logs 100

  rcv_start "$t-untrusted" "${TLSARGS[@]}"
  start=$(mono_ms)
  EL_OTLP_SHUTDOWN_TIMEOUT=1000 \
    tls_send "$t" "$TMP/$t-bad.json" --points $N --windows 2
  ms=$(( $(mono_ms) - start ))
  got=$(grep -c . "$RCV_OUT" || true)
  d=$(jq '.metrics | .dropped_failed + .dropped_shutdown' "$TMP/$t-bad.json")
  [ "$got" = 0 ] && [ "$d" = $N ] && [ "$ms" -lt 5000 ] \
    || fail "$t untrusted: $got requests accepted, $d dropped, $ms ms"
  pass "$t untrusted certificate: nothing sent, $d records counted, $ms ms"
done

rcv_start grpc-flags "${TLSARGS[@]}"
rc=0
timeout 60 "$SEND" --otelcol-host localhost --otelcol-port "$RCV_GRPC" \
  --otelcol-ssl --otelcol-certificate-store "$TMP/cert.pem" \
  --service-name flagged --points $N >"$TMP/flags.json" 2>"$TMP/flags.err" \
  || rc=$?
[ $rc = 0 ] || { cat "$TMP/flags.err"; fail "flags: exit $rc"; }
exactly_once "grpc --otelcol-ssl" metrics $N
svc=$(jq -r '.request.resourceMetrics[0].resource.attributes[] | select(.key=="service.name") | .value.stringValue' "$RCV_OUT" | sort -u)
[ "$svc" = flagged ] || fail "--service-name gave '$svc'"
rcv_stop

# TLS asked for, the receiver's gRPC port plaintext: gRPC core's own line
# per failed handshake (about one a second, "E1203 ...
# ssl_transport_security.cc ... Handshake failed") must not reach stderr;
# one warning names TLS as the likely cause, and the records are counted.
rcv_start grpc-plain
rc=0
EL_OTLP_SHUTDOWN_TIMEOUT=3000 timeout 60 "$SEND" --otelcol-host 127.0.0.1 \
  --otelcol-port "$RCV_GRPC" --otelcol-ssl --points $N --windows 2 \
  >"$TMP/plain.json" 2>"$TMP/plain.err" || rc=$?
[ $rc = 0 ] || { cat "$TMP/plain.err"; fail "plain: exit $rc"; }
raw=$(grep -c 'ssl_transport_security\|^[EIW][0-9]\{4\} ' "$TMP/plain.err" || true)
tls=$(grep -c 'TLS handshake failed.*does the collector serve TLS' "$TMP/plain.err" || true)
d=$(jq '.metrics | .dropped_failed + .dropped_shutdown' "$TMP/plain.json")
if [ "$raw" = 0 ] && [ "$tls" = 1 ] && [ "$d" = $N ]; then
  pass "grpc --otelcol-ssl to a plaintext port: one TLS warning, $d records counted"
else
  sed -n 1,20p "$TMP/plain.err"
  fail "plain: $raw raw gRPC lines, $tls TLS warnings (want 0 and 1), $d of $N counted"
fi

# The other mix-up: OTLP/HTTP sent to the gRPC port. curl reads the HTTP/2
# server's answer as "HTTP/0.9"; the error names the likely cause, and the
# daemon ends with "some telemetry could not be delivered" although its
# queues are empty (every request was refused at once), status 0.
LOG=$SRC/tests/data/eventlogs/ghc-9.0/heapy-hT.eventlog
rc=0
OTEL_METRICS_EXPORTER=otlp OTEL_LOGS_EXPORTER=otlp \
  timeout 60 "$BUILD/eventlog-live-otelcol" --eventlog-file "$LOG" \
  --otlp-endpoint "http://127.0.0.1:$RCV_GRPC" --otlp-shutdown-timeout 3000 \
  >/dev/null 2>"$TMP/mix.err" || rc=$?
if [ $rc = 0 ] && grep -q 'is this a gRPC port?' "$TMP/mix.err" &&
   grep -q 'some telemetry could not be delivered' "$TMP/mix.err"; then
  pass "http to the gRPC port: the error names it; 'could not be delivered'"
else
  sed -n 1,20p "$TMP/mix.err"
  fail "http to the gRPC port: status $rc, no hint or no delivery warning"
fi
rcv_stop
finish
