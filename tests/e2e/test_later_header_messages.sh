#!/usr/bin/env bash
# A later session's header damaged or cut short, after a complete log
# (docs/exit-codes.md, the rows latercut, latergap, laterbad): the same
# words and the same status from every command (show, stats, run, report,
# the daemon) and every source (a file, a pipe on stdin, a FIFO; a Unix
# socket, words only: its status is the stop's).
#   latercut  the log, then its first 1000 bytes (a cut inside the second
#             header): a cut, as a log cut inside its last event is:
#             "warning: NAME: eventlog truncated inside the header at byte
#             N (a later header, from byte H, after session 1);
#             everything before it was processed", 0 from every command.
#             Before: show and stats said "warning" from a file and
#             "error" through a FIFO, all with 0; run, report and the
#             daemon said "error" with 1.
#   latergap  the log twice, 8 bytes inserted after the second header's
#             "hete": a corrupt part of those 8 bytes, the second session
#             decoded: "corrupt stream: malformed header: ...; skipped 8
#             bytes (X to X+8) to the header end marker at byte X+8", an
#             error in show and stats (1), a warning elsewhere (0). Before:
#             "malformed header", the second session lost, 1 everywhere.
#   laterbad  the log twice, the second header's "datb" overwritten: a
#             corrupt part from that header's "hdrb" to the end: "corrupt
#             stream: malformed header: missing header end or data begin
#             marker at byte B (no data begin marker in the 1024 bytes
#             after it); skipped N bytes (H to E), the header and its
#             session, to the end of the input", statuses as latergap.
# The inputs are made here from the shared oddball-hT log (GHC 9.0); the
# expected words and offsets are computed from their bytes. show's output
# for latergap is the intact log twice's (the second session decoded), and
# report's page lists the part at its top, its stderr saying the page is
# of what was read.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start later-header
D=$BUILD/eventlog-live-otelcol
cd "$TMP"
python3 - "$ODD" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
n = len(b)
hete = b.find(b'hetehdredatb')
assert hete > 1000 and b.count(b'hetehdredatb') == 1, hete
assert b[-2:] == b'\xff\xff'           # ends with DATA_END
open('clean2.eventlog', 'wb').write(b + b)
open('latercut.eventlog', 'wb').write(b + b[:1000])
x = n + hete + 4                        # where the second "hdre" begins
open('latergap.eventlog', 'wb').write(b + b[:hete + 4] + b'\0' * 8 + b[hete + 4:])
bad = bytearray(b); bad[hete + 8:hete + 12] = b'XXXX'
assert b'datb' not in bad[hete + 4:hete + 4 + 1100]
open('laterbad.eventlog', 'wb').write(b + bytes(bad))
with open('want', 'w') as w:
    w.write(f"latercut\twarning\teventlog truncated inside the header at byte {n + 1000} "
            f"(a later header, from byte {n}, after session 1); everything before it was processed\n")
    w.write(f"latergap\tcorrupt\tcorrupt stream: malformed header: the header end and data begin "
            f"markers are not at byte {x}, after the end of the type list; skipped 8 bytes "
            f"({x} to {x + 8}) to the header end marker at byte {x + 8}\n")
    w.write(f"laterbad\tcorrupt\tcorrupt stream: malformed header: missing header end or data "
            f"begin marker at byte {x} (no data begin marker in the 1024 bytes after it); "
            f"skipped {n} bytes ({n} to {2 * n}), the header and its session, to the end of the\n")
    w.write(f"latergap\toffset\t{x}\nlaterbad\toffset\t{n}\nlatercut\toffset\t{n + 1000}\n")
PY
echo 'local el = require("eventlog_live")' > ok.lua
rm -f fifo && mkfifo fifo

# check INPUT WHAT CMD NAME: err holds the stderr of WHAT (command CMD),
# which read INPUT (named NAME) and exited with $st ("any": not checked).
check() {
  local in=$1 what=$2 cmd=$3 name=$4 want_st
  case $in/$cmd in
    latercut/*) want_st=0 ;;
    */show | */stats) want_st=1 ;;
    *) want_st=0 ;;
  esac
  [ "$st" = any ] || [ "$st" = "$want_st" ] ||
    bad "$in, $what: status $st, want $want_st: $(head -c 400 err)"
  python3 - err "$in" "$what" "$cmd" "$name" <<'PY' || rc=1
import sys
err, inp, what, cmd, name = sys.argv[1:]
text = open(err, errors='replace').read()
want = {}
for l in open('want').read().splitlines():
    i, k, v = l.split('\t', 2)
    if i == inp: want[k] = v
kind = 'warning' if 'warning' in want else 'corrupt'
level = 'error' if kind == 'corrupt' and cmd in ('show', 'stats') else 'warning'
def fail(msg):
    print(f"FAIL: {inp}, {what}: {msg}: {text[:700]!r}")
    sys.exit(1)
for bad in ('session ended early', 'decode error', 'ignored ', 'stray byte'):
    if bad in text:
        fail(f"'{bad}' said")
