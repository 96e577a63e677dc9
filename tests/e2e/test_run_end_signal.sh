#!/usr/bin/env bash
# SIGINT or SIGTERM while a script's on_end runs (after the input ended):
# `run` and `report --script` stop the hook ("stopped by signal", not an
# error) and still flush what the script emitted, exit 0, as for a signal
# during the input (docs/exit-codes.md). Before, the source's handlers
# were gone by then: the signal killed the process at once (status 130
# or 143) and the records emitted in on_end were lost. The expected
# marker count comes from the ghc-events reference.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start run-end-signal .reference
want=$(grep -c ': marker: ' "$ODD.reference")
cat > "$TMP/end.lua" <<'LUA'
local el = require("eventlog_live")
local report = require("eventlog_live.report")
local n, rows = 0, {}
el.on("USER_MARKER", function() n = n + 1 end)
el.on_end(function()
  el.log{body = "markers " .. n}       -- run: exported (console)
  rows[#rows + 1] = {"markers " .. n}  -- report: a row of its page
  io.stderr:write("on_end started\n")
  io.stderr:flush()
  while true do end
end)
-- After the hook above: its on_end hook (which reads rows) runs next.
report.table{title = "End", columns = {"text"},
             rows = function() return rows end}
LUA

# wait_started ERR: until on_end said it started (5 s at most).
wait_started() {
  for _ in $(seq 50); do grep -q 'on_end started' "$1" && return 0; sleep 0.1; done
  return 1
}
# stop SIG: send SIG to $PID, wait 5 s for its end; sets st.
stop() {
  kill -"$1" "$PID"
  for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$PID" 2>/dev/null; then
    kill -KILL "$PID"; wait "$PID" 2>/dev/null; PID=; st=killed; return
  fi
  wait "$PID"; st=$?; PID=
}

for sig in INT TERM; do
  OTEL_LOGS_EXPORTER=console "$BIN" run -v info "$TMP/end.lua" "$ODD" \
    > "$TMP/$sig.out" 2> "$TMP/$sig.err" &
  PID=$!
  if ! wait_started "$TMP/$sig.err"; then
    echo "FAIL: run, SIG$sig: on_end never started: $(cat "$TMP/$sig.err")"; rc=1
    kill -KILL "$PID"; wait "$PID" 2>/dev/null; PID=; continue
  fi
  stop "$sig"
  if [ "$st" = 0 ] && grep -q "\"stringValue\":\"markers $want\"" "$TMP/$sig.out" &&
     grep -q 'on_end (.*end.lua:5): stopped by signal' "$TMP/$sig.err"; then
    echo "ok: run, SIG$sig during on_end: status 0, its record 'markers $want' exported"
  else
    echo "FAIL: run, SIG$sig during on_end: status $st, stdout: $(head -c 300 "$TMP/$sig.out"), stderr: $(cat "$TMP/$sig.err")"
    rc=1
  fi

  "$BIN" report --script "$TMP/end.lua" "$ODD" -o "$TMP/$sig.html" \
    > /dev/null 2> "$TMP/r$sig.err" &
  PID=$!
  if ! wait_started "$TMP/r$sig.err"; then
    echo "FAIL: report, SIG$sig: on_end never started: $(cat "$TMP/r$sig.err")"; rc=1
    kill -KILL "$PID"; wait "$PID" 2>/dev/null; PID=; continue
  fi
  stop "$sig"
  if [ "$st" = 0 ] && grep -q "markers $want" "$TMP/$sig.html"; then
    echo "ok: report, SIG$sig during on_end: status 0, the page holds 'markers $want'"
  else
    echo "FAIL: report, SIG$sig during on_end: status $st, page: $([ -s "$TMP/$sig.html" ] && echo written || echo missing), stderr: $(cat "$TMP/r$sig.err")"
    rc=1
  fi
done
[ $rc = 0 ] && echo PASS
exit $rc
