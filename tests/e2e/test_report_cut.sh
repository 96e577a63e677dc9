#!/usr/bin/env bash
# `eventlog-live report` of an eventlog cut inside an event (a program
# stopped mid-write): the report is written from everything before the
# cut, and the page says so where a reader sees it: "The eventlog ends
# mid-event at byte N: <the decoder's message>". Before, only stderr said
# where (the page's header had an unobtrusive note without the place).
# The cut is made by hand from the format (spec eventlog-format.md: the
# data section follows "datb"; each block begins with a BLOCK_MARKER
# event, type 18, whose u32 at byte 10 is the block's size): the shared
# heapy-hT log is cut 7 bytes into its second block marker, so N is that
# marker's offset, found by walking the blocks (independent of the
# decoder). Checked in the page's data (cuts) and in Chromium
# (tests/web/report_cut_check.js: the warning visible on the first
# screen with that byte). Then the cut log joined to the whole one: the
# cut inside the input is shown as "Session 1 ends mid-event at byte N".
# ctest-labels: e2e web
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
BIN=$BUILD/eventlog-live
A=$EVENTLOGS/ghc-9.0/heapy-hT.eventlog
[ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 77; }
[ -f "$A" ] || { echo "SKIP: no shared eventlogs"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-report-cut.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
rc=0
bad() { echo "FAIL: $*"; rc=1; }

# The second block marker's offset, walking the blocks from "datb".
at=$(python3 - "$A" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
p = d.find(b'datb') + 4
(ty,) = struct.unpack('>H', d[p:p + 2])
assert ty == 18, ty
(size,) = struct.unpack('>I', d[p + 10:p + 14])
p += size
assert struct.unpack('>H', d[p:p + 2])[0] == 18
print(p)
PY
) || { echo "FAIL: no block markers found"; exit 1; }
head -c $((at + 7)) "$A" >"$TMP/cut.eventlog"
"$BIN" report "$TMP/cut.eventlog" -o "$TMP/cut.html" 2>"$TMP/err" ||
  { echo "FAIL: report: $(head -3 "$TMP/err")"; exit 1; }
grep -q "truncated inside an event, BLOCK_MARKER (type 18), at byte $at " \
  "$TMP/err" || bad "stderr: $(cat "$TMP/err")"
PYTHONPATH=$SRC/tests/e2e python3 - "$TMP/cut.html" "$at" <<'PY' || rc=1
import sys
from report_data import page_data
d = page_data(sys.argv[1])
at = int(sys.argv[2])
cuts = d.get('cuts')
if not (cuts and len(cuts) == 1 and cuts[0]['offset'] == at and
        f'at byte {at} (7 of 24 bytes present)' in cuts[0]['msg'] and
        d.get('cuts_total') == 1 and d['stats']['truncated'] == 1):
    print(f'FAIL: cuts {cuts}, cuts_total {d.get("cuts_total")}: want one '
          f'at byte {at}, BLOCK_MARKER with 7 of its 24 bytes')
    sys.exit(1)
PY

# The same cut log followed by the whole log (a killed run's eventlog and
# the next run's, joined): session 1 ends mid-event where the second
# header begins, inside the input. Before, only stderr said so (data cuts
# were []). The page says "Session 1 ends mid-event at byte N: ...".
cat "$TMP/cut.eventlog" "$A" >"$TMP/joined.eventlog"
"$BIN" report "$TMP/joined.eventlog" -o "$TMP/joined.html" 2>"$TMP/err" ||
  { echo "FAIL: report joined: $(head -3 "$TMP/err")"; exit 1; }
grep -q "at byte $at is cut off at byte $((at + 7)), where a new header" \
  "$TMP/err" || bad "joined stderr: $(cat "$TMP/err")"
PYTHONPATH=$SRC/tests/e2e python3 - "$TMP/joined.html" "$at" <<'PY' || rc=1
import sys
from report_data import page_data
d = page_data(sys.argv[1])
at = int(sys.argv[2])
cuts = d.get('cuts')
if not (cuts and len(cuts) == 1 and cuts[0]['offset'] == at and
        cuts[0]['session'] == 1 and cuts[0]['inside'] is True and
        f'at byte {at} is cut off at byte {at + 7}' in cuts[0]['msg'] and
        d.get('cuts_total') == 1 and d['stats']['sessions'] == 2):
    print(f'FAIL: joined: cuts {cuts}, cuts_total {d.get("cuts_total")}: '
          f'want one in session 1 at byte {at}, 7 bytes, inside the input')
    sys.exit(1)
PY

if ! command -v node >/dev/null || [ ! -x /usr/bin/chromium ] ||
  [ ! -d "$SRC/tests/web/node_modules/playwright-core" ]; then
  echo "note: no node, chromium or playwright-core: the page not viewed"
else
  SHOT=${EL_REPORT_CUT_SHOT:-$BUILD/report-cut.png}
  timeout 300 node "$SRC/tests/web/report_cut_check.js" \
    --user-data-dir "$TMP/udd" --shot "$SHOT" "$TMP/cut.html" "$at" || rc=1
  timeout 300 node "$SRC/tests/web/report_cut_check.js" \
    --user-data-dir "$TMP/udd2" --session 1 "$TMP/joined.html" "$at" || rc=1
fi
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
