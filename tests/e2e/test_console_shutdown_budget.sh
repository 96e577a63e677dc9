#!/usr/bin/env bash
# The shutdown budget (--otlp-shutdown-timeout) and the console exporter
# on a live source (docs/otlp.md §5 "Who waits for stdout"):
#  1. stdout a regular file: the budget bounds waiting for a reader or a
#     peer, not the rendering into a file, so every record is written even
#     with a 1 ms budget (before: `cat threads.eventlog | otelcol
#     --eventlog-stdin --otlp-shutdown-timeout 1 > out.jsonl`, every
#     processor, gave 86,080 of 138,470 spans and none of the 198 log
#     records, with "some telemetry could not be delivered" and no count;
#     the default 10 s ran out the same way under CPU load, losing 11,864
#     spans of threads-big);
#  2. stdout a pipe whose reader reads nothing until the daemon has
#     exited: after the 100 ms budget what is left is given up, said by
#     signal with its count and cause ("console: N spans (traces) not
#     written: the shutdown budget of 100 ms (--otlp-shutdown-timeout) ran
#     out"), counted as dropped in --stats (before: "Exported" every
#     record, nothing dropped), and the spans written plus those said not
#     written are every span of the reference; status 0 (docs/exit-codes.md
#     "export losses").
#  3. as 2., requests split at 16 KiB (--otlp-max-message-bytes 16384:
#     lines of at most ~20 KB, which a pipe takes whole) and a 300 ms
#     budget: every line the reader finally gets is whole JSON ending in a
#     newline (before: the line being written when the pipe filled was cut,
#     its first part left at the end of the output; in some runs the
#     daemon hung at its exit, stdio's flush of stdout blocked next to the
#     writer thread's blocked write: status 124 here), the daemon exits
#     within the budget of the end of its input (plus 4 s of slack for the
#     end of the decoding on a loaded machine), and the spans written plus
#     those said not written are every span of the reference, as --stats
#     "Dropped" says.
# Reference: the same daemon on --eventlog-file (a recorded file: the
# console writes on its loop, no writer thread, no budget), records
# counted by decoding its JSON lines.
# ctest-labels: e2e
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
OTELCOL=$(dirname "$EL_BIN")/eventlog-live-otelcol
LOG=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

"$OTELCOL" --print-defaults | sed 's/export: false/export: true/' >"$tmp/all.yaml"
export OTEL_SERVICE_NAME=threads OTEL_PROFILES_EXPORTER=none \
  OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=console

# count FILE: "SPANS LOGS" in its complete lines, the daemon's own
# resource (self-metrics and logs, wall-clock data) left out.
count() {
  python3 - "$1" <<'PY'
import json, sys
spans = logs = 0
for line in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    req = json.loads(line)
    for r in req.get("resourceSpans", []):
        for s in r["scopeSpans"]:
            spans += len(s["spans"])
    for r in req.get("resourceLogs", []):
        own = any(a["key"] == "service.name" and
                  a["value"].get("stringValue", "").startswith("eventlog-live-otelcol-for-")
                  for a in r.get("resource", {}).get("attributes", []))
        if not own:
            for s in r["scopeLogs"]:
                logs += len(s["logRecords"])
print(spans, logs)
PY
}

"$OTELCOL" --config "$tmp/all.yaml" --eventlog-file "$LOG" \
  >"$tmp/ref.jsonl" 2>"$tmp/ref.err" || bad "reference: status $?"
read -r ref_spans ref_logs < <(count "$tmp/ref.jsonl")
[ "${ref_spans:-0}" -gt 100000 ] && [ "${ref_logs:-0}" -gt 0 ] &&
  ok "reference: $ref_spans spans, $ref_logs log records" ||
  bad "reference: ${ref_spans:-?} spans, ${ref_logs:-?} log records"

# 1. A file, a 1 ms budget.
cat "$LOG" | "$OTELCOL" --config "$tmp/all.yaml" --eventlog-stdin \
  --otlp-shutdown-timeout 1 >"$tmp/file.jsonl" 2>"$tmp/file.err"
st=$?
read -r spans logs < <(count "$tmp/file.jsonl")
if [ "$st" = 0 ] && [ "$spans" = "$ref_spans" ] && [ "$logs" = "$ref_logs" ] &&
   ! grep -qE 'not written|could not be delivered|dropped' "$tmp/file.err"; then
  ok "file, 1 ms budget: all $spans spans and $logs log records, no loss said"
else
  bad "file, 1 ms budget: status $st, $spans of $ref_spans spans, $logs of $ref_logs log records:"
  sed 's/^/  daemon: /' "$tmp/file.err"
