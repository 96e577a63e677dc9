#!/usr/bin/env bash
# Where `eventlog-live report -o PATH` writes. A regular file gets the page
# through a temporary file renamed into place; anything else is written
# as it is. Before, every path was renamed over: run as root,
# `report F -o /dev/null` replaced the /dev/null device with a regular
# file (every later `> /dev/null` of the machine then wrote into it; a
# .ci/run failed in two unrelated tests that read /dev/null); a FIFO was
# replaced by a file (its reader never got the page); a symbolic link was
# replaced by the file instead of the file it names being written.
# Checked: /dev/null stays a character device and the command exits 0 (as
# a user, the old code could not write /dev/null.tmp-PID: exit 1); a
# FIFO's reader receives a page (its <title>); a link still points to its
# file, which holds the page; a regular file is replaced whole, no
# temporary file left.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
BIN=$BUILD/eventlog-live
A=$EVENTLOGS/ghc-9.0/heapy-hT.eventlog
[ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 77; }
[ -f "$A" ] || { echo "SKIP: no shared eventlogs"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-report-out.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
rc=0
bad() { echo "FAIL: $*"; rc=1; }
ok() { echo "ok: $*"; }

# /dev/null (the device, not a file named so)
[ -c /dev/null ] || { echo "SKIP: /dev/null is not a character device"; exit 77; }
"$BIN" report "$A" -o /dev/null 2> "$TMP/null.err"
st=$?
if [ -c /dev/null ]; then ok "/dev/null still a device"; else
  bad "/dev/null is no longer a character device: $(ls -l /dev/null)"
  # put it back for the rest of the machine (root only)
  rm -f /dev/null && mknod -m 666 /dev/null c 1 3
fi
[ "$st" = 0 ] && ok "-o /dev/null exits 0" ||
  bad "-o /dev/null exit $st: $(cat "$TMP/null.err")"

# a FIFO: its reader gets the page
mkfifo "$TMP/fifo"
timeout 60 cat "$TMP/fifo" > "$TMP/from-fifo.html" &
reader=$!
timeout 60 "$BIN" report "$A" -o "$TMP/fifo" 2> "$TMP/fifo.err"
st=$?
if [ "$st" != 0 ]; then
  bad "-o FIFO exit $st: $(cat "$TMP/fifo.err")"
  exec 3<> "$TMP/fifo"; exec 3>&- # release the reader
fi
wait "$reader"
[ -p "$TMP/fifo" ] && ok "FIFO still a FIFO" || bad "the FIFO was replaced"
grep -q '<title>' "$TMP/from-fifo.html" && ok "FIFO reader got the page" ||
  bad "FIFO reader got $(wc -c < "$TMP/from-fifo.html") bytes, no page"

# a symbolic link: the file it names is written
echo old > "$TMP/real.html"
ln -s real.html "$TMP/link.html"
"$BIN" report "$A" -o "$TMP/link.html" 2> "$TMP/link.err" ||
  bad "-o link exit $?: $(cat "$TMP/link.err")"
[ -L "$TMP/link.html" ] && ok "link still a link" || bad "the link was replaced"
grep -q '<title>' "$TMP/real.html" && ok "the linked file holds the page" ||
  bad "the linked file was not written"

# a regular file: replaced whole, no temporary left
echo old > "$TMP/page.html"
"$BIN" report "$A" -o "$TMP/page.html" 2> "$TMP/page.err" ||
  bad "-o file exit $?: $(cat "$TMP/page.err")"
grep -q '<title>' "$TMP/page.html" && ok "regular file holds the page" ||
  bad "regular file not written"
left=$(ls "$TMP" | grep -c '\.tmp-' || true)
[ "$left" = 0 ] && ok "no temporary file left" || bad "$left temporary files left"
exit $rc
