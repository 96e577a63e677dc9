#!/usr/bin/env bash
# `eventlog-live report` of an eventlog with a corrupt part inside a block
# (bytes overwritten in the middle of a real GHC eventlog): the decoder
# skips the part to the next block marker and goes on (a warning on
# stderr, status 0: docs/exit-codes.md). The page must say so at the top,
# with the byte offset, as it does for a fatal decode error: before, it
# listed no error and looked complete while about half of the log was
# missing. The independent expectations: the offset lies in the range the
# test overwrote, and there are fewer GC collections than the intact log's
# 645 (oddball-hT.eventlog.reference): the part really was skipped.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start report-corrupt
FROM=300000 TO=300040
python3 - "$ODD" "$TMP/part.eventlog" $FROM $TO <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
for i in range(int(sys.argv[3]), int(sys.argv[4])):
    b[i] = 0x4d
open(sys.argv[2], 'wb').write(b)
PY
st=0
"$BIN" report "$TMP/part.eventlog" -o "$TMP/part.html" 2> "$TMP/err" || st=$?
[ $st = 0 ] || bad "status $st, want 0 (a corrupt part is skipped): $(cat "$TMP/err")"
grep -q 'corrupt stream' "$TMP/err" || bad "no warning on stderr: $(cat "$TMP/err")"
[ -s "$TMP/part.html" ] || { bad "no report written"; exit 1; }
PYTHONPATH=$SRC/tests/e2e python3 - "$TMP/part.html" $FROM $TO <<'PY' || rc=1
import sys
from report_data import page_data
d = page_data(sys.argv[1])
lo, hi = int(sys.argv[2]), int(sys.argv[3])
errs = d['errors']
if d['errors_total'] < 1 or not any(lo <= e['offset'] < hi and 'corrupt' in e['msg'] for e in errs):
    print(f"FAIL: the page lists no corrupt part in bytes {lo}..{hi}: errors {errs}, total {d['errors_total']}")
    sys.exit(1)
if not d['gc']['collections'] < 645:
    print(f"FAIL: {d['gc']['collections']} collections: the part was not skipped?")
    sys.exit(1)
print(f"ok: the page lists {errs[0]['msg']!r}")
PY
# The fatal case (an undeclared event after the last block, test_report.sh)
# is listed once, not again as the part skipped after it.
python3 - "$ODD" "$TMP/tail.eventlog" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(b[:-2] + struct.pack('>HQ', 77, 1183473046) + b'zzzz' + b'\xff\xff')
PY
"$BIN" report "$TMP/tail.eventlog" -o "$TMP/tail.html" 2> /dev/null
n=$(python3 "$SRC/tests/e2e/report_data.py" "$TMP/tail.html" 'd["errors_total"]')
[ "$n" = 1 ] && ok "a fatal error is listed once" || bad "a fatal error listed $n times"
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
