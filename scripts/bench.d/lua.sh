#!/usr/bin/env bash
# Lua host speed: events/s through `eventlog-live run` with a script
# subscribed to nothing (compare with bare `eventlog-live stats`), and with
# a trivial handler on RUN_THREAD and STOP_THREAD in both calling
# conventions (docs/lua-api.md §2: fn(ev, ...) and, with args = "t",
# fn(t, cap, ...)), and in time order. Input: threads-big repeated by
# el_synth to ~200 MB so timings are above noise.
# Yardstick: el_lua_call_bench (tests/tools/), a bare lua_call loop from C
# calling the same handlers with the same arguments in the same Lua state
# type; the dispatch cost over an empty script is printed as a ratio to it.
# Targets (issue 16): >= 20 M dispatched events/s, a dispatch cost <= 1.5x
# the bare lua_call; nothing-subscribed within 10% of the bare decoder.
set -euo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog
big=$tmp/big.eventlog
synth=$(find "$EL_BUILD_DIR" -name el_synth -type f | head -1)
if [ -n "$synth" ]; then
  "$synth" -n $((200 * 1024 * 1024)) -o "$big" "$src" >/dev/null
else
  big=$src
fi
cat > "$tmp/none.lua" <<'LUA'
local el = require("eventlog_live")
el.on_end(function() io.stderr:write(string.format("events %d\n", el.stats().events)) end)
LUA
cat > "$tmp/trivial.lua" <<'LUA'
local el = require("eventlog_live")
local n = 0
el.on("RUN_THREAD", function(ev, thread) n = n + 1 end)
el.on("STOP_THREAD", function(ev, thread, status) n = n + 1 end)
el.on_end(function() io.stderr:write(string.format("events %d dispatched %d\n", el.stats().events, n)) end)
LUA
cat > "$tmp/trivial_t.lua" <<'LUA'
local el = require("eventlog_live")
local n = 0
el.on("RUN_THREAD", function(t, cap, thread) n = n + 1 end, {args = "t"})
el.on("STOP_THREAD", function(t, cap, thread, status) n = n + 1 end, {args = "t"})
el.on_end(function() io.stderr:write(string.format("events %d dispatched %d\n", el.stats().events, n)) end)
LUA
cat > "$tmp/ordered_t.lua" <<'LUA'
local el = require("eventlog_live")
el.order("time")
local n = 0
el.on("RUN_THREAD", function(t, cap, thread) n = n + 1 end, {args = "t"})
el.on("STOP_THREAD", function(t, cap, thread, status) n = n + 1 end, {args = "t"})
el.on_end(function() local s = el.stats()
  io.stderr:write(string.format("events %d dispatched %d late %d forced %d held_max %d\n",
    s.events, n, s.order_late, s.order_forced, s.order_held_max)) end)
