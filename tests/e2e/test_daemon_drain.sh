#!/usr/bin/env bash
# Issue 14 item 2: stopping the daemon never hangs the program that writes
# its FIFO. A real GHC 9.0 program (tests/haskell/live_socket, plain build,
# as test_producer_fifo.sh) writes its eventlog with +RTS -l -ol FIFO into
# `eventlog-live-otelcol --eventlog-file FIFO`; the daemon gets SIGINT
# while the program still runs.
#   drain:   (default --eventlog-drain-timeout 10) the program still exits
#            0 on its own; the daemon exits 0 once the writer closed the
#            FIFO, says it drained and how many bytes it discarded (log and
#            --stats summary).
#   control: --eventlog-drain-timeout 0 (the old behaviour: stop at once):
#            the program is left blocked in pipe_write (the RTS opens the
#            -ol file read-write, so it never gets EPIPE), which shows the
#            drain run can fail; the test then drains the FIFO itself and
#            the program exits.
# Every wait is bounded; the bounds are generous (no timing assertion).
set -u
source "$(dirname "$0")/producer_lib.sh"
command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc)"
[ -x "$DAEMON" ] || skip "$DAEMON not built"
SECS=6
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

# run NAME DRAIN: daemon on a FIFO, program, SIGINT to the daemon after the
# program's 2nd marker. Sets PROG_PID, DPID.
run() {
  local name=$1 drain=$2 fifo=$T/$1.fifo
  mkfifo "$fifo"
  "$DAEMON" --eventlog-file "$fifo" --eventlog-drain-timeout "$drain" \
    -v info -s > "$T/$name.daemon.out" 2> "$T/$name.daemon.err" &
  DPID=$!
  PIDS+=("$DPID")
  pl_prog "$name" seconds=$SECS tag="$name" +RTS -l -ol"$fifo" -RTS
  wait_line "$T/$name.out" '^marker 2 ' 30 ||
    die "$name: the program printed no 2nd marker in 30 s"
  kill -INT "$DPID"
}

pl_build plain

echo "== drain: SIGINT to the daemon while the program runs"
run drain 10
wait_exit "$PROG_PID" $((SECS + 60))
st=$?
if [ $st = 0 ]; then
  pass "drain: the program exited 0 on its own after the daemon's SIGINT"
else
  [ $st = 124 ] && pl_blocked_in_pipe_write "$PROG_PID" &&
    echo "  (it is blocked in pipe_write)"
  fail "drain: the program exited $st (124: still running after $((SECS + 60)) s)"
fi
wait_exit "$DPID" 60
dst=$?
[ $dst = 0 ] && pass "drain: the daemon exited 0" ||
  { tail -n 20 "$T/drain.daemon.err"; fail "drain: the daemon exited $dst"; }
if grep -q 'stopping; reading on (and discarding) until its writer closes it' \
  "$T/drain.daemon.err"; then
  pass "drain: the daemon said it drains the FIFO"
else
  fail "drain: no drain message in the daemon's log"
fi
n=$(sed -n 's/.*its writer closed it .* after the stop; discarded \([0-9]*\) bytes.*/\1/p' \
  "$T/drain.daemon.err")
if [ -n "$n" ] && [ "$n" -gt 0 ]; then
  pass "drain: the log says the writer closed it, $n bytes discarded"
else
  tail -n 20 "$T/drain.daemon.err"
  fail "drain: no 'writer closed it ... discarded N>0 bytes' line"
fi
grep -q "^Drained after the stop: $n bytes discarded" "$T/drain.daemon.err" &&
  pass "drain: the --stats summary reports the $n bytes" ||
  fail "drain: the --stats summary does not report the drain"

echo "== control: --eventlog-drain-timeout 0 leaves the program blocked"
run control 0
wait_exit "$DPID" 60 || fail "control: the daemon did not exit 0"
pl_check_undrained control
pl_finish
