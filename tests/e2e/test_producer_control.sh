#!/usr/bin/env bash
# Issue 11: every route of the daemon's control server reaches the real
# program (the real eventlog-socket on GHC 9.0, built with its control
# feature), each POST through `eventlog-live-otelcol --control-port`, as
# Grafana's buttons send it. What each command does is checked where the
# program shows it, not in our own output:
#
# 1. tests/haskell/live_socket (tag ctl, 20 s, +RTS -l -hT -i100 -RTS: the
#    heap profiling timer practically never fires, censuses come only at
#    start, at exit and on request):
#    - custom routes /control/live-test/1 and /2 (the program registers
#      the namespace live-test with two commands): the program prints
#      "control live-test <id> ..." on stdout and answers with a user
#      message "ctl live-test <id> handled <n>", which must reach the
#      receiver as a UserMessage log record (whenever: item 2 of the issue
#      is test_producer_socket.sh);
#    - request-heap-census, K = 4 times, 1.5 s apart: the program's .hp
#      file holds at least K more BEGIN_SAMPLE than a run without requests
#      (a 3 s baseline run with the same options: automatic censuses do
#      not depend on the length of the run, see docs/testing.md);
#    - start-heap-profiling, stop-heap-profiling: answered 200 and the
#      program still handles the custom command sent after them. What they
#      do is not observable on GHC 9.0: its scheduler restarts the heap
#      profiling timer, so neither has a lasting effect (and with -i100 the
#      timer is idle anyway; with a short -i the RTS's idle ticker makes
#      the count of automatic censuses erratic).
# 2. The profiled build (-prof -fprof-auto; tag prof, 14 s, +RTS -l -p -hy
#    -i100 -RTS): start-profiling and stop-profiling. The cost-centre
#    samples (PROF_SAMPLE_COST_CENTRE, ~1000/s) go into GHC 9.0's global
#    buffer; the program ends with a burst of heap censuses (census=end)
#    that fills that buffer, so it reaches the daemon before the exit
#    truncates the stream. Custom commands around them mark in the stream
#    when the program had executed them (the control thread runs commands
#    in order): stop-profiling, mark A, 3 s, mark B, start-profiling,
#    mark C. In the bytes the daemon received (--eventlog-log-file, decoded
#    with `eventlog-live show --json`): samples before A, none between A
#    and B, samples again after C. The last, only when some event of the
#    global buffer after C reached the daemon: eventlog-socket sometimes
#    cuts the connection at exit before sending that buffer (seen in
#    .ci/run: the stream ended between two events at 10.5 MB, no global
#    event after C); then it says SKIP instead.
set -u
source "$(dirname "$0")/producer_lib.sh"
pl_require socket
pl_build socket
t0=$SECONDS
K=4

echo "== baseline: no client, no request (3 s)"
pl_prog base addr=unix:"$T/base.sock" seconds=3 tag=base +RTS -l -hT -i100 -RTS
wait_exit "$PROG_PID" 60 || die "the baseline run failed: $(tail -n 3 "$T/base.err")"
base=$(grep -c '^BEGIN_SAMPLE' "$T/base/live_socket.hp" 2>/dev/null)
echo "  the baseline .hp holds ${base:-no} censuses"
[ -n "$base" ] || die "the baseline run wrote no live_socket.hp"

echo "== ctl: every route, 20 s"
sock=$T/ctl.sock
pl_receiver ctl
pl_daemon ctl --eventlog-socket "$sock" --control-port 0
pl_control_port ctl
pl_prog ctl addr=unix:"$sock" seconds=20 tag=ctl +RTS -l -hT -i100 -RTS
prog=$PROG_PID
pl_post_connected live-test/1 20
wait_line "$T/ctl.out" '^control live-test 1 ' 5 ||
  fail "the program did not print that it handled live-test/1"
pl_post_ok eventlog-socket/start-heap-profiling
pl_post_ok eventlog-socket/stop-heap-profiling
for i in $(seq $K); do
  sleep 1.5
  pl_post_ok eventlog-socket/request-heap-census
done
pl_post_ok live-test/2
wait_line "$T/ctl.out" '^control live-test 2 ' 5 ||
  fail "the program did not print that it handled live-test/2 (sent after" \
    "start/stop-heap-profiling and the census requests)"
wait_exit "$prog" 60 || fail "the program exited $?"
pl_daemon_stop ctl
stop_pid "$RCV_PID"
n=$(grep -c '^BEGIN_SAMPLE' "$T/ctl/live_socket.hp" 2>/dev/null)
if [ "${n:-0}" -ge $((base + K)) ]; then
  pass "request-heap-census x $K: $n censuses in the .hp (baseline $base)"
else
  fail "request-heap-census x $K: ${n:-no} censuses in the .hp, want at" \
    "least $((base + K)) (baseline $base)"
fi
mapfile -t texts < <(sed -n 's/^control live-test [0-9]* [0-9]* //p' "$T/ctl.out")
echo "  the program answered: ${texts[*]/%/;}"
"${CHECK[@]}" messages --name ctl --out "$T/ctl.out" --received "$RCV_OUT" \
  "${texts[@]}" || FAILS=$((FAILS + 1))
echo "   (took $((SECONDS - t0)) s)"

echo "== prof: start/stop-profiling with a profiled build, 14 s"
pl_build prof
sock=$T/prof.sock
pl_receiver prof
HEAP=y pl_daemon prof --eventlog-socket "$sock" --control-port 0
pl_control_port prof
pl_prog prof addr=unix:"$sock" seconds=14 tag=prof census=end \
  +RTS -l -p -hy -i100 -RTS
prog=$PROG_PID
pl_post_connected live-test/1 20
sleep 3
pl_post_ok eventlog-socket/stop-profiling
pl_post_ok live-test/2      # its answer: stopped
sleep 3
pl_post_ok live-test/2      # its answer: still stopped
pl_post_ok eventlog-socket/start-profiling
pl_post_ok live-test/1      # its answer: started
wait_exit "$prog" 60 || fail "the profiled program exited $?"
pl_daemon_stop prof
stop_pid "$RCV_PID"
[ -s "$T/prof/live_socket.prof" ] && pass "the profiled RTS wrote live_socket.prof"
mapfile -t texts < <(sed -n 's/^control live-test [0-9]* [0-9]* //p' "$T/prof.out")
if [ ${#texts[@]} = 4 ]; then
  # (The stream ends cut short at the exit: show reports it, status 1.)
  "$EL" show --json "$T/prof.tee" 2> "$T/prof.show.err" |
    grep -E '"name":"(USER_MSG|PROF_SAMPLE_COST_CENTRE)"' > "$T/prof.stream.jsonl"
  "${CHECK[@]}" profstream --name prof --stream "$T/prof.stream.jsonl" \
    --stop "${texts[1]}" --still "${texts[2]}" --start "${texts[3]}" ||
    FAILS=$((FAILS + 1))
else
  fail "the profiled program answered ${#texts[@]} custom commands, want 4:" \
    "$(grep '^control' "$T/prof.out")"
fi
echo "   (took $((SECONDS - t0)) s in all)"
pl_finish
