#!/usr/bin/env bash
# ctest-labels: asan
# The shipped Lua library is loaded from bytecode compiled at build time
# (src/host/lua_embed.h) only when the file found holds exactly the
# source it was compiled from; messages keep the file's path and line.
# 1. The daemon's processors and a required library module load
#    precompiled (the debug log says so), named by their path on disk.
# 2. A runtime error inside a precompiled module names <path>:<line>, the
#    line found by grep in the source (not from the program).
# 3. An edited copy on $EVENTLOG_LIVE_LUA_PATH wins and runs its new code
#    (not the stale bytecode); an edited copy as $EVENTLOG_LIVE_LUA_DIR
#    too; an unchanged copy on the override path is used under its own
#    path.
# 4. A syntax error in an edited copy is reported with file:line.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
F=$EL_EVENTLOGS/ghc-events/trace-binary-event.eventlog
src=$(cd "$(dirname "$0")/../.." && pwd)/lua
# How Lua names file $1 in its messages (luaO_chunkid, LUA_IDSIZE 60): a
# name longer than 59 bytes keeps its last 56, after "..." (a long
# TMPDIR or checkout path).
lua_name() {
  if [ ${#1} -le 59 ]; then printf '%s' "$1"; else printf '...%s' "${1: -56}"; fi
}
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
unset EVENTLOG_LIVE_LUA_PATH EVENTLOG_LIVE_LUA_DIR

# 1. The daemon (exporters off) on a small file, debug log.
EVENTLOG_LIVE_LUA_DIR=$src "$EL_BIN" otelcol --eventlog-file "$F" --no-otlp \
  -v debug >/dev/null 2>"$tmp/d.err"
for m in processors/main processors/init processors/heap; do
  grep -qF "Lua: $src/eventlog_live/$m.lua loaded precompiled" "$tmp/d.err" &&
    ok "daemon: $m.lua precompiled" ||
    { bad "daemon: $m.lua not loaded precompiled"; cat "$tmp/d.err"; }
done

# 2. A runtime error in fmt.lua (math.abs of a table) names its line.
cat >"$tmp/s.lua" <<'LUA'
local fmt = require("eventlog_live.fmt")
local ok, err = pcall(fmt.bytes, {})
print(err)
print(fmt.duration(1500))
LUA
line=$(awk '/^function M.bytes/ {f = 1} f && /math.abs/ {print NR; exit}' \
  "$src/eventlog_live/fmt.lua")
out=$(EVENTLOG_LIVE_LUA_DIR=$src "$EL_BIN" run -v debug "$tmp/s.lua" "$F" \
  2>"$tmp/s.err")
grep -qF "Lua: $src/eventlog_live/fmt.lua loaded precompiled" "$tmp/s.err" &&
  ok "run: fmt.lua precompiled" || { bad "run: fmt.lua not precompiled"; cat "$tmp/s.err"; }
[[ "$out" == "$(lua_name "$src/eventlog_live/fmt.lua"):$line: bad argument #1 to 'abs'"* ]] &&
  ok "error names fmt.lua:$line" || bad "error: $out (want fmt.lua:$line)"
[[ "$out" == *$'\n1.5 us' ]] && ok "fmt.duration(1500)" || bad "output: $out"

# 3. Edited copies win; an unchanged copy is named by its own path.
mkdir -p "$tmp/edit/eventlog_live" "$tmp/same/eventlog_live"
sed 's/^function M.duration(ns)$/function M.duration(ns) do return "EDITED" end/' \
  "$src/eventlog_live/fmt.lua" >"$tmp/edit/eventlog_live/fmt.lua"
cmp -s "$src/eventlog_live/fmt.lua" "$tmp/edit/eventlog_live/fmt.lua" &&
  bad "the edit did not change fmt.lua"
cp "$src/eventlog_live/fmt.lua" "$tmp/same/eventlog_live/fmt.lua"
out=$(EVENTLOG_LIVE_LUA_PATH="$tmp/edit/?.lua" "$EL_BIN" run -v debug \
  "$tmp/s.lua" "$F" 2>"$tmp/e.err")
[[ "$out" == *$'\nEDITED' ]] && ok "EVENTLOG_LIVE_LUA_PATH: the edited copy runs" ||
  bad "EVENTLOG_LIVE_LUA_PATH: output $out"
grep -q "fmt.lua loaded precompiled" "$tmp/e.err" &&
  bad "the edited fmt.lua was loaded precompiled" || ok "edited copy compiled from its text"
mkdir -p "$tmp/dir2"
cp -r "$src/eventlog_live" "$tmp/dir2/"
cp "$tmp/edit/eventlog_live/fmt.lua" "$tmp/dir2/eventlog_live/fmt.lua"
touch -d '2000-01-01' "$tmp/dir2/eventlog_live/fmt.lua" # older than the build
out=$(EVENTLOG_LIVE_LUA_DIR="$tmp/dir2" "$EL_BIN" run "$tmp/s.lua" "$F")
[[ "$out" == *$'\nEDITED' ]] && ok "EVENTLOG_LIVE_LUA_DIR: the edited copy runs, whatever its time" ||
  bad "EVENTLOG_LIVE_LUA_DIR: output $out"
out=$(EVENTLOG_LIVE_LUA_PATH="$tmp/same/?.lua" "$EL_BIN" run -v debug \
  "$tmp/s.lua" "$F" 2>"$tmp/c.err")
grep -qF "Lua: $tmp/same/eventlog_live/fmt.lua loaded precompiled" "$tmp/c.err" &&
  [[ "$out" == "$(lua_name "$tmp/same/eventlog_live/fmt.lua"):$line:"* ]] &&
  ok "an unchanged copy on the override path: precompiled, named by its path" ||
  { bad "unchanged copy: $out"; cat "$tmp/c.err"; }

# 4. A syntax error in an edited copy: file:line, exit 2.
printf 'local M = {}\nlocal x = = 1\nreturn M\n' >"$tmp/edit/eventlog_live/fmt.lua"
EVENTLOG_LIVE_LUA_PATH="$tmp/edit/?.lua" "$EL_BIN" run "$tmp/s.lua" "$F" \
  >/dev/null 2>"$tmp/x.err"
st=$?
[ "$st" = 2 ] && grep -qF "$(lua_name "$tmp/edit/eventlog_live/fmt.lua"):2:" "$tmp/x.err" &&
  ok "syntax error in a module: exit 2, fmt.lua:2" ||
  { bad "syntax error: status $st"; cat "$tmp/x.err"; }
exit $fail