lines = [l for l in text.split('\n')
         if l.startswith(('eventlog-live: ', 'eventlog-live-otelcol: '))
         and l.split(': ')[1] in ('error', 'warning') and 'header' in l]
if len(lines) != 1:
    fail(f"{len(lines)} lines about the header, want 1")
pre = f"{level}: {name}: "
rest = lines[0].split(': ', 1)[1]
if not rest.startswith(pre):
    fail(f"not of the form 'PROG: {pre}...': {lines[0]!r}")
body = rest[len(pre):]
if not body.startswith(want[kind]):
    fail(f"'{body}' does not begin '{want[kind]}'")
print(f"ok: {inp}, {what}: {level}: {name}: {body[:50]}...")
PY
}

# socket_run INPUT CMD...: oddball_socket_run (the bytes of INPUT on a
# Unix socket, SIGINT once the header is spoken of); its status is the
# stop's, not checked ("any").
socket_run() {
  oddball_socket_run "$@"
  st=any
}

"$BIN" show clean2.eventlog > clean2.show 2> /dev/null || bad "show of the intact log twice failed"
for in in latercut latergap laterbad; do
  F=$TMP/$in.eventlog
  st=0; "$BIN" show "$F" > show.out 2> err || st=$?
  check $in "show FILE" show "$F"
  if [ $in = latergap ]; then
    # The second session decoded: the intact log twice's output but for
    # the offsets, which show does not print.
    cmp -s show.out clean2.show && ok "latergap: show prints the intact log twice's events" ||
      bad "latergap: show's output differs from the intact log twice's"
  fi
  st=0; cat "$F" | "$BIN" show - > /dev/null 2> err || st=$?
  check $in "show - (a pipe)" show stdin
  st=0; (cat "$F" > fifo &); "$BIN" show fifo > /dev/null 2> err || st=$?
  check $in "show FIFO" show fifo
  st=0; "$BIN" show --json "$F" > /dev/null 2> err || st=$?
  check $in "show --json FILE" show "$F"
  st=0; "$BIN" stats "$F" > /dev/null 2> err || st=$?
  check $in "stats FILE" stats "$F"
  st=0; cat "$F" | "$BIN" stats - > /dev/null 2> err || st=$?
  check $in "stats - (a pipe)" stats stdin
  st=0; (cat "$F" > fifo &); "$BIN" stats fifo > /dev/null 2> err || st=$?
  check $in "stats FIFO" stats fifo
  st=0; "$BIN" run ok.lua "$F" --output none > /dev/null 2> err || st=$?
  check $in "run FILE" run "$F"
  st=0; cat "$F" | "$BIN" run ok.lua --eventlog-stdin --output none > /dev/null 2> err || st=$?
  check $in "run stdin (a pipe)" run stdin
  st=0; (cat "$F" > fifo &); "$BIN" run ok.lua fifo --output none > /dev/null 2> err || st=$?
  check $in "run FIFO" run fifo
  st=0; (cat "$F" > fifo &); "$BIN" report fifo -o r.html > /dev/null 2> err || st=$?
  check $in "report FIFO" report fifo
  st=0; "$BIN" report "$F" -o r.html > /dev/null 2> err || st=$?
  check $in "report FILE" report "$F"
  # The page of what was read, saying so: the part listed at its top.
  grep -q "report: wrote r.html with what was read: 1 part of the input could not be read" err ||
    bad "$in, report: stderr does not say the page is of what was read: $(cat err)"
  off=$(awk -F'\t' -v i=$in '$1 == i && $2 == "offset" {print $3}' want)
  PYTHONPATH=$SRC/tests/e2e python3 - r.html "$off" "$in" <<'PY' || rc=1
import sys
from report_data import page_data
d = page_data(sys.argv[1])
off, inp = int(sys.argv[2]), sys.argv[3]
if not any(e['offset'] == off for e in d['errors']):
    print(f"FAIL: {inp}, report: the page lists no part at byte {off}: {d['errors']}")
    sys.exit(1)
print(f"ok: {inp}, report: the page lists {d['errors'][0]['msg'][:60]!r}...")
PY
  if [ -x "$D" ]; then
    st=0; "$D" --eventlog-file "$F" --service-name t --no-otlp > /dev/null 2> err || st=$?
    check $in "otelcol FILE" otelcol "$F"
    st=0; (cat "$F" > fifo &); "$D" --eventlog-file fifo --service-name t --no-otlp > /dev/null 2> err || st=$?
    check $in "otelcol FIFO" otelcol fifo
    socket_run $in "$D" --service-name t --no-otlp
    check $in "otelcol Unix socket" otelcol "Unix socket $TMP/s.sock"
  fi
  socket_run $in "$BIN" stats
  check $in "stats Unix socket" stats "Unix socket $TMP/s.sock"
  socket_run $in "$BIN" run ok.lua --output none
  check $in "run Unix socket" run "Unix socket $TMP/s.sock"
  socket_run $in "$BIN" show
  check $in "show Unix socket" show "Unix socket $TMP/s.sock"
done
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
