#!/usr/bin/env bash
# A header error is said in the same words by every command and from every
# source (docs/exit-codes.md, "Messages"): "PROG: error: NAME: MESSAGE",
# NAME the input (the file's path, "stdin", the FIFO's path, "Unix socket
# PATH"), MESSAGE the decoder's, naming the byte and what was wrong. No
# "session ended early" (no session began) and no "decode error" before
# it; every command exits 1 for it (the table's "header" and "notlog"
# rows). As a corrupt part is (test_corrupt_part_messages.sh).
# Before, show and stats said "show: F: ..." and "stats: -: ..." (no
# level, "-" for stdin), while run, report, repl's :load and the daemon
# said "error: F: decode error: malformed header: ..." and "error: F:
# session ended early: no eventlog header found ...".
#
# The inputs, made here from the shared oddball-hT log (GHC 9.0), with
# what is expected computed from their bytes, not from our output:
#   mal   the end marker "ete\0" of the header's first declaration
#         overwritten: "malformed header: ... at byte B", B where that
#         marker begins (parsed here: 12 + 2 + 2 + 4 + desc + 4 + extra);
#         then no second header in the rest ("no eventlog header found").
#   noh   400 bytes 01 02 03 04 ...: "no eventlog header found in 400
#         bytes from byte 0".
#   text  a program's line written over the header's first 31 bytes:
#         "no eventlog header found in SIZE bytes from byte 0; they begin
#         with text ("Hello world, my ...")" (16 bytes quoted).
#   hcut  the first 1000 bytes (inside the header, whose type list ends
#         later): "eventlog truncated inside the header at byte 1000".
#   hmag  the first 6 bytes ("hdrb" and half of "hetb"): cut inside the
#         header too, "... at byte 6" (h39: it was "no eventlog header
#         found in 6 bytes").
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start header-msgs
D=$BUILD/eventlog-live-otelcol
cd "$TMP"
python3 - "$ODD" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert b[:12] == b'hdrbhetbetb\0', b[:12]
dlen = struct.unpack('>I', b[16:20])[0]
xlen = struct.unpack('>I', b[20 + dlen:24 + dlen])[0]
ete = 24 + dlen + xlen
assert b[ete:ete + 4] == b'ete\0', b[ete:ete + 4]
hdre = b.find(b'hetehdre')
assert hdre > 1000, hdre            # the cut at 1000 is inside the header
assert b.count(b'hdrbhetb') == 1    # no second header to find
m = bytearray(b); m[ete:ete + 4] = b'XXXX'
open('mal.eventlog', 'wb').write(m)
open('noh.eventlog', 'wb').write(b'\x01\x02\x03\x04' * 100)
t = b'Hello world, my program output\n' + b[31:]
open('text.eventlog', 'wb').write(t)
open('hcut.eventlog', 'wb').write(b[:1000])
open('hmag.eventlog', 'wb').write(b[:6])
with open('want', 'w') as w:
    w.write(f"mal\tmalformed header: no end marker after event CREATE_THREAD (type 0) at byte {ete}\n")
    w.write("mal\tno eventlog header found in \n")
    w.write("noh\tno eventlog header found in 400 bytes from byte 0\n")
    w.write(f"text\tno eventlog header found in {len(t)} bytes from byte 0; they begin with text (\"Hello world, my ...\")\n")
    w.write("hcut\teventlog truncated inside the header at byte 1000\n")
    w.write("hmag\teventlog truncated inside the header at byte 6\n")
PY
echo 'local el = require("eventlog_live")' > ok.lua
rm -f fifo && mkfifo fifo

