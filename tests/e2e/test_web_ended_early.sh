#!/usr/bin/env bash
# The web view says the input ended as soon as everything received is in
# it, not after the exporters' shutdown budget (h39: a replay with no
# collector listening showed "live" for the 10 s the OTLP exporter kept
# retrying). threads.eventlog is replayed with the web view on and OTLP
# metrics sent where nothing listens, with a 20 s shutdown budget and
# --no-linger. Expected, in this order: GET /api/data says "ended": true
# and shows no thread Running, Runnable or Blocked, while the daemon is still
# within its budget (alive, and it has not yet said what it could not
# deliver); then the daemon says so and exits. On the old daemon the page
# said "ended" only once lingering began, after the budget: with
# --no-linger, never.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
DAEMON=$BUILD/eventlog-live-otelcol
LOG=$SRC/tests/data/eventlogs/ghc-9.0/threads.eventlog
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$DAEMON" ] || skip "$DAEMON not built"
command -v curl >/dev/null || skip "curl missing"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-web-ended.XXXXXX")
pid=
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

# a port nothing listens on (bound, then closed)
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$dead OTEL_METRICS_EXPORTER=otlp \
  OTEL_LOGS_EXPORTER=none OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none \
  "$DAEMON" --eventlog-file "$LOG" --web-port 0 -v info \
  --otlp-shutdown-timeout 20000 > "$TMP/out" 2> "$TMP/err" &
pid=$!
port=
for _ in $(seq 300); do
  port=$(sed -n 's/.*Starting web view on \([0-9]*\).*/\1/p' "$TMP/err" | head -1)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$TMP/err"; fail "the daemon exited"; }
  sleep 0.1
done
[ -n "$port" ] || fail "no web view port in 30 s"
ended=
for _ in $(seq 300); do
  curl -sf -m 5 -o "$TMP/data.json" "http://127.0.0.1:$port/api/data" &&
    grep -q '"ended":true' "$TMP/data.json" && { ended=1; break; }
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
alive=0
kill -0 "$pid" 2>/dev/null && alive=1
grep -q "could not be delivered" "$TMP/err" && said=1 || said=0
[ -n "$ended" ] || { tail -5 "$TMP/err"; fail "the page never said the input ended (daemon alive: $alive)"; }
echo "ended seen; daemon alive: $alive; undelivered said yet: $said"
[ "$alive" = 1 ] && [ "$said" = 0 ] ||
  fail "the page said the input ended only after the shutdown budget"
python3 - "$TMP/data.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["threads"]
live = [r for r in rows if r["state"] in ("Running", "Runnable", "Blocked")]
print(f"{len(rows)} thread rows, {len(live)} Running, Runnable or Blocked")
if not rows:
    sys.exit("FAIL: no thread rows (threads.eventlog creates 22)")
if live:
    sys.exit(f"FAIL: threads shown alive after the input ended: {live[:3]}")
PY
kill -INT "$pid"
for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "the daemon did not exit 30 s after SIGINT"
wait "$pid"
pid=
echo "PASS"
