#!/usr/bin/env bash
# The drain after SIGINT (docs/sources.md "Stopping") holds its bound
# whatever a script's wall-clock timer does: after the stop no timer
# callback starts again (docs/lua-api.md §4), and the one running is
# interrupted. A FIFO source whose writer keeps it open (the eventlog, then
# `sleep` holding the FIFO) and a timer callback (el.every_wall 50 ms) that
#   loop:  loops forever from its 3rd call on;
#   slow:  busy-waits 0.3 s on every call;
#   early: loops forever from its 1st call, before a byte was read (run);
# and, without a timer looping, an event handler that is busy (handler:
# a RUN_THREAD handler summing 1,000,000 numbers on each call, which is
# where the loop spends its time, so the signal, sent once the handler
# says it has been busy 1 s, interrupts a feed: h35
# saw one SIGINT then counted twice, the drain stopped at once and the
# GHC program left blocked on the full FIFO);
# under two commands:
#   run:    eventlog-live run SCRIPT --eventlog-file FIFO;
#   daemon: eventlog-live-otelcol on the FIFO, its default processors plus
#           the same timer (a main.lua found first on
#           EVENTLOG_LIVE_LUA_PATH runs the real one, then the script).
# Each call writes "timer call N" to stderr before it works. SIGINT goes
# to the command once the 3rd call has started (the loop: the one that
# loops; early: the 1st). Expected, from the documented rule (not from a
# run):
#   - the command exits 0 within 3x --eventlog-drain-timeout (3 s) of the
#     SIGINT (without the rule the looping callback starts again during
#     the drain and the command never exits);
#   - it says it drained and that the writer still had the FIFO open when
#     the bound passed;
#   - no "timer call" line after the drain's "stopping; reading on" line;
#   - one signal is one: no "stopped draining" line (that is the second
#     signal's);
#   - the drain holds its bound: the command exits no sooner than
#     --eventlog-drain-timeout after the SIGINT (a lower bound, which load
#     cannot break: h36 saw 3.3 s for a bound of 5 s, counted from the
#     loop's time before the busy feed);
#   - loop, early: the running call was stopped by the signal, not an
#     error; no error line at all (early: the bytes that came after the
#     signal are drained, not decoded, so no "no eventlog header").
# No timing assertion beyond the generous bound; every wait is bounded.
set -u
source "$(dirname "$0")/wait_lib.sh" # wait_line
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=$BUILD/eventlog-live
DAEMON=$BUILD/eventlog-live-otelcol
EV=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/threads.eventlog
[ -x "$EL" ] && [ -x "$DAEMON" ] || { echo "SKIP: $EL not built"; exit 77; }
[ -f "$EV" ] || { echo "SKIP: no $EV"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-drain-timers.XXXXXX")
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
DRAIN=3
BOUND=$((3 * DRAIN))

# The timer; its mode from EL_TEST_TIMER_MODE (loop or slow).
cat > "$T/timer.lua" <<'LUA'
local el = require("eventlog_live")
local mode = os.getenv("EL_TEST_TIMER_MODE")
local n = 0
if mode == "handler" then
  local calls, t0, said = 0, nil, false
  el.on("RUN_THREAD", function()
    calls = calls + 1
    if calls == 1 then
      t0 = os.clock()
      io.stderr:write("handler call 1\n")
      io.stderr:flush()
    elseif not said and os.clock() - t0 >= 1 then
      said = true
      io.stderr:write("handler busy 1 s\n")
      io.stderr:flush()
    end
    local x = 0
    for i = 1, 1000000 do x = x + i end
  end)
end
el.every_wall(50, function()
  n = n + 1
  io.stderr:write(string.format("timer call %d\n", n))
  io.stderr:flush()
  if (mode == "loop" and n >= 3) or mode == "early" then
    while true do end
  elseif mode == "slow" then
    local t0 = os.clock()
    while os.clock() - t0 < 0.3 do end
  end
end)
LUA
# The daemon's processors, then the same timer.
mkdir -p "$T/lua/eventlog_live/processors"
cat > "$T/lua/eventlog_live/processors/main.lua" <<'LUA'
require("eventlog_live.processors").start(require("eventlog_live"))
dofile(os.getenv("EL_TEST_TIMER_LUA"))
LUA

# case NAME MODE CMD...: CMD reads $T/NAME.fifo; stderr in $T/NAME.err.
case_() {
  local name=$1 mode=$2 fifo=$T/$1.fifo err=$T/$1.err
  shift 2
  mkfifo "$fifo"
  EL_TEST_TIMER_MODE=$mode EL_TEST_TIMER_LUA=$T/timer.lua \
    EVENTLOG_LIVE_LUA_PATH="$T/lua/?.lua" \
    "$@" --eventlog-file "$fifo" --eventlog-drain-timeout $DRAIN \
    > /dev/null 2> "$err" &
  local pid=$!
  PIDS+=("$pid")
  # The writer: the eventlog, then it keeps the FIFO open (sleep's stdout).
  (cat "$EV"; exec sleep 300) > "$fifo" &
  PIDS+=($!)
  local want='^timer call 3$'
  [ "$mode" = early ] && want='^timer call 1$'
  # handler: the signal comes 1 s (CPU) into the busy feed
  [ "$mode" = handler ] && want='^handler busy 1 s$'
  wait_line "$err" "$want" 60 ||
    { cat "$err"; fail "$name: no '$want' line in 60 s"; return; }
  # k0 before the signal: a loaded machine can take 100 ms to start
  # `date`, which taken after the signal would shorten the measured drain
  local t0=$SECONDS k0
  k0=$(date +%s%N)
  kill -INT "$pid"
  while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -le $BOUND ]; do
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    tail -n 5 "$err"
    fail "$name: still running $BOUND s (3x the drain bound) after SIGINT"
    return
  fi
  wait "$pid"
  local st=$? k1
  k1=$(date +%s%N)
  # the drain's bound after the signal, less 0.1 s for the exit's polling
  if [ $(((k1 - k0) / 1000000)) -ge $((DRAIN * 1000 - 100)) ]; then
    pass "$name: exited $(((k1 - k0) / 1000000)) ms after SIGINT, not before the drain's bound"
  else
    fail "$name: exited $(((k1 - k0) / 1000000)) ms after SIGINT, before the drain's bound of $DRAIN s"
  fi
  [ $st = 0 ] && pass "$name: exited 0 within $BOUND s of SIGINT" ||
    { tail -n 10 "$err"; fail "$name: exit status $st"; }
  grep -q 'stopping; reading on (and discarding)' "$err" &&
    pass "$name: it drained the FIFO" || fail "$name: no drain line"
  grep -q "its writer still had it open $DRAIN s after the stop" "$err" &&
    pass "$name: the drain's bound passed with the writer still there" ||
    { tail -n 10 "$err"; fail "$name: no 'writer still had it open' line"; }
  local after
  after=$(sed -n '/stopping; reading on/,$p' "$err" | grep -c '^timer call' || true)
  [ "$after" = 0 ] && pass "$name: no timer call started after the stop" ||
    fail "$name: $after timer call(s) started during the drain"
  grep -q 'stopped draining' "$err" &&
    { grep 'stopped draining' "$err"; fail "$name: one SIGINT counted as two"; } ||
    pass "$name: one signal, no 'stopped draining'"
  if [ "$mode" = loop ] || [ "$mode" = early ]; then
    grep -q 'timer (.*timer.lua:21): stopped by signal 2 (interrupted, not an error)' "$err" &&
      pass "$name: the looping call was stopped by the signal" ||
      { tail -n 10 "$err"; fail "$name: no 'stopped by signal 2' line"; }
  fi
  grep -q ': error:' "$err" && { grep ': error:' "$err"; fail "$name: an error line"; }
  echo "   $(grep -c '^timer call' "$err") timer call(s) in all"
}

for mode in loop slow handler; do
  echo "== run, $mode"
  case_ "run-$mode" "$mode" "$EL" run "$T/timer.lua" --output none \
    --log-level info
  echo "== daemon, $mode"
  case_ "daemon-$mode" "$mode" env OTEL_METRICS_EXPORTER=none \
    OTEL_LOGS_EXPORTER=none OTEL_TRACES_EXPORTER=none \
    OTEL_PROFILES_EXPORTER=none "$DAEMON" -v info
done
# early: the first call loops before a byte was read, SIGINT stops it;
# the bytes read after that are drained, not decoded: no "no eventlog
# header" error (docs/sources.md: a stop before any input is a clean end).
echo "== run, early"
case_ run-early early "$EL" run "$T/timer.lua" --output none --log-level info
[ "$FAILS" = 0 ] && { echo PASS; exit 0; }
echo "FAIL: $FAILS failing step(s)"; exit 1
