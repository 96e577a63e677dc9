#!/usr/bin/env bash
# `eventlog-live watch --eventlog-socket PATH -- PROGRAM` (issue 14) with
# the real GHC 9.0 program built with the real eventlog-socket library
# (tests/haskell/live_socket, socket build; it listens where addr= says,
# here the same PATH): watch connects there (it sets
# GHC_EVENTLOG_UNIX_PATH too, checked in the program's environment), no
# FIFO is made, /metrics serves ghc_eventlog_HeapSize_bytes while the
# program runs, and watch ends when the program exits (a socket source
# would otherwise retry forever), with its status. A normal run warns
# about nothing watch expects (h25's F3): not the failed connects while
# the program starts and after it exited (watch started it and sees it
# exit), not eventlog-socket's 24 stray bytes before each connection's
# header (said at info).
set -u
source "$(dirname "$0")/watch_lib.sh"
pl_require socket
pl_build socket
sock=$T/app.sock

echo "== socket: watch --eventlog-socket -- live_socket addr=unix:... seconds=10"
wl_start sock --eventlog-socket "$sock" -- "$PROG" addr="unix:$sock" \
  seconds=10 tag=k
wl_url sock
wl_program_pid sock
tr '\0' '\n' < "/proc/$PPID_/environ" 2>/dev/null |
  grep -qx "GHC_EVENTLOG_UNIX_PATH=$sock" &&
  pass "socket: the program has GHC_EVENTLOG_UNIX_PATH=$sock" ||
  fail "socket: GHC_EVENTLOG_UNIX_PATH not set in the program"
ls -d "$T"/eventlog-live-watch.* >/dev/null 2>&1 &&
  fail "socket: a FIFO folder was made" || pass "socket: no FIFO folder"
got=
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ] && alive "$WPID"; do
  running=1
  grep -q '^end ' "$T/sock.out" && running=0
  if curl -s -m 5 "${URL}metrics" 2>/dev/null |
     grep -q '^ghc_eventlog_HeapSize_bytes'; then
    got=$running
    break
  fi
  sleep 0.5
done
[ "$got" = 1 ] && pass "socket: /metrics served HeapSize while the program ran" ||
  fail "socket: no HeapSize on ${URL}metrics while the program ran"
# GHC 9.0: eventlog-socket sends only full 2 MiB buffers (and at connect
# and exit), as a FIFO does; watch says so, as for a FIFO (h39)
grep -q "eventlog-socket sends its eventlog when a capability's 2 MiB buffer fills" "$T/sock.err" &&
  pass "socket: the 2 MiB buffer wait said" ||
  { cat "$T/sock.err"; fail "socket: GHC 9.0's 2 MiB buffer wait not said"; }
wait_exit "$WPID" 60
st=$?
[ $st = 0 ] && pass "socket: watch ended with the program, status 0" ||
  { tail -n 10 "$T/sock.err"; fail "socket: watch exited $st (124: still running)"; }
if grep -q "warning: Failed to connect on Unix socket $sock" "$T/sock.err"; then
  cat "$T/sock.err"; fail "socket: a failed connect was warned about"
else
  pass "socket: no warning for the connects while the program starts or ends"
fi
grep -q "warning: .*stray bytes" "$T/sock.err" &&
  { cat "$T/sock.err"; fail "socket: eventlog-socket's stray marker warned about"; } ||
  pass "socket: eventlog-socket's stray marker not warned about"
grep -q "info: Unix socket $sock: skipped 24 stray bytes at byte 0 before the header at byte 24" \
  "$T/sock.err" && pass "socket: the stray marker said at info" ||
  fail "socket: no info line for the stray marker (test premise)"
pl_finish
