#!/usr/bin/env bash
# ctest-labels: asan
# Hostile eventlog-socket peers (a Python server on a Unix socket): one that
# accepts and never sends, one that sends endless garbage, one that sends a
# byte and hangs up on every connection, one that cuts every connection
# inside an event, one that cuts it inside the next block's marker. `stats` must keep running, stop on SIGINT with its report,
# and report each problem with the right byte counts.
source "$(dirname "$0")/source_lib.sh"
LOG=$EL_EVENTLOGS/ghc-events/hello-ghc-8.2.2.eventlog
SOCK=$T/s.sock

cat > "$T/srv.py" <<'EOF'
import os, socket, sys, threading, time
mode, path, log = sys.argv[1], sys.argv[2], open(sys.argv[3], 'rb').read()
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(16)
end = time.time() + 60
def serve(c):
  try:
    if mode == 'silent':
      time.sleep(60)
    elif mode == 'garbage':
      while time.time() < end:
        c.sendall(b'\x00\x01garbage' * 8192)
    elif mode == 'onebyte':
      c.sendall(b'x')
      time.sleep(0.05)
    elif mode == 'midevent':
      c.sendall(log[:len(log) - 37])   # inside the last events
      time.sleep(0.05)
    elif mode == 'whole':              # a prefix made by the test
      c.sendall(log)
      time.sleep(0.05)
  except OSError:
    pass
  c.close()
while time.time() < end:
  c, _ = s.accept()
  threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF

# run_peer MODE SECONDS: stats against the peer, SIGINT after SECONDS.
run_peer() {
  rm -f "$SOCK"
  python3 "$T/srv.py" "$1" "$SOCK" "$LOG" &
  local spid=$! rc=0
  wait_for "$SOCK"
  "$EL_BIN" stats --eventlog-socket "$SOCK" --eventlog-socket-timeout 0.05 \
    > "$T/$1.out" 2> "$T/$1.err" &
  local pid=$!
  sleep "$2"
  kill -INT $pid
  wait_pid $pid 20 || rc=$?
  kill $spid 2>/dev/null || true
  wait $spid 2>/dev/null || true
  [ $rc -le 1 ] || fail "$1: status $rc: $(head -c 600 "$T/$1.err")"
  grep -q '^events:' "$T/$1.out" || fail "$1: no report"
}

run_peer silent 1
grep -q '^events: *0$' "$T/silent.out" || fail "silent: $(cat "$T/silent.out")"
pass "a peer that never sends: SIGINT, report"

run_peer garbage 2
grep -qE 'no eventlog header found in [0-9]{6,} bytes' "$T/garbage.err" \
  || fail "garbage: $(cat "$T/garbage.err")"
skipped=$(sed -n 's/^skipped bytes: *//p' "$T/garbage.out")
[ "${skipped:-0}" -gt 100000 ] || fail "garbage: skipped bytes $skipped"
pass "a peer sending garbage: skipped bytes counted and reported"

# Every connection is a new session of one byte: each is reported as one
# byte without a header (not the running total of all connections).
run_peer onebyte 2
n=$(grep -cE 'no eventlog header found in 1 byte from byte [0-9]+$' "$T/onebyte.err" || true)
[ "$n" -ge 2 ] || fail "onebyte: $(head -5 "$T/onebyte.err")"
grep -qE 'no eventlog header found in ([02-9]|[0-9]{2,}) bytes' \
  "$T/onebyte.err" && fail "onebyte: wrong count: $(head -5 "$T/onebyte.err")"
pass "a peer hanging up after one byte: each session reported alone"

# Each connection is cut inside an event: each session is reported
# truncated, everything before the cut is counted.
run_peer midevent 2
n=$(grep -c 'truncated inside an event' "$T/midevent.err" || true)
[ "$n" -ge 2 ] || fail "midevent: $(head -5 "$T/midevent.err")"
sessions=$(sed -n 's/^sessions: *//p' "$T/midevent.out")
events=$(sed -n 's/^events: *//p' "$T/midevent.out")
per=$(timeout 30 "$EL_BIN" stats "$LOG" | sed -n 's/^events: *//p')
[ "$events" -ge $(( (per - 3) * (sessions - 1) )) ] \
  || fail "midevent: $events events in $sessions sessions ($per per log)"
pass "a peer cutting every connection mid-event: each cut reported"

