#!/usr/bin/env bash
# An end-of-data marker (0xFFFF) inside a block is damage, not the end of
# the data (docs/eventlog.md, "Behaviour on bad input"). 40 bytes of 0xFF
# written over a real log's middle (threads.eventlog at byte 1,000,000,
# oddball-hT.eventlog at byte 200,000, both GHC 9.0) used to make `show`
# print a third of the events, say nothing and exit 0. Now it warns on
# stderr, naming the input, the false marker and its byte, prints every
# event of the blocks after the damage and exits 1 (a corrupt part, as
# for any other).
#
# Expected values come from a framing of the logs in Python (tests/e2e/el_frame.py)
# (header sizes, event lengths: no code of the decoder): where the false
# marker lies (the first event start inside the damage), the block it is
# in and the next block's marker; what `show` prints for the damaged log
# is what it prints for the clean one less the events of the damaged
# block from the false marker on (`show --json` gives each event's
# offset). A real end-of-data marker followed by stray bytes keeps its
# meaning: `show` prints every event, warns that the bytes after it were
# ignored (it used to say nothing) and exits 0.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=${EL_BIN:-$BUILD/eventlog-live}
LOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-dataend.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# frame.py CLEAN DAMAGED AT: damage CLEAN (40 bytes of 0xFF at AT) into
# DAMAGED; print the false marker's offset, the damaged block's marker
# offset, the next block's marker offset, and the number of clean events
# from the false marker to that next marker.
cat > "$T/frame.py" <<'EOF'
import sys
from el_frame import BLOCK_MARKER, DATA_END, events, header, marker

def frame(b):
    size, p = header(b)
    ev, blocks, bend = [], [], 0
    for off, t, _, _ in events(b, size, p):
        if t == DATA_END:
            return ev, blocks, off, bend
        if t == BLOCK_MARKER:
            bend = off + marker(b, off)[0]
            blocks.append(off)
        ev.append(off)
    return ev, blocks, None, bend

clean = open(sys.argv[1], 'rb').read()
at = int(sys.argv[3])
bad = bytearray(clean)
bad[at:at + 40] = b'\xff' * 40
open(sys.argv[2], 'wb').write(bad)
ev, blocks, end, _ = frame(clean)
assert end == len(clean) - 2  # the clean log ends with its marker
_, _, false_end, bend = frame(bytes(bad))
assert at <= false_end < at + 40 and false_end + 2 < bend, (false_end, bend)
blk = max(m for m in blocks if m <= false_end)
nxt = min(m for m in blocks if m > false_end)
assert nxt == bend  # the damaged block ends where the next one begins
lost = sum(1 for o in ev if false_end <= o < nxt)
print(false_end, blk, nxt, lost)
EOF

