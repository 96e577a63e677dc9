#!/usr/bin/env bash
# Issue 16's ratios in instructions executed (valgrind --tool=callgrind),
# which do not depend on the machine's load: the VM this project is built
# on runs the same binary 1.5-2x slower from one minute to the next, so
# the CPU-time ratios of the other topics (lua, pipeline, startup) can
# land on either side of a target. These counts are reproducible to the
# instruction; they do not see cache misses or branch mispredictions, so
# they complement the CPU figures and do not replace them.
# Printed, each against its yardstick from the same run:
#   decode    `stats` and the framer yardstick (tests/tools/el_framer.c)
#             on the GHC-9.0-shaped log (threads-big's blocks x10 with
#             distinct thread ids, global block last: pipeline.sh's);
#   daemon    eventlog-live-otelcol, exporters none, default
#             configuration and every processor on, over bare `stats`;
#             and `run` of an empty script (every event decoded and
#             delivered to the host, nothing subscribed): the part of the
#             daemon that is neither `stats`' counting nor analysis;
#   lua       instructions per dispatched event of trivial RUN_THREAD and
#             STOP_THREAD handlers (lua.sh's scripts) over the empty
#             script, against a bare lua_call loop's instructions per
#             call (el_lua_call_bench, the difference of two call counts);
#   startup   `--version`, `show` and `stats` on a small shared log, and
#             ghc-events' `show` on it when installed.
# Needs valgrind (apt-get install valgrind); skipped without it. Env:
# EL_BIN, EL_BUILD_DIR, EL_EVENTLOGS (scripts/bench.sh);
# EL_BENCH_INSTR_REPEAT (default 10: repetitions of threads-big for the
# decode and daemon figures). Figures only, no asserts.
set -euo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
if ! command -v valgrind >/dev/null; then
  echo "instructions: valgrind not installed (apt-get install valgrind); skipped"
  exit 0
fi
T=$EL_BUILD_DIR/tests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

# instr CMD...: instructions executed by CMD (its output discarded).
instr() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" \
    >/dev/null 2>"$tmp/vg.err" || true
  awk '/Collected :/ {print $NF}' "$tmp/vg.err" | tail -1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mega() { awk -v a="$1" 'BEGIN { printf "%.1f", a / 1e6 }'; }
per() { awk -v a="$1" -v n="$2" 'BEGIN { printf "%.1f", a / n }'; }
row() { # label instructions per-unit-count unit [ratio text]
  printf '%-34s %10s M  %7s /%s  %s\n' "$1" "$(mega "$2")" "$(per "$2" "$3")" \
    "$4" "${5:-}"
}

src=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog
reps=${EL_BENCH_INSTR_REPEAT:-10}
G=$tmp/ghc90.eventlog
if [ -x "$T/el_repeat_blocks" ] && [ "$reps" -gt 1 ]; then
  "$T/el_repeat_blocks" -r "$reps" -t -g last -o "$G" "$src" >/dev/null 2>&1
else
  cp "$src" "$G"
  reps=1
fi
events=$("$EL_BIN" stats "$G" | awk '/^events:/ {print $2}')
runstop=$("$EL_BIN" stats "$G" |
  awk '$1 == "RUN_THREAD" || $1 == "STOP_THREAD" {n += $3} END {print n}')
printf 'instructions (callgrind), %s: threads-big x%d, %.1f MB, %d events\n' \
  "$(basename "$G")" "$reps" "$(stat -c %s "$G" | awk '{print $1 / 1e6}')" \
  "$events"

s=$(instr "$EL_BIN" stats "$G")
row "stats" "$s" "$events" event
if [ -x "$T/el_framer" ]; then
  f=$(instr "$T/el_framer" -n 1 "$G")
  row "framer (yardstick)" "$f" "$events" event "stats: $(ratio "$s" "$f")x the framer"
fi

cat >"$tmp/none.lua" <<'LUA'
local el = require("eventlog_live")
LUA
cat >"$tmp/trivial_t.lua" <<'LUA'
local el = require("eventlog_live")
local n = 0
el.on("RUN_THREAD", function(t, cap, thread) n = n + 1 end, {args = "t"})
el.on("STOP_THREAD", function(t, cap, thread, status) n = n + 1 end, {args = "t"})
LUA
cat >"$tmp/trivial_ev.lua" <<'LUA'
local el = require("eventlog_live")
local n = 0
el.on("RUN_THREAD", function(ev, thread) n = n + 1 end)
el.on("STOP_THREAD", function(ev, thread, status) n = n + 1 end)
LUA
"$EL_BIN" otelcol --print-defaults >"$tmp/default.yaml"
sed 's/^\(      export:\) false$/\1 true/' "$tmp/default.yaml" >"$tmp/all.yaml"
e=$(instr "$EL_BIN" run "$tmp/none.lua" --output none "$G")
row "run, nothing subscribed" "$e" "$events" event "$(ratio "$e" "$s")x stats"
d=$(instr "$EL_BIN" otelcol --eventlog-file "$G" -hT)
row "daemon, default configuration" "$d" "$events" event \
  "$(ratio "$d" "$s")x stats (target 2x), $(ratio "$d" "$e")x run-nothing"
a=$(instr "$EL_BIN" otelcol --config "$tmp/all.yaml" --eventlog-file "$G" -hT)
row "daemon, every processor on" "$a" "$events" event \
  "$(ratio "$a" "$s")x stats (target 2.5x), $(ratio "$a" "$e")x run-nothing"

# Lua: per dispatched event over the empty script, on threads-big itself
# (the counts are exact, a larger input adds nothing but time).
lev=$("$EL_BIN" stats "$src" |
  awk '$1 == "RUN_THREAD" || $1 == "STOP_THREAD" {n += $3} END {print n}')
e1=$(instr "$EL_BIN" run "$tmp/none.lua" --output none "$src")
if [ -x "$T/el_lua_call_bench" ]; then
  for shape in t ev; do
    b1=$(instr "$T/el_lua_call_bench" 100000 1 "$shape")
    b2=$(instr "$T/el_lua_call_bench" 1100000 1 "$shape")
    bare=$(awk -v a="$b1" -v b="$b2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
    x=$(instr "$EL_BIN" run "$tmp/trivial_$shape.lua" --output none "$src")
    over=$(awk -v x="$x" -v e="$e1" -v n="$lev" 'BEGIN { printf "%.1f", (x - e) / n }')
    label="fn(t, cap, ...)"
    [ "$shape" = ev ] && label="fn(ev, ...)"
    printf '%-34s %7s per dispatched event over empty; bare lua_call %s: %sx (target 1.5x)\n' \
      "lua $label" "$over" "$bare" "$(ratio "$over" "$bare")"
  done
fi

log=$EL_EVENTLOGS/ghc-events/trace-binary-event.eventlog
v=$(instr "$EL_BIN" --version)
sh=$(instr "$EL_BIN" show "$log")
st=$(instr "$EL_BIN" stats "$log")
ghc=$(command -v ghc-events || true)
g=
[ -n "$ghc" ] && g=$(instr "$ghc" show "$log")
printf 'startup, %s:' "$(basename "$log")"
printf ' --version %s M, show %s M, stats %s M' "$(mega "$v")" "$(mega "$sh")" \
  "$(mega "$st")"
[ -n "$g" ] && printf '; ghc-events show %s M (show: %sx)' "$(mega "$g")" \
  "$(ratio "$sh" "$g")"
printf '\n'
