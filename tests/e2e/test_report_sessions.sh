#!/usr/bin/env bash
# `eventlog-live report` of a file holding two eventlog sessions (two real
# GHC eventlogs one after the other, as a tee of a program run twice
# writes them): the page must show both, told apart, on its one time axis
# (docs/report.md "What the page shows"). Before, the threads table listed
# the last session's threads only, timed from that session's own RTS
# start; the heap profile, heap size and allocation charts joined the
# first session's last point to the second's first across the time no
# program ran; and the allocation of the first session's capability 0 was
# lost (its count was taken for the second session's).
# The independent expectations come from the ghc-events references of the
# two inputs (tests/e2e/report_sessions_expect.py): each session's thread
# ids (CREATE_THREAD), each thread's creation time on the page's axis
# (each session's RTS start = its WALL_CLOCK_TIME's Unix time minus the
# event's time), the bytes allocated (each capability's last "total bytes
# till now", summed), and where the sessions ran. Chromium
# (tests/web/report_sessions_check.js) reads the page as a person does:
# the threads table's rows, the figures, and the drawn charts' pixels in
# the middle of the time between the sessions.
# ctest-labels: e2e web
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
BIN=$BUILD/eventlog-live
A=$EVENTLOGS/ghc-9.0/oddball-hT.eventlog
B=$EVENTLOGS/ghc-9.0/heapy-hT.eventlog
[ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 77; }
[ -f "$A" ] && [ -f "$A.reference" ] && [ -f "$B" ] && [ -f "$B.reference" ] ||
  { echo "SKIP: no shared eventlogs"; exit 77; }
command -v node >/dev/null || { echo "SKIP: no node"; exit 77; }
[ -x /usr/bin/chromium ] || { echo "SKIP: no chromium"; exit 77; }
[ -d "$SRC/tests/web/node_modules/playwright-core" ] ||
  { echo "SKIP: no playwright-core in tests/web/node_modules"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-report-sessions.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
rc=0
bad() { echo "FAIL: $*"; rc=1; }

cat "$A" "$B" >"$TMP/two.eventlog"
"$BIN" report "$TMP/two.eventlog" -o "$TMP/two.html" 2>"$TMP/err" ||
  { echo "FAIL: report: $(head -3 "$TMP/err")"; exit 1; }
python3 "$SRC/tests/e2e/report_sessions_expect.py" "$A.reference" \
  "$B.reference" >"$TMP/expect.json" || { echo "FAIL: expectations"; exit 1; }
SHOT=${EL_REPORT_SESSIONS_SHOT:-$BUILD/report-sessions.png}
timeout 300 node "$SRC/tests/web/report_sessions_check.js" \
  --user-data-dir "$TMP/udd" --shot "$SHOT" "$TMP/two.html" \
  "$TMP/expect.json" || rc=1
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
