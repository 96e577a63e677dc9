#!/usr/bin/env bash
# One SIGINT or SIGTERM stops `eventlog-live run SCRIPT --output console`
# whose console telemetry (el.log, metric points: not Lua's print, for
# which the third signal is the backstop) goes into a stdout nobody reads
# (h64; the daemon's case is test_console_stuck_reader.sh). run wrote
# each line on its loop thread and, once the pipe was full, sat in
# fflush(stdout): a signal only set a flag nobody checked, and the run
# waited for the third. Now, as the daemon on a recorded file, the lines
# go through the console's writer thread and the loop waits for room
# until a signal (docs/otlp.md §5 "Who waits for stdout"). The script
# emits a log record and a metric point per RUN_THREAD of threads-big:
# far more OTLP/JSON than the pipe (64 KiB) and the queue (8 MiB) hold.
# Checked, for a named FIFO held open by a reader that never reads:
#   - one SIGTERM ends the run with status 0 within its shutdown budget
#     (10 s) and a margin (before: alive 40 s after);
#   - what was not written is said and counted ("not written");
#   - with a reader that reads everything (`| wc -c`), nothing is
#     dropped, status 0.
source "$(dirname "$0")/serve_lib.sh" runstuck
RUN=$BUILD/eventlog-live
LOG=$EVENTLOGS/ghc-9.0/threads-big.eventlog
cat > "$TMP/emit.lua" <<'LUA'
local el = require("eventlog_live")
local runs = el.metric{name = "runs", unit = "1", kind = "sum"}
el.on("RUN_THREAD", function(ev)
  el.log{body = "run " .. ev.thread, severity = "info",
         attrs = {cap = ev.cap, t = ev.t}}
  runs:point(1, {cap = ev.cap})
end)
LUA

mkfifo "$TMP/out"
(exec 3<"$TMP/out"; sleep 120) &
hold=$!
PIDS+=("$hold")
{ "$RUN" run "$TMP/emit.lua" --eventlog-file "$LOG" > "$TMP/out" 2> "$TMP/err" &
  echo $! > "$TMP/pid"; wait $!; echo $? > "$TMP/st"; } &
PIDS+=("$!")
for _ in $(seq 100); do [ -s "$TMP/pid" ] && break; sleep 0.1; done
pid=$(cat "$TMP/pid")
PIDS+=("$pid")
sleep 3 # the pipe and the queue fill (run then waits for room)
alive "$pid" || { cat "$TMP/err"; fail "run ended before the signal"; }
kill -TERM "$pid"
t0=$SECONDS
while [ ! -s "$TMP/st" ]; do
  [ $((SECONDS - t0)) -lt 40 ] ||
    fail "one SIGTERM did not end run in 40 s (stuck writing stdout)"
  sleep 0.2
done
[ "$(cat "$TMP/st")" = 0 ] ||
  { tail -5 "$TMP/err"; fail "status $(cat "$TMP/st") after one SIGTERM (want 0)"; }
grep -q "not written" "$TMP/err" ||
  { tail -5 "$TMP/err"; fail "the records left unwritten were not said"; }
echo "ok: one SIGTERM ended run into a reader that does not read in $((SECONDS - t0)) s, status 0"
stop_pid "$hold"

# A reader that reads everything: nothing dropped, status 0.
"$RUN" run "$TMP/emit.lua" --eventlog-file "$LOG" 2> "$TMP/all.err" | wc -c > "$TMP/all.n"
st=${PIPESTATUS[0]}
[ "$st" = 0 ] || { tail -5 "$TMP/all.err"; fail "a reading reader: status $st"; }
grep -q -E "dropped|not written" "$TMP/all.err" &&
  { grep -E "dropped|not written" "$TMP/all.err" | head -3; fail "a reading reader: records dropped"; }
echo "ok: a reader that reads everything got $(cat "$TMP/all.n") bytes, nothing dropped"
