#!/usr/bin/env bash
# End-to-end: under `eventlog-live run` and in the REPL, a script's
# el.control reaches the program over the eventlog socket (the pump's
# source, as in the daemon).
# el_peer plays the program and records what it receives; the expected
# bytes are written by hand from spec/eventlog-format.md §5.7: magic
# F0 9E 97 8C, version 00, namespace length 0F, "eventlog-socket",
# command 05. With --eventlog-file there is no socket: el.control answers
# nil, "not connected".
# Exit 0 pass, 1 fail, 77 skip.
# ctest-labels: asan
set -u
BIN=${EL_BIN:?}
PEER=${EL_BUILD_DIR:?}/tests/el_peer
LOG=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
[ -x "$PEER" ] || { echo "skip: no el_peer"; exit 77; }

tmp=$(mktemp -d)
peer_pid=
cleanup() {
  [ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

cat > "$tmp/ctl.lua" <<'EOF'
-- On the first USER_MARKER: request a heap census, print what came back.
local el = require("eventlog_live")
local done = false
el.on("USER_MARKER", function(ev, marker)
  if done then return end
  done = true
  local ok, msg = el.control("eventlog-socket", 5)
  print("control: " .. tostring(ok) .. " " .. tostring(msg))
end)
EOF

fails=0

# 1. Socket: the bytes reach the peer.
"$PEER" --unix "$tmp/sock" --file "$LOG" --record "$tmp/rec" \
  --ready-file "$tmp/ready" --hold-ms 1000 --timeout 30 2>"$tmp/peer.err" &
peer_pid=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
out=$(timeout 30 "$BIN" run "$tmp/ctl.lua" --output none \
  --eventlog-socket "$tmp/sock" --eventlog-socket-retries 2 \
  --eventlog-socket-timeout 0.1 2>"$tmp/run.err")
rc=$?
wait "$peer_pid"; peer_pid=
[ "$rc" = 0 ] \
  || { echo "FAIL: run (socket) exited $rc"; cat "$tmp/run.err"; fails=1; }
[ "$out" = "control: true nil" ] \
  || { echo "FAIL: socket: script printed '$out'"; cat "$tmp/run.err"
       fails=1; }
want="f09e978c000f"                          # magic, version 0, ns length 15
want+="6576656e746c6f672d736f636b6574"       # "eventlog-socket"
want+="05"                                   # requestHeapCensus
got=$(od -An -v -tx1 "$tmp/rec" 2>/dev/null | tr -d ' \n')
[ "$got" = "$want" ] || { echo "FAIL: recorded bytes
 got  $got
 want $want"; cat "$tmp/peer.err"; fails=1; }

# 1b. The REPL (h43: el.control answered "not connected" while its
# socket source streamed): the same script by :load, the same bytes. A
# live :load sees the events from then on, so the peer starts only once
# the script says it is loaded (the REPL retries meanwhile), and the
# prompt's input stays open until the peer has recorded the bytes.
{ cat "$tmp/ctl.lua"; echo 'print("ctl loaded"); io.stdout:flush()'; } > "$tmp/ctl2.lua"
rm -f "$tmp/ready" "$tmp/rec" "$tmp/sock"
mkfifo "$tmp/in"
timeout 120 "$BIN" repl --no-history --eventlog-socket "$tmp/sock" \
  --eventlog-socket-retries 1000 --eventlog-socket-timeout 0.1 \
  < "$tmp/in" > "$tmp/repl.out" 2> "$tmp/repl.err" &
repl_pid=$!
exec 5> "$tmp/in"
printf ':load %s\n' "$tmp/ctl2.lua" >&5
for _ in $(seq 600); do grep -q "ctl loaded" "$tmp/repl.out" && break; sleep 0.1; done
"$PEER" --unix "$tmp/sock" --file "$LOG" --record "$tmp/rec" \
  --hold-ms 5000 --timeout 60 2>"$tmp/peer2.err" &
peer_pid=$!
for _ in $(seq 600); do [ -s "$tmp/rec" ] && break; sleep 0.1; done
printf ':quit\n' >&5
exec 5>&-
wait "$repl_pid"
rc=$?
wait "$peer_pid"; peer_pid=
[ "$rc" = 0 ] \
  || { echo "FAIL: repl (socket) exited $rc"; cat "$tmp/repl.err"; fails=1; }
grep -qx "control: true nil" "$tmp/repl.out" \
  || { echo "FAIL: repl: the script printed '$(cat "$tmp/repl.out")'"
       cat "$tmp/repl.err"; fails=1; }
got=$(od -An -v -tx1 "$tmp/rec" 2>/dev/null | tr -d ' \n')
[ "$got" = "$want" ] || { echo "FAIL: repl: recorded bytes
 got  $got
 want $want"; cat "$tmp/peer2.err"; fails=1; }

# 2. File: no socket to write to.
out=$(timeout 30 "$BIN" run "$tmp/ctl.lua" --output none \
  --eventlog-file "$LOG" 2>"$tmp/run2.err")
rc=$?
[ "$rc" = 0 ] \
  || { echo "FAIL: run (file) exited $rc"; cat "$tmp/run2.err"; fails=1; }
[ "$out" = "control: nil not connected" ] \
  || { echo "FAIL: file: script printed '$out'"; fails=1; }

[ "$fails" = 0 ] && echo ok
exit "$fails"
