#!/usr/bin/env bash
# ctest-labels: asan
# `eventlog-live run`: exit statuses, syntax errors with file:line, --set,
# require from the script's directory, --fail-fast, truncated input.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
F=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
fail=0
expect() { # name expected-status actual-status
  if [ "$2" != "$3" ]; then echo "FAIL $1: status $3, want $2"; fail=1
  else echo "ok   $1"; fi
}
printf 'local x = 1\nlocal y = = 2\n' > "$tmp/bad.lua"
"$EL_BIN" run "$tmp/bad.lua" "$F" 2> "$tmp/err"; expect "syntax error exits 2" 2 $?
grep -q 'bad.lua:2:' "$tmp/err" || { echo "FAIL syntax error names bad.lua:2"; cat "$tmp/err"; fail=1; }

mkdir -p "$tmp/lib"
printf 'return {answer = 42}\n' > "$tmp/lib/helper.lua"
cat > "$tmp/lib/main.lua" <<'LUA'
local el = require("eventlog_live")
local h = require("helper")
local n = 0
el.on("USER_MARKER", function() n = n + 1 end)
el.on_end(function() print("answer", h.answer, "k", el.config.k, "markers", n) end)
LUA
out=$("$EL_BIN" run "$tmp/lib/main.lua" --set k=v --output none --eventlog-file "$F")
expect "run exits 0" 0 $?
[ "$out" = "$(printf 'answer\t42\tk\tv\tmarkers\t10')" ] || { echo "FAIL output: $out"; fail=1; }

cat > "$tmp/err.lua" <<'LUA'
local el = require("eventlog_live")
el.on("USER_MARKER", function() error("bad marker") end)
LUA
"$EL_BIN" run "$tmp/err.lua" --output none "$F" 2> "$tmp/err"
expect "handler errors are not fatal" 0 $?
grep -q '10 error(s) in 10 call(s) of the USER_MARKER handler' "$tmp/err" \
  || { echo "FAIL error summary"; cat "$tmp/err"; fail=1; }
# Timers' errors are summed by where the script made each timer (h66:
# "1 error(s) in timer callbacks" named none): the periodic one made on
# line 3 fails on its first 2 calls, the one-shot of line 4 once.
cat > "$tmp/terr.lua" <<'LUA'
local el = require("eventlog_live")
local k = 0
el.every(1000, function() k = k + 1 if k <= 2 then error("every") end end)
el.at(0, function() error("at") end)
LUA
"$EL_BIN" run "$tmp/terr.lua" --output none "$F" 2> "$tmp/err"
expect "timer errors are not fatal" 0 $?
grep -q "^eventlog-live: 2 error(s) in callbacks of the timer(s) made at .*terr.lua:3$" "$tmp/err" &&
  grep -q "^eventlog-live: 1 error(s) in callbacks of the timer(s) made at .*terr.lua:4$" "$tmp/err" \
  || { echo "FAIL timer error summary names each timer"; cat "$tmp/err"; fail=1; }
"$EL_BIN" run "$tmp/err.lua" --fail-fast --output none "$F" 2> "$tmp/err"
expect "--fail-fast exits 1" 1 $?
grep -q 'err.lua:2: bad marker' "$tmp/err" || { echo "FAIL fail-fast message"; cat "$tmp/err"; fail=1; }
# The end hooks still run after a --fail-fast stop (docs/lua-api.md §4),
# each once, seeing the one marker dispatched, all of them even when one
# fails (docs/exit-codes.md "run"); an error in on_end is said on its own
# line and counted but does not replace the first error; and the input cut
# by the stop is not called incomplete.
cat > "$tmp/ff.lua" <<'LUA'
local el = require("eventlog_live")
local n = 0
el.on("USER_MARKER", function() n = n + 1; error("bad marker") end)
el.on_session_end(function() print("session_end", n) end)
el.on_end(function() print("end", n); error("in on_end") end)
el.on_end(function() print("end 2", n) end)
LUA
out=$("$EL_BIN" run "$tmp/ff.lua" --fail-fast --output none "$F" 2> "$tmp/err")
expect "--fail-fast with end hooks exits 1" 1 $?
[ "$out" = "$(printf 'session_end\t1\nend\t1\nend 2\t1')" ] ||
  { echo "FAIL end hooks after --fail-fast: '$out'"; fail=1; }
