#!/usr/bin/env bash
# ctest-labels: asan
# Hostile eventlog-socket peers (a Python server on a Unix socket): one that
# accepts and never sends, one that sends endless garbage, one that sends a
# byte and hangs up on every connection, one that cuts every connection
# inside an event. `stats` must keep running, stop on SIGINT with its report,
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
