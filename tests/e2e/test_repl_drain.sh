#!/usr/bin/env bash
# Leaving `eventlog-live repl` never hangs the program that writes its
# FIFO (docs/repl.md "File and live sources", docs/sources.md "Stopping").
# A real GHC 9.0 program (tests/haskell/live_socket, plain build) writes
# its eventlog with +RTS -l -ol FIFO into `eventlog-live repl
# --eventlog-file FIFO`, whose lines come from a pipe; the repl leaves
# while the program still runs:
#   quit:    `:quit` after the program's 2nd marker: the program still
#            exits 0 on its own (its RTS opened the FIFO read-write: had
#            the repl closed it, the program would block for ever in
#            pipe_write); the repl drains, says so and how many bytes it
#            discarded, exits 0, and says nothing about the eventlog's end
#            ("without its end-of-data marker", "truncated"): the quit cut
#            it, not the program.
#   eof:     the same with the end of the repl's input (Ctrl-D) instead.
#   control: `:quit` with --eventlog-drain-timeout 0 (stop at once): the
#            program is left blocked in pipe_write, which shows that the
#            runs above can fail; the test then drains the FIFO itself.
#   cut:     a real truncated eventlog (a file cut inside an event with
#            head -c, catted into the FIFO) still gets its warning, which
#            names the byte where the input ended (head's count), when
#            :quit comes after the input's end.
# Every wait is bounded; the bounds are generous (no timing assertion).
# ctest-labels: e2e
set -u
source "$(dirname "$0")/producer_lib.sh"
command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc)"
[ -x "$EL" ] || skip "$EL not built"
SECS=6
: "${EL_EVENTLOGS:=$SRC/tests/data/eventlogs}"

# run NAME HOW [REPL ARGS...]: the program writes $T/NAME.fifo for SECS s;
# after its 2nd marker the repl gets ":quit" (HOW=quit) or the end of its
# input (HOW=eof). Sets PROG_PID, RPID.
run() {
  local name=$1 how=$2; shift 2
  mkfifo "$T/$name.fifo" "$T/$name.cmd"
  pl_prog "$name" seconds=$SECS tag="$name" +RTS -l -ol"$T/$name.fifo" -RTS
  "$EL" repl --no-history --eventlog-file "$T/$name.fifo" "$@" \
    < "$T/$name.cmd" > "$T/$name.repl.out" 2> "$T/$name.repl.err" &
  RPID=$!
  PIDS+=("$RPID")
  exec 5> "$T/$name.cmd"
  if ! wait_line "$T/$name.out" '^marker 2 ' 30; then
    exec 5>&-
    die "$name: the program printed no 2nd marker in 30 s"
  fi
  [ "$how" = quit ] && echo ':quit' >&5
  exec 5>&-
}

# check_drained NAME: the program exited 0 by itself, the repl exited 0
# after draining, with nothing said about the eventlog's end.
check_drained() {
  local name=$1 st err=$T/$1.repl.err
  wait_exit "$PROG_PID" $((SECS + 60))
  st=$?
  if [ $st = 0 ] && grep -q '^end ' "$T/$name.out"; then
    pass "$name: the program ran to its end and exited 0"
  else
    [ $st = 124 ] && pl_blocked_in_pipe_write "$PROG_PID" &&
      echo "  (it is blocked in pipe_write)"
    fail "$name: the program exited $st (124: still running after $((SECS + 60)) s)"
  fi
  wait_exit "$RPID" 60
  st=$?
  [ $st = 0 ] && pass "$name: the repl exited 0" ||
    { sed 's/^/  repl: /' "$err"; fail "$name: the repl exited $st"; }
  grep -q 'stopping; reading on (and discarding) until its writer closes it' \
    "$err" && pass "$name: the repl said it drains the FIFO" ||
    { sed 's/^/  repl: /' "$err"; fail "$name: no drain message"; }
  local n
  n=$(sed -n 's/.*its writer closed it .* after the stop; discarded \([0-9]*\) bytes.*/\1/p' "$err")
  [ -n "$n" ] && [ "$n" -gt 0 ] &&
    pass "$name: the writer closed it, $n bytes discarded" ||
    fail "$name: no 'writer closed it ... discarded N>0 bytes' line"
  if grep -qE 'end-of-data marker|truncated' "$err"; then
    sed 's/^/  repl: /' "$err"
    fail "$name: a word on the eventlog's end, which the quit cut"
  else
    pass "$name: nothing said about the eventlog's end"
  fi
}

pl_build plain

echo "== quit: :quit while the program runs"
run quit quit
check_drained quit

echo "== eof: the repl's input ends while the program runs"
run eof eof
check_drained eof

echo "== control: --eventlog-drain-timeout 0 leaves the program blocked"
run control quit --eventlog-drain-timeout 0
wait_exit "$RPID" 60 || fail "control: the repl did not exit 0"
pl_check_undrained control

echo "== cut: a truncated eventlog still warns"
CUT=100005   # inside an event of threads.eventlog (a STOP_THREAD)
head -c $CUT "$EL_EVENTLOGS/ghc-9.0/threads.eventlog" > "$T/cut.eventlog"
mkfifo "$T/cut.fifo" "$T/cut.cmd"
"$EL" repl --no-history --eventlog-file "$T/cut.fifo" \
  < "$T/cut.cmd" > "$T/cut.repl.out" 2> "$T/cut.repl.err" &
RPID=$!
PIDS+=("$RPID")
exec 5> "$T/cut.cmd"
timeout 30 cp "$T/cut.eventlog" "$T/cut.fifo" || fail "cut: writing the FIFO"
wait_line "$T/cut.repl.err" 'end of input\]' 30 ||
  fail "cut: the repl did not see the end of its input"
echo ':quit' >&5
exec 5>&-
wait_exit "$RPID" 30
st=$?
[ $st = 0 ] && pass "cut: the repl exited 0" || fail "cut: the repl exited $st"
if grep -q "truncated inside an event.*the input ends at byte $CUT" \
  "$T/cut.repl.err"; then
  pass "cut: the warning names the cut and byte $CUT, where the input ended"
else
  sed 's/^/  repl: /' "$T/cut.repl.err"
  fail "cut: no truncation warning naming byte $CUT"
fi
grep -q 'stopping; reading on' "$T/cut.repl.err" &&
  fail "cut: drained an input that had ended" ||
  pass "cut: no drain after the input's end"
pl_finish
