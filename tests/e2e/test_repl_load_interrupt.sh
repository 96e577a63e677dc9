#!/usr/bin/env bash
# The REPL over a file: `:load S.lua` runs the script over the whole file
# in a host of its own (docs/repl.md). When a handler of it loops, Ctrl-C
# (SIGINT) must stop it with "interrupted", run its on_end hook and give
# the prompt back (docs/repl.md: "Ctrl-C during an evaluation stops it").
# Before, SIGINT set its hook on the REPL's own Lua state, which the
# script's handlers do not run in: the :load spun on and only SIGTERM or
# SIGKILL ended the REPL.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
ODD_CLEANUP='exec 7>&-'
oddball_start repl-load-int
cat > "$TMP/loop.lua" <<'LUA'
local el = require("eventlog_live")
el.on("USER_MARKER", function(ev, m) while true do end end)
el.on_end(function() print("on_end ran") end)
LUA
mkfifo "$TMP/in"
"$BIN" repl "$ODD" < "$TMP/in" > "$TMP/out" 2> "$TMP/err" &
PID=$!
exec 7> "$TMP/in"
echo ":load $TMP/loop.lua" >&7
sleep 1.5
kill -INT "$PID"
echo 'print("prompt back")' >&7
exec 7>&-
for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
rc=0
if kill -0 "$PID" 2>/dev/null; then
  echo "FAIL: the REPL still runs 5 s after SIGINT during :load"; rc=1
else
  wait "$PID"; PID=
  grep -q 'on_end ran' "$TMP/out" || { echo "FAIL: on_end did not run"; rc=1; }
  grep -q 'prompt back' "$TMP/out" ||
    { echo "FAIL: the next line was not evaluated"; rc=1; }
  grep -q 'interrupted' "$TMP/err" || { echo "FAIL: no 'interrupted'"; rc=1; }
fi
[ $rc = 0 ] && echo "ok: SIGINT stopped :load ($(tr '\n' ' ' < "$TMP/err"))" && echo PASS
[ $rc = 0 ] || { cat "$TMP/out" "$TMP/err"; }
exit $rc
