#!/usr/bin/env bash
# `eventlog-live run SCRIPT | head` where the script writes with Lua's
# print(), io.write() and io.stdout:write() (docs/exit-codes.md, run): the
# reader goes away after one line; run must say so once ("Broken pipe"),
# read the input to its end, report how many calls it dropped, and exit
# 0 (not die of SIGPIPE, not turn the lost bytes into an export failure).
# Also: with a reader that reads everything, the output is Lua's own
# (print's tabs and __tostring, io.write's results) and nothing is said.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
big=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog
small=$EL_EVENTLOGS/ghc-9.0/threads.eventlog

for how in print io.write method mixed; do
  cat >"$tmp/$how.lua" <<LUA
local el = require("eventlog_live")
local how, n = "$how", 0
el.on("RUN_THREAD", function(ev)
  n = n + 1
  local k = how
  if k == "mixed" then k = ({"print", "io.write", "method"})[n % 3 + 1] end
  if k == "print" then print("run", ev.thread)
  elseif k == "io.write" then io.write("run\t", ev.thread, "\n")
  else io.stdout:write("run\t", ev.thread, "\n") end
end)
el.on_end(function() io.stderr:write("events: ", n, "\n") end)
LUA
  "$EL_BIN" run "$tmp/$how.lua" "$big" 2>"$tmp/$how.err" | head -1 \
    >"$tmp/$how.out"
  st=${PIPESTATUS[0]}
  n=$(grep -c "writing stdout failed: Broken pipe" "$tmp/$how.err")
  dropped=$(sed -n 's/.*: \([0-9]*\) calls writing stdout dropped: the output.s reader had gone$/\1/p' \
    "$tmp/$how.err")
  events=$(sed -n 's/^events: //p' "$tmp/$how.err")
  if [ "$st" = 0 ] && [ "$n" = 1 ] && [ "${dropped:-0}" -gt 1000 ] &&
     [ "${events:-0}" -gt "$dropped" ] && [ "$(cat "$tmp/$how.out")" = "run	1" ]
  then
    ok "$how | head -1: status 0, one Broken pipe warning, $dropped of $events calls dropped, input read to its end"
  else
    bad "$how | head -1: status $st, $n warnings, dropped '$dropped', events '$events'"
    sed 's/^/  run: /' "$tmp/$how.err"
  fi
done

cat >"$tmp/full.lua" <<'LUA'
local el = require("eventlog_live")
el.on_end(function()
  print("x", 1, nil, true, setmetatable({}, {__tostring = function()
    return "T" end}))
  assert(io.write("a", 2, "\n") == io.stdout)
  assert(io.stdout:write("b\n") == io.stdout)
  local f = io.tmpfile()
  assert(f:write("c") == f)
  f:close()
  print()
end)
LUA
"$EL_BIN" run --output none "$tmp/full.lua" "$small" >"$tmp/full.out" \
  2>"$tmp/full.err"
st=$?
printf 'x\t1\tnil\ttrue\tT\na2\nb\n\n' >"$tmp/full.want"
if [ "$st" = 0 ] && cmp -s "$tmp/full.out" "$tmp/full.want" &&
   [ ! -s "$tmp/full.err" ]; then
  ok "a reader that reads all: Lua's own output, nothing on stderr"
else
  bad "a reader that reads all: status $st"
  diff "$tmp/full.want" "$tmp/full.out"; cat "$tmp/full.err"
fi
exit $fail
