#!/usr/bin/env bash
# ctest-labels: asan
# Issue 11: a program killed (SIGKILL) and another started on the same
# Unix socket path, with the real eventlog-socket on GHC 9.0. The daemon
# (started first, --eventlog-socket SOCK) is connected to run 1
# (tag run1, +RTS -l -hT -i0.2 -RTS) when run 1 is killed after its 8th
# marker: the socket file stays behind (the library unlinks it before it
# binds, and at a normal exit), the daemon's connection ends and it
# retries. Run 2 (tag run2, 16 s) binds the same path 1 s later; the
# daemon reconnects: a new session, with a new header (counted in the
# daemon's raw input, --eventlog-log-file) and a clock of its own. Run 2's
# RTS clock starts again at 0, so a daemon that kept run 1's session start
# would date run 2's markers ~9 s early. Checked against the programs'
# stdout:
#   run 1: the markers received carry times of run 1, none twice, and
#          every marker of run 1 in the daemon's raw input was exported;
#   run 2: as test_producer_socket.sh (a heap point dated in run 2 and at
#          least half of the markers before run 2 exits, times within 1 s
#          median; not /metrics, whose lines carry no time), and every
#          marker time inside run 2 ([start - 3 s, end + 3 s]);
#   the raw input holds two eventlog headers (two sessions).
set -u
source "$(dirname "$0")/producer_lib.sh"
pl_require socket
pl_build socket
sock=$T/app.sock
t0=$SECONDS

pl_receiver restart
pl_daemon restart --eventlog-socket "$sock"
sleep 1
pl_prog run1 addr=unix:"$sock" seconds=30 tag=run1 +RTS -l -hT -i0.2 -RTS
run1=$PROG_PID
wait_line "$T/run1.out" '^marker 8 ' 30 || die "run 1 printed no 8th marker"
kill -KILL "$run1"
killed_ms=$(now_ms)
wait "$run1" 2>/dev/null
echo "run 1 killed after its marker 8 ($((SECONDS - t0)) s)"
[ -S "$sock" ] && echo "  (its socket file stays behind)"
sleep 1
pl_prog run2 addr=unix:"$sock" seconds=16 tag=run2 +RTS -l -hT -i0.2 -RTS
wait_exit "$PROG_PID" 80
st=$?
[ $st = 0 ] || { tail -n 5 "$T/run2.err"; fail "run 2 exited $st"; }
sleep 1
pl_daemon_stop restart
stop_pid "$RCV_PID"

# /metrics is not checked for run 2: its lines carry no time and no
# process, so run 1's HeapSize would pass for run 2's (test_producer_socket.sh
# checks /metrics).
"${CHECK[@]}" killed --name run1 --out "$T/run1.out" --received "$RCV_OUT" \
  --tag run1 --tee "$T/restart.tee" --daemon-err "$T/restart.daemon.err" \
  --killed-ms "$killed_ms" ||
  FAILS=$((FAILS + 1))
"${CHECK[@]}" live --name run2 --out "$T/run2.out" --received "$RCV_OUT" \
  --tag run2 --seconds 16 --window \
  --tee "$T/restart.tee" --daemon-err "$T/restart.daemon.err" ||
  FAILS=$((FAILS + 1))
heads=$(grep -a -o 'hdrbhetb' "$T/restart.tee" | wc -l)
if [ "$heads" -ge 2 ]; then
  pass "the daemon received $heads eventlog headers (a session per connection)"
else
  fail "the daemon received $heads eventlog headers, want 2 or more"
fi
grep -i 'warn\|error' "$T/restart.daemon.err" | head -n 8 | sed 's/^/  daemon: /'
echo "   (took $((SECONDS - t0)) s)"
pl_finish
