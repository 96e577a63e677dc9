#!/usr/bin/env python3
"""Independent check of eventlog-live-otelcol's telemetry.

Expected values are recomputed from the `ghc-events show` reference text of
an eventlog (tests/data/eventlogs/**/X.eventlog.reference), following
spec/reference-behaviour.md §2.4, §5 and DESIGN.md (absolute time subtracts
the WALL_CLOCK_TIME event's own time; windows in eventlog time), and
compared with what the test OTLP receiver decoded (its JSON lines).

usage: otelcol_check.py REFERENCE RECEIVED.jsonl SERVICE AGGREGATE_NS CHECKS
  AGGREGATE_NS: 0 = every measurement kept, else the aggregation window.
  CHECKS: comma-separated subset of
    heap (heap_size, heap_live, blocks_size, heap_allocated),
    gcstats (gc_copied, gc_slop, gc_fragmentation from GC_STATS_GHC),
    productivity (per capability, from the run and GC intervals),
    census, markers, messages, labels, capusage, ccprofile
Prints one line per check and exits 1 if any failed.
"""
import json
import os
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*(\d+): (.*)$")
CAP = re.compile(r"^cap (\d+): (.*)$")

# Event texts with a "cap N: " prefix that are not user messages.
KNOWN = re.compile(
    r"^(waking up|stopping thread|running thread|migrating thread|GC idle|"
    r"GC done|spark stats|allocated on|GC working|starting GC|finished GC|"
    r"size of heap|all caps|GC stats|requesting parallel|requesting "
    r"sequential|creating thread|live data|blocks size|marker:|thread \d+ "
    r"has label|creating spark|event block|thread \d+ is runnable|"
    r"stealing|spark|task|Update remembered|memory returned|"
    r"concurrent|nonmoving|GC generation|sequential GC|parallel GC|"
    r"heap stats|created|assigned|removed|deleted|thread \d+ has|"
    r"thread \d+ migrating|delete cap|enable cap|disable cap|cap \d+)")


def parse_reference(path):
    """Events in time order: (t, cap or None, text)."""
    events = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        in_events = False
        for raw in f:
            line = raw.rstrip("\n")
            if line == "Events:":
                in_events = True
                continue
            if not in_events:
                continue
            m = LINE.match(line)
            if not m:
                continue
            t, rest = int(m.group(1)), m.group(2)
            c = CAP.match(rest)
            if c:
                events.append((t, int(c.group(1)), c.group(2)))
            else:
                events.append((t, None, rest))
    return events


def start_unix(events):
    """Unix ns of RTS start: wall clock minus the event's own time."""
    for t, _, text in events:
        m = re.match(r"capset \d+: wall clock time (\d+)s (\d+)ns", text)
        if m:
            return int(m.group(1)) * 10**9 + int(m.group(2)) - t
    return None


def attrs_of(kvs):
    out = {}
    for kv in kvs or []:
        v = kv["value"]
        if "intValue" in v:
            out[kv["key"]] = int(v["intValue"])
        elif "stringValue" in v:
            out[kv["key"]] = v["stringValue"]
        else:
            out[kv["key"]] = v
    return out