# check LOG AT: damage LOG at byte AT and check show, show --json, show -.
check() {
  local log=$LOGS/ghc-9.0/$1 at=$2 name=$1 st
  [ -f "$log" ] || { echo "SKIP: no $log"; exit 77; }
  local bad=$T/$name
  read -r fe blk nxt lost < <(PYTHONPATH=$SRC/tests/e2e python3 "$T/frame.py" "$log" "$bad" "$at") ||
    { fail "$name: framing"; return; }
  echo "$name: false end-of-data marker at byte $fe in the block at $blk;" \
    "next block at $nxt; $lost events lost"
  "$EL" show "$log" > "$T/clean.out" 2> /dev/null
  local nclean want
  nclean=$(wc -l < "$T/clean.out")
  want=$((nclean - lost))
  timeout 120 "$EL" show "$bad" > "$T/bad.out" 2> "$T/bad.err"
  st=$?
  [ "$st" = 1 ] && pass "$name: show exits 1" ||
    fail "$name: show exits $st, not 1"
  [ "$(wc -l < "$T/bad.out")" = "$want" ] &&
    pass "$name: show prints $want lines ($nclean less $lost lost events)" ||
    fail "$name: show prints $(wc -l < "$T/bad.out") lines, not $want"
  grep -q "$bad: .*end-of-data marker (type 0xFFFF) at byte $fe .*to the block marker at byte $nxt" "$T/bad.err" &&
    pass "$name: show warns with the input, the byte and the marker" ||
    { sed 's/^/  stderr: /' "$T/bad.err"; fail "$name: show's warning"; }
  # Every printed line is a line of the clean output (the damage hit no
  # printed field but the one event it overwrote a payload of).
  local extra
  extra=$(sort "$T/bad.out" | comm -23 - <(sort "$T/clean.out") | wc -l)
  [ "$extra" -le 1 ] && pass "$name: the lines are the clean log's" ||
    fail "$name: $extra lines not in the clean output"
  # --json names offsets: the events of every later block are there, the
  # rest of the damaged block is not.
  timeout 120 "$EL" show --json "$bad" > "$T/bad.json" 2> "$T/json.err"
  st=$?
  [ "$st" = 1 ] || fail "$name: show --json exits $st, not 1"
  grep -q "end-of-data marker (type 0xFFFF) at byte $fe" "$T/json.err" ||
    fail "$name: show --json does not warn"
  "$EL" show --json "$log" 2> /dev/null |
    sed 's/^{"offset":\([0-9]*\),.*/\1/' > "$T/clean.off"
  sed 's/^{"offset":\([0-9]*\),.*/\1/' "$T/bad.json" > "$T/bad.off"
  local later got inside
  later=$(awk -v n="$nxt" '$1 >= n' "$T/clean.off" | wc -l)
  got=$(awk -v n="$nxt" '$1 >= n' "$T/bad.off" | wc -l)
  inside=$(awk -v f="$fe" -v n="$nxt" '$1 >= f && $1 < n' "$T/bad.off" | wc -l)
  [ "$later" -gt 0 ] && [ "$got" = "$later" ] && [ "$inside" = 0 ] &&
    pass "$name: --json: all $later events from byte $nxt on, none of the damaged part" ||
    fail "$name: --json: $got of $later events from byte $nxt on, $inside in the damaged part"
  timeout 120 "$EL" show - < "$bad" > "$T/stdin.out" 2> "$T/stdin.err"
  st=$?
  [ "$st" = 1 ] && cmp -s "$T/stdin.out" "$T/bad.out" &&
    grep -qE "(-|stdin): .*end-of-data marker \(type 0xFFFF\) at byte $fe" "$T/stdin.err" &&
    pass "$name: show - (stdin) the same, and warns" ||
    fail "$name: show - (stdin): status $st, or output or warning differ"
}

check threads.eventlog 1000000
check oddball-hT.eventlog 200000

# 0xFFFF over the type of a block marker outside any block (GHC 9.0's
# second block): more data follows it, and the rest of it is a believable
# marker of a block whose events follow, so it is read as that marker:
# show prints exactly the clean log's lines, warns naming the byte, and
# exits 1 (a corrupt part). Before, the data ended there: 80,151 of
# 169,173 events, exit 0.
log=$LOGS/ghc-9.0/threads.eventlog
mk=$("$EL" show --json "$log" 2> /dev/null |
  awk -F'[:,]' '/"type":18,/ { if (++n == 2) { print $2; exit } }')
[ -n "$mk" ] || fail "no second block marker in threads.eventlog"
cp "$log" "$T/overmk.eventlog"
printf '\377\377' | dd of="$T/overmk.eventlog" bs=1 seek="$mk" conv=notrunc 2> /dev/null
"$EL" show "$log" > "$T/clean.out" 2> /dev/null
"$EL" show "$T/overmk.eventlog" > "$T/overmk.out" 2> "$T/overmk.err"
st=$?
[ "$st" = 1 ] && cmp -s "$T/clean.out" "$T/overmk.out" &&
  pass "end-of-data marker over a block marker: every event, exit 1" ||
  fail "end-of-data marker over a block marker: status $st, $(wc -l < "$T/overmk.out") of $(wc -l < "$T/clean.out") lines"
