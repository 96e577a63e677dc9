#!/usr/bin/env bash
# ctest-labels: asan
# Time-ordered dispatch for Lua handlers (docs/lua-api.md §2 "Order of
# events") and the args = "t" calling convention, on -N2 eventlogs whose
# stream order differs from time order. Expected figures come from the
# ghc-events `show` text of the same files (time-sorted by ghc-events),
# computed by tests/e2e/time_order_expect.py.
set -uo pipefail
: "${EL_BIN:?}" "${EL_SOURCE_DIR:?}" "${EL_EVENTLOGS:?}"
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$EL_EVENTLOGS/ghc-9.0
EXPECT="python3 $EL_SOURCE_DIR/tests/e2e/time_order_expect.py"
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"; diff <(echo "$2") <(echo "$3") | head -20; fail=1
  else
    echo "ok   $1"
  fi
}
markers() { # eventlog [--set ...] -> "t<TAB>text<TAB>bytes" per marker
  local f=$1; shift
  "$EL_BIN" run "$EL_SOURCE_DIR/examples/alloc_markers.lua" --output none \
    --set format=tsv "$@" "$f" | awk -F'\t' 'NR > 2 { print $1 "\t" $3 "\t" $4 }'
}

# 1. The example: bytes allocated between markers, all capabilities.
for log in threads oddball-hT; do
  exp=$($EXPECT markers "$D/$log.eventlog.reference")
  check "alloc_markers in time order = the time-sorted reference ($log)" \
    "$exp" "$(markers "$D/$log.eventlog")"
done
# The same in stream order is wrong on threads.eventlog (the reason for
# the feature): make sure the file still exercises it.
exp=$($EXPECT markers "$D/threads.eventlog.reference")
act=$(markers "$D/threads.eventlog" --set order=stream)
if [ "$exp" = "$act" ]; then
  echo "FAIL threads.eventlog: stream order gives the time-order figures"; fail=1
else
  echo "ok   stream order differs on threads.eventlog ($(echo "$act" | tail -1 | cut -f3) vs $(echo "$exp" | tail -1 | cut -f3) bytes)"
fi

# 2. Every HEAP_ALLOCATED reaches a time-order handler once, in time
# order; a stream-order handler with args = "ev" sees the same events; a
# handler with args = "t" gets ev.t and ev.cap as arguments, and
# el.event() describes the event, in time order and in a batched replay.
cat > "$tmp/order.lua" <<'LUA'
local el = require("eventlog_live")
local out = io.open(el.config.out, "w")
local last, back, stream, bad = -1, 0, 0, 0
el.on("HEAP_ALLOCATED", function(t, cap, capset, bytes)
  if t < last then back = back + 1 end
  last = t
  out:write(string.format("%d\t%d\t%d\n", t, cap or -1, bytes))
  local e = el.event()
  if e.t ~= t or e.cap ~= cap or e.alloc_bytes ~= bytes or e.type ~= "HEAP_ALLOCATED" then bad = bad + 1 end
end, {args = "t", order = "time"})
el.on("HEAP_ALLOCATED", function(ev, capset, bytes) stream = stream + 1 end)
local off = -1
el.on("HEAP_ALLOCATED", function(t, cap, capset, bytes)  -- batched
  local e = el.event()
  if e.t ~= t or e.cap ~= cap or e.alloc_bytes ~= bytes or e.offset <= off then bad = bad + 1 end
  off = e.offset
end, {args = "t"})
el.on_end(function()
  local s = el.stats()
  print(string.format("back %d stream %d bad %d late %d forced %d held %d",
    back, stream, bad, s.order_late, s.order_forced, s.order_held))
end)
LUA
for log in threads oddball-hT; do
  sum=$("$EL_BIN" run "$tmp/order.lua" --output none --set out="$tmp/got" "$D/$log.eventlog")
  n=$($EXPECT allocs "$D/$log.eventlog.reference" | wc -l)
  check "time order: nondecreasing, none late or forced, all released ($log)" \
    "back 0 stream $n bad 0 late 0 forced 0 held 0" "$sum"
  check "time order: the reference's HEAP_ALLOCATED events ($log)" \
    "$($EXPECT allocs "$D/$log.eventlog.reference")" "$(sort -n "$tmp/got")"
done