fi

# 2. A pipe read only after the daemon's exit, a 100 ms budget.
mkfifo "$tmp/out"
python3 - "$tmp/out" "$tmp/pipe.jsonl" "$tmp/done" <<'PY' &
import os, sys, time
f = open(sys.argv[1], "rb")          # the daemon's stdout; not read yet
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
open(sys.argv[2], "wb").write(f.read())
PY
reader=$!
cat "$LOG" | timeout 120 "$OTELCOL" --config "$tmp/all.yaml" --eventlog-stdin \
  --otlp-shutdown-timeout 100 --stats >"$tmp/out" 2>"$tmp/pipe.err"
st=$?
touch "$tmp/done"
wait "$reader"
read -r spans logs < <(count "$tmp/pipe.jsonl")
said=$(sed -n 's/.*console: \([0-9]*\) spans (traces) not written: the shutdown budget of 100 ms (--otlp-shutdown-timeout) ran out.*/\1/p' "$tmp/pipe.err")
dropped=$(awk '/^Traces/ {t=1} t && /Dropped/ {print $2; exit}' "$tmp/pipe.err")
if [ "$st" = 0 ] && [ -n "$said" ] && [ $((spans + said)) = "$ref_spans" ] &&
   [ "$dropped" = "$said" ] &&
   grep -q "some telemetry could not be delivered: [1-9][0-9]* records dropped" "$tmp/pipe.err"; then
  ok "pipe, 100 ms budget: $spans spans written + $said said not written = $ref_spans; --stats Dropped $dropped; status 0"
else
  bad "pipe, 100 ms budget: status $st, $spans spans written, '${said}' said not written (reference $ref_spans), --stats Dropped '${dropped}':"
  grep -v '^ ' "$tmp/pipe.err" | sed 's/^/  daemon: /'
fi
# 3. The same with lines a pipe takes whole: none is cut.
rm -f "$tmp/out" "$tmp/done"
mkfifo "$tmp/out" "$tmp/in"
python3 - "$tmp/out" "$tmp/lines.jsonl" "$tmp/done" <<'PY' &
import os, sys, time
f = open(sys.argv[1], "rb")          # the daemon's stdout; not read yet
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
open(sys.argv[2], "wb").write(f.read())
PY
reader=$!
(cat "$LOG" >"$tmp/in"; date +%s%3N >"$tmp/in_done") &
timeout 120 "$OTELCOL" --config "$tmp/all.yaml" --eventlog-stdin \
  --otlp-max-message-bytes 16384 --otlp-shutdown-timeout 300 --stats \
  <"$tmp/in" >"$tmp/out" 2>"$tmp/lines.err"
st=$?
end=$(date +%s%3N)
touch "$tmp/done"
wait "$reader"
took=$((end - $(cat "$tmp/in_done")))
whole=$(python3 - "$tmp/lines.jsonl" <<'PY'
import json, sys
data = open(sys.argv[1], "rb").read()
lines = data.split(b"\n")
bad = 0 if data.endswith(b"\n") or not data else 1   # the last line cut
for line in lines[:-1]:
    try:
        json.loads(line)
    except ValueError:
        bad += 1
print(len(lines) - 1, bad)
PY
)
read -r nlines nbad <<<"$whole"
read -r spans logs < <(count "$tmp/lines.jsonl")
said=$(sed -n 's/.*console: \([0-9]*\) spans (traces) not written: the shutdown budget of 300 ms (--otlp-shutdown-timeout) ran out.*/\1/p' "$tmp/lines.err")
dropped=$(awk '/^Traces/ {t=1} t && /Dropped/ {print $2; exit}' "$tmp/lines.err")
if [ "$st" = 0 ] && [ "$nbad" = 0 ] && [ "$nlines" -gt 0 ] &&
   [ "$took" -lt 4300 ] && [ -n "$said" ] &&
   [ $((spans + said)) = "$ref_spans" ] && [ "$dropped" = "$said" ]; then
  ok "pipe, 16 KiB requests, 300 ms budget: $nlines lines, all whole; exit $took ms after the input's end; $spans spans written + $said said not written = $ref_spans; --stats Dropped $dropped"
else
  bad "pipe, 16 KiB requests, 300 ms budget: status $st, $nlines lines of which $nbad cut or not JSON, exit $took ms after the input's end, $spans spans written, '${said}' said not written (reference $ref_spans), --stats Dropped '${dropped}':"
  grep -v '^ ' "$tmp/lines.err" | sed 's/^/  daemon: /'
fi
[ "$fail" = 0 ] && echo PASS
exit "$fail"