grep -q "overmk.eventlog: .*end-of-data marker (type 0xFFFF) at byte $mk stands where a block marker's type belongs" "$T/overmk.err" &&
  pass "end-of-data marker over a block marker: show says so" ||
  { sed 's/^/  stderr: /' "$T/overmk.err"; fail "end-of-data marker over a block marker: no warning"; }

# Through a pipe: the same lines, and the message as from the file (not
# "session ended early": the session went on).
cat "$T/overmk.eventlog" | "$EL" show - > "$T/overmk.pipe" 2> "$T/overmk.perr"
st=$?
[ "$st" = 1 ] && cmp -s "$T/clean.out" "$T/overmk.pipe" &&
  grep -q "stdin: corrupt stream: end-of-data marker (type 0xFFFF) at byte $mk stands where" "$T/overmk.perr" &&
  ! grep -q "ended early" "$T/overmk.perr" &&
  pass "end-of-data marker over a block marker, through a pipe: every event, the same message" ||
  { sed 's/^/  stderr: /' "$T/overmk.perr"; fail "end-of-data marker over a block marker, through a pipe: status $st"; }

# One byte inserted before that block marker: an undeclared type outside
# any block, a decode error (exit 1); the decoder goes on at the marker.
# Every event of the clean log is printed, those after the byte one byte
# later, from the file as through a pipe. Before, show FILE stopped
# reading at the end of the 1 MiB chunk holding the damage (126,052 of
# 169,097 --json lines) without a word about the rest.
{ head -c "$mk" "$log"; printf Z; tail -c +"$((mk + 1))" "$log"; } > "$T/insz.eventlog"
"$EL" show --json "$log" 2> /dev/null | sed 's/^{"offset":\([0-9]*\),.*/\1/' |
  awk -v m="$mk" '{ print ($1 >= m ? $1 + 1 : $1) }' > "$T/insz.want"
"$EL" show --json "$T/insz.eventlog" > "$T/insz.json" 2> "$T/insz.err"
st=$?
sed 's/^{"offset":\([0-9]*\),.*/\1/' "$T/insz.json" > "$T/insz.got"
[ "$st" = 1 ] && cmp -s "$T/insz.want" "$T/insz.got" &&
  pass "a byte inserted before a block marker: every event ($(wc -l < "$T/insz.got")), exit 1" ||
  fail "a byte inserted before a block marker: status $st, $(wc -l < "$T/insz.got") of $(wc -l < "$T/insz.want") events"
cat "$T/insz.eventlog" | "$EL" show --json - 2> /dev/null | cmp -s - "$T/insz.json" &&
  pass "a byte inserted before a block marker: a pipe gives the same" ||
  fail "a byte inserted before a block marker: a pipe gives other events"

# A real end-of-data marker followed by 100 stray bytes (not a header):
# everything is printed, exit 0, and the ignored bytes are said.
log=$LOGS/ghc-9.0/threads.eventlog
size=$(wc -c < "$log")
{ cat "$log"; head -c 100 /dev/zero | tr '\0' 'x'; } > "$T/trail.eventlog"
"$EL" show "$log" > "$T/clean.out" 2> /dev/null
"$EL" show "$T/trail.eventlog" > "$T/trail.out" 2> "$T/trail.err"
st=$?
[ "$st" = 0 ] && cmp -s "$T/clean.out" "$T/trail.out" &&
  pass "stray bytes after the end of data: every event, exit 0" ||
  fail "stray bytes after the end of data: status $st or output differs"
grep -q "ignored 100 bytes from byte $size after the end of data" "$T/trail.err" &&
  pass "stray bytes after the end of data: show says so" ||
  { sed 's/^/  stderr: /' "$T/trail.err"; fail "show is silent about the ignored bytes"; }

[ $fails = 0 ] && { echo PASS; exit 0; }
echo "FAIL: $fails step(s)"
exit 1
