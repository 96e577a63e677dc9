#!/usr/bin/env bash
# `eventlog-live report --script S.lua` whose handler loops for ever: SIGINT
# (and SIGTERM) must abandon the handler and end the report as for `run`
# and the daemon (docs/sources.md "Stopping"; docs/exit-codes.md: status
# 0, "stopped by a signal at byte N", the page written with what was
# read). Before, the report command did not hand the signal to the Lua
# host: both signals were ignored while the handler ran (100% CPU until
# SIGKILL).
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start report-signal
cat > "$TMP/loop.lua" <<'LUA'
local el = require("eventlog_live")
el.on("USER_MARKER", function(ev, m) while true do end end)
LUA
for sig in INT TERM; do
  "$BIN" report --script "$TMP/loop.lua" "$ODD" -o "$TMP/$sig.html" \
    > "$TMP/$sig.out" 2> "$TMP/$sig.err" &
  PID=$!
  sleep 1
  kill -"$sig" "$PID"
  for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$PID" 2>/dev/null; then
    echo "FAIL: SIG$sig: still running 5 s after the signal"
    kill -KILL "$PID"; wait "$PID" 2>/dev/null; PID=; rc=1; continue
  fi
  wait "$PID"; st=$?; PID=
  if [ $st = 0 ] && grep -q 'stopped by a signal at byte' "$TMP/$sig.err" &&
     [ -s "$TMP/$sig.html" ]; then
    echo "ok: SIG$sig: status 0, page written, $(grep -o 'stopped by a signal.*' "$TMP/$sig.err")"
  else
    echo "FAIL: SIG$sig: status $st: $(cat "$TMP/$sig.err")"; rc=1
  fi
done
# A FIFO: the log (its size is what the page's stats.bytes must give),
# then, after the SIGINT, 1 MiB more that the drain reads and discards
# until the writer closes. h88: the page gave as its input size the
# bytes read, the discarded ones included (128 MiB for 62 MiB decoded).
size=$(stat -c %s "$ODD")
mkfifo "$TMP/in.fifo"
"$BIN" report "$TMP/in.fifo" -o "$TMP/fifo.html" > "$TMP/fifo.out" \
  2> "$TMP/fifo.err" &
PID=$!
( cat "$ODD"; touch "$TMP/written"
  for _ in $(seq 300); do [ -e "$TMP/signalled" ] && break; sleep 0.1; done
  head -c 1048576 /dev/zero ) > "$TMP/in.fifo" &
WPID=$!
for _ in $(seq 300); do [ -e "$TMP/written" ] && break; sleep 0.1; done
sleep 1 # (the log read)
kill -INT "$PID"; touch "$TMP/signalled"
wait "$WPID"
for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
wait "$PID"; st=$?; PID=
got=$(grep -o '"stats":{"bytes":[0-9]*' "$TMP/fifo.html" | grep -o '[0-9]*$')
disc=$(grep -o 'discarded [0-9]* bytes' "$TMP/fifo.err" | grep -o '[0-9]*')
if [ $st = 0 ] && [ "$got" = "$size" ] && [ "$disc" = 1048576 ]; then
  ok "FIFO: the page's input size is the log's $size bytes, 1048576 discarded after the stop"
else
  bad "FIFO: status $st, page bytes '$got' (want $size), discarded '$disc' (want 1048576): $(cat "$TMP/fifo.err")"
fi
[ $rc = 0 ] && echo PASS
exit $rc