grep -q 'stopped (--fail-fast): handler (.*ff.lua:3): .*bad marker' "$tmp/err" &&
  grep -q 'error: on_end (.*): .*ff.lua:5: in on_end' "$tmp/err" &&
  grep -q '^eventlog-live: 1 error(s) in hooks' "$tmp/err" &&
  ! grep -q "incomplete" "$tmp/err" ||
  { echo "FAIL --fail-fast messages"; cat "$tmp/err"; fail=1; }
# An on_end hook that fails under --fail-fast with no stop before: the
# hooks after it still run (their telemetry is exported), each failure is
# said with its file:line and counted, and run exits 1 (a tester's
# finding: the 2nd hook never ran, 0 bytes out, no "error:" line).
cat > "$tmp/ffend.lua" <<'LUA'
local el = require("eventlog_live")
local g = el.metric{name = "final"}
el.on_end(function() error("first on_end fails") end)
el.on_end(function() error("second on_end fails") end)
el.on_end(function() g:point(42) end)
LUA
out=$("$EL_BIN" run "$tmp/ffend.lua" --fail-fast "$F" 2> "$tmp/err")
expect "--fail-fast, on_end errors exit 1" 1 $?
echo "$out" | grep -q '"name":"final".*"asInt":"42"' ||
  { echo "FAIL the last on_end's point not exported: '$out'"; fail=1; }
grep -q 'error: on_end (.*): .*ffend.lua:3: first on_end fails' "$tmp/err" &&
  grep -q 'error: on_end (.*): .*ffend.lua:4: second on_end fails' "$tmp/err" &&
  grep -q '^eventlog-live: 2 error(s) in hooks' "$tmp/err" &&
  grep -q 'stopped (--fail-fast): on_end (.*): .*ffend.lua:3: first on_end fails$' "$tmp/err" ||
  { echo "FAIL --fail-fast on_end messages"; cat "$tmp/err"; fail=1; }

# el.control with a file source: an unknown builtin name is said as such,
# a known one (or a namespace and id) is "not connected", both while the
# script loads and in a handler (docs/lua-api.md §7; at load an unknown
# name answered "not connected": the control hook was set after loading).
cat > "$tmp/ctl.lua" <<'LUA'
local el = require("eventlog_live")
local function say(w) for _, n in ipairs{"nope", "request-heap-census"} do
  print(w, n, el.control(n)) end end
say("load")
local done
el.on("USER_MARKER", function() if not done then done = true; say("event") end end)
LUA
out=$("$EL_BIN" run "$tmp/ctl.lua" --output none "$F" 2>"$tmp/err")
expect "el.control run" 0 $?
unk='nil	not a builtin command name (give a namespace and a command id)'
want=$(printf 'load\tnope\t%s\nload\trequest-heap-census\tnil\tnot connected\nevent\tnope\t%s\nevent\trequest-heap-census\tnil\tnot connected' "$unk" "$unk")
[ "$out" = "$want" ] || { echo "FAIL el.control answers: '$out'"; fail=1; }
out=$("$EL_BIN" report --script "$tmp/ctl.lua" -o /dev/null "$F" 2>"$tmp/err" | grep -c 'not a builtin')
[ "$out" = 2 ] || { echo "FAIL el.control in report: $out"; cat "$tmp/err"; fail=1; }

