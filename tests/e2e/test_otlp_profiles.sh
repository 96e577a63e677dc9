#!/usr/bin/env bash
# test_otlp_profiles.sh: profile samples reach the receiver exactly once
# over gRPC and HTTP/protobuf (also after UNAVAILABLE answers). The
# receiver's OpenTelemetry package has no profiles messages, so it keeps
# the raw request and decodes it with `protoc --decode` against our
# proto/ (ExportProfilesServiceRequest, OTLP v1.11.0).
. "$(dirname "$0")/otlp_lib.sh"
command -v protoc >/dev/null || { echo "SKIP: protoc not installed"; exit 77; }

N=200
for t in grpc http; do
  rcv_start "$t-prof" --profiles-proto "$SRC/proto" --fault unavailable:2:100
  send "$t" "$TMP/$t-prof.json" --points 0 --samples $N --windows 2
  lines=$(jq -r 'select(.signal=="profiles") | .decoded_text | length' "$RCV_OUT" | grep -c . || true)
  [ "$lines" -ge 2 ] || fail "$t: $lines profiles requests decoded"
  # Sample values are 0..N-1, one per sample.
  vals=$(jq -r 'select(.signal=="profiles") | .decoded_text' "$RCV_OUT" \
    | sed -n 's/^ *values: \([0-9-]*\)$/\1/p' | sort -n)
  n=$(printf '%s\n' "$vals" | grep -c . || true)
  dup=$(printf '%s\n' "$vals" | uniq -d | grep -c . || true)
  [ "$n" = $N ] && [ "$dup" = 0 ] && [ "$(printf '%s\n' "$vals" | head -1)" = 0 ] \
    && [ "$(printf '%s\n' "$vals" | tail -1)" = $((N - 1)) ] \
    || fail "$t: $n sample values ($dup duplicated), expected 0..$((N - 1))"
  jq -r 'select(.signal=="profiles") | .decoded_text' "$RCV_OUT" >"$TMP/$t.txt"
  for s in '"fn_0"' '"fn_4"' '"main"' '"Main.hs"' '"samples"' '"count"'; do
    grep -q "string_table: $s" "$TMP/$t.txt" || fail "$t: string table lacks $s"
  done
  r=$(stat "$TMP/$t-prof.json" profiles retries)
  [ "$r" -ge 2 ] || fail "$t: $r retries after 2 UNAVAILABLE"
  pass "$t: $N profile samples delivered exactly once"
done
rcv_stop
finish
