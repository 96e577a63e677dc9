#!/usr/bin/env bash
# A capability's block repeated (the same bytes twice in a row: `cat` or
# `head -c` splicing, a producer bug; h75) used to be decoded twice:
# `show` printed its events twice, `stats` counted them twice, no warning,
# exit 0. GHC writes each capability's blocks in time order, so the copy
# (beginning before the end of that capability's previous block) is a
# corrupt part (docs/eventlog.md, "Behaviour on bad input"): `show` prints
# exactly what it prints for the original, warns naming the input and the
# copy's byte, and exits 1; `stats` counts every event once. Tested on
# ticky-ticky (GHC 8.x: its capability 0 block and its first global
# block, cap 0xFFFF) and oddball-hT (GHC 9.0). The copies are made by a
# framing of the logs in Python (tests/e2e/el_frame.py: header sizes,
# event lengths; no code of the decoder); the event count of the original is
# also checked against ghc-events, when installed. A log followed by
# itself (`cat a a`: a second header, a new session) is not damage.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=${EL_BIN:-$BUILD/eventlog-live}
LOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-blockrep.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# dup.py CLEAN OUT K: CLEAN with its block K (the K-th block marker)
# inserted again right after itself into OUT; print the copy's offset,
# its capability, the number of events in CLEAN and of those not block
# markers (ghc-events does not show markers).
cat > "$T/dup.py" <<'PY'
import sys
from el_frame import BLOCK_MARKER, DATA_END, events, header, marker

clean = open(sys.argv[1], 'rb').read()
size, p = header(clean)
nev, blocks = 0, []
for off, t, _, _ in events(clean, size, p):
    if t == DATA_END:
        break
    if t == BLOCK_MARKER:
        blocks.append((off,) + marker(clean, off))
    nev += 1
off, sz, cap = blocks[int(sys.argv[3])]
open(sys.argv[2], 'wb').write(clean[:off + sz] + clean[off:off + sz] +
                              clean[off + sz:])
print(off + sz, cap, nev, nev - len(blocks))
PY

# check LOG K: block K of LOG repeated.
check() {
  local log=$LOGS/$1 k=$2 name st
  name=$(basename "$1" .eventlog)-$k
  [ -f "$log" ] || { echo "SKIP: no $log"; exit 77; }
  local rep=$T/$name.eventlog
  local at cap nev nmk
  read -r at cap nev nmk < <(PYTHONPATH=$SRC/tests/e2e python3 "$T/dup.py" "$log" "$rep" "$k") ||
    { fail "$name: framing"; return; }
  echo "$name: block $k (cap $cap) repeated at byte $at; $nev events"
  "$EL" show "$log" > "$T/clean.out" 2> /dev/null
  timeout 120 "$EL" show "$rep" > "$T/rep.out" 2> "$T/rep.err"
  st=$?
  [ "$st" = 1 ] && pass "$name: show exits 1" ||
    fail "$name: show exits $st, not 1"
  cmp -s "$T/clean.out" "$T/rep.out" &&
    pass "$name: show prints what it prints for the original" ||
    fail "$name: show prints $(wc -l < "$T/rep.out") lines, not $(wc -l < "$T/clean.out")"
  grep -q "$rep: corrupt stream: block marker at byte $at (cap $cap, .*repeated or misplaced; skipped" "$T/rep.err" &&
    pass "$name: show warns with the input and the copy's byte" ||
    { sed 's/^/  stderr: /' "$T/rep.err"; fail "$name: show's warning"; }
  local got
  got=$("$EL" stats "$rep" 2> /dev/null | awk '/^events:/ { print $2 }')
  [ "$got" = "$nev" ] && pass "$name: stats counts $nev events, each once" ||
    fail "$name: stats counts $got events, not $nev"
  cat "$rep" | "$EL" show - > "$T/pipe.out" 2> "$T/pipe.err"
  st=$?
  [ "$st" = 1 ] && cmp -s "$T/clean.out" "$T/pipe.out" &&
    grep -q "stdin: corrupt stream: block marker at byte $at " "$T/pipe.err" &&
    pass "$name: through a pipe the same" ||
    fail "$name: through a pipe: status $st, or output or warning differ"
  if command -v ghc-events > /dev/null; then
    local ge
    ge=$(ghc-events show "$log" | sed -n '/^Events:/,$p' | grep -c '^ *[0-9]*: ')
    [ "$ge" = "$nmk" ] && pass "$name: ghc-events shows the $nmk events (not markers) of the original" ||
      fail "$name: ghc-events shows $ge events in the original, the framing $nmk"
  fi
}

check ghc-events/ticky-ticky.eventlog 1
check ghc-events/ticky-ticky.eventlog 0
check ghc-9.0/oddball-hT.eventlog 0

# `cat a a`: two sessions, each decoded whole (the second header resets
# the blocks' order), no warning, exit 0.
log=$LOGS/ghc-events/ticky-ticky.eventlog
cat "$log" "$log" > "$T/twice.eventlog"
"$EL" show "$T/twice.eventlog" > /dev/null 2> "$T/twice.err"
st=$?
one=$("$EL" stats "$log" 2> /dev/null | awk '/^events:/ { print $2 }')
two=$("$EL" stats "$T/twice.eventlog" 2> /dev/null | awk '/^events:/ { print $2 }')
[ "$st" = 0 ] && [ ! -s "$T/twice.err" ] && [ "$two" = $((2 * one)) ] &&
  pass "a log followed by itself: exit 0, no warning, $two events" ||
  { sed 's/^/  stderr: /' "$T/twice.err"; fail "a log followed by itself: status $st, $two events of $((2 * one))"; }

[ $fails = 0 ] && { echo PASS; exit 0; }
echo "FAIL: $fails step(s)"
exit 1
