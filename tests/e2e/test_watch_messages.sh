#!/usr/bin/env bash
# Two messages of `eventlog-live watch` and the daemon (issue 14), with the
# real GHC 9.0 program (tests/haskell/live_socket, plain build):
#  - normal: the program (through a wrapper `sh -c 'PROG ...; sleep 3'`,
#    which outlives it so that watch is still waiting when its input ended)
#    ends normally, --no-linger: watch exits 0 and does NOT say "the
#    processing ended before ..." nor "discarded ... bytes": its eventlog
#    was processed to the end (before the fix it said so on every end
#    where the program had not been reaped yet);
#  - wrote-after: the processing stops while the program runs on (test
#    hook EL_TEST_WATCH_STOP_PROCESSING_ON_SIGINT=1, SIGINT after marker 1)
#    and the program writes after that: watch says "the processing ended
#    before ..." and counts the discarded bytes (> 0), and exits 0;
#  - hint-watch / hint-daemon: the program nearly idle (work=0 alloc=1:
#    GHC 9.0 writes a capability's events only when its 2 MiB buffer
#    fills, which takes longer than the run) under watch, and run with
#    +RTS -l -ol FIFO into `eventlog-live-otelcol --eventlog-file FIFO`:
#    after 10 batch intervals (1 s) without an event, watch's warning says
#    watch passed -l and explains the 2 MiB buffer, without "Did you pass
#    -l"; the plain daemon, which got the program's header, says it came
#    and explains the 2 MiB buffer too, without "Did you pass -l" (h74: the
#    program had -l). A daemon that got no byte asks "Did you pass -l to
#    the GHC RTS?" (test_otelcol_logging.sh). Both then get the eventlog at the
#    program's exit and exit 0. The two run side by side.
# Every wait is bounded; no timing assertion.
set -u
source "$(dirname "$0")/watch_lib.sh"
[ -x "$DAEMON" ] || skip "$DAEMON not built"
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
pl_build plain

echo "== normal: a normal end, the wrapper still running"
wl_start normal --no-linger -- sh -c '"$0" "$@"; sleep 3' "$PROG" \
  seconds=2 tag=n
wl_exits normal 0 90 "watch exited 0"
grep -q '^end ' "$T/normal.out" && pass "normal: the program ran to its end" ||
  fail "normal: the program did not print its end line"
if grep -q 'processing ended before\|bytes of eventlog after the processing ended' \
  "$T/normal.err"; then
  grep 'processing ended' "$T/normal.err"
  fail "normal: watch says the processing ended before the program"
else
  pass "normal: no 'processing ended before' note after a normal end"
fi

echo "== wrote-after: the processing stops, the program writes on"
EL_TEST_WATCH_STOP_PROCESSING_ON_SIGINT=1 wl_start wrote-after -- "$PROG" \
  seconds=6 tag=a
wl_program_pid wrote-after
wait_line "$T/wrote-after.out" '^marker 1 ' 30 || die "wrote-after: no marker 1"
kill -INT "$WPID"
wl_exits wrote-after 0 60 "watch exited 0, the program's status"
grep -q "the processing ended before .*live_socket: reading and discarding" \
  "$T/wrote-after.err" && pass "wrote-after: watch said the processing ended first" ||
  { tail -n 10 "$T/wrote-after.err"; fail "wrote-after: no 'processing ended before' line"; }
n=$(sed -n 's/.*discarded \([0-9]*\) bytes of eventlog after the processing ended.*/\1/p' \
  "$T/wrote-after.err")
[ -n "$n" ] && [ "$n" -gt 0 ] && pass "wrote-after: $n bytes discarded and counted" ||
  fail "wrote-after: no discarded byte count > 0"

echo "== hint-watch and hint-daemon: a nearly idle GHC 9.0 program"
IDLE=(seconds=18 work=0 alloc=1)
wl_start hintw --no-linger -- "$PROG" "${IDLE[@]}" tag=w
HW=$WPID
mkfifo "$T/hint.fifo"
"$DAEMON" --eventlog-file "$T/hint.fifo" > /dev/null 2> "$T/hintd.err" &
HD=$!
PIDS+=("$HD")
pl_prog hintp "${IDLE[@]}" tag=d +RTS -l -ol"$T/hint.fifo" -RTS
for f in hintw.err hintd.err; do
  wait_line "$T/$f" 'No input after 10 ticks' 40 ||
    echo "   (no 'No input' line in $f within 40 s)"
done
if grep -q 'No input after 10 ticks. watch passed -l' "$T/hintw.err" &&
   grep -q "capability's 2 MiB buffer" "$T/hintw.err" &&
   ! grep -q 'Did you pass -l' "$T/hintw.err"; then
  pass "hint-watch: $(grep -o 'No input after.*' "$T/hintw.err")"
else
  cat "$T/hintw.err"; fail "hint-watch: the warning does not fit watch"
fi
if grep -q "No input after 10 ticks. The eventlog's header came, but no event yet" "$T/hintd.err" &&
   grep -q "capability's 2 MiB buffer" "$T/hintd.err" &&
   ! grep -q 'Did you pass -l' "$T/hintd.err"; then
  pass "hint-daemon: $(grep -o 'No input after.*' "$T/hintd.err")"
else
  cat "$T/hintd.err"; fail "hint-daemon: no header-came hint with the 2 MiB buffer"
fi
wait_exit "$HW" 60 && pass "hint-watch: watch exited 0 after the program" ||
  { tail -n 5 "$T/hintw.err"; fail "hint-watch: watch did not exit 0"; }
wait_exit "$HD" 60 && pass "hint-daemon: the daemon exited 0 at the FIFO's end" ||
  { tail -n 5 "$T/hintd.err"; fail "hint-daemon: the daemon did not exit 0"; }
pl_finish
