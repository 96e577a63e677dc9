#!/usr/bin/env bash
# Control server throughput: N sequential requests on one keep-alive
# connection (curl), each relayed by eventlog-live-otelcol to el_peer over
# the eventlog socket. Prints requests/s, mean latency, and checks that the
# peer received every message (N * 22 bytes).
#   scripts/bench.sh control        (N from EL_BENCH_CONTROL_N, default 2000)
set -u
N=${EL_BENCH_CONTROL_N:-2000}
B=${EL_BUILD_DIR:?}
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$B/tests/el_peer" --unix "$tmp/sock" --file "$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog" \
  --record "$tmp/rec" --ready-file "$tmp/ready" --hold-ms 60000 --timeout 90 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none OTEL_TRACES_EXPORTER=none \
OTEL_PROFILES_EXPORTER=none "$B/eventlog-live-otelcol" --eventlog-socket "$tmp/sock" \
  --service-name app -hT --control-port 0 -v info 2>"$tmp/err" &
pids+=($!)
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*Starting control server on \([0-9][0-9]*\).*/\1/p' "$tmp/err" | head -1)
  [ -n "$port" ] && break; sleep 0.05
done
url=http://127.0.0.1:$port/control/eventlog-socket/request-heap-census
for _ in $(seq 100); do
  # 503 until the daemon has connected; nothing is sent then.
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d service-name=app "${url%request-heap-census}stop-heap-profiling")
  [ "$code" = 200 ] && break; sleep 0.05
done
urls=$(printf "$url %.0s" $(seq "$N"))
t0=$(date +%s.%N)
# shellcheck disable=SC2086
ok=$(curl -s -X POST -d service-name=app -w '\n%{http_code}\n' $urls | grep -c '^200$')
t1=$(date +%s.%N)
sleep 0.5
bytes=$(( $(stat -c %s "$tmp/rec") - 22 ))
awk -v n="$N" -v ok="$ok" -v t0="$t0" -v t1="$t1" -v b="$bytes" 'BEGIN {
  d = t1 - t0
  printf "control: %d requests (%d answered 200) in %.3f s: %.0f requests/s, %.3f ms each\n", n, ok, d, n / d, 1000 * d / n
  printf "control: peer received %d bytes (%s)\n", b, (b == 22 * n ? "all messages" : "MISSING MESSAGES")
}'
