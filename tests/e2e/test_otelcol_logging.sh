#!/usr/bin/env bash
# What eventlog-live-otelcol tells its user (spec/reference-behaviour.md §9,
# §10), checked against independent counts:
#  - -s with the console exporter: the final table's Exported totals equal
#    the data points and log records printed on stdout (the console
#    exporter, like the reference's, counts as delivered);
#  - -s Peak column (the largest count of one batch interval): with one
#    batch interval for the whole run every Peak equals its Total (events:
#    the count of the `.reference` text); an input that arrives in two
#    parts, batch intervals apart, peaks below its total; on a file
#    (not a terminal) one line of totals every 10 s, the table at the end;
#  - -v debug: INFO "Reading eventlog from <path>", DEBUG "Reading
#    configuration file from <path>", and DEBUG "Received <n> events." lines
#    whose sum is the number of events of the ghc-events `.reference` text;
#  - a live input that stays silent: WARN "No input after 10 ticks. Did you
#    pass -l to the GHC RTS?" (once), then the input arrives and the daemon
#    exits 0;
#  - a silent live input stopped by SIGINT before 10 ticks, whose final
#    flush then lasts longer than 10 ticks (an unreachable collector): no
#    "No input" warning (only time while input is awaited counts).
# ctest-labels: e2e
set -euo pipefail
: "${EL_SOURCE_DIR:?}" "${EL_BUILD_DIR:?}"
EL_EVENTLOGS=${EL_EVENTLOGS:-$EL_SOURCE_DIR/tests/data/eventlogs}
D=$EL_BUILD_DIR/eventlog-live-otelcol
LOG=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
W=$(mktemp -d /tmp/el-otelcol-log-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

# --stats with the console exporter.
"$D" --eventlog-file "$LOG" -hT --service-name odd -s >"$W/out.jsonl" 2>"$W/err" ||
  bad "daemon exit status"
python3 - "$W/out.jsonl" "$W/err" <<'PY' && ok "-s counts what the console printed" || bad "-s totals"
import json, re, sys
points = logs = 0
for line in open(sys.argv[1]):
    req = json.loads(line)
    for rm in req.get("resourceMetrics", []):
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                points += len((m.get("gauge") or m.get("sum"))["dataPoints"])
    for rl in req.get("resourceLogs", []):
        for sl in rl["scopeLogs"]:
            logs += len(sl["logRecords"])
err = open(sys.argv[2]).read()
# The last table printed (the final one).
got = {}
for sig in ("Metrics", "Logs"):
    got[sig] = int(re.findall(r"^%s +Exported +(\d+)" % sig, err, re.M)[-1])
print(f"     stdout: {points} points, {logs} records; table: {got}")
assert points > 0 and logs > 0
assert got == {"Metrics": points, "Logs": logs}, got
PY

# The reference crashes at the first statistic when no processor sets
# aggregate or export (spec §3.7, §13 item 14): ours shows the table.
printf 'processors:\n  logs:\n    user_marker: {}\n' >"$W/noagg.yaml"
st=0
"$D" --eventlog-file "$LOG" --config "$W/noagg.yaml" -s >/dev/null 2>"$W/err" || st=$?
[ "$st" = 0 ] && grep -qE '^Logs +Exported +10 ' "$W/err" &&
  ok "-s without aggregate/export values: 10 markers exported, status 0" ||
  { bad "-s without aggregate/export: status $st"; tail -5 "$W/err"; }

# The Peak column. One batch interval for the whole run (flush interval
# 3600 s and only windows in flush intervals, so the batch interval is
# 3600 s of eventlog time; the log lasts seconds): every peak is the total.
events=$(sed -n '/^Events:/,$p' "$LOG.reference" | grep -cE '^ *[0-9]+: ')
printf 'processors:\n  logs:\n    user_marker: {export: 1x}\n  metrics:\n    heap_size: {aggregate: 1x, export: 1x}\n' >"$W/onebatch.yaml"
"$D" --eventlog-file "$LOG" -hT --service-name odd -s --eventlog-flush-interval 3600 \
  --config "$W/onebatch.yaml" >/dev/null 2>"$W/err" || bad "daemon exit status (-s, one batch)"
python3 - "$W/err" "$events" <<'PY' && ok "-s Peak = Total with one batch interval ($events events)" || bad "-s Peak column"
import re, sys
err = open(sys.argv[1]).read()
assert re.search(r"^Item +Action +Total +Rate \(/s\) +Peak \(/batch\)$", err, re.M)
rows = re.findall(r"^(\w*) +(Received|Exported|Rejected|Dropped) +(\d+) +\d+ +(\d+)$", err, re.M)
assert len(rows) == 13, rows
assert rows[0][:3] == ("Events", "Received", sys.argv[2]), rows[0]
for r in rows:
    assert r[2] == r[3], r
assert int(rows[1][2]) > 0, rows[1]
PY
# Two parts, the second sent once the first was received and at least
# 5 batch intervals (0.1 s) later: the events' peak is below their total.
mkfifo "$W/fifo2"
half=$(( $(stat -c %s "$LOG") / 2 ))
( exec 3>"$W/fifo2"; head -c "$half" "$LOG" >&3
  for _ in $(seq 600); do grep -q "Received" "$W/err2" 2>/dev/null && break; sleep 0.1; done
  sleep 0.5; tail -c +"$((half + 1))" "$LOG" >&3 ) &
writer=$!
st=0
timeout 120 "$D" --eventlog-file "$W/fifo2" --eventlog-flush-interval 0.1 -s -v debug \
  >/dev/null 2>"$W/err2" || st=$?
wait $writer || true
python3 - "$W/err2" "$events" <<'PY' && ok "-s Peak below Total for an input in two parts" || { bad "-s Peak, two parts (status $st)"; tail -22 "$W/err2"; }
import re, sys
err = open(sys.argv[1]).read()
total, peak = map(int, re.findall(r"^Events +Received +(\d+) +\d+ +(\d+)$", err, re.M)[-1])
assert total == int(sys.argv[2]), (total, sys.argv[2])
assert 0 < peak < total, (peak, total)
# Peak is the largest of the per-batch counts the debug log gives.
batches = [int(n) for n in re.findall(r"Received (\d+) events\.", err)]
assert peak == max(batches) and sum(batches) == total, (peak, batches)
PY

# -s on a file (not a terminal): one line every 10 s, not the table
# every second; the table once, at the end. The first half of the input,
# then 11 s of silence, then the rest: a line in between counts the
# first half's events, which is neither 0 nor the total.
mkfifo "$W/fifo3"
( exec 3>"$W/fifo3"; head -c "$half" "$LOG" >&3; sleep 11
  tail -c +"$((half + 1))" "$LOG" >&3 ) &
writer=$!
st=0
timeout 120 "$D" --eventlog-file "$W/fifo3" -s >/dev/null 2>"$W/err3" || st=$?
wait $writer || true
python3 - "$W/err3" "$events" <<'PY' && ok "-s to a file: a line per 10 s, the table at the end" || { bad "-s to a file (status $st)"; head -30 "$W/err3"; }
import re, sys
err = open(sys.argv[1]).read()
total = int(sys.argv[2])
assert len(re.findall(r"^Item +Action", err, re.M)) == 1, "tables"
lines = re.findall(r"^stats: (\d+) s: events (\d+) \(\d+/s\); exported Metrics \d+, "
                   r"Logs \d+, Traces \d+, Profiles \d+; rejected 0, dropped 0, "
                   r"pending \d+", err, re.M)
assert 1 <= len(lines) <= 2, lines
assert all(0 < int(e) < total for _, e in lines), (lines, total)
assert all(int(t) >= 10 for t, _ in lines), lines
final = int(re.findall(r"^Events +Received +(\d+)", err, re.M)[-1])
assert final == total, (final, total)
PY

# -v debug.
printf 'processors:\n  metrics:\n    heap_size: {}\n' >"$W/c.yaml"
"$D" --eventlog-file "$LOG" --config "$W/c.yaml" -v debug >/dev/null 2>"$W/err" ||
  bad "daemon exit status (-v debug)"
grep -qF "Reading eventlog from $LOG" "$W/err" && ok "INFO Reading eventlog" ||
  { bad "no 'Reading eventlog from'"; head -5 "$W/err"; }
grep -qF "Reading configuration file from $W/c.yaml" "$W/err" &&
  ok "DEBUG Reading configuration file" || bad "no 'Reading configuration file from'"
want=$(sed -n '/^Events:/,$p' "$LOG.reference" | grep -cE '^ *[0-9]+: ')
got=$({ grep -oE 'Received [0-9]+ events\.' "$W/err" || true; } |
  awk '{s += $2} END {print s + 0}')
[ "$got" = "$want" ] && ok "Received <n> events. lines sum to $want" ||
  bad "Received lines sum to $got, the reference has $want events"

# A silent live input.
mkfifo "$W/fifo"
( exec 3>"$W/fifo"; sleep 2.5; cat "$LOG" >&3 ) &
writer=$!
st=0
timeout 60 "$D" --eventlog-file "$W/fifo" --eventlog-flush-interval 0.1 \
  >/dev/null 2>"$W/err" || st=$?
wait $writer || true
n=$(grep -c "No input after 10 ticks. Did you pass -l to the GHC RTS?" "$W/err" || true)
[ "$st" = 0 ] && [ "$n" = 1 ] && ok "silent input: one WARN, then exit 0" ||
  { bad "silent input: status $st, $n warnings"; cat "$W/err"; }
# what a tick is, in seconds (h63): 10 batch intervals of 100 ms
grep -q "No input after 10 ticks.*(a tick is one batch interval: 1 s in all)$" "$W/err" &&
  ok "silent input: the warning says what 10 ticks are" ||
  { bad "silent input: no unit for the ticks"; grep "No input" "$W/err"; }

# A silent live input stopped early; the shutdown's flush (3 s, 30 ticks of
# 100 ms, to a collector that refuses) is no wait for input.
rm -f "$W/fifo"; mkfifo "$W/fifo"
sleep 60 >"$W/fifo" &
writer=$!
st=0
OTEL_LOGS_EXPORTER=otlp OTEL_METRICS_EXPORTER=otlp \
  "$D" --eventlog-file "$W/fifo" --eventlog-flush-interval 0.1 \
  --otlp-protocol http/protobuf --otlp-endpoint http://127.0.0.1:1 \
  --otlp-shutdown-timeout 3000 -v info >/dev/null 2>"$W/err" &
pid=$!
sleep 0.5; kill -INT $pid; sleep 0.2; kill -INT $pid
wait $pid || st=$?
kill $writer 2>/dev/null; wait $writer 2>/dev/null || true
n=$(grep -c "No input after" "$W/err" || true)
[ "$st" = 0 ] && [ "$n" = 0 ] && grep -q "Input ended: flushing" "$W/err" &&
  grep -q "some telemetry could not be delivered" "$W/err" &&
  ok "stopped before 10 ticks, long final flush: no 'No input' warning" ||
  { bad "stopped early: status $st, $n 'No input' warnings"; cat "$W/err"; }
exit $fail
