#!/usr/bin/env bash
# A second SIGINT during the daemon's drain of a FIFO (docs/sources.md
# "Stopping"): the daemon says "second signal: stopped draining" and exits
# 0; it must not then claim "its writer closed it ... after the stop"
# while the writer (here a shell holding the FIFO open) still has it open.
# Every wait is bounded; no timing assertion.
set -u
source "$(dirname "$0")/wait_lib.sh" # wait_line
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
DAEMON=$BUILD/eventlog-live-otelcol
EV=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/threads.eventlog
[ -x "$DAEMON" ] || { echo "SKIP: $DAEMON not built"; exit 77; }
[ -f "$EV" ] || { echo "SKIP: no $EV"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-drain2.XXXXXX")
WPID=
cleanup() { [ -n "$WPID" ] && kill "$WPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail=0
mkfifo "$T/f"
"$DAEMON" --no-otlp -v info --eventlog-file "$T/f" > /dev/null 2> "$T/err" &
DPID=$!
# The writer: the eventlog, then it keeps the FIFO open (sleep's stdout).
(cat "$EV"; exec sleep 120) > "$T/f" &
WPID=$!
wait_line "$T/err" 'Reading eventlog from' 30 || echo "note: no 'Reading' line"
sleep 1 # let the daemon read the eventlog (not asserted on)
kill -INT "$DPID"
wait_line "$T/err" 'stopping; reading on' 30 ||
  { cat "$T/err"; echo "FAIL: no drain after the first SIGINT"; fail=1; }
kill -INT "$DPID"
end=$((SECONDS + 30))
while kill -0 "$DPID" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
kill -0 "$DPID" 2>/dev/null && { kill -9 "$DPID"; echo "FAIL: daemon still runs"; fail=1; }
wait "$DPID"; rc=$?
[ $rc = 0 ] && echo "ok: exit 0 after the second signal" ||
  { echo "FAIL: exit $rc"; fail=1; }
grep -q 'second signal: stopped draining' "$T/err" &&
  echo "ok: $(grep -o 'second signal: stopped draining.*' "$T/err")" ||
  { cat "$T/err"; echo "FAIL: no 'second signal' line"; fail=1; }
grep -q 'writer closed it' "$T/err" &&
  { grep 'writer closed it' "$T/err"; echo "FAIL: claims the writer closed the FIFO"; fail=1; } ||
  echo "ok: no 'writer closed it' claim (the writer still holds it)"
grep -q 'error' "$T/err" &&
  { grep 'error' "$T/err"; echo "FAIL: an error line after a stop"; fail=1; } ||
  echo "ok: no error line"
[ $fail = 0 ] && echo PASS
exit $fail