LUA
cat > "$tmp/helper.lua" <<'LUA'
local el = require("eventlog_live")
local th = el.threads()
el.on_end(function() io.stderr:write(string.format("events %d threads %d\n", el.stats().events, #th:list())) end)
LUA
# CPU seconds (user + sys) from paired rounds (tests/tools/el_paired.c):
# each round runs every command in turn, so a minute in which the shared
# VM runs slow (1.5-2x, seen within one bench) slows all of them alike and
# the ratios hold; medians of EL_BENCH_LUA_N rounds (default 5). The
# yardstick runs as a process too: el_lua_call_bench making as many calls
# as the scripts' handlers get, less el_lua_call_bench making one (the
# same host set-up), divided by the calls.
paired=$EL_BUILD_DIR/tests/el_paired
[ -x "$paired" ] || { echo "lua: $paired not built; skipped"; exit 0; }
size=$(stat -c %s "$big")
"$EL_BIN" run "$tmp/none.lua" --output none "$big" >/dev/null 2>"$tmp/err"
events=$(awk '{print $2}' "$tmp/err")
"$EL_BIN" run "$tmp/trivial.lua" --output none "$big" >/dev/null 2>"$tmp/err"
disp=$(awk '{print $4}' "$tmp/err")
"$EL_BIN" run "$tmp/ordered_t.lua" --output none "$big" >/dev/null 2>"$tmp/err"
ord_info=$(awk '{print "late " $6 ", forced " $8 ", at most " $10 " held"}' "$tmp/err")
yard=$(find "$EL_BUILD_DIR" -name el_lua_call_bench -type f | head -1)
cmds=(stats "$EL_BIN" stats "$big"
  :: none "$EL_BIN" run "$tmp/none.lua" --output none "$big"
  :: triv "$EL_BIN" run "$tmp/trivial.lua" --output none "$big"
  :: trivt "$EL_BIN" run "$tmp/trivial_t.lua" --output none "$big"
  :: ord "$EL_BIN" run "$tmp/ordered_t.lua" --output none "$big"
  :: help "$EL_BIN" run "$tmp/helper.lua" --output none "$big")
[ -n "$yard" ] && cmds+=(:: bare_ev "$yard" "$disp" 1 ev
  :: bare_t "$yard" "$disp" 1 t :: bare0 "$yard" 1 1 t)
"$paired" -q -n "${EL_BENCH_LUA_N:-5}" -w 1 "${cmds[@]}" >"$tmp/paired"
med() { awk -v l="$1" '$1 == l {printf "%.4f", $5 / 1000}' "$tmp/paired"; }
t_stats=$(med stats); t_none=$(med none); t_triv=$(med triv)
t_trivt=$(med trivt); t_ord=$(med ord); t_help=$(med help)
bare_ev=; bare_t=
if [ -n "$yard" ]; then
  b0=$(med bare0)
  bare_ev=$(awk -v a="$(med bare_ev)" -v b="$b0" -v n="$disp" 'BEGIN {printf "%.1f", (a - b) * 1e9 / n}')
  bare_t=$(awk -v a="$(med bare_t)" -v b="$b0" -v n="$disp" 'BEGIN {printf "%.1f", (a - b) * 1e9 / n}')
fi
printf "CPU time (user+sys), medians of %s paired rounds\n" "${EL_BENCH_LUA_N:-5}"
printf 'input: %s (%d MB, %d events; %d RUN/STOP_THREAD)\n' \
  "$(basename "$big")" $((size / 1000000)) "$events" "$disp"
rate() { echo "scale=1; $1 / $2 / 1000000" | bc -l; }
per() { echo "scale=1; ($1 - $t_none) * 1000000000 / $disp" | bc -l; } # ns over empty
ratio() { [ -n "$2" ] && echo "scale=2; $1 / $2" | bc -l || echo "?"; }
printf '%-36s %7.3f s  %6s M events/s\n' "bare decoder (stats)" "$t_stats" "$(rate "$events" "$t_stats")"
printf '%-36s %7.3f s  %6s M events/s  (%s%% of bare)\n' "run, nothing subscribed" "$t_none" \
  "$(rate "$events" "$t_none")" "$(echo "scale=0; 100 * $t_stats / $t_none" | bc -l)"
for v in "ev:fn(ev, ...):$t_triv:$bare_ev" "t:fn(t, cap, ...):$t_trivt:$bare_t" \
         "ord:fn(t, cap, ...) time order:$t_ord:$bare_t"; do
  IFS=: read -r _ label tt bare <<<"$v"
  p=$(per "$tt")
  printf '%-50s %7.3f s  %6s M dispatched/s  %5.1f ns/call over empty  %s x bare lua_call\n' \
    "run, RUN/STOP handlers $label" "$tt" "$(rate "$disp" "$tt")" "$p" "$(ratio "$p" "$bare")"
done
printf '%-36s %s\n' "  time order" "$ord_info"
printf '%-36s ev: %s ns, t: %s ns per call (el_lua_call_bench %d calls less 1)\n' \
  "bare lua_call loop" "${bare_ev:-?}" "${bare_t:-?}" "$disp"
printf '%-36s %7.3f s  %6s M events/s\n' "run, el.threads() C helper" "$t_help" \
  "$(rate "$events" "$t_help")"