cat > "$tmp/slow.lua" <<'LUA'
local el = require("eventlog_live")
local n, r = 0, 0
el.on("USER_MARKER", function() n = n + 1; if n % 2 == 0 then while true do end end end)
el.on("RUN_THREAD", function() r = r + 1; if r == 100 then while true do end end end)
el.on_end(function() print(n, r, el.stats().budget_exceeded) end)
LUA
out=$(timeout 20 "$EL_BIN" run "$tmp/slow.lua" --handler-budget-ms 50 --output none "$F" 2>/dev/null)
expect "--handler-budget-ms stops endless handlers" 0 $?
[ "$out" = "$(printf '10\t9835\t6')" ] || { echo "FAIL budget output: '$out'"; fail=1; }
# A handler that loops on every event is disabled after 10 budget stops
# (at 50 ms each, the log's RUN_THREAD events would otherwise hold the
# run for minutes); the other handler goes on to the end.
cat > "$tmp/loop.lua" <<'LUA'
local el = require("eventlog_live")
local n, m = 0, 0
el.on("RUN_THREAD", function() n = n + 1; while true do end end)
el.on("STOP_THREAD", function() m = m + 1 end)
el.on_end(function() local s = el.stats()
  print(n, m, s.budget_exceeded, s.handlers_disabled) end)
LUA
stops=$("$EL_BIN" stats "$F" | awk '$1 == "STOP_THREAD" {print $3}')
out=$(timeout 60 "$EL_BIN" run "$tmp/loop.lua" --handler-budget-ms 50 --output none "$F" 2>"$tmp/err")
expect "a handler that always loops is disabled" 0 $?
[ "$out" = "$(printf '10\t%s\t10\t1' "$stops")" ] ||
  { echo "FAIL disabled handler output: '$out' (want 10 calls, $stops stops)"; fail=1; }
grep -q 'loop.lua:3) disabled: the time budget of 50 ms stopped 10 of its calls' "$tmp/err" ||
  { echo "FAIL no 'disabled' error"; tail -3 "$tmp/err"; fail=1; }

# A handler that recurses without end overflows Lua's stack on every call
# (about a second each, most of it Lua growing its stack): disabled after
# 10 overflows, with no budget set; its traceback shows the innermost
# levels, not a walk of all 300,000 (which took seconds more per call).
cat > "$tmp/rec.lua" <<'LUA'
local el = require("eventlog_live")
local n, m = 0, 0
local function f(k) return 1 + f(k + 1) end
el.on("RUN_THREAD", function() n = n + 1; f(1) end)
el.on("STOP_THREAD", function() m = m + 1 end)
el.on_end(function() local s = el.stats()
  print(n, m, s.handlers_disabled) end)
LUA
out=$(timeout 120 "$EL_BIN" run "$tmp/rec.lua" --output none "$F" 2>"$tmp/err")
expect "a handler that always overflows the stack is disabled" 0 $?
[ "$out" = "$(printf '10\t%s\t1' "$stops")" ] ||
  { echo "FAIL overflowing handler output: '$out' (want 10 calls, $stops stops)"; fail=1; }
grep -q 'rec.lua:4) disabled: 10 of its calls overflowed Lua.s stack' "$tmp/err" ||
  { echo "FAIL no 'disabled' error for the overflows"; tail -3 "$tmp/err"; fail=1; }
grep -q "rec.lua:3: stack overflow" "$tmp/err" &&
  [ "$(grep -c "more than 64 levels: the rest not shown" "$tmp/err")" -ge 1 ] &&
  [ "$(grep -c "rec.lua:3: in upvalue 'f'" "$tmp/err")" -le 120 ] ||
  { echo "FAIL overflow traceback"; head -20 "$tmp/err"; fail=1; }

# A handler that grows a table without end: the Lua heap's limit
# (--lua-memory) makes it Lua's "not enough memory" error, named as the
# limit, and after 10 such calls the handler is disabled; el.stats()
# reports the heap, its limit and the refusals. Without the limit it took
# the machine's memory until the kernel killed it. A limit below 16 MiB is
# a usage error.
cat > "$tmp/oom.lua" <<'LUA'
local el = require("eventlog_live")
local n, m = 0, 0
el.on("RUN_THREAD", function() n = n + 1; local t = {}; for i = 1, 1e9 do t[i] = i end end)
el.on("STOP_THREAD", function() m = m + 1 end)
el.on_end(function() local s = el.stats()
  print(n, m, s.handlers_disabled, s.lua_memory_refused > 0,
        s.lua_memory < s.lua_memory_limit, s.lua_memory_limit) end)
