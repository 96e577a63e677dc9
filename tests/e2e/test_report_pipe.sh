#!/usr/bin/env bash
# `eventlog-live report -` of two GHC 9.0 eventlogs concatenated and piped
# in (cat A B | eventlog-live report - -o page.html): a pipe is read as a
# live stream, so each session is dated from the arrival of its bytes
# until its WALL_CLOCK_TIME comes, which GHC 9.0 writes at exit. Before,
# the records reduced meanwhile kept that estimate (the time the file was
# read, days after it ran): the first session's allocation points landed
# 489,827 s along the axis, the axis ran to there ("duration 8025 min")
# and the heap charts were two columns, empty to the eye. Now the report
# holds a session's records until its clock settles and moves them to it
# (src/report/rp_clock.c).
# Checked (tests/e2e/report_pipe_check.py): the page's data equals that
# of the report of the same bytes as a file, and matches the inputs'
# ghc-events references (independent): the axis and where the sessions
# lie, the heap size and live data points and peaks, the bytes allocated,
# the censuses; then Chromium reads the piped page as a person does
# (tests/web/report_sessions_check.js, as test_report_sessions.sh does for
# the file): the threads table's times, the figures, and the heap charts
# drawn in the first session and not between the sessions.
# Then a session without WALL_CLOCK_TIME (a GHC 9.0 log cut mid-run; a
# GHC 8 log cut, ghc-events' testlog-part) followed by a whole log: the
# file takes it to have ended where the next one started, and so must
# the pipe (report_pipe_check.py --after: the file's data, the header's
# clock from "next_session" in both, and where B's reference puts the
# second session).
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
TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-report-pipe.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
rc=0

cat "$A" "$B" >"$TMP/two.eventlog"
cat "$A" "$B" | "$BIN" report - -o "$TMP/pipe.html" 2>"$TMP/err" ||
  { echo "FAIL: report -: $(head -3 "$TMP/err")"; exit 1; }
"$BIN" report "$TMP/two.eventlog" -o "$TMP/file.html" 2>"$TMP/err" ||
  { echo "FAIL: report FILE: $(head -3 "$TMP/err")"; exit 1; }
python3 "$SRC/tests/e2e/report_pipe_check.py" "$TMP/pipe.html" \
  "$TMP/file.html" "$A.reference" "$B.reference" || rc=1

# A session without WALL_CLOCK_TIME (A cut mid-run: a killed GHC 9.0
# program writes it only at exit) followed by B: the file takes it to
# have ended when B started (docs/lua-api.md §3 "The session clock"),
# and so does the pipe, both saying so (clock_from "next_session").
# Before, the pipe kept its arrival estimate: the axis ran to 492,611 s
# and the heap charts were empty; then it was placed but said "arrival"
# (the file "file_mtime"). Then the same for a GHC 8 log cut by
# ghc-events' own test data (testlog-part) followed by A.
head -c 230429 "$A" >"$TMP/cut.eventlog"
T=$EVENTLOGS/ghc-events/testlog-part.eventlog
for pair in "cut.eventlog:$B" "testlog-part:$A"; do
  first=${pair%%:*} second=${pair#*:}
  case $first in cut.eventlog) first=$TMP/cut.eventlog ;; *) first=$T ;; esac
  [ -f "$first" ] || { echo "note: no $first"; continue; }
  cat "$first" "$second" >"$TMP/joined.eventlog"
  cat "$TMP/joined.eventlog" | "$BIN" report - -o "$TMP/jpipe.html" \
    2>"$TMP/err" ||
    { echo "FAIL: report - (joined): $(head -3 "$TMP/err")"; rc=1; continue; }
  "$BIN" report "$TMP/joined.eventlog" -o "$TMP/jfile.html" 2>"$TMP/err" ||
    { echo "FAIL: report FILE (joined): $(head -3 "$TMP/err")"; rc=1; continue; }
  echo "$(basename "$first") + $(basename "$second"):"
  python3 "$SRC/tests/e2e/report_pipe_check.py" --after "$TMP/jpipe.html" \
    "$TMP/jfile.html" "$second.reference" || rc=1
done

# The same cut A + B in large reads: the pipe, grown to 1 MiB by the
# reader (docs/sources.md "Pipes"), filled by a writer that waits for that
# and then writes in one piece (or A, a pause, then B), so that A arrives
# in one read of up to 256 KiB. The processors keep a live session's first
# clock estimate as the start of its cumulative sums while its times
# follow the refined one; the report moved that start as it moved the
# times, so from the read where the estimate moved on, A's allocation
# points had another start, and the rate differed from the file's (with
# 64 KiB reads the estimate did not move within A).
cat "$TMP/cut.eventlog" "$B" >"$TMP/joined.eventlog"
"$BIN" report "$TMP/joined.eventlog" -o "$TMP/jfile.html" 2>/dev/null
for cuts in "" 230429; do
  python3 - "$TMP/joined.eventlog" "$cuts" <<'PY' |
import os, sys, time
data = open(sys.argv[1], 'rb').read()
cuts = [int(c) for c in sys.argv[2].split(',') if c]
time.sleep(0.3)  # the reader has grown the pipe
prev = 0
for c in cuts + [len(data)]:
    os.write(1, data[prev:c])
    prev = c
    time.sleep(0.2)
PY
    "$BIN" report - -o "$TMP/jpipe.html" 2>"$TMP/err" ||
    { echo "FAIL: report - (large reads, cuts '$cuts'): $(head -3 "$TMP/err")"; rc=1; continue; }
  echo "cut.eventlog + $(basename "$B"), large reads (writes cut at '$cuts'):"
  python3 "$SRC/tests/e2e/report_pipe_check.py" --after "$TMP/jpipe.html" \
    "$TMP/jfile.html" "$B.reference" || rc=1
done

if ! command -v node >/dev/null || [ ! -x /usr/bin/chromium ] ||
  [ ! -d "$SRC/tests/web/node_modules/playwright-core" ]; then
  echo "note: no node, chromium or playwright-core: the page not viewed"
else
  python3 "$SRC/tests/e2e/report_sessions_expect.py" "$A.reference" \
    "$B.reference" >"$TMP/expect.json" || { echo "FAIL: expectations"; exit 1; }
  SHOT=${EL_REPORT_PIPE_SHOT:-$BUILD/report-pipe.png}
  timeout 300 node "$SRC/tests/web/report_sessions_check.js" \
    --user-data-dir "$TMP/udd" --shot "$SHOT" "$TMP/pipe.html" \
    "$TMP/expect.json" || rc=1
fi
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
