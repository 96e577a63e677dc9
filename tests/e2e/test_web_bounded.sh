#!/usr/bin/env bash
# Issue 14 item 5: the web view and /metrics stay bounded whatever the
# program does. A stream of 100,000 short-lived threads
# (tests/tools/many_threads.lua: thread k runs 4 us on capability k % 2
# and finishes, every 10th is labelled) is replayed through the daemon
# with the settings `eventlog-live watch` uses (every processor exporting
# each second, the trace processors on) and --web-port; then:
#   - GET /metrics (the web port serves it too) is under 1 MB and
#     GET /api/data under 2 MB;
#   - the threads table holds at most 500 rows, every one "Finished"
#     (the generator finishes every thread), and its "other" row accounts
#     for the rest: rows + other >= 100,000;
#   - no metric sends more than 50 series plus its "other" sums, and
#     the series store holds at most 2000 series per metric.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
DAEMON=$BUILD/eventlog-live-otelcol
N=100000
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$DAEMON" ] || skip "$DAEMON not built"
command -v lua5.4 >/dev/null || skip "lua5.4 missing"
command -v curl >/dev/null || skip "curl missing"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-web-bounded.XXXXXX")
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

lua5.4 "$SRC/tests/tools/many_threads.lua" $N "$TMP/t.eventlog" ||
  fail "could not generate the eventlog"
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
"$DAEMON" --print-defaults |
  sed -e '/^  traces:/,/^  [a-z]/ s/export: false/export: true/' \
      -e 's/^\(      export:\) [0-9][0-9]*s$/\1 1s/' > "$TMP/config.yaml"
"$DAEMON" --eventlog-file "$TMP/t.eventlog" --service-name many \
  --config "$TMP/config.yaml" --web-port 0 -v info \
  > "$TMP/out" 2> "$TMP/err" &
pid=$!
for _ in $(seq 1200); do
  grep -q "input ended: still serving" "$TMP/err" && break
  kill -0 "$pid" 2>/dev/null || { cat "$TMP/err"; fail "the daemon exited"; }
  sleep 0.1
done
grep -q "input ended: still serving" "$TMP/err" ||
  { tail "$TMP/err"; fail "the replay did not end in 120 s"; }
port=$(sed -n 's/.*Starting web view on \([0-9]*\).*/\1/p' "$TMP/err" | head -1)
curl -sf -m 30 -o "$TMP/metrics" "http://127.0.0.1:$port/metrics" || fail "GET /metrics"
curl -sf -m 30 -o "$TMP/data.json" "http://127.0.0.1:$port/api/data" || fail "GET /api/data"
rc=0
msize=$(stat -c %s "$TMP/metrics")
dsize=$(stat -c %s "$TMP/data.json")
echo "/metrics: $msize bytes, $(grep -vc '^#' "$TMP/metrics") series; /api/data: $dsize bytes"
[ "$msize" -lt 1000000 ] || { echo "FAIL: /metrics is $msize bytes (>= 1 MB)"; rc=1; }
[ "$dsize" -lt 2000000 ] || { echo "FAIL: /api/data is $dsize bytes (>= 2 MB)"; rc=1; }
python3 - "$TMP/data.json" "$N" <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
bad = []
rows, other = d["threads"], d["threads_other"]
print(f"threads: {len(rows)} rows, other {other}")
if len(rows) > 500:
    bad.append(f"{len(rows)} thread rows (> 500)")
if any(r["state"] != "Finished" for r in rows):
    bad.append("a finished thread is not shown Finished: " +
               str([r for r in rows if r["state"] != "Finished"][:3]))
if len(rows) + other["threads"] < n:
    bad.append(f"rows {len(rows)} + other {other['threads']} < {n} threads")
for f in d["metrics"]:
    plain = [s for s in f["series"] if "other" not in s["attrs"]]
    print(f"{f['name']}: {f['nseries']} stored, {len(plain)} sent, "
          f"{len(f['series']) - len(plain)} other sums")
    if len(plain) > 50 or f["nseries"] > 2000:
        bad.append(f"{f['name']}: {len(plain)} series sent, {f['nseries']} stored")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ $rc = 0 ] && echo "PASS: web view and /metrics bounded with $N threads"
exit $rc
