#!/usr/bin/env bash
# Lua host speed: events/s through `eventlog-live run` with a script
# subscribed to nothing (compare with bare `eventlog-live stats`), and with
# a trivial handler on RUN_THREAD and STOP_THREAD. Input: threads-big
# repeated by el_synth to ~200 MB so timings are above noise.
# Target (issue 3): >= 15 M dispatched events/s; nothing-subscribed within
# 10% of the bare decoder.
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
cat > "$tmp/helper.lua" <<'LUA'
local el = require("eventlog_live")
local th = el.threads()
el.on_end(function() io.stderr:write(string.format("events %d threads %d\n", el.stats().events, #th:list())) end)
LUA
# CPU seconds (user + sys), best of 5: the machine is shared, so wall time
# measures the neighbours as much as us.
best() { # command... -> best CPU seconds of 5 runs
  local b=
  for _ in $(seq "${EL_BENCH_LUA_N:-5}"); do
    /usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err"
    local d; d=$(awk '{print $1 + $2}' "$tmp/time")
    if [ -z "$b" ] || [ "$(echo "$d < $b" | bc -l)" = 1 ]; then b=$d; fi
  done
  echo "$b"
}
size=$(stat -c %s "$big")
t_stats=$(best "$EL_BIN" stats "$big")
t_none=$(best "$EL_BIN" run "$tmp/none.lua" --output none "$big")
events=$(awk '{print $2}' "$tmp/err")
t_triv=$(best "$EL_BIN" run "$tmp/trivial.lua" --output none "$big")
disp=$(awk '{print $4}' "$tmp/err")
t_help=$(best "$EL_BIN" run "$tmp/helper.lua" --output none "$big")
printf "CPU time (user+sys), best of %s\n" "${EL_BENCH_LUA_N:-5}"
printf 'input: %s (%d MB, %d events; %d RUN/STOP_THREAD)\n' \
  "$(basename "$big")" $((size / 1000000)) "$events" "$disp"
rate() { echo "scale=1; $1 / $2 / 1000000" | bc -l; }
printf '%-34s %7.3f s  %6s M events/s\n' "bare decoder (stats)" "$t_stats" "$(rate "$events" "$t_stats")"
printf '%-34s %7.3f s  %6s M events/s  (%s%% of bare)\n' "run, nothing subscribed" "$t_none" \
  "$(rate "$events" "$t_none")" "$(echo "scale=0; 100 * $t_stats / $t_none" | bc -l)"
printf '%-34s %7.3f s  %6s M events/s  %s M dispatched/s\n' "run, RUN/STOP_THREAD handlers" "$t_triv" \
  "$(rate "$events" "$t_triv")" "$(rate "$disp" "$t_triv")"
printf '%-34s %7.1f ns per dispatched event, decoding included\n' "" \
  "$(echo "$t_triv * 1000000000 / $disp" | bc -l)"
printf '%-34s %7.3f s  %6s M events/s\n' "run, el.threads() C helper" "$t_help" \
  "$(rate "$events" "$t_help")"
