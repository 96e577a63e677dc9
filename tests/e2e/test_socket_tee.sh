#!/usr/bin/env bash
# ctest-labels: asan
# A raw tee (--eventlog-log-file) of three eventlog-socket connections
# replays as what was received. The peer serves each connection the way the
# real library does (24 stray bytes: a global BLOCK_MARKER wrapping the
# header, then the header and the events; shared/peers/eventlog-socket/
# README.md), cutting the first two mid-event; it records what it sent on
# each connection. Expected: the tee is those bytes; every command that
# reads it (show, show --json, stats, run, repl, the daemon) sees three
# sessions and, event for event, what the three connections give one by
# one; the live session over the socket printed the same.
source "$(dirname "$0")/source_lib.sh"
LOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
RETRY="--eventlog-socket-timeout 0.05 --eventlog-socket-retries 0"
CUTS=5001,20017   # both inside an event (checked below)

# 1. Live: three connections, show --json over the socket, teed.
timeout 60 "$PEER" --unix "$T/s.sock" --file "$LOG" --connections 3 \
  --stray-marker --close-after $CUTS --sent-prefix "$T/sent" \
  --ready-file "$T/ready" &
wait_for "$T/ready"
timeout 60 "$EL_BIN" show --json --eventlog-socket "$T/s.sock" $RETRY \
  --eventlog-log-file "$T/tee.bin" > "$T/live.json" 2> "$T/live.err" \
  || fail "show --json over the socket exited $?: $(cat "$T/live.err")"
wait
cat "$T/sent.1" "$T/sent.2" "$T/sent.3" | cmp - "$T/tee.bin" \
  || fail "the tee differs from the bytes sent"
[ "$(stat -c %s "$T/sent.1")" = $((24 + 5001)) ] || fail "connection 1 size"
pass "the tee holds the three connections' bytes"

