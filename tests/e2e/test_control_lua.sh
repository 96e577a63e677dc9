#!/usr/bin/env bash
# End-to-end: a Lua script's el.control(namespace, id) reaches the program
# over the eventlog socket, through the same path as the HTTP server. The
# daemon runs a test script in place of the default processors
# (EVENTLOG_LIVE_LUA_DIR); el_peer plays the program and records what it
# receives. Expected bytes by hand from spec/eventlog-format.md §5.7.
# Exit 0 pass, 1 fail, 77 skip.
# ctest-labels: asan
set -u
BIN_DIR=${EL_BUILD_DIR:?}
DAEMON=$BIN_DIR/eventlog-live-otelcol
PEER=$BIN_DIR/tests/el_peer
LOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
[ -x "$PEER" ] || { echo "skip: no el_peer"; exit 77; }
"$DAEMON" --help 2>/dev/null | grep -q -- '--control-port' \
  || { echo "skip: the daemon has no control server yet"; exit 77; }

tmp=$(mktemp -d)
peer_pid= ; daemon_pid=
cleanup() {
  for p in $daemon_pid $peer_pid; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/lua/eventlog_live/processors"
cat > "$tmp/lua/eventlog_live/processors/main.lua" <<'EOF'
-- Test script: on the first session, request a heap census and send a
-- custom command; check that bad arguments send nothing.
local el = require("eventlog_live")
local done = false
el.on_session(function()
  if done then return end
  done = true
  assert(el.control("eventlog-socket", 5))
  assert(el.control("lua-test", 7))
  local ok, msg = el.control("lua-test", 0)
  assert(ok == nil and msg, "command id 0 must fail")
  ok, msg = el.control(string.rep("n", 256), 1)
  assert(ok == nil and msg, "a 256-byte namespace must fail")
  el.host_log("warn", "lua-control-sent")
end)
EOF

"$PEER" --unix "$tmp/sock" --file "$LOG" --record "$tmp/rec" \
  --ready-file "$tmp/ready" --hold-ms 2000 --timeout 30 2>"$tmp/peer.err" &
peer_pid=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done

OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none \
EVENTLOG_LIVE_LUA_DIR="$tmp/lua" \
  "$DAEMON" --eventlog-socket "$tmp/sock" --service-name app -hT \
  -v warn 2>"$tmp/daemon.err" &
daemon_pid=$!

wait "$peer_pid"; peer_pid=
kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null; daemon_pid=

fails=0
grep -q 'lua-control-sent' "$tmp/daemon.err" \
  || { echo "FAIL: the script did not run to the end"; cat "$tmp/daemon.err"; fails=1; }
# eventlog-socket / 5, then "lua-test" (8 bytes) / 7.
want="f09e978c000f6576656e746c6f672d736f636b657405"
want+="f09e978c00086c75612d7465737407"
got=$(od -An -v -tx1 "$tmp/rec" 2>/dev/null | tr -d ' \n')
[ "$got" = "$want" ] || { echo "FAIL: recorded bytes
 got  $got
 want $want"; fails=1; }
[ "$fails" = 0 ] && echo ok
exit "$fails"
