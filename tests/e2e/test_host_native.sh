#!/usr/bin/env bash
# ctest-labels: asan
# The C helpers' native outputs (docs/lua-api.md §6) on real eventlogs,
# against values from an independent source:
#  - el.cap_usage{on_point=, aggregate_ns=}: the capability usage metric
#    recomputed from the ghc-events reference texts (otelcol_check.py
#    usage_points: the §5.2.3 state machines over `ghc-events show`).
#    Without aggregation every series' points must be exactly the running
#    totals of its spans (Idle: of the gaps), in order; with windows of
#    1 ms and 1 s every point must be one of those running totals, the last
#    one of each series and of each of its aggregation windows must be
#    there, and the last point of each series must be its total. (Small
#    hand-written cases, with hand-computed values, are in
#    tests/lua/host/processors_default_spec.lua.)
#  - el.cap_usage{spans=} and el.threads{spans=}: the spans in the console
#    output must be exactly the on_span callbacks' intervals (names, Unix
#    times, attributes with status names from eventlog_live.status), one
#    trace id per capability / thread, unique span ids.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
here=$(cd "$(dirname "$0")" && pwd)

# Every on_point call, one line each: cap category user t v.
cat > "$tmp/points.lua" <<'LUA'
local el = require("eventlog_live")
local agg = math.tointeger(tonumber(el.config.agg))
local out = io.open(el.config.out, "w")
local tr = el.cap_usage{aggregate_ns = agg, on_point = function(i, t, v, cap, cat, user)
  out:write(cap, " ", cat, " ", tostring(user), " ", t, " ", v, "\n")
end}
el.every(10000000, function() tr:flush_points() end)
el.on_end(function() tr:flush_points(); out:close() end)
LUA

cat > "$tmp/points.py" <<'PY'
import sys
from collections import defaultdict
sys.path.insert(0, sys.argv[1])
from otelcol_check import parse_reference, usage_points
ref, got_path, agg = sys.argv[2], sys.argv[3], int(sys.argv[4])
want = {}
for (c, cat, user), pts in usage_points(parse_reference(ref)).items():
    want[(c, cat, "nil" if user is None else user)] = pts
got = defaultdict(list)
for line in open(got_path):
    c, cat, user, t, v = line.split()
    got[(int(c), cat, user)].append((int(t), int(v)))
bad = []
if set(got) != set(want):
    bad.append("series: missing %s, unexpected %s" % (
        sorted(set(want) - set(got))[:3], sorted(set(got) - set(want))[:3]))
for k in sorted(set(want) & set(got)):
    w, g = want[k], got[k]
    if agg == 0:
        if w != g:
            i = next((i for i, (a, b) in enumerate(zip(w, g)) if a != b),
                     min(len(w), len(g)))
            bad.append("%s: %d points, want %d; first difference at %d: "
                       "want %s got %s" % (k, len(g), len(w), i,
                                           w[i:i + 1], g[i:i + 1]))
        continue
    if g[-1] != w[-1]:
        bad.append("%s: last point %s, want the total %s" % (k, g[-1], w[-1]))
    if not set(g) <= set(w):
        bad.append("%s: points that are no running total: %s" % (
            k, sorted(set(g) - set(w))[:3]))
    last = {}
    for t, v in w:
        last[t // agg] = (t, v)
    missing = sorted(set(last.values()) - set(g))
    if missing:
        bad.append("%s: windows' last values missing: %s" % (k, missing[:3]))
for b in bad[:10]:
    print(b)
n = sum(len(v) for v in got.values())
if bad or n == 0:
    sys.exit("%d problems, %d points" % (len(bad), n))
print("%d series, %d points" % (len(got), n))
PY

for f in ghc-9.0/threads.eventlog ghc-events/parallelTest.eventlog; do
  for agg in 0 1000000 1000000000; do
    "$EL_BIN" run "$tmp/points.lua" --output none --set agg=$agg \
      --set out="$tmp/p.out" "$EL_EVENTLOGS/$f" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL on_point $f agg=$agg: status $rc"; cat "$tmp/err"; fail=1
    elif r=$(python3 "$tmp/points.py" "$here" "$EL_EVENTLOGS/$f.reference" \
               "$tmp/p.out" $agg 2>&1); then
      echo "ok   on_point $f agg=$agg: $r"
    else
      echo "FAIL on_point $f agg=$agg: $r"; fail=1
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
    line("T Running", s, e, string.format('"capability":%d,"status":"%s","thread":"%d"',
      cap, status.name(code, info), th), "t" .. th)
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