# 3. A bounded window: with max_held = 1 the oldest is released early,
# counted in order_forced; nothing is lost. At the session's end a warning
# gives that count, its el.stats() name and the knob (docs/lua-api.md
# "el.watermark"): max_held.
cat > "$tmp/forced.lua" <<'LUA'
local el = require("eventlog_live")
el.order("time", {max_held = 1})
local n = 0
el.on("HEAP_ALLOCATED", function() n = n + 1 end)
el.on_end(function()
  print(n, el.stats().order_forced > 0)
  print(el.stats().order_forced)
end)
LUA
n=$($EXPECT allocs "$D/threads.eventlog.reference" | wc -l)
"$EL_BIN" run "$tmp/forced.lua" --output none "$D/threads.eventlog" \
  > "$tmp/forced.out" 2> "$tmp/forced.err"
check "max_held = 1: every event delivered, early releases counted" \
  "$(printf '%d\ttrue' "$n")" "$(head -1 "$tmp/forced.out")"
forced=$(sed -n 2p "$tmp/forced.out")
check "max_held = 1: the early releases are warned about, with the knob" \
  "session 1: $forced events for time-order handlers were released before their turn (el.stats().order_forced); raise max_held (now 1: el.order(\"time\", {max_held = N}))" \
  "$(grep -o 'session 1: [0-9]* events for time-order.*' "$tmp/forced.err")"

# 4. Two sessions (the file twice): everything held is released at the end
# of the first, whose times do not make the second's late.
cat "$D/threads.eventlog" "$D/threads.eventlog" > "$tmp/two.eventlog"
sum=$("$EL_BIN" run "$tmp/order.lua" --output none --set out="$tmp/got2" "$tmp/two.eventlog")
check "two sessions: each in time order, none late" \
  "back 1 stream $((2 * n)) bad 0 late 0 forced 0 held 0" "$sum"

# 5. Events without a capability (the global block, heap samples), which
# GHC 9.0 writes at exit, after the capability blocks: in a recorded file
# the scan shows they are still to come, so GC_START (capability blocks)
# and HEAP_PROF_SAMPLE_STRING (global block) reach time-order handlers
# interleaved in time order, none late, no warning.
cat > "$tmp/nocap.lua" <<'LUA'
local el = require("eventlog_live")
local out = io.open(el.config.out, "w")
local last, back = -1, 0
local function h(ev)
  if ev.t < last then back = back + 1 end
  if ev.t > last then last = ev.t end
  out:write(string.format("%d\t%s\n", ev.t, ev.type))
end
el.on("GC_START", h, {order = "time"})
el.on("HEAP_PROF_SAMPLE_STRING", h, {order = "time"})
el.on_end(function()
  local s = el.stats()
  out:close()
  print(string.format("back %d late %d forced %d held %d",
    back, s.order_late, s.order_forced, s.order_held))
end)
LUA
log=$D/oddball-hT.eventlog
sum=$("$EL_BIN" run "$tmp/nocap.lua" --output none --set out="$tmp/gh" "$log" \
  2> "$tmp/gh.err")
check "global block: time order across both, none late or forced" \
  "back 0 late 0 forced 0 held 0" "$sum"
check "global block: no warning" "" "$(cat "$tmp/gh.err")"
exp=$($EXPECT gcheap "$log.reference")
check "global block: the reference's GC_START and heap samples" \
  "$exp" "$(sort -k1,1n -k2 "$tmp/gh")"
# Both kinds interleave in time (the test means something): a heap sample
# comes before the last GC_START.
first_hs=$(echo "$exp" | grep -m1 HEAP_PROF | cut -f1)
last_gc=$(echo "$exp" | grep GC_START | tail -1 | cut -f1)
if [ "${first_hs:-0}" -lt "${last_gc:-0}" ]; then
  echo "ok   global block: heap samples interleave with GC_START"
else
  echo "FAIL global block: $log no longer interleaves them"; fail=1
fi

# 6. Bad options raise, naming the option (exit 2: the script did not load).
for opt in '{order = "tim"}' '{args = "x"}' '"time"'; do
  printf 'local el = require("eventlog_live")\nel.on("USER_MARKER", function() end, %s)\n' \
    "$opt" > "$tmp/bad.lua"
  "$EL_BIN" run "$tmp/bad.lua" --output none "$D/threads.eventlog" 2> "$tmp/err"
  st=$?
  if [ $st -ne 2 ] || ! grep -Eq 'option (order|args)|table expected' "$tmp/err"; then
    echo "FAIL bad option $opt: status $st"; cat "$tmp/err"; fail=1
  else
    echo "ok   bad option $opt is an error: $(head -1 "$tmp/err")"
  fi
done
exit $fail