# The cuts fall inside events: no event of the whole log starts there.
offs=$("$EL_BIN" show --json "$LOG" | jq -r .offset)
for c in ${CUTS//,/ }; do
  ! grep -qx "$c" <<<"$offs" || fail "cut $c is an event boundary"
done

# Events without offsets (they differ between a connection file and the
# tee), in stream order.
strip() { jq -c 'del(.offset)' "$1"; }
for k in 1 2 3; do
  timeout 60 "$EL_BIN" show --json "$T/sent.$k" > "$T/conn.$k.json" \
    2>/dev/null || true
done
cat "$T/conn.1.json" "$T/conn.2.json" "$T/conn.3.json" \
  | jq -c 'del(.offset)' > "$T/expected.json"
[ "$(wc -l < "$T/expected.json")" -gt 1000 ] || fail "too few events"

# 2. show --json of the tee: the connections' events, in order, and
# exactly what the live run printed (offsets included: the same bytes).
timeout 60 "$EL_BIN" show --json "$T/tee.bin" > "$T/tee.json" 2> "$T/tee.err" \
  || fail "show --json tee exited $?: $(cat "$T/tee.err")"
strip "$T/tee.json" | cmp - "$T/expected.json" \
  || fail "show --json of the tee differs from the three connections"
cmp "$T/tee.json" "$T/live.json" || fail "the live output differs"
pass "show --json: the tee gives the three connections' events"

# 3. show (ghc-events text): the events of the three connections.
events() { sed -n '/^Events:/,$p' "$1" | grep -E '^ *[0-9]+: ' | sort; }
timeout 60 "$EL_BIN" show "$T/tee.bin" > "$T/tee.show" \
  || fail "show tee exited $?"
for k in 1 2 3; do
  timeout 60 "$EL_BIN" show "$T/sent.$k" > "$T/conn.$k.show" 2>/dev/null || true
done
for k in 1 2 3; do events "$T/conn.$k.show"; done | sort > "$T/expected.events"
events "$T/tee.show" | cmp - "$T/expected.events" \
  || fail "show text of the tee differs from the three connections"
pass "show: same events"

# 4. stats: three sessions, the two cut events and 72 stray bytes named.
timeout 60 "$EL_BIN" stats "$T/tee.bin" > "$T/tee.stats" 2> "$T/stats.err" \
  || fail "stats tee exited $?: $(cat "$T/stats.err")"
grep -q '^sessions: *3$' "$T/tee.stats" \
  || fail "stats: $(grep sessions "$T/tee.stats")"
grep -q '^cut events: *2 ' "$T/tee.stats" && grep -q '^stray bytes: *72 ' "$T/tee.stats" \
  || fail "stats: $(cat "$T/tee.stats")"
[ "$(grep -c 'is cut off at byte' "$T/stats.err")" = 2 ] \
  || fail "stats warnings: $(cat "$T/stats.err")"
[ "$(grep -c 'skipped 24 stray bytes at byte' "$T/stats.err")" = 3 ] \
  || fail "stats warnings: $(cat "$T/stats.err")"
n=$(wc -l < "$T/expected.json")
grep -q "^events: *$n\$" "$T/tee.stats" \
  || fail "stats events: $(grep '^events' "$T/tee.stats"), expected $n"
pass "stats: 3 sessions, $n events, cuts and stray bytes reported"

# 5. run: a script counting sessions and events (every type).
cat > "$T/count.lua" <<'EOF'
local el = require('eventlog_live')
local n, s = 0, 0
el.on('*', function() n = n + 1 end)
el.on_header(function() s = s + 1 end)
el.on_end(function() print('sessions ' .. s .. ' events ' .. n) end)
EOF
timeout 60 "$EL_BIN" run "$T/count.lua" --eventlog-file "$T/tee.bin" \
  > "$T/run.out" 2>/dev/null || fail "run exited $?"
grep -qx "sessions 3 events $n" "$T/run.out" || fail "run: $(cat "$T/run.out")"
pass "run: 3 sessions, $n events"

# 6. repl on the file: summary() sees three sessions.
printf 'print("S=" .. summary().sessions)\nprint("E=" .. summary().events)\n' \
  | timeout 60 "$EL_BIN" repl --no-history "$T/tee.bin" > "$T/repl.out" \
    2>/dev/null || fail "repl exited $?"
grep -qx 'S=3' "$T/repl.out" && grep -qx "E=$n" "$T/repl.out" \
  || fail "repl: $(cat "$T/repl.out")"
pass "repl: 3 sessions, $n events"

# 7. The daemon reads it to the end without a decode error, naming the
# two cut events.
OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none OTEL_TRACES_EXPORTER=none \
OTEL_PROFILES_EXPORTER=none timeout 60 "$EL_BUILD_DIR/eventlog-live-otelcol" \
  --eventlog-file "$T/tee.bin" --service-name tee -v info \
  > /dev/null 2> "$T/daemon.err" || fail "daemon exited $?: $(cat "$T/daemon.err")"
! grep -q 'decoding failed' "$T/daemon.err" || fail "daemon: $(cat "$T/daemon.err")"
[ "$(grep -c 'is cut off at byte' "$T/daemon.err")" = 2 ] \
  || fail "daemon: $(cat "$T/daemon.err")"
pass "daemon: reads the tee, reports the two cut events"

# 8. A live source never holds an event back: over a FIFO whose writer
# pauses right after an event ending in a 00 byte (which could begin the
# stray marker of a next connection in a tee), show --json prints that
# event while the writer still waits (it goes on only when told, or after
# 120 s; the check gives up after 15 s).
mkfifo "$T/live.fifo"
python3 - "$T/live.fifo" "$T/go" <<'PY' &
import os, struct, sys, time
def decl(i, size, desc):
    return (b'etb\0' + struct.pack('>HhI', i, size, len(desc)) + desc
            + struct.pack('>I', 0) + b'ete\0')
f = open(sys.argv[1], 'wb')
f.write(b'hdrbhetb' + decl(1, 4, b'Run thread') + b'hetehdredatb'
        + struct.pack('>HQI', 1, 5, 0x700))   # payload 00 00 07 00
f.flush()
t0 = time.monotonic()
while time.monotonic() - t0 < 120 and not os.path.exists(sys.argv[2]):
    time.sleep(0.1)
f.write(b'\xff\xff')
f.close()
PY
timeout 180 "$EL_BIN" show --json --eventlog-file "$T/live.fifo" \
  > "$T/fifo.json" 2>/dev/null &
seen=0 until=$((SECONDS + 15))
while [ $SECONDS -lt $until ]; do   # while the writer waits
  grep -q '"thread":1792' "$T/fifo.json" && { seen=1; break; }
  sleep 0.1
done
touch "$T/go"
wait
[ $seen = 1 ] || fail "the event was held back on a live FIFO: $(cat "$T/fifo.json")"
pass "a live source never holds an event back"