LUA
out=$(timeout 120 "$EL_BIN" run "$tmp/oom.lua" --lua-memory 64M --output none "$F" 2>"$tmp/err")
expect "a handler that runs the Lua heap out of memory is disabled" 0 $?
[ "$out" = "$(printf '10\t%s\t1\ttrue\ttrue\t%d' "$stops" $((64 << 20)))" ] ||
  { echo "FAIL out-of-memory handler output: '$out'"; fail=1; }
grep -q "oom.lua:3): not enough memory: the Lua heap reached its limit of 64 MiB" "$tmp/err" &&
  grep -q "oom.lua:3) disabled: 10 of its calls ran the Lua heap out of memory" "$tmp/err" ||
  { echo "FAIL out-of-memory messages"; tail -3 "$tmp/err"; fail=1; }
"$EL_BIN" run "$tmp/oom.lua" --lua-memory 1M --output none "$F" 2>"$tmp/err"
expect "--lua-memory below 16M is a usage error" 2 $?

# stdout closed early (`| head`) while reading a FIFO: run says so once and
# still reads its input to the end, so the writer is never left blocked
# (run used to die of SIGPIPE: the writer then got EPIPE, and a GHC
# program writing its eventlog there hung).
cat > "$tmp/pm.lua" <<'LUA'
local el = require("eventlog_live")
local m = el.metric{name = "runs", kind = "sum", monotonic = true}
local n = 0
el.on("RUN_THREAD", function(t) n = n + 1; m:point(n, {}, t) end, {args = "t"})
LUA
BIG=$(dirname "$F")/threads-big.eventlog
mkfifo "$tmp/in.fifo"
(cat "$BIG" > "$tmp/in.fifo"; echo $? > "$tmp/writer.st") &
timeout 120 "$EL_BIN" run "$tmp/pm.lua" --eventlog-file "$tmp/in.fifo" \
  2> "$tmp/err" | head -c 200 > /dev/null
st=${PIPESTATUS[0]}
wait
[ "$st" = 0 ] && [ "$(cat "$tmp/writer.st")" = 0 ] &&
  [ "$(grep -c 'console: writing the output failed: Broken pipe' "$tmp/err")" = 1 ] ||
  { echo "FAIL stdout closed: run $st, writer $(cat "$tmp/writer.st")"; head -3 "$tmp/err"; fail=1; }

# A missing module: exit 2, and the searched paths each listed once (the
# library folder was listed twice: once per package.path set-up).
printf 'require("el_no_such_module")\n' > "$tmp/req.lua"
"$EL_BIN" run "$tmp/req.lua" --output none "$F" 2> "$tmp/err"
expect "a missing module is a load error" 2 $?
grep -q "module 'el_no_such_module' not found" "$tmp/err" ||
  { echo "FAIL missing-module message"; head -3 "$tmp/err"; fail=1; }
dups=$(grep "no file" "$tmp/err" | sort | uniq -d)
[ -z "$dups" ] || { echo "FAIL paths searched twice: $dups"; fail=1; }

# Cut inside an event: a warning, everything before it processed (exit 0,
# docs/lua-api.md); a header cut short is a decode error (exit 1).
"$EL_BIN" run "$tmp/lib/main.lua" --output none "$EL_EVENTLOGS/ghc-events/testlog-part.eventlog" > /dev/null 2>&1
expect "input cut inside an event exits 0" 0 $?
head -c 100 "$F" > "$tmp/cuthdr.eventlog"
"$EL_BIN" run "$tmp/lib/main.lua" --output none "$tmp/cuthdr.eventlog" > /dev/null 2>&1
expect "input cut inside the header exits 1" 1 $?
"$EL_BIN" run "$tmp/nope.lua" "$F" 2>/dev/null; expect "missing script exits 2" 2 $?
"$EL_BIN" run 2>/dev/null; expect "no script exits 2" 2 $?
exit $fail
