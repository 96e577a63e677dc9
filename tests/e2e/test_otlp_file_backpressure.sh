#!/usr/bin/env bash
# test_otlp_file_backpressure.sh: a recorded eventlog file replayed into a
# collector slower than the daemon produces loses nothing: reading pauses
# while the OTLP export queues are half full (docs/otlp.md §8.2 "Flow
# control"). threads-big.eventlog with every processor on (self-metrics
# and the daemon's own log messages off: they depend on the run's wall
# time), OTLP/HTTP into the test receiver answering each request after
# 20 ms, queues of 4 requests:
#  - the records the receiver decoded, per signal, equal those of a run
#    with the console exporter (which prints on the loop thread and never
#    drops: the independent count); nothing dropped; the pauses are shown
#    by -s;
#    the same with stdin redirected from the file (`< file`);
#  - a live source (the same bytes through a pipe on stdin) is never
#    paused: with a 2-request queue and 200 ms answers it still drops,
#    and every record is either received or counted as dropped;
#  - a dead collector (closed port) does not hold a paused file: the
#    daemon ends, every record counted as dropped.
# ctest-labels: e2e
. "$(dirname "$0")/otlp_lib.sh"

D=$BUILD/eventlog-live-otelcol
F=$SRC/tests/data/eventlogs/ghc-9.0/threads-big.eventlog
[ -x "$D" ] || { echo "FAIL: $D not built"; exit 1; }

# Every processor exported, except the internal_* ones.
"$D" --print-defaults >"$TMP/default.yaml"
awk '/^    [a-z_]+:$/ { k = $1 }
     /^      export: / && k !~ /^internal_/ { sub(/false$/, "true") }
     /^      export: / && k ~ /^internal_/ { sub(/: .*/, ": false") }
     { print }' "$TMP/default.yaml" >"$TMP/all.yaml"
grep -q 'export: true' "$TMP/all.yaml" || { echo "FAIL: no processor turned on"; exit 1; }

# The reference: the console exporter's records per signal.
OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
OTEL_TRACES_EXPORTER=console OTEL_PROFILES_EXPORTER=none \
  timeout 600 "$D" --config "$TMP/all.yaml" --eventlog-file "$F" \
  2>"$TMP/console.err" | python3 -c '
import json, sys
n = {"metrics": 0, "logs": 0, "traces": 0}
for line in sys.stdin:
    o = json.loads(line)
    for r in o.get("resourceMetrics", []):
        for s in r["scopeMetrics"]:
            for m in s["metrics"]:
                for k in ("gauge", "sum", "histogram"):
                    n["metrics"] += len(m.get(k, {}).get("dataPoints", []))
    for r in o.get("resourceLogs", []):
        for s in r["scopeLogs"]:
            n["logs"] += len(s["logRecords"])
    for r in o.get("resourceSpans", []):
        for s in r["scopeSpans"]:
            n["traces"] += len(s["spans"])
print(json.dumps(n))' >"$TMP/ref.json"
ref_spans=$(jq .traces "$TMP/ref.json")
[ "$ref_spans" -gt 100000 ] || fail "console reference: only $ref_spans spans"

# received SIGNAL: records of SIGNAL the receiver decoded.
received() { jq -s --arg s "$1" 'map(select(.signal == $s) | .records) | add // 0' "$RCV_OUT"; }
# dropped_queue ERRFILE: the "queue full" drops of the exporter's summary.
dropped_queue() {
  sed -n 's/.*export: .*dropped: \([0-9]*\) queue full.*/\1/p' "$1" | paste -sd+ | bc
}

# 1. A recorded file into a slow collector: nothing lost.
rcv_start slow --no-request --delay-ms 20
rc=0
EL_LOG_LEVEL=info timeout 600 "$D" -s --config "$TMP/all.yaml" --eventlog-file "$F" \
  --otlp-endpoint "http://127.0.0.1:$RCV_HTTP" --otlp-queue-items 4 \
  >/dev/null 2>"$TMP/slow.err" || rc=$?
[ $rc = 0 ] || fail "file: the daemon exited with $rc"
grep -q "OTLP traces export: .* 0 queue full" "$TMP/slow.err" || fail "file: no export summary"
for s in metrics logs traces; do
  want=$(jq ".$s" "$TMP/ref.json")
  got=$(received $s)
  [ "$got" = "$want" ] || fail "file: $s: the receiver decoded $got, the console printed $want"
done
dq=$(dropped_queue "$TMP/slow.err")
[ "${dq:-0}" = 0 ] || fail "file: $dq records dropped as queue full"
grep -q "^Reading paused for the collector: .* in [1-9][0-9]* pauses" "$TMP/slow.err" \
  || fail "file: no pause shown by -s"
pass "file: $(received traces) spans, $(received metrics) points, $(received logs) logs as the console; $(grep '^Reading paused' "$TMP/slow.err" | tail -1)"

# 1b. stdin redirected from the file is recorded too: paused, nothing lost.
rcv_start slow-stdin --no-request --delay-ms 20
rc=0
EL_LOG_LEVEL=info timeout 600 "$D" -s --config "$TMP/all.yaml" --eventlog-stdin \
  --otlp-endpoint "http://127.0.0.1:$RCV_HTTP" --otlp-queue-items 4 \
  <"$F" >/dev/null 2>"$TMP/stdin.err" || rc=$?
