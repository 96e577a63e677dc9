#!/usr/bin/env bash
# OTLP export figures: data points per second exported to the local test
# receiver (tests/receiver, Node.js) over gRPC and over HTTP/protobuf,
# plain and gzip, and CPU seconds of the exporting process per 1000 points
# (emit into the store + encode + send; the receiver's CPU is not counted).
# Points go through tests/tools/otlp_send (store -> encoder -> queue ->
# transport), in windows of 10000 points; the time runs from the first
# emit until the shutdown flush has delivered everything.
# Env: EL_BUILD_DIR, EL_SOURCE_DIR (set by scripts/bench.sh);
# EL_BENCH_EXPORT_POINTS (default 500000). Figures only, no asserts.
set -euo pipefail
: "${EL_BUILD_DIR:?}" "${EL_SOURCE_DIR:?}"
n=${EL_BENCH_EXPORT_POINTS:-500000}
send=$EL_BUILD_DIR/tests/otlp_send
receiver=$EL_SOURCE_DIR/tests/receiver/server.js
if ! command -v node >/dev/null ||
   [ ! -d "$EL_SOURCE_DIR/tests/receiver/node_modules" ] || [ ! -x "$send" ]; then
  echo "export: skipped (needs node, tests/receiver/node_modules, $send)"
  exit 0
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
node "$receiver" --out "$tmp/out.jsonl" --ready-file "$tmp/ready" \
  --no-request --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
grpc=$(jq .grpc "$tmp/ready"); http=$(jq .http "$tmp/ready")

echo "export: $n data points in windows of 10000, to the local receiver"
printf '  %-22s %14s %18s %10s\n' transport points/s "CPU s/1000 points" requests
for t in grpc grpc+gzip http http+gzip; do
  case $t in
    grpc*) proto=grpc; ep=http://127.0.0.1:$grpc ;;
    http*) proto=http/protobuf; ep=http://127.0.0.1:$http ;;
  esac
  comp=none; [[ $t == *gzip ]] && comp=gzip
  OTEL_EXPORTER_OTLP_PROTOCOL=$proto OTEL_EXPORTER_OTLP_ENDPOINT=$ep \
  OTEL_EXPORTER_OTLP_COMPRESSION=$comp EL_OTLP_SHUTDOWN_TIMEOUT=600000 \
    "$send" --points "$n" --windows $((n / 10000)) >"$tmp/$t.json"
  jq -r --arg t "$t" --argjson n "$n" '
    [$t, ($n / .wall_s | floor), (.cpu_s * 1000 / $n), .metrics.requests,
     .metrics.records]
    | "  \(.[0] | . + " " * (22 - length)) \(.[1] | tostring | " " * (14 - length) + .) \(.[2] * 1e6 | round / 1e6 | tostring | " " * (18 - length) + .) \(.[3] | tostring | " " * (10 - length) + .)" +
      (if .[4] != $n then "  (only \(.[4]) delivered)" else "" end)' \
    "$tmp/$t.json"
done
