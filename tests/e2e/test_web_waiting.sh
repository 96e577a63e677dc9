#!/usr/bin/env bash
# End-to-end: what the web view says while it waits for a program's data
# (tests/web/waiting_check.js, Debian's Chromium through playwright-core).
# The daemon reads a named FIFO that the check writes an eventlog into, in
# parts, as a running program would:
# 1. GHC 9.0 (heapy-hT, whose header declares no BLOCKS_SIZE, read here
#    with python): the header alone, then its capability block (heap
#    sizes, no census), then its global block (the censuses), the FIFO
#    kept open. Until data comes, the status line and each empty chart
#    say that GHC before 9.2 writes its events only when a 2 MiB buffer
#    fills or at exit; with the capability block, only the heap profile
#    chart says it (of its census); with the census, nothing.
# 2. GHC 9.2 (ghc-9.2-events, which declares it): the header alone, then
#    the rest: the page never says it.
# The cuts (where the header ends, where the block holding the first
# HEAP_PROF_SAMPLE_BEGIN begins) come from python reading the eventlog
# with its own framing. Screenshots: $EL_BUILD_DIR/test_web_waiting-*.png.
# Exit 0 pass, 1 fail, 77 skip.
set -u
source "$(dirname "$0")/serve_lib.sh" web-waiting
OLD=$EVENTLOGS/ghc-9.0/heapy-hT.eventlog
NEW=$EVENTLOGS/ghc-events/ghc-9.2-events.eventlog

[ -x /usr/bin/chromium ] || skip "chromium not installed (apt-get install chromium)"
command -v node >/dev/null || skip "node missing"
[ -d "$SRC/tests/web/node_modules/playwright-core" ] ||
  skip "tests/web: run npm ci (scripts/setup.sh)"
sv_option --web-port
[ -f "$OLD" ] && [ -f "$NEW" ] || skip "eventlogs missing"

# "DATA CENSUS BLOCKS_SIZE": the first data byte, the offset of the block
# marker whose block holds the first HEAP_PROF_SAMPLE_BEGIN (160; none:
# -1), and 1 when the header declares BLOCKS_SIZE (91), else 0.
cuts() {
  python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
j = d.index(b"hdrbhetb") + 8
sizes = {}
while d[j:j + 4] == b"etb\x00":
    et, sz = struct.unpack(">Hh", d[j + 4:j + 8])
    j += 12 + struct.unpack(">I", d[j + 8:j + 12])[0]
    j += 8 + struct.unpack(">I", d[j:j + 4])[0]
    sizes[et] = sz
assert d[j:j + 12] == b"hetehdredatb"
data = j = j + 12
block = census = -1
while j < len(d) and d[j:j + 2] != b"\xff\xff":
    et = struct.unpack(">H", d[j:j + 2])[0]
    if et == 18:
        block = j
    if et == 160 and census < 0:
        census = block
    j += 12 + struct.unpack(">H", d[j + 10:j + 12])[0] if sizes[et] < 0 \
        else 10 + sizes[et]
print(data, census, int(91 in sizes))
PY
}

# The defaults with every window 1 s, so that what comes shows at once.
"$DAEMON" --print-defaults |
  sed -e 's/^\(      export:\) [0-9][0-9]*s$/\1 1s/' > "$TMP/config.yaml"

# check NAME LOG OLD CUTS: serve a FIFO with the daemon, run the check.
check() {
  local name=$1 log=$2 old=$3 cuts=$4
  mkfifo "$TMP/$name.fifo"
  sv_daemon "$name" --eventlog-file "$TMP/$name.fifo" --service-name "$name" \
    -hT --config "$TMP/config.yaml" --web-port 0
  sv_port "$name" "web view"
  timeout 180 node "$SRC/tests/web/waiting_check.js" \
    --url "http://127.0.0.1:$PORT/" --fifo "$TMP/$name.fifo" --log "$log" \
    --cuts "$cuts" --old "$old" --screenshot "$BUILD/test_web_waiting-$name" \
    --user-data-dir "$TMP/udd-$name" > "$TMP/$name.json" 2> "$TMP/$name.check.err"
  local rc=$?
  cat "$TMP/$name.json"
  [ $rc = 0 ] || { cat "$TMP/$name.check.err"; tail -n 20 "$TMP/$name.err"
    fail "$name: the page while waiting"; }
  stop_pid "$DPID"
}

read -r data census blocks < <(cuts "$OLD")
[ "$blocks" = 0 ] && [ "$census" -gt "$data" ] ||
  fail "$OLD: expected no BLOCKS_SIZE and a census after the first block ($data $census $blocks)"
check old "$OLD" 1 "$data,$census"
echo "ok: GHC 9.0: the page says why it waits, until the data came"

read -r data census blocks < <(cuts "$NEW")
[ "$blocks" = 1 ] || fail "$NEW: expected a BLOCKS_SIZE declaration"
check new "$NEW" 0 "$data"
echo "ok: GHC 9.2: the page does not say it"
echo "PASS: web view while waiting for data"
