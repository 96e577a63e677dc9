#!/usr/bin/env bash
# One corrupt part is said in the same words by every command, in byte
# order (docs/exit-codes.md, "a corrupt part after the header"): "NAME:
# corrupt stream: ..." naming the file (or stdin), the part's byte and
# what was skipped, after a prefix that says whether the command fails
# for it (show and stats, exit 1: "error:") or goes on (run, report, the
# daemon, exit 0: "warning:"); the daemon's --stats summary counts them.
# Before, `show FILE` said "show: FILE: corrupt stream ..." for the first
# part and "warning: FILE: ..." for the later ones, and printed the first
# at the end, after the second; `show -` through a pipe said "error:
# stdin: ...", `stats` "stats: warning: ...", and run, report and the
# daemon "warning: corrupt stream ..." naming no input.
#
# The log: the shared oddball-hT log (GHC 9.0) with 40 bytes overwritten
# (0x4d) at two places in two different blocks (its block markers are at
# bytes 2688, 92432 and 601858). Expected, independently of our output:
# two parts, the first starting at most one event (< 64 bytes) before
# byte 50000 and no later than 50040, the second likewise around byte
# 300000, said in that order. The log's size: 622783 bytes.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start corrupt-msgs
D=$BUILD/eventlog-live-otelcol
F=$TMP/two.eventlog
python3 - "$ODD" "$F" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
for lo in (50000, 300000):
    b[lo:lo + 40] = b'\x4d' * 40
open(sys.argv[2], 'wb').write(b)
PY
echo 'local el = require("eventlog_live")' > "$TMP/ok.lua"

# check NAME STATUS LEVEL INPUT-NAME: the stderr in $TMP/err of a run
# that exited with $st.
check() {
  local name=$1 want_st=$2 level=$3 input=$4
  [ "$st" = "$want_st" ] || bad "$name: status $st, want $want_st"
  python3 - "$TMP/err" "$level" "$input" "$TMP/first" "$name" <<'PY' || rc=1
import os, re, sys
err, level, name, first, cmd = sys.argv[1:]
lines = [l.rstrip('\n') for l in open(err) if 'corrupt stream' in l]
def fail(msg):
    print(f"FAIL: {cmd}: {msg}: {lines}")
    sys.exit(1)
if len(lines) != 2:
    fail(f"{len(lines)} lines about a corrupt part, want 2")
pre = f"eventlog-live: {level}: {name}: corrupt stream: "
pre_d = f"eventlog-live-otelcol: {level}: {name}: corrupt stream: "
bodies, offs = [], []
for l in lines:
    p = pre if l.startswith(pre) else pre_d if l.startswith(pre_d) else None
    if not p:
        fail(f"a line not of the form '{pre}...'")
    bodies.append(l[len(p):])
    m = re.search(r' at byte (\d+) ', l)
    if not m:
        fail("no byte named")
    offs.append(int(m.group(1)))
for off, lo in zip(offs, (50000, 300000)):
    if not (lo - 64 < off <= lo + 40):
        fail(f"a part at byte {off}, not near the bytes overwritten at {lo}")
if not offs[0] < offs[1]:
    fail("not in byte order")
# The words after the name: the same in every command.
if os.path.exists(first):
    want = open(first).read().split('\n')
    if bodies != want:
        fail(f"other words than the first command's {want}")
else:
    open(first, 'w').write('\n'.join(bodies))
print(f"ok: {cmd}: {level}: {name}: two parts, in byte order, in the same words")
PY
}

cd "$TMP"
st=0; "$BIN" show "$F" > /dev/null 2> err || st=$?
check "show FILE" 1 error "$F"
st=0; "$BIN" show - < "$F" > /dev/null 2> err || st=$?
check "show - (a file)" 1 error stdin
st=0; cat "$F" | "$BIN" show - > /dev/null 2> err || st=$?
check "show - (a pipe)" 1 error stdin
st=0; "$BIN" show --json "$F" > /dev/null 2> err || st=$?
check "show --json FILE" 1 error "$F"
st=0; "$BIN" stats "$F" > /dev/null 2> err || st=$?
check "stats FILE" 1 error "$F"
st=0; cat "$F" | "$BIN" stats - > /dev/null 2> err || st=$?
check "stats - (a pipe)" 1 error stdin
st=0; "$BIN" run ok.lua "$F" --output none > /dev/null 2> err || st=$?
check "run FILE" 0 warning "$F"
st=0; cat "$F" | "$BIN" run ok.lua --eventlog-stdin --output none > /dev/null 2> err || st=$?
check "run stdin (a pipe)" 0 warning stdin
st=0; "$BIN" report "$F" -o r.html > /dev/null 2> err || st=$?
check "report FILE" 0 warning "$F"
st=0; cat "$F" | "$BIN" report - -o r2.html > /dev/null 2> err || st=$?
check "report - (a pipe)" 0 warning stdin
if [ -x "$D" ]; then
  st=0; "$D" --eventlog-file "$F" --service-name t --no-otlp -s > /dev/null 2> err || st=$?
  check "otelcol FILE" 0 warning "$F"
  # Its --stats summary counts the two parts and the bytes the two
  # warnings say were skipped (before, only "decode errors 0": h88).
  sum=$(grep -o 'skipped [0-9]* bytes' err | awk '{n += $2} END {print n}')
  grep -q "decode errors 0, corrupt parts 2 ($sum bytes in them), memory" err ||
    bad "otelcol -s: the summary does not count 2 parts of $sum bytes: $(grep -i 'decode errors' err)"
fi
# The same log cut inside an event of its last block (at byte 622005,
# between its last block marker at 601858 and its end at 622783): the
# cut is a warning (exit 0 alone), the parts still make show fail. Before,
# the cut's status won and show exited 0 after a corrupt part.
head -c 622005 "$F" > cut.eventlog
rm -f first
F=$TMP/cut.eventlog
st=0; "$BIN" show "$F" > /dev/null 2> err || st=$?
check "show FILE (cut)" 1 error "$F"
grep -q "warning: $F: eventlog truncated inside an event" err ||
  bad "show FILE (cut): the cut is not said: $(cat err)"
st=0; cat "$F" | "$BIN" show - > /dev/null 2> err || st=$?
check "show - (cut, a pipe)" 1 error stdin
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