# Each connection ends 10 bytes into the marker of the block after the
# first whole block (eventlog-socket's last write at exit can end there):
# no block is left short, and the warning still says the connection
# closed before the program's last events were sent (h65; it was said in
# a file's words). Offsets framed here from the header's sizes.
CUT=$T/inmarker.eventlog
python3 - "$EL_EVENTLOGS/ghc-9.0/threads.eventlog" "$CUT" > "$T/inmarker.want" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
j = d.index(b'hetb') + 4
sizes = {}
while d[j:j + 4] == b'etb\0':
    et, sz = struct.unpack('>Hh', d[j + 4:j + 8])
    j += 12 + struct.unpack('>I', d[j + 8:j + 12])[0]
    j += 4 + struct.unpack('>I', d[j:j + 4])[0] + 4
    sizes[et] = sz
j = d.index(b'datb', j) + 4
while True:
    et, = struct.unpack('>H', d[j:j + 2])
    if et == 18:
        end = j + struct.unpack('>I', d[j + 10:j + 14])[0]
        break
    sz = sizes[et]
    j += 12 + struct.unpack('>H', d[j + 10:j + 12])[0] if sz < 0 else 10 + sz
assert d[end:end + 2] == b'\x00\x12', 'no block marker after the block'
open(sys.argv[2], 'wb').write(d[:end + 10])
print('at byte %d (10 of 24 bytes present): the input ends at byte %d; '
      'everything before it was processed, whatever the program wrote '
      'after it was lost' % (end, end + 10))
PY
LOG=$CUT run_peer whole 1
grep -F "the connection closed before the program's last events were sent: eventlog truncated inside an event, BLOCK_MARKER (type 18), $(cat "$T/inmarker.want")" \
  "$T/whole.err" >/dev/null ||
  fail "inmarker: want '$(cat "$T/inmarker.want")': $(head -3 "$T/whole.err")"
pass "a connection cut inside the next block's marker: said as a closed connection"

# Each connection ends between two events of the first block, after its
# first 5 events: no event is cut, the end-of-data marker never came, and
# the block is left short. Said as a closed connection too (h67: it was
# said in a file's words, "the program was killed or is still
# writing"), by stats and by the daemon. Offsets framed here.
BETWEEN=$T/between.eventlog
python3 - "$EL_EVENTLOGS/ghc-9.0/threads.eventlog" "$BETWEEN" "$(dirname "$0")" > "$T/between.want" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import el_frame
d = open(sys.argv[1], 'rb').read()
size, p = el_frame.header(d)
n = None
for off, t, hl, ln in el_frame.events(d, size, p):
    if t == el_frame.BLOCK_MARKER and n is None:
        start = off
        bsize, cap = el_frame.marker(d, off)
        n = -1                           # the marker itself
    if n is not None:
        n += 1
        if n == 5:
            end = off + hl + ln
            break
assert end < start + bsize, 'the block holds fewer than 5 events'
open(sys.argv[2], 'wb').write(d[:end])
print('the connection closed before the program\'s last events were sent: '
      'eventlog ends at byte %d without its end-of-data marker, %d bytes '
      'short of the end of capability %d\'s block from byte %d; everything '
      'before it was processed, the rest of that block and whatever the '
      'program wrote after it were lost (eventlog-socket drops what it has '
      'not sent when its program exits)' % (end, start + bsize - end, cap,
                                            start))
PY
LOG=$BETWEEN run_peer whole 1
grep -qF "$(cat "$T/between.want")" "$T/whole.err" ||
  fail "between (stats): want '$(cat "$T/between.want")': $(head -3 "$T/whole.err")"
grep -q 'killed or is still writing' "$T/whole.err" &&
  fail "between (stats): said in a file's words: $(head -3 "$T/whole.err")"
rm -f "$SOCK"
python3 "$T/srv.py" whole "$SOCK" "$BETWEEN" &
spid=$!
wait_for "$SOCK"
OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none OTEL_TRACES_EXPORTER=none \
  OTEL_PROFILES_EXPORTER=none "$EL_BIN" otelcol --eventlog-socket "$SOCK" \
  --eventlog-socket-timeout 0.05 > "$T/between.d.out" 2> "$T/between.d.err" &
dpid=$!
sleep 1
kill -INT $dpid
wait_pid $dpid 20 || true
kill $spid 2>/dev/null || true
wait $spid 2>/dev/null || true
grep -qF "warning: Unix socket $SOCK: $(cat "$T/between.want")" \
  "$T/between.d.err" ||
  fail "between (daemon): want '$(cat "$T/between.want")': $(head -3 "$T/between.d.err")"
pass "a connection ending between two events: said as a closed connection"
