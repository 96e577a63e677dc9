#!/usr/bin/env bash
# The console exporter never holds up a live program (README, docs/otlp.md
# "Console"): a plain GHC 9.0 program (tests/haskell/live_socket) writes
# its eventlog into a FIFO read by eventlog-live-otelcol with the console
# exporter and --traces (about 25 MB of OTLP/JSON a second), whose stdout
# is a pipe that nobody reads (its 64 KiB fill, then every write would
# block). Checked:
#   - the program ends on time (it used to block on its eventlog FIFO while
#     the daemon sat in a write to stdout, and SIGTERM could not stop it);
#   - the daemon drops what does not fit its 64 MiB console queue, saying
#     so, sees the end of its input, gives up the console output after its
#     flush bound and exits 0, saying some telemetry could not be
#     delivered;
#   - with stdout closed early (`| head -c 300`), one warning names the
#     broken pipe, and the daemon exits 0 when the input ends.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/producer_lib.sh"
pl_require
pl_build plain
SECS=8
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=console OTEL_PROFILES_EXPORTER=none

# 1. stdout is a pipe nobody reads.
mkfifo "$T/in" "$T/out"
(exec 3<"$T/out"; sleep $((SECS + 60))) &
hold=$!
PIDS+=("$hold")
"$DAEMON" --service-name slow --eventlog-file "$T/in" -hT --traces \
  --export-interval 1s > "$T/out" 2> "$T/d.err" &
daemon=$!
PIDS+=("$daemon")
t0=$SECONDS
pl_prog slow seconds=$SECS tag=slow +RTS -l -hT -i0.2 -ol"$T/in" -RTS
wait_exit "$PROG_PID" $((SECS + 30))
st=$?
took=$((SECONDS - t0))
if [ "$st" = 0 ] && [ "$took" -le $((SECS + 15)) ]; then
  pass "the program ran its $SECS s in $took s: not held up by our stdout"
else
  fail "the program: status $st after $took s (asked for $SECS s)"
fi
wait_exit "$daemon" 40
st=$?
[ "$st" = 0 ] && grep -q "some telemetry could not be delivered" "$T/d.err" &&
  grep -q "console: the output is not read fast enough (64 MiB waiting)" "$T/d.err" &&
  pass "the daemon gave up the unread console output and exited 0" ||
  { fail "the daemon: status $st"; tail -n 5 "$T/d.err" | sed 's/^/  daemon: /'; }
stop_pid "$hold"

# 2. stdout closed early.
rm -f "$T/in"; mkfifo "$T/in"
pl_prog closed seconds=4 tag=closed +RTS -l -hT -i0.2 -ol"$T/in" -RTS
"$DAEMON" --service-name closed --eventlog-file "$T/in" -hT \
  --export-interval 1s 2> "$T/c.err" | head -c 300 > /dev/null
st=${PIPESTATUS[0]}
n=$(grep -c "console: writing the output failed: Broken pipe" "$T/c.err")
[ "$st" = 0 ] && [ "$n" = 1 ] &&
  pass "stdout closed: one warning naming the broken pipe, status 0" ||
  { fail "stdout closed: status $st, $n warnings"; sed 's/^/  daemon: /' "$T/c.err"; }
wait_exit "$PROG_PID" 30 || fail "the second program did not end"
pl_finish
