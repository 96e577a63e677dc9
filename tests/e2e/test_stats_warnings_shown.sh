#!/usr/bin/env bash
# `stats` prints the first 10 warnings as they come, and says how many
# more there were: never a silent cut (docs/eventlog.md, "Behaviour on bad
# input"). Before, a log with 15 corrupt parts gave 10 lines on stderr and
# no word of the other 5.
#
# Input: threads-big.eventlog (GHC 9.0) three times (21 blocks) with the
# capability of 12 of its block markers set to 32767, each a corrupt part
# of its own (a damaged field, its block decoded with no capability).
# Where the markers are comes from a
# framing of the clean log written here in Python (the header's declared
# sizes and the block sizes, no decoder code). Expected by hand: 12
# warnings, 10 said, "2 more warnings not shown"; with 5 damaged, 5 said
# and no such line.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=${EL_BIN:-$BUILD/eventlog-live}
LOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-statsw.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# damage N OUT: the first N block markers get capability 32767
damage() {
  python3 - "$LOGS/ghc-9.0/threads-big.eventlog" "$1" "$2" <<'PY'
import struct, sys
one = open(sys.argv[1], "rb").read()
data = bytearray(one * 3)  # three sessions, 7 blocks each
n, out = int(sys.argv[2]), sys.argv[3]
markers, at = [], 0
while True:
    at = data.find(b"hdrb", at)
    if at < 0:
        break
    i = data.index(b"hetb", at) + 4
    while data[i:i + 4] == b"etb\0":  # etb, id u16, size i16, desc, extra, ete
        dlen = struct.unpack(">I", data[i + 8:i + 12])[0]
        i += 12 + dlen
        elen = struct.unpack(">I", data[i:i + 4])[0]
        i += 4 + elen
        assert data[i:i + 4] == b"ete\0", i
        i += 4
    assert data[i:i + 8] == b"hetehdre" and data[i + 8:i + 12] == b"datb", i
    i += 12
    while struct.unpack(">H", data[i:i + 2])[0] == 18:  # blocks back to back
        markers.append(i)
        i += struct.unpack(">I", data[i + 10:i + 14])[0]
    at = i
assert len(markers) >= n, len(markers)
for m in markers[:n]:  # each marker's capability (0 or 1) set to 32767
    data[m + 22:m + 24] = b"\x7f\xff"
open(out, "wb").write(data)
PY
}

for n in 12 5; do
  damage "$n" "$T/d$n.eventlog" || { fail "python framing ($n)"; continue; }
  "$EL" stats "$T/d$n.eventlog" >"$T/out$n" 2>"$T/err$n"
  rc=$?
  [ "$rc" = 1 ] || fail "$n damaged: stats exited $rc, not 1 (corrupt parts)"
  grep -q "^warnings: *$n ($n reporting corruption)" "$T/out$n" ||
    fail "$n damaged: summary: $(grep '^warnings' "$T/out$n")"
  said=$(grep -c "corrupt stream: block marker" "$T/err$n")
  want=$((n < 10 ? n : 10))
  [ "$said" = "$want" ] || fail "$n damaged: $said warnings said, not $want"
  if [ "$n" -gt 10 ]; then
    grep -q ": $((n - 10)) more warnings not shown" "$T/err$n" ||
      fail "$n damaged: no word of the $((n - 10)) not shown: $(tail -1 "$T/err$n")"
  elif grep -q "more warnings not shown" "$T/err$n"; then
    fail "$n damaged: 'more warnings not shown' with none left out"
  fi
done
[ "$fails" = 0 ] && echo PASS
exit "$fails"
