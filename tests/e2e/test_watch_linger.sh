#!/usr/bin/env bash
# `eventlog-live watch` keeps the web view after the program's end (GHC
# 9.0 writes its eventlog only when a 2 MiB buffer fills, and at exit, so
# a short program's data arrives at its very end), with the real GHC 9.0
# program (tests/haskell/live_socket, plain build):
#  - linger: --linger, a wrapper that exits 7 around a 2 s run: once the
#    program printed its "end" line watch says "... exited with status 7;
#    the web view stays at URL until Ctrl-C", is still running, and
#    /metrics at that URL serves ghc_eventlog_HeapSize_bytes (data that
#    came only at the exit); no "processing ended before" note (the
#    processing ended after the program, not before); SIGINT then ends
#    watch with the wrapper's status 7;
#  - tty: no option, stdin a terminal (script(1)): the same message, watch
#    waits for SIGTERM and exits 0 (the program's status); at the default
#    level (watch --help: warn) no info line ("Reading eventlog from");
#  - tty ^C: Ctrl-C at a terminal (a pty) while the program runs ends
#    watch with the program, without the linger.
# Non-interactive runs without --linger (stdin /dev/null) exit at once:
# test_watch.sh "status". Every wait is bounded.
set -u
source "$(dirname "$0")/watch_lib.sh"
pl_build plain

echo "== linger: --linger, a wrapper exiting 7"
wl_start linger --linger -hT -- sh -c '"$0" "$@"; exit 7' "$PROG" \
  seconds=2 tag=l
wl_url linger
wait_line "$T/linger.out" '^end ' 60 || die "linger: the program did not end"
if wait_line "$T/linger.err" 'exited with status 7; the web view stays at http://[0-9.:]+/ until Ctrl-C' 60; then
  pass "linger: $(grep -o 'sh exited with status 7.*' "$T/linger.err")"
else
  tail -n 5 "$T/linger.err"; fail "linger: no 'stays at' line"
fi
alive "$WPID" && pass "linger: watch still runs after the program's end" ||
  fail "linger: watch exited (status $(wait "$WPID"; echo $?))"
if curl -s -m 5 "${URL}metrics" > "$T/metrics" &&
   grep -q '^ghc_eventlog_HeapSize_bytes' "$T/metrics"; then
  pass "linger: ${URL}metrics serves $(grep -m1 '^ghc_eventlog_HeapSize_bytes' "$T/metrics")"
else
  fail "linger: no ghc_eventlog_HeapSize_bytes on ${URL}metrics"
fi
grep -q 'processing ended before' "$T/linger.err" &&
  fail "linger: watch says the processing ended before the program" ||
  pass "linger: no 'processing ended before' note after a normal end"
kill -INT "$WPID"
wl_exits linger 7 30 "SIGINT ended watch with the program's status 7"

echo "== tty: stdin a terminal, no option"
if command -v script >/dev/null; then
  script -qec "exec '$EL' watch -- '$PROG' seconds=1 tag=t" "$T/tty.ts" \
    < /dev/null > "$T/tty.out" 2>&1 &
  SPID=$!
  PIDS+=("$SPID")
  if wait_line "$T/tty.out" 'exited with status 0; the web view stays at http://[0-9.:]+/ until Ctrl-C' 60; then
    pass "tty: watch stays after the program's end"
  else
    tail -n 5 "$T/tty.out"; fail "tty: no 'stays at' line"
  fi
  wpid=$(pgrep -P "$SPID" | head -1)
  [ -n "$wpid" ] && alive "$wpid" && pass "tty: watch still runs" ||
    fail "tty: watch is gone"
  grep -q 'Reading eventlog from' "$T/tty.out" &&
    fail "tty: an info line at the default level (warn)" ||
    pass "tty: no info line at the default level"
  [ -n "$wpid" ] && kill -TERM "$wpid"
  wait_exit "$SPID" 30
  st=$?
  [ $st = 0 ] && pass "tty: SIGTERM ended watch with the program's status 0" ||
    { tail -n 5 "$T/tty.out"; fail "tty: exit status $st, want 0"; }
else
  echo "SKIP tty: script(1) missing"
fi

echo "== tty ^C: Ctrl-C at the terminal while the program runs"
# The terminal's SIGINT reaches the program and watch alike: watch ends
# with the program (its status), without the linger (it lingered until a
# second ^C).
python3 - "$EL" "$PROG" > "$T/ctrlc.out" 2>&1 <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], ["eventlog-live", "watch", "--", sys.argv[2],
                           "seconds=30", "tag=c"])
out = b""
def read_for(t):
    global out
    end = time.time() + t
    while time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:
                return
read_for(4)
os.write(fd, b"\x03")
end, st = time.time() + 20, None
while time.time() < end and st is None:
    read_for(0.2)
    p, s = os.waitpid(pid, os.WNOHANG)
    if p:
        st = os.waitstatus_to_exitcode(s)
if st is None:
    os.kill(pid, 9)
sys.stdout.write(out.decode(errors="replace"))
print("\nwatch after ^C:", "exited %d" % st if st is not None else "still running")
PY
if grep -q '^watch after ^C: exited [1-9]' "$T/ctrlc.out" &&
   ! grep -q 'web view stays' "$T/ctrlc.out"; then
  pass "tty ^C: $(grep '^watch after' "$T/ctrlc.out"), no linger"
else
  tail -n 8 "$T/ctrlc.out"; fail "tty ^C: watch lingered or did not end"
fi
pl_finish