[ $rc = 0 ] || fail "stdin file: the daemon exited with $rc"
got=$(received traces)
[ "$got" = "$ref_spans" ] || fail "stdin file: the receiver decoded $got spans, the console printed $ref_spans"
grep -q "OTLP traces export: .* 0 queue full" "$TMP/stdin.err" || fail "stdin file: drops or no summary"
grep -q "^Reading paused for the collector" "$TMP/stdin.err" || fail "stdin file: no pause shown by -s"
pass "stdin file: $got spans as the console"

# 2. A live source (a pipe on stdin) is never paused: it drops and counts.
rcv_start live --no-request --delay-ms 200
rc=0
cat "$F" | EL_LOG_LEVEL=info timeout 600 "$D" -s --config "$TMP/all.yaml" --eventlog-stdin \
  --otlp-endpoint "http://127.0.0.1:$RCV_HTTP" --otlp-queue-items 2 \
  >/dev/null 2>"$TMP/live.err" || rc=$?
[ $rc = 0 ] || fail "live: the daemon exited with $rc"
dq=$(dropped_queue "$TMP/live.err")
got=$(received traces)
[ "${dq:-0}" -gt 0 ] || fail "live: nothing dropped with a 2-request queue"
# Live decoding dates and orders events as they arrive, so the spans
# differ from the file's: the exporter's own accounting is checked. What
# it delivered is what the receiver decoded; the final -s table leaves
# nothing pending (every span exported or dropped) and counts the drops.
sent=$(sed -n 's/.*OTLP traces export: \([0-9]*\) records in.*/\1/p' "$TMP/live.err")
[ "$got" = "$sent" ] || fail "live: receiver decoded $got spans, the exporter delivered $sent"
sd=$(sed -n 's/.*traces export: .*dropped: \([0-9]*\) queue full, \([0-9]*\) failed, \([0-9]*\) at shutdown.*/\1+\2+\3/p' "$TMP/live.err" | bc)
tab=$(awk '$1 == "Traces" {t = 1} t && $1 == "Dropped" {d = $2} t && $1 == "Pending" {print d, $2; t = 0}' "$TMP/live.err" | tail -1)
[ "$tab" = "$sd 0" ] || fail "live: final table (dropped pending) '$tab', exporter dropped $sd"
! grep -q "^Reading paused" "$TMP/live.err" || fail "live: the pipe was paused"
pass "live: $got spans received, $sd dropped and counted"

# 4. A collector that answers a few requests 400 (INVALID_ARGUMENT: not
# retryable, one bad request each) is alive: the file still pauses for
# every signal, so nothing is dropped as queue full and every record but
# those of the refused requests arrives (h70: one 400 on a logs request
# made the whole exporter "failing", reading went on unpaused and the
# traces queue dropped ~12,000 spans).
rcv_start bad400 --no-request --delay-ms 20 --fault fail:3
rc=0
EL_LOG_LEVEL=info timeout 600 "$D" -s --config "$TMP/all.yaml" --eventlog-file "$F" \
  --otlp-endpoint "http://127.0.0.1:$RCV_HTTP" --otlp-queue-items 4 \
  >/dev/null 2>"$TMP/bad400.err" || rc=$?
[ $rc = 0 ] || fail "400s: the daemon exited with $rc"
dq=$(dropped_queue "$TMP/bad400.err")
[ "${dq:-0}" = 0 ] || fail "400s: $dq records dropped as queue full"
for s in metrics logs traces; do
  want=$(jq ".$s" "$TMP/ref.json")
  got=$(received $s)
  failed=$(sed -n "s/.*OTLP $s export: .*dropped: [0-9]* queue full, \([0-9]*\) failed.*/\1/p" "$TMP/bad400.err")
  [ $((got + ${failed:-0})) = "$want" ] ||
    fail "400s: $s: the receiver decoded $got, ${failed:-0} failed, the console printed $want"
done
grep -q "failed (not retryable)" "$TMP/bad400.err" || fail "400s: no refused request said"
pass "400s: $(received traces) spans received, the refused requests' records counted as failed, none dropped as queue full"

# 3. A dead collector: the paused file goes on once requests fail.
rcv_start dead
rcv_stop
rc=0
EL_OTLP_RETRY_MAX_ELAPSED=300 EL_OTLP_SHUTDOWN_TIMEOUT=1000 EL_LOG_LEVEL=info \
  timeout 600 "$D" --config "$TMP/all.yaml" --eventlog-file "$F" \
  --otlp-endpoint "http://127.0.0.1:$RCV_HTTP" --otlp-queue-items 4 \
  >/dev/null 2>"$TMP/dead.err" || rc=$?
[ $rc = 0 ] || fail "dead: the daemon exited with $rc (124: it hung)"
d=$(sed -n 's/.*traces export: 0 records.*dropped: \([0-9]*\) queue full, \([0-9]*\) failed, \([0-9]*\) at shutdown.*/\1+\2+\3/p' "$TMP/dead.err" | bc)
[ "${d:-0}" = "$ref_spans" ] || fail "dead: ${d:-0} of $ref_spans spans counted as dropped"
pass "dead: ended, ${d:-0} spans counted as dropped"
finish
