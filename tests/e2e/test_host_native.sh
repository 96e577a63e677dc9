#!/usr/bin/env bash
# ctest-labels: asan
# The C helpers' native outputs (docs/lua-api.md §6) against the same
# computations done in Lua from the per-span callbacks:
#  - el.cap_usage{on_point=, aggregate_ns=}: the series points must be the
#    ones the per-span Lua algorithm (the one capability.lua used before it
#    moved to C) produces, in the same order, for aggregation windows of
#    0, 1 ms and 1 s; and the last total of each series must equal the sum
#    of its span durations;
#  - el.cap_usage{spans=} and el.threads{spans=}: the spans in the console
#    output must be exactly the on_span callbacks' intervals (names, Unix
#    times, attributes with status names from eventlog_live.status), one
#    trace id per capability / thread, unique span ids.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

cat > "$tmp/points.lua" <<'LUA'
local el = require("eventlog_live")
local agg = math.tointeger(tonumber(el.config.agg))
local out = io.open(el.config.out, "w")
-- Lua reference: per-span algorithm.
local states, dirty, ndirty, ref = {}, {}, 0, {}
local spans = {}   -- series key -> sum of durations
local function key(cap, cat, user) return cap .. "/" .. cat .. "/" .. tostring(user) end
local function add(list, k, t, v) list[#list + 1] = k .. " " .. t .. " " .. v end
el.cap_usage{on_span = function(cap, cat, user, s, e)
  local k = key(cap, cat, user)
  local d = e > s and e - s or 0
  spans[k] = (spans[k] or 0) + d
  local st = states[k]
  if not st then st = {k = k, total = 0, t = 0, win = -1, dirty = false}; states[k] = st end
  st.total = st.total + d
  if agg == 0 then st.t = s; add(ref, k, s, st.total); return end
  local w = s // agg
  if st.dirty and w ~= st.win then add(ref, k, st.t, st.total - d); st.dirty = false end
  st.t = s; st.win = w
  if not st.dirty then st.dirty = true; ndirty = ndirty + 1; dirty[ndirty] = st end
end}
local function ref_flush()
  for i = 1, ndirty do
    local st = dirty[i]
    if st.dirty then add(ref, st.k, st.t, st.total); st.dirty = false end
    dirty[i] = nil
  end
  ndirty = 0
end
-- The C helper.
local got, last = {}, {}
local tr = el.cap_usage{aggregate_ns = agg, on_point = function(i, t, v, cap, cat, user)
  local k = key(cap, cat, user)
  add(got, k, t, v)
  last[k] = v
end}
el.every(10000000, function() ref_flush(); tr:flush_points() end)
el.on_end(function()
  ref_flush(); tr:flush_points()
  local bad = 0
  if #ref ~= #got then out:write("count ", #ref, " ", #got, "\n"); bad = 1 end
  for i = 1, math.max(#ref, #got) do
    if ref[i] ~= got[i] then
      out:write("point ", i, ": want ", tostring(ref[i]), " got ", tostring(got[i]), "\n")
      bad = bad + 1
      if bad > 5 then break end
    end
  end
  for k, sum in pairs(spans) do
    if last[k] ~= sum then out:write("total ", k, " ", sum, " ", tostring(last[k]), "\n"); bad = bad + 1 end
  end
  out:write(bad == 0 and ("ok " .. #got .. "\n") or "")
  out:close()
end)
LUA

for f in ghc-9.0/threads.eventlog ghc-events/parallelTest.eventlog; do
  for agg in 0 1000000 1000000000; do
    "$EL_BIN" run "$tmp/points.lua" --output none --set agg=$agg \
      --set out="$tmp/p.out" "$EL_EVENTLOGS/$f" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q '^ok [1-9]' "$tmp/p.out"; then
      echo "FAIL on_point $f agg=$agg (status $rc)"; cat "$tmp/p.out" "$tmp/err"
      fail=1
    else
      echo "ok   on_point $f agg=$agg: $(cat "$tmp/p.out")"
    fi
  done
done

cat > "$tmp/spans.lua" <<'LUA'
local el = require("eventlog_live")
local status = require("eventlog_live.status")
local out = io.open(el.config.out, "w")
local function line(name, s, e, attrs, group)
  out:write(string.format('{"name":"%s","start":"%d","end":"%d","attrs":{%s},"group":"%s"}\n',
    name, el.unix_ns(s), el.unix_ns(e), attrs, group))
end
el.threads{spans = "T", on_span = function(th, state, code, cap, s, e, info)
  if state == "running" then
    line("T Running", s, e, string.format('"capability":%d,"thread":"%d"', cap, th), "t" .. th)
  else
    line("T Blocked", s, e, string.format('"status":"%s","thread":"%d"',
      status.name(code, info), th), "t" .. th)
  end
end}
el.cap_usage{spans = "C", on_span = function(cap, cat, user, s, e)
  if cat == "Idle" then return end
  line("C " .. cat, s, e, string.format('"capability":%d,"user":"%s"', cap, user), "c" .. cap)
end}
el.on_end(function() out:close() end)
LUA

cat > "$tmp/cmp.py" <<'PY'
import json, sys, collections
want = [json.loads(l) for l in open(sys.argv[1])]
got, traces, ids = [], collections.defaultdict(set), set()
for l in open(sys.argv[2]):
    for rs in json.loads(l).get("resourceSpans", []):
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                a = {}
                for kv in s.get("attributes", []):
                    v = kv["value"]
                    a[kv["key"]] = int(v["intValue"]) if "intValue" in v else v["stringValue"]
                got.append((s["name"], s["startTimeUnixNano"], s["endTimeUnixNano"],
                            json.dumps(a, sort_keys=True)))
                grp = ("t" + a["thread"]) if "thread" in a else ("c%d" % a["capability"])
                traces[grp].add(s["traceId"])
                if s["spanId"] in ids: sys.exit("duplicate span id " + s["spanId"])
                ids.add(s["spanId"])
                if s.get("kind") != 1 or s.get("status", {}).get("code") != 1:
                    sys.exit("kind/status: %r" % s)
w = collections.Counter((x["name"], x["start"], x["end"], json.dumps(x["attrs"], sort_keys=True)) for x in want)
g = collections.Counter(got)
if w != g:
    print("missing", list((w - g).items())[:3]); print("extra", list((g - w).items())[:3])
    sys.exit("spans differ: %d wanted, %d got" % (sum(w.values()), sum(g.values())))
if any(len(v) != 1 for v in traces.values()):
    sys.exit("a thread/capability has several trace ids")
all_ids = [next(iter(v)) for v in traces.values()]
if len(set(all_ids)) != len(all_ids):
    sys.exit("trace ids shared between threads/capabilities")
if not want:
    sys.exit("no spans")
print("%d spans, %d traces" % (len(got), len(traces)))
PY

for f in ghc-9.0/threads.eventlog ghc-events/parallelTest.eventlog; do
  "$EL_BIN" run "$tmp/spans.lua" --set out="$tmp/want.jsonl" \
    "$EL_EVENTLOGS/$f" >"$tmp/got.jsonl" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL spans $f: status $rc"; cat "$tmp/err"; fail=1
  elif r=$(python3 "$tmp/cmp.py" "$tmp/want.jsonl" "$tmp/got.jsonl" 2>&1); then
    echo "ok   spans $f: $r"
  else
    echo "FAIL spans $f: $r"; fail=1
  fi
done
exit $fail
