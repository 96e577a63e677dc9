#!/usr/bin/env bash
# Bytes deleted inside a capability block are said (h88): when they are
# whole events, the events after them frame, and the next block's marker
# comes before the end the block's marker declares. It was read as a
# block spliced into the first (GHC does not nest blocks), silently: 2
# events gone, `stats` and `show` exit 0. Now one corrupt part of 0 bytes
# names the marker that came early and how many bytes are missing.
#
# Input: threads.eventlog (GHC 9.0) with 34 bytes deleted at byte 632511
# (two whole events of cap 0's first block), and with 144 deleted at
# 2633427 (cap 1's block, which the global block follows, then the
# end-of-data marker). Expected values from the bytes: the block markers'
# offsets and declared sizes are read here in Python (type 18 at the
# offset; its size, 4 bytes big-endian, 10 bytes in), not by our decoder.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=${EL_BIN:-$BUILD/eventlog-live}
LOG=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/threads.eventlog
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
[ -f "$LOG" ] || { echo "SKIP: $LOG missing"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-deleted.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0

# case AT N MARKER CAP NEXT: delete N bytes at AT; MARKER is the offset of
# the block marker (capability CAP) whose block holds AT; the next
# marker (at NEXT before the deletion, whose block follows it) then
# comes N bytes before that block's declared end.
check() {
  local at=$1 n=$2 marker=$3 cap=$4 next=$5
  python3 - "$LOG" "$T/del.eventlog" "$at" "$n" "$marker" "$cap" "$next" <<'PY' > "$T/want" || { fails=$((fails + 1)); return; }
import struct, sys
log, out = sys.argv[1], sys.argv[2]
at, n, marker, cap, nxt = map(int, sys.argv[3:])
b = bytearray(open(log, "rb").read())
def mark(off):
    typ, = struct.unpack(">H", b[off:off + 2])
    size, = struct.unpack(">I", b[off + 10:off + 14])
    c, = struct.unpack(">H", b[off + 22:off + 24])
    assert typ == 18, f"no block marker at {off}"
    return size, c
size, c = mark(marker)
assert c == cap and marker + size == nxt, (c, marker + size, nxt)
assert marker < at < nxt
del b[at:at + n]
open(out, "wb").write(b)
print(f"{n} bytes of cap {cap}'s block missing before byte {nxt - n} "
      "(deleted or lost?), nothing skipped")
PY
  st=0
  "$EL" stats "$T/del.eventlog" > "$T/out" 2> "$T/err" || st=$?
  if [ "$st" = 1 ] && grep -qF "$(cat "$T/want")" "$T/err" &&
     grep -q "^corrupt parts: *1 " "$T/out"; then
    echo "ok: $n bytes deleted at $at: said, status 1"
  else
    echo "FAIL: $n bytes deleted at $at: status $st, want 1 and: $(cat "$T/want")"
    cat "$T/err"
    fails=$((fails + 1))
  fi
}

check 632511 34 2688 0 1338275
check 2633427 144 1338275 1 2806555
"$EL" stats "$LOG" > /dev/null 2> "$T/clean" ||
  { echo "FAIL: the clean log: $(cat "$T/clean")"; fails=$((fails + 1)); }
[ $fails = 0 ] && { echo PASS; exit 0; }
exit 1