# check INPUT WHAT STATUS NAME: $TMP/err holds the stderr of WHAT, which
# read INPUT (named NAME) and exited with $st.
check() {
  local in=$1 what=$2 want_st=$3 name=$4
  if [ "$want_st" != any ] && [ "$st" != "$want_st" ]; then
    bad "$in, $what: status $st, want $want_st: $(head -c 400 err)"
  fi
  python3 - err "$in" "$what" "$name" <<'PY' || rc=1
import sys
err, inp, what, name = sys.argv[1:]
text = open(err, errors='replace').read()
lines = [l for l in text.split('\n')
         if l.startswith(('eventlog-live: ', 'eventlog-live-otelcol: '))
         and l.split(': ')[1] in ('error', 'warning') and 'header' in l]
want = [l.split('\t', 1)[1] for l in open('want').read().splitlines()
        if l.split('\t', 1)[0] == inp]
def fail(msg):
    print(f"FAIL: {inp}, {what}: {msg}: {text[:600]!r}")
    sys.exit(1)
for bad in ('session ended early', 'decode error', 'show: ', 'stats: '):
    if bad in text:
        fail(f"'{bad}' said")
if not lines:
    fail("no header error said")
bodies = []
for l in lines:
    rest = l.split(': ', 1)[1]
    pre = f"error: {name}: "
    if not rest.startswith(pre):
        fail(f"a line not of the form 'PROG: {pre}...': {l!r}")
    bodies.append(rest[len(pre):])
# The words after the name: what the bytes call for, in order (once: the
# repl ends at the file, before its :load; a multiple is taken too).
n = len(want)
if len(bodies) % n:
    fail(f"{len(bodies)} lines, want {n} (or a multiple)")
for i, body in enumerate(bodies):
    w = want[i % n]
    if not body.startswith(w):
        fail(f"'{body}' does not begin '{w}'")
# The same words from every command and source.
try:
    first = open(f'first.{inp}').read().split('\n')
    if bodies[:n] != first:
        fail(f"other words than the first command's {first}")
except FileNotFoundError:
    open(f'first.{inp}', 'w').write('\n'.join(bodies[:n]))
print(f"ok: {inp}, {what}: error: {name}: {bodies[0][:60]}...")
PY
}


for in in mal noh text hcut hmag; do
  F=$TMP/$in.eventlog
  st=0; "$BIN" show "$F" > /dev/null 2> err || st=$?
  check $in "show FILE" 1 "$F"
  st=0; "$BIN" show - < "$F" > /dev/null 2> err || st=$?
  check $in "show - (a file)" 1 stdin
  st=0; cat "$F" | "$BIN" show - > /dev/null 2> err || st=$?
  check $in "show - (a pipe)" 1 stdin
  st=0; (cat "$F" > fifo &); "$BIN" show fifo > /dev/null 2> err || st=$?
  check $in "show FIFO" 1 fifo
  st=0; "$BIN" show --json "$F" > /dev/null 2> err || st=$?
  check $in "show --json FILE" 1 "$F"
  st=0; "$BIN" stats "$F" > /dev/null 2> err || st=$?
  check $in "stats FILE" 1 "$F"
  st=0; cat "$F" | "$BIN" stats - > /dev/null 2> err || st=$?
  check $in "stats - (a pipe)" 1 stdin
  st=0; (cat "$F" > fifo &); "$BIN" stats fifo > /dev/null 2> err || st=$?
  check $in "stats FIFO" 1 fifo
  st=0; "$BIN" run ok.lua "$F" --output none > /dev/null 2> err || st=$?
  check $in "run FILE" 1 "$F"
  st=0; cat "$F" | "$BIN" run ok.lua --eventlog-stdin --output none > /dev/null 2> err || st=$?
  check $in "run stdin (a pipe)" 1 stdin
  st=0; (cat "$F" > fifo &); "$BIN" run ok.lua fifo --output none > /dev/null 2> err || st=$?
  check $in "run FIFO" 1 fifo
  st=0; "$BIN" report "$F" -o r.html > /dev/null 2> err || st=$?
  check $in "report FILE" 1 "$F"
  st=0; cat "$F" | "$BIN" report - -o r.html > /dev/null 2> err || st=$?
  check $in "report - (a pipe)" 1 stdin
  st=0; echo ':load ok.lua' | "$BIN" repl "$F" > out 2> err || st=$?
  check $in "repl FILE, :load" 1 "$F"
  grep -q 'reading the input: eventlog truncated' out err && bad "$in, repl :load: 'eventlog truncated' without a header: $(cat out)"
  if [ -x "$D" ]; then
    st=0; "$D" --eventlog-file "$F" --service-name t --no-otlp > /dev/null 2> err || st=$?
    check $in "otelcol FILE" 1 "$F"
    st=0; "$D" --eventlog-stdin --service-name t --no-otlp < "$F" > /dev/null 2> err || st=$?
    check $in "otelcol stdin" 1 stdin
    st=0; (cat "$F" > fifo &); "$D" --eventlog-file fifo --service-name t --no-otlp > /dev/null 2> err || st=$?
    check $in "otelcol FIFO" 1 fifo
    # A socket goes on after a session (each connection is one): the
    # status is the stop's; only the words are checked.
    oddball_socket_run $in "$D" --service-name t --no-otlp
    check $in "otelcol Unix socket" any "Unix socket $TMP/s.sock"
  fi
  oddball_socket_run $in "$BIN" stats
  check $in "stats Unix socket" any "Unix socket $TMP/s.sock"
  oddball_socket_run $in "$BIN" show
  check $in "show Unix socket" any "Unix socket $TMP/s.sock"
done
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