def received(path, service):
    """metrics: name -> [(time, value, attrs, kind, temporality)];
    logs: [(time, severity, body, attrs)]."""
    metrics = defaultdict(list)
    logs = []
    profiles = []
    spans = []
    needle = json.dumps(service)
    with open(path) as f:
        for line in f:
            if needle not in line and json.dumps(needle)[1:-1] not in line:
                continue   # (the second form: inside decoded_text)
            r = json.loads(line)
            req = r.get("request") or {}
            for rm in req.get("resourceMetrics", []):
                if attrs_of(rm["resource"].get("attributes")).get(
                        "service.name") != service:
                    continue
                for sm in rm.get("scopeMetrics", []):
                    for m in sm.get("metrics", []):
                        kind = "gauge" if "gauge" in m else "sum"
                        body = m.get("gauge") or m.get("sum")
                        temp = body.get("aggregationTemporality")
                        for p in body.get("dataPoints", []):
                            v = p["asDouble"] if "asDouble" in p else \
                                int(p.get("asInt", 0))
                            metrics[m["name"]].append(
                                (int(p.get("timeUnixNano", 0)), v,
                                 attrs_of(p.get("attributes")), kind, temp,
                                 m.get("unit")))
            for rl in req.get("resourceLogs", []):
                if attrs_of(rl["resource"].get("attributes")).get(
                        "service.name") != service:
                    continue
                for sl in rl.get("scopeLogs", []):
                    for lr in sl.get("logRecords", []):
                        logs.append((int(lr.get("timeUnixNano", 0)),
                                     lr.get("severityNumber", 0),
                                     lr.get("body", {}).get("stringValue"),
                                     attrs_of(lr.get("attributes"))))
            for rs in req.get("resourceSpans", []):
                if attrs_of(rs["resource"].get("attributes")).get(
                        "service.name") != service:
                    continue
                for ss in rs.get("scopeSpans", []):
                    for sp in ss.get("spans", []):
                        spans.append((sp["name"], int(sp["startTimeUnixNano"]),
                                      int(sp["endTimeUnixNano"]),
                                      attrs_of(sp.get("attributes")),
                                      sp.get("traceId"), sp.get("kind"),
                                      (sp.get("status") or {}).get("code"),
                                      sp.get("spanId")))
            if r.get("signal") == "profiles" and r.get("decoded_text"):
                profiles.append(r["decoded_text"])
    return metrics, logs, profiles, spans


class Checker:
    def __init__(self):
        self.failed = 0

    def compare(self, what, expected, got):
        # CHECK_REPEAT=n: the stream was delivered n times (sessions).
        expected = list(expected) * int(os.environ.get("CHECK_REPEAT", "1"))
        expected, got = sorted(expected), sorted(got)
        if expected == got:
            print(f"ok   {what}: {len(got)} items")
            return
        self.failed += 1
        print(f"FAIL {what}: expected {len(expected)} items, got {len(got)}")
        se, sg = set(expected), set(got)
        for x in sorted(se - sg)[:5]:
            print(f"     missing   {x}")
        for x in sorted(sg - se)[:5]:
            print(f"     unexpected {x}")


