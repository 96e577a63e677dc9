#!/usr/bin/env bash
# ctest-labels: asan
# `eventlog-live run` on live sources: wall-clock timers fire while a stdin
# stream is quiet and do not keep the program alive after it ends; a Unix
# socket source gives one session per connection (on_header/on_session per
# connection, sessions numbered), with the first connection cut mid-stream
# (before its init events: on_session fires at its end, pid unknown).
set -uo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
peer_pid=
trap '[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
F=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
fail=0

cat > "$tmp/wall.lua" <<'LUA'
local el = require("eventlog_live")
local ticks, once, markers = 0, 0, 0
el.every_wall(100, function(unix_ns) assert(unix_ns > 1.7e18); ticks = ticks + 1 end)
el.after_wall(50, function() once = once + 1 end)
el.on("USER_MARKER", function() markers = markers + 1 end)
el.on_end(function() print("ticks", ticks, "once", once, "markers", markers) end)
LUA
out=$( { cat "$F"; sleep 1.2; } | timeout 20 "$EL_BIN" run "$tmp/wall.lua" --output none --eventlog-stdin)
rc=$?
read -r _ ticks _ once _ markers <<< "$out"
if [ $rc -ne 0 ] || [ "${ticks:-0}" -lt 5 ] || [ "$once" != 1 ] || [ "$markers" != 10 ]; then
  echo "FAIL wall timers on stdin: rc=$rc out='$out'"; fail=1
else
  echo "ok   wall timers on stdin ($ticks ticks in ~1.2 s of quiet)"
fi

peer=$(find "$EL_BUILD_DIR" -name el_peer -type f | head -1)
if [ -z "$peer" ]; then echo "skip: el_peer not built"; exit $fail; fi
sock=$tmp/el.sock
"$peer" --unix "$sock" --file "$F" --connections 2 --close-after 300000 \
  --ready-file "$tmp/ready" --timeout 20 &
peer_pid=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
cat > "$tmp/sessions.lua" <<'LUA'
local el = require("eventlog_live")
local headers, ready, markers = 0, {}, {}
el.on_header(function(s) headers = headers + 1 end)
el.on_session(function(s) ready[#ready + 1] = s.number .. ":" .. tostring(s.pid) end)
el.on("USER_MARKER", function(ev) markers[ev.session] = (markers[ev.session] or 0) + 1 end)
el.on_end(function()
  print("headers", headers, "ready", table.concat(ready, ","), "markers2", markers[2])
end)
LUA
out=$(timeout 30 "$EL_BIN" run "$tmp/sessions.lua" --output none \
  --eventlog-socket "$sock" --eventlog-socket-retries 2 \
  --eventlog-socket-timeout 0.1 2>"$tmp/err")
# the source gives up once the peer has gone: exit 1 after the report
if [ "$out" != "$(printf 'headers\t2\tready\t1:nil,2:10811\tmarkers2\t10')" ]; then
  echo "FAIL sessions over a Unix socket: '$out'"; cat "$tmp/err"; fail=1
else
  echo "ok   two connections, two sessions"
fi
wait "$peer_pid" 2>/dev/null; peer_pid=
exit $fail
