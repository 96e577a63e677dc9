#!/usr/bin/env bash
# ctest-labels: asan
# Issue 13: "every time computation saturates or rejects instead of
# wrapping". A real eventlog with one timestamp set to 0, 2^62, 2^63 or
# 2^64-1 at a position in the stream (the first event, a block marker's
# start and end time, an event in the middle, the last event, WALL_CLOCK_TIME)
# is read by show, stats, run (a script with eventlog-time timers and a
# handler on every event) and the daemon (every processor on, console
# exporter): each must end on its own within 60 s, by exit status 0 or 1,
# never by a signal or a hang. Then the daemon on a FIFO that carries such
# an event and stays open must end within its shutdown bound after SIGTERM.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT
fail=0
src=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=console OTEL_PROFILES_EXPORTER=console
"$D" --print-defaults | sed 's/^\(      export:\) false$/\1 true/' >"$tmp/all.yaml"
cat >"$tmp/every.lua" <<'LUA'
local el = require("eventlog_live")
local n, ticks = 0, 0
el.on("*", function(ev) n = n + 1; local _ = ev.unix_ns end)
el.every(1000000, function() ticks = ticks + 1 end)
el.every(3000000000, function() ticks = ticks + 1 end)
el.threads{on_span = function() end}
el.cap_usage{on_span = function() end}
el.on_end(function() print(n, ticks) end)
LUA

# Write one variant per (value, position): $tmp/v-<pos>-<value>.eventlog
python3 - "$src" "$tmp" <<'PY'
import struct, sys
src, tmp = sys.argv[1], sys.argv[2]
b = bytearray(open(src, "rb").read())
pos, sizes = 8, {}
while b[pos:pos + 4] == b"etb\0":
    tid, size, dlen = struct.unpack(">HHI", b[pos + 4:pos + 12])
    p = pos + 12 + dlen
    (elen,) = struct.unpack(">I", b[p:p + 4])
    sizes[tid] = size
    pos = p + 4 + elen + 4
pos += 12  # hete hdre datb
events = []  # (offset, type)
while pos + 2 <= len(b):
    (t,) = struct.unpack(">H", b[pos:pos + 2])
    if t == 0xFFFF:
        break
    size = sizes[t]
    if size == 0xFFFF:
        (size,) = struct.unpack(">H", b[pos + 10:pos + 12])
        size += 2
    events.append((pos, t))
    pos += 10 + size
markers = [o for o, t in events if t == 18]
wct = [o for o, t in events if t == 43]
where = {
    "first": [events[0][0] + 2],
    "block_start": [markers[1] + 2 if len(markers) > 1 else markers[0] + 2],
    "block_end": [(markers[1] if len(markers) > 1 else markers[0]) + 14],
    "middle": [events[len(events) // 2][0] + 2],
    "last": [events[-1][0] + 2],
    "wall_clock": [wct[0] + 2] if wct else [],
}
values = {"0": 0, "2^62": 1 << 62, "2^63": 1 << 63, "2^64-1": (1 << 64) - 1}
for name, offs in where.items():
    for vname, v in values.items():
        c = bytearray(b)
        for o in offs:
            c[o:o + 8] = struct.pack(">Q", v)
        open("%s/v-%s-%s.eventlog" % (tmp, name, vname), "wb").write(c)
PY

ended() {  # ended WHAT RC: 0/1 is an end; 124 = timeout; >128 = signal
  if [ "$2" -eq 124 ]; then echo "FAIL: $1: still running after 60 s"; fail=1
  elif [ "$2" -gt 1 ]; then echo "FAIL: $1: exit status $2"; fail=1
  fi
}

n=0
for f in "$tmp"/v-*.eventlog; do
  v=$(basename "$f" .eventlog)
  timeout 60 "$EL_BIN" show "$f" >/dev/null 2>&1; ended "show $v" $?
  timeout 60 "$EL_BIN" stats "$f" >/dev/null 2>&1; ended "stats $v" $?
  timeout 60 "$EL_BIN" run "$tmp/every.lua" "$f" >/dev/null 2>&1; ended "run $v" $?
  timeout 60 "$D" --eventlog-file "$f" --service-name x -hT \
    --config "$tmp/all.yaml" >/dev/null 2>&1; ended "daemon $v" $?
  n=$((n + 1))
done
echo "ok: $n variants read by show, stats, run and the daemon, each ended by itself"

# SIGTERM ends the daemon within its shutdown bound while a FIFO writer
# keeps it open after sending an event at 2^64-1.
for v in 2^64-1 2^63; do
  rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
  EL_OTLP_SHUTDOWN_TIMEOUT=5000 "$D" --eventlog-file "$tmp/fifo" \
    --service-name x -hT --config "$tmp/all.yaml" >/dev/null 2>&1 &
  dpid=$!
  (cat "$tmp/v-middle-$v.eventlog"; sleep 30) >"$tmp/fifo" &
  wpid=$!
  sleep 2
  kill -TERM "$dpid"
  ok=0
  for _ in $(seq 150); do kill -0 "$dpid" 2>/dev/null || { ok=1; break; }; sleep 0.1; done
  if [ "$ok" = 1 ]; then
    echo "ok: SIGTERM ended the daemon (event at $v in the stream)"
  else
    echo "FAIL: the daemon still runs 15 s after SIGTERM (event at $v)"; kill -9 "$dpid"; fail=1
  fi
  kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
done
[ "$fail" = 0 ] && echo PASS
exit "$fail"
