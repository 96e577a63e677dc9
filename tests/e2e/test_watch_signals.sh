#!/usr/bin/env bash
# Signals and `eventlog-live watch` (issue 14) with a real GHC 9.0 program
# (tests/haskell/live_socket, plain build):
#  - sigint: SIGINT sent to watch (kill, as a supervisor would) is
#    forwarded to the program, which dies of it (GHC re-raises SIGINT after
#    UserInterrupt): watch exits 130 = 128 + SIGINT, the program is gone,
#    and nothing is left blocked; bound 30 s (the program would run 60 s);
#  - crash: the processing ends while the program runs (test hook
#    EL_TEST_WATCH_STOP_PROCESSING_ON_SIGINT=1: SIGINT stops the pipeline
#    at once instead of being forwarded). The program (whose RTS opened the
#    -ol FIFO read-write, so it never gets EPIPE) must still run to its end
#    and exit 0: watch drains the FIFO until then, says so, counts the
#    bytes, and exits 0. (tests/e2e/test_daemon_drain.sh shows that an
#    undrained FIFO leaves this program blocked in pipe_write.)
#  - kill9: watch killed with SIGKILL (nothing it can handle): the kernel
#    kills the program too (PR_SET_PDEATHSIG), within 10 s (h74: it ran
#    on, then blocked for ever on its full FIFO, which it holds open for
#    reading itself); kill9-wrapper: the same when the program is the
#    child of a shell script (watch's guard kills its process group, h76).
#  - held: a wrapper that leaves its GHC program running in the
#    background: after the input ended, watch drains the FIFO until the
#    program closes it, so the program runs to its end, not blocked;
#  - term-wrapper: SIGTERM sent to watch (not at a terminal) goes to the
#    program's whole process group, as a terminal's signals do: the GHC
#    program a wrapper script started goes too (h77: the wrapper alone got
#    it, watch exited 143 and the GHC program ran on, blocked for ever on
#    its FIFO), and watch exits 143.
set -u
source "$(dirname "$0")/watch_lib.sh"
pl_build plain

echo "== sigint: SIGINT to watch"
wl_start sigint -- "$PROG" seconds=60 tag=i
wl_url sigint
wl_program_pid sigint
wait_line "$T/sigint.out" '^marker 2 ' 30 || die "sigint: no 2nd marker"
kill -INT "$WPID"
wl_exits sigint 130 30 "watch exited 130 (the program died of SIGINT)"
alive "$PPID_" && fail "sigint: the program $PPID_ still runs" ||
  pass "sigint: the program is gone"
ls -d "$T"/eventlog-live-watch.* >/dev/null 2>&1 &&
  fail "sigint: a private folder is left" || pass "sigint: no folder left"

echo "== crash: the processing stops, the program runs on"
EL_TEST_WATCH_STOP_PROCESSING_ON_SIGINT=1 wl_start crash -- "$PROG" \
  seconds=8 tag=c
wl_url crash
wl_program_pid crash
wait_line "$T/crash.out" '^marker 2 ' 30 || die "crash: no 2nd marker"
kill -INT "$WPID"
wl_exits crash 0 60 "watch exited 0, the program's status"
grep -q '^end ' "$T/crash.out" && pass "crash: the program ran to its end" ||
  fail "crash: the program did not reach its end"
grep -q 'the processing ended before .*: reading and discarding' "$T/crash.err" &&
  pass "crash: watch said it drains the FIFO" ||
  fail "crash: no drain message"
n=$(sed -n 's/.*discarded \([0-9]*\) bytes of eventlog after the processing ended.*/\1/p' \
  "$T/crash.err")
[ -n "$n" ] && [ "$n" -gt 0 ] && pass "crash: $n bytes drained and counted" ||
  { tail -n 10 "$T/crash.err"; fail "crash: no drained byte count > 0"; }
ls -d "$T"/eventlog-live-watch.* >/dev/null 2>&1 &&
  fail "crash: a private folder is left" || pass "crash: no folder left"

# gone_case NAME SIG WHAT -- PROGRAM ARGS...: watch runs PROGRAM and is
# sent SIG once its 2nd marker came: the GHC program (the one that prints
# "start", a child of PROGRAM when that is a wrapper) must be gone within
# 10 s (WHAT says why), and after SIGTERM watch must have exited 143, the
# status of its program (the wrapper died of it too).
gone_case() {
  local name=$1 sig=$2 what=$3
  shift 4
  wl_start "$name" -- "$@"
  wl_url "$name"
  wl_program_pid "$name"
  wait_line "$T/$name.out" '^marker 2 ' 30 || die "$name: no 2nd marker"
  kill -"$sig" "$WPID"
  for _ in $(seq 100); do alive "$PPID_" || break; sleep 0.1; done
  if alive "$PPID_"; then
    kill -KILL "$PPID_"
    fail "$name: the program $PPID_ still ran 10 s after watch got SIG$sig"
  else
    pass "$name: $what"
  fi
  [ "$sig" = TERM ] && wl_exits "$name" 143 30 "watch exited 143 (SIGTERM)"
}

echo "== kill9: watch killed (SIGKILL), the program goes too"
gone_case kill9 KILL "the program was killed with watch" -- "$PROG" seconds=60 tag=k
echo "== kill9-wrapper: the same through a shell script that does not exec"
printf '#!/bin/sh\n"%s" "$@"\necho "wrapper: status $?"\n' "$PROG" > "$T/wrapper.sh"
chmod +x "$T/wrapper.sh"
gone_case kill9w KILL "the program (the wrapper's child) was killed with watch" \
  -- "$T/wrapper.sh" seconds=60 tag=kw
echo "== term-wrapper: SIGTERM to watch reaches the wrapper's GHC program"
gone_case termw TERM "the program (the wrapper's child) got the SIGTERM" \
  -- "$T/wrapper.sh" seconds=60 tag=tw
echo "== held: the wrapper exits, its GHC program runs on in the background"
# The wrapper starts the program in the background (GHCRTS: it opens the
# FIFO) and exits at once. The program writes for 6 s, its pipe mostly
# empty (GHC 9.0 writes 2 MiB buffers), so 2 s after the wrapper's exit
# the input ends ("another process still holds its eventlog"). watch
# then reads and discards the FIFO until that holder closes it: the
# program runs to its end and exits, and watch after it (h78: watch left
# at once and the program blocked for ever on its next 2 MiB write).
printf '#!/bin/sh\n"%s" "$@" &\n' "$PROG" > "$T/bg.sh"
chmod +x "$T/bg.sh"
wl_start held -- "$T/bg.sh" seconds=6 tag=h
wl_program_pid held
wl_exits held 0 40 "watch exited 0, the wrapper's status"
wait_line "$T/held.out" '^end ' 5 &&
  pass "held: the wrapper's program ran to its end" ||
  fail "held: the wrapper's program did not reach its end"
if alive "$PPID_"; then
  kill -KILL "$PPID_"
  fail "held: the program $PPID_ still ran after watch exited"
else
  pass "held: the program is gone"
fi

pl_finish