def windowed(measurements, agg_ns, key_index):
    """Keep the last measurement (largest t, ties: later) per window and
    key. measurements: (t, key, payload) in file order."""
    if agg_ns == 0:
        return measurements
    best = {}
    for m in measurements:
        k = (m[0] // agg_ns, m[key_index])
        if k not in best or m[0] >= best[k][0]:
            best[k] = m
    return list(best.values())


HEAP = {
    "ghc_eventlog_HeapSize": re.compile(r"^size of heap capset (\d+): (\d+) bytes$"),
    "ghc_eventlog_HeapLive": re.compile(r"^live data in heap capset (\d+): (\d+) bytes$"),
    "ghc_eventlog_BlocksSize": re.compile(r"^blocks size of heap capset (\d+): (\d+) bytes$"),
    "ghc_eventlog_HeapAllocated": re.compile(r"^allocated on heap capset (\d+): (\d+) total bytes till now$"),
}


def check_heap(ck, events, start, metrics, agg):
    for name, rx in HEAP.items():
        ms = []
        for t, cap, text in events:
            m = rx.match(text)
            if m:
                ms.append((t, (cap, int(m.group(1))), int(m.group(2))))
        exp = [(start + t, v, cap, capset)
               for t, (cap, capset), v in windowed(ms, agg, 1)]
        got = [(p[0], p[1], p[2].get("evCap"), p[2].get("heapCapset"))
               for p in metrics.get(name, [])]
        ck.compare(name, exp, got)
        kinds = {(p[3], p[4], p[5]) for p in metrics.get(name, [])}
        want = ("sum", 2, "By") if name.endswith("Allocated") else \
            ("gauge", None, "By")
        if kinds and kinds != {want}:
            ck.failed += 1
            print(f"FAIL {name}: kind/temporality/unit {kinds} != {want}")


GC_STATS = re.compile(
    r"^GC stats for heap capset (\d+): generation \d+, (\d+) bytes copied, "
    r"(\d+) bytes slop, (\d+) bytes fragmentation")


def check_gcstats(ck, events, start, metrics, agg):
    """gc_copied, gc_slop, gc_fragmentation: one gauge point (By) per
    GC_STATS_GHC event, attributes evCap and heapCapset."""
    for i, name in enumerate(["ghc_eventlog_GcCopied", "ghc_eventlog_GcSlop",
                              "ghc_eventlog_GcFragmentation"]):
        ms = []
        for t, cap, text in events:
            m = GC_STATS.match(text)
            if m:
                ms.append((t, (cap, int(m.group(1))), int(m.group(2 + i))))
        if not ms:
            ck.failed += 1
            print(f"FAIL {name}: the reference has no GC stats")
            continue
        exp = [(start + t, v, cap, capset)
               for t, (cap, capset), v in windowed(ms, agg, 1)]
        got = [(p[0], p[1], p[2].get("evCap"), p[2].get("heapCapset"))
               for p in metrics.get(name, [])]
        ck.compare(name, exp, got)
        kinds = {(p[3], p[5]) for p in metrics.get(name, [])}
        if kinds != {("gauge", "By")}:
            ck.failed += 1
            print(f"FAIL {name}: kind/unit {kinds} != gauge, By")


def check_productivity(ck, events, start, metrics, agg):
    """Per capability: at the end of each GC or running interval, 100 x
    the capability's total running time / (running + GC time) so far
    (a value at t holds only time up to t: docs/differences.md),
    intervals taken as they end (usage_spans); no value while both totals
    are 0. Compared to 9 decimals."""
    mut, gc = defaultdict(int), defaultdict(int)
    ms = []
    for c, cat, _, a, b in usage_spans(events):
        d = max(0, b - a)
        if cat == "GC":
            gc[c] += d
        else:
            mut[c] += d
        if mut[c] + gc[c]:
            ms.append((b, c, mut[c] / (mut[c] + gc[c]) * 100.0))
    name = "ghc_eventlog_Productivity"
    exp = [(start + t, round(v, 9), c) for t, c, v in windowed(ms, agg, 1)]
    got = [(p[0], round(p[1], 9), p[2].get("cap"))
           for p in metrics.get(name, [])]
    ck.compare(name, exp, got)
    kinds = {(p[3], p[5]) for p in metrics.get(name, [])}
    if kinds != {("gauge", "%")}:
        ck.failed += 1
        print(f"FAIL {name}: kind/unit {kinds} != gauge, %")


def cc_stack_label(names, ids):
    """A -hc band's label: the cost centres' labels from the innermost
    (first) outwards joined by "/", a CAF as <module>.CAF, an unknown id
    as cc<id>, the empty stack as MAIN."""
    if not ids:
        return "MAIN"
    return "/".join(names.get(i, f"cc{i}") for i in ids)


def check_census(ck, events, start, metrics, agg, breakdown):
    censuses = []   # (t_begin, [(t, label, residency, id)])
    names = {}      # cost centre id -> label (-hc)
    for t, cap, text in events:
        if re.match(r"^start heap prof sample \d+$", text):
            censuses.append((t, []))
            continue
        m = re.match(r"^cost centre (\d+) (\S+) in (\S+) at ", text)
        if m:
            label, module = m.group(2), m.group(3)
            names[int(m.group(1))] = f"{module}.CAF" if label == "CAF" \
                else label
            continue
        m = re.match(r"^heap prof sample (\d+), residency (\d+), cost centre "
                     r"stack ?(.*)$", text)
        if m and censuses:
            ids = [int(x) for x in m.group(3).split(", ") if x]
            label = cc_stack_label(names, ids)
            samples = censuses[-1][1]
            old = [s for s in samples if s[1] == label]
            res = int(m.group(2)) + sum(s[2] for s in old)
            samples[:] = [s for s in samples if s[1] != label]
            samples.append((t, label, res, int(m.group(1))))
            continue
        m = re.match(r"^heap prof sample (\d+), residency (\d+), label (.*)$",
                     text)
        if m and censuses:
            samples = censuses[-1][1]
            samples[:] = [s for s in samples if s[1] != m.group(3)]
            samples.append((t, m.group(3), int(m.group(2)), int(m.group(1))))
    censuses = [c for c in censuses if c[1]]
    if agg:
        last = {}
        for c in censuses:
            last[c[0] // agg] = c
        censuses = list(last.values())
    exp = [(start + t, label, res, pid, breakdown)
           for _, ss in censuses for t, label, res, pid in ss]
    got = [(p[0], p[2].get("heapProfLabel"), p[1], p[2].get("heapProfId"),
            p[2].get("heapProfBreakdown"))
           for p in metrics.get("ghc_eventlog_HeapProfSample", [])]
    ck.compare("ghc_eventlog_HeapProfSample censuses", exp, got)


def check_logs(ck, events, start, logs, which):
    if which == "markers":
        exp = [(start + t, 1, text[len("marker: "):], cap, "UserMarker")
               for t, cap, text in events if cap is not None
               and text.startswith("marker: ")]
    elif which == "messages":
        exp = [(start + t, 5, text, cap, "UserMessage")
               for t, cap, text in events if cap is not None
               and not KNOWN.match(text)]
    else:
        exp = []
        for t, cap, text in events:
            m = re.match(r'^thread (\d+) has label "(.*)"$', text)
            if m:
                exp.append((start + t, 0, m.group(2).replace('\\"', '"'),
                            int(m.group(1)), "ThreadLabel"))
    kind = {"markers": "UserMarker", "messages": "UserMessage",
            "labels": "ThreadLabel"}[which]
    got = []
    for t, sev, body, a in logs:
        if a.get("kind") != kind:
            continue
        x = a.get("thread") if which == "labels" else a.get("evCap")
        got.append((t, sev, body, x, kind))
    ck.compare(f"{kind} log records", exp, got)


def running_intervals(events):
    """Running intervals (thread, cap, start, end) by the §5.2.3 thread
    state machine, written anew."""
    th_state = {}
    out = []
    for t, cap, text in events:
        m = re.match(r"^running thread (\d+)$", text) if cap is not None \
            else None
        if m:
            th = int(m.group(1))
            s = th_state.get(th)
            if s == "done":
                continue
            if not (s and s[0] == "run"):
                th_state[th] = ("run", t, cap)
            continue
        m = re.match(r"^stopping thread (\d+) \((.*)\)$", text)
        if m:
            th = int(m.group(1))
            s = th_state.get(th)
            if s == "done" or s is None:
                continue
            if s[0] == "run":
                out.append((th, s[2], s[1], t))
            th_state[th] = "done" if m.group(2) == "thread finished" \
                else ("stop", t)
    return out


def check_threadspans(ck, events, start, spans):
    exp = [(start + a, start + b, str(th), cap)
           for th, cap, a, b in running_intervals(events)]
    got = [(s[1], s[2], s[3].get("thread"), s[3].get("capability"))
           for s in spans if s[0] == "ghc_eventlog_ThreadState Running"]
    ck.compare("ThreadState Running spans", exp, got)
    # One trace id per thread; kind INTERNAL, status OK.
    ids = defaultdict(set)
    for s in spans:
        if s[0].startswith("ghc_eventlog_ThreadState "):
            ids[s[3].get("thread")].add(s[4])
    if any(len(v) != 1 for v in ids.values()) or \
            len({next(iter(v)) for v in ids.values()}) != len(ids):
        ck.failed += 1
        print("FAIL ThreadState trace ids are not one per thread")
    ids = [s[7] for s in spans]
    if len(set(ids)) != len(ids) or any(not i or i == "0" * 16 for i in ids):
        ck.failed += 1
        print("FAIL span ids are not unique and non-zero")
    if {(s[5], s[6]) for s in spans} - {(1, 1)}:
        ck.failed += 1
        print("FAIL span kind/status not INTERNAL/OK")


def usage_spans(events):
    """Capability usage spans (cap, category, user, start, end) in the
    order they end: GC spans per capability and Running spans per thread
    (spec §5.2.3 state machines, written anew). user is "GC" or the thread
    id in decimal."""
    gc_state = {}           # cap -> ("start"|"end", t)
    th_state = {}           # thread -> ("run", t, cap) | ("stop", t) | "done"
    out = []
    for t, cap, text in events:
        if cap is not None and text == "starting GC":
            s = gc_state.get(cap)
            if not (s and s[0] == "start"):
                gc_state[cap] = ("start", t)
        elif cap is not None and text == "finished GC":
            s = gc_state.get(cap)
            if s and s[0] == "start":
                out.append((cap, "GC", "GC", s[1], t))
                gc_state[cap] = ("end", t)
        m = re.match(r"^running thread (\d+)$", text) if cap is not None \
            else None
        if m:
            th = int(m.group(1))
            s = th_state.get(th)
            if s == "done":
                continue
            if not (s and s[0] == "run"):
                th_state[th] = ("run", t, cap)
            continue
        m = re.match(r"^stopping thread (\d+) \((.*)\)$", text)
        if m:
            th = int(m.group(1))
            s = th_state.get(th)
            if s == "done":
                continue
            if s and s[0] == "run":
                out.append((s[2], "Mutator", str(th), s[1], t))
            if s is None:
                continue    # unexpected: state unchanged
            th_state[th] = "done" if m.group(2) == "thread finished" else ("stop", t)
    return out


def usage_points(events):
    """The capability usage metric without aggregation (spec §5.2.3): per
    series (cap, category, user) the running totals [(t, total), ...], one
    per span at its end (a running total holds time up to its time:
    docs/differences.md), and an Idle series per capability (user None)
    with one point per gap between a span and the previous one's end, at
    the gap's end, spans taken as they end."""
    points = defaultdict(list)
    total = defaultdict(int)
    prev_end = {}

    def add(key, t, d):
        total[key] += d
        points[key].append((t, total[key]))
    for c, cat, user, a, b in usage_spans(events):
        p = prev_end.get(c)
        if p is not None and p < a:
            add((c, "Idle", None), a, a - p)
        prev_end[c] = b
        add((c, cat, user), b, max(0, b - a))
    return points


def check_capusage(ck, events, metrics):
    """Per capability: total Mutator time = sum of running intervals; GC =
    sum of GC intervals; Idle = sum of the gaps (usage_points)."""
    exp = {"Mutator": defaultdict(int), "GC": defaultdict(int),
           "Idle": defaultdict(int)}
    for (c, cat, _), pts in usage_points(events).items():
        exp[cat][c] += pts[-1][1]
    mut_total, gc_total, idle_total = exp["Mutator"], exp["GC"], exp["Idle"]
    finals = {}
    for t, v, a, *_ in metrics.get("ghc_eventlog_CapabilityUsageDuration", []):
        k = (a.get("cap"), a.get("category"), a.get("user"))
        if k not in finals or (t, v) >= finals[k]:
            finals[k] = (t, v)
    got_mut, got_gc, got_idle = defaultdict(int), defaultdict(int), \
        defaultdict(int)
    for (c, cat, _), (_, v) in finals.items():
        if cat == "Mutator":
            got_mut[c] += v
        elif cat == "GC":
            got_gc[c] += v
        elif cat == "Idle":
            got_idle[c] += v
    ck.compare("capability usage Mutator totals", list(mut_total.items()),
               list(got_mut.items()))
    ck.compare("capability usage GC totals", list(gc_total.items()),
               list(got_gc.items()))
    ck.compare("capability usage Idle totals", list(idle_total.items()),
               list(got_idle.items()))


def parse_textproto(text):
    """protoc --decode text format -> nested dicts of lists."""
    toks = re.findall(r'"(?:[^"\\]|\\.)*"|[{}]|[^\s{}:]+(?=\s*[:{])|'
                      r'(?<=:)\s*[^\s{}"]+', text)
    pos = 0

    def value(tok):
        tok = tok.strip()
        if tok.startswith('"'):
            return bytes(tok[1:-1], "utf-8").decode("unicode_escape") \
                .encode("latin-1").decode("utf-8")
        try:
            return int(tok)
        except ValueError:
            return tok

    def block():
        nonlocal pos
        d = defaultdict(list)
        while pos < len(toks):
            t = toks[pos]
            if t == "}":
                pos += 1
                return d
            name = t
            pos += 1
            if toks[pos] == "{":
                pos += 1
                d[name].append(block())
            else:
                d[name].append(value(toks[pos]))
                pos += 1
        return d
    return block()


def check_ccprofile(ck, events, start, profiles, name, service):
    ccs = {}
    exp = []
    for t, cap, text in events:
        m = re.match(r"^cost centre (\d+) (\S+) in (\S+) at ", text)
        if m:
            ccs[int(m.group(1))] = f"{m.group(3)}:{m.group(2)}"
            continue
        m = re.match(r"^cap no (\d+), prof sample \d+, cost centre stack ?(.*)$",
                     text)
        if m:
            ids = [int(x) for x in m.group(2).split(",") if x.strip()]
            exp.append((start + t, int(m.group(1)),
                        tuple(ccs.get(i, str(i)) for i in ids), name))
    got = []
    # The empty stack (GHC's empty CCS) is the zero Stack at index 0 of
    # each request's dictionary (profiles.proto: index 0 is the zero
    # value), never a second empty entry.
    bad_empty = []
    for text in profiles:
        req = parse_textproto(text)
        dic = req["dictionary"][0]
        strs = dic["string_table"]
        funcs = dic["function_table"]
        locs = dic["location_table"]
        stacks = dic["stack_table"]
        attrs = dic["attribute_table"]
        empty = [i for i, st in enumerate(stacks)
                 if not st.get("location_indices")]
        if empty != [0]:
            bad_empty.append(f"empty stack entries at {empty}")
        for rp in req["resource_profiles"]:
            svc = [kv["value"][0]["string_value"][0]
                   for kv in rp["resource"][0].get("attributes", [])
                   if kv["key"][0] == "service.name"]
            if svc != [service]:
                continue
            for sp in rp["scope_profiles"]:
                for prof in sp["profiles"]:
                    for smp in prof["samples"]:
                        si = smp.get("stack_index", [0])[0]
                        st = stacks[si]
                        if si and not st.get("location_indices"):
                            bad_empty.append(f"empty stack at index {si}")
                        names = []
                        for li in st.get("location_indices", []):
                            ln = locs[li]["lines"][0]
                            f = funcs[ln.get("function_index", [0])[0]]
                            names.append(strs[f.get("name_strindex", [0])[0]])
                        a = {}
                        for ai in smp.get("attribute_indices", []):
                            kv = attrs[ai]
                            v = kv["value"][0]
                            a[strs[kv["key_strindex"][0]]] = \
                                (v.get("int_value") or v.get("string_value")
                                 or [0])[0]
                        got.append((smp["timestamps_unix_nano"][0],
                                    a.get("capability"), tuple(names),
                                    a.get("__name__")))
    ck.compare("cost-centre profile samples", exp, got)
    if bad_empty:
        ck.failed += 1
        print(f"FAIL empty stacks: {bad_empty[:5]}")
    else:
        n = sum(1 for e in exp if not e[2])
        print(f"ok   empty stacks: {n} samples share index 0")


def main():
    ref, rcv, service, agg, checks = sys.argv[1:6]
    breakdown = sys.argv[6] if len(sys.argv) > 6 else None
    agg = int(agg)
    events = parse_reference(ref)
    start = start_unix(events)
    if start is None:
        print("FAIL no WALL_CLOCK_TIME in the reference")
        return 1
    metrics, logs, profiles, spans = received(rcv, service)
    ck = Checker()
    for c in checks.split(","):
        if c == "heap":
            check_heap(ck, events, start, metrics, agg)
        elif c == "gcstats":
            check_gcstats(ck, events, start, metrics, agg)
        elif c == "productivity":
            check_productivity(ck, events, start, metrics, agg)
        elif c == "census":
            check_census(ck, events, start, metrics, agg, breakdown)
        elif c in ("markers", "messages", "labels"):
            check_logs(ck, events, start, logs, c)
        elif c == "capusage":
            check_capusage(ck, events, metrics)
        elif c == "threadspans":
            check_threadspans(ck, events, start, spans)
        elif c == "ccprofile":
            check_ccprofile(ck, events, start, profiles,
                            "ghc_eventlog_CostCentreStackProfile", service)
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main())
