#!/usr/bin/env bash
# ctest-labels: asan
# `eventlog-live run` and the Lua API as a tester of it met them:
#  3. a missing input fails before the script runs (its on_end hook does
#     not run), in one line naming the file, status 1 (docs/exit-codes.md
#     "missing").
# Expected values are written out by hand from the OpenTelemetry SDK
# environment specification and GHC's / ghc-events' definitions.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
F=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

echo "== 3. a missing input"
cat > "$tmp/end.lua" <<'LUA'
local el = require("eventlog_live")
local m = el.metric{name = "z"}
el.on_end(function() print("on_end ran"); m:point(1) end)
LUA
"$EL_BIN" run "$tmp/end.lua" "$tmp/missing.eventlog" >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 1 ] && ok "missing input: status 1 (docs/exit-codes.md)" ||
  bad "missing input: status $st, want 1"
[ ! -s "$tmp/out" ] && ok "missing input: no hook ran, nothing exported" ||
  { bad "missing input: stdout: $(head -c 200 "$tmp/out")"; }
want="eventlog-live: run: cannot open $tmp/missing.eventlog: No such file or directory"
[ "$(cat "$tmp/err")" = "$want" ] && ok "missing input: one line naming the file" ||
  { bad "missing input: stderr is not the one line '$want'"; cat "$tmp/err"; }
"$EL_BIN" run "$tmp/end.lua" --eventlog-file "$tmp" >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 1 ] && [ ! -s "$tmp/out" ] &&
  [ "$(cat "$tmp/err")" = "eventlog-live: run: cannot open $tmp: Is a directory" ] &&
  ok "a folder as input: the same, before the script" ||
  { bad "a folder as input: status $st"; cat "$tmp/out" "$tmp/err"; }

exit $fail
