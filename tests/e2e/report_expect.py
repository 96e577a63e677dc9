#!/usr/bin/env python3
"""Expected report figures computed from a `ghc-events show` text (the
.reference beside each shared eventlog): an independent decoder, read with
its own rules here, never with the report's code.

    report_expect.py X.eventlog.reference > expect.json

Prints one JSON object (null = the eventlog has no such data):
  peak_heap_size    largest "size of heap capset S: N bytes" (summed over
                    capsets at each event)
  censuses          "start heap prof sample" lines (HEAP_PROF_SAMPLE_BEGIN
                    and the biographical HEAP_BIO_PROF_SAMPLE_BEGIN)
  top_band          names of the band(s) with the most bytes summed over
                    all censuses (several when tied); the band of a string
                    sample is its label, of a cost-centre sample its stack's
                    cost-centre labels innermost first joined by "/" (a CAF
                    as "<module>.CAF"; "MAIN" when empty), as docs/report.md
                    defines them
  top_band_peak     that band's largest residency in one census
  gc_collections    stop-the-world collections: per capability, a GC span
                    runs from "starting GC" (the earliest, if repeated) to
                    the next "finished GC"; spans of all capabilities that
                    overlap are one collection
  gc_longest_pause_ns  the longest collection, first start to last end
  markers           "marker: " lines
  profile_samples   "prof sample" lines (PROF_SAMPLE_COST_CENTRE)
  heapprof_hint     with no census, a phrase the page's heap profile hint
                    must hold: "no census was taken" when a "start heap
                    profiling" line (HEAP_PROF_BEGIN) says profiling was on,
                    else the advice to run with "+RTS -hT -l"; null when
                    there are censuses
"""
import json
import re
import sys

EV = re.compile(r"^(\d+): (?:cap (\d+): )?(.*)$")
CC_DEF = re.compile(r"^cost centre (\d+) (.*?) in (\S+) at ")
SAMPLE_STR = re.compile(r"^heap prof sample \d+, residency (\d+), label (.*)$")
SAMPLE_CC = re.compile(
    r"^heap prof sample \d+, residency (\d+), cost centre stack ?(.*)$")
HEAP_SIZE = re.compile(r"^size of heap capset (\d+): (\d+) bytes$")


def events(path):
    """(time ns, cap or None, text) per event line, in stream order."""
    in_events = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line == "Events:":
                in_events = True
                continue
            if not in_events:
                continue
            m = EV.match(line)
            if m:
                cap = int(m.group(2)) if m.group(2) is not None else None
                yield int(m.group(1)), cap, m.group(3)


def gc_collections(spans):
    """Union of overlapping [start, end] intervals: (count, longest)."""
    spans.sort()
    count, longest = 0, 0
    cur = None
    for s, e in spans:
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
            continue
        if cur:
            count += 1
            longest = max(longest, cur[1] - cur[0])
        cur = [s, e]
    if cur:
        count += 1
        longest = max(longest, cur[1] - cur[0])
    return count, longest


def main(path):
    heap = {}                 # capset -> latest size
    peak_heap = None
    censuses = 0
    prof_begun = False
    cur = None                # band -> bytes of the open census
    bands = {}                # band -> [sum, peak]
    cc = {}                   # cost centre id -> label
    markers = 0
    prof_samples = 0
    gc_state = {}             # cap -> [state, t]
    gc_spans_by_cap = {}      # cap -> [(t, kind)] in time order

    def close_census():
        if cur:
            for b, v in cur.items():
                s = bands.setdefault(b, [0, 0])
                s[0] += v
                s[1] = max(s[1], v)

    for t, cap, text in events(path):
        m = HEAP_SIZE.match(text)
        if m:
            heap[int(m.group(1))] = int(m.group(2))
            total = sum(heap.values())
            peak_heap = total if peak_heap is None else max(peak_heap, total)
            continue
        if text.startswith("start heap profiling"):
            prof_begun = True
            continue
        if text.startswith("start heap prof sample"):
            close_census()
            censuses += 1
            cur = {}
            continue
        m = CC_DEF.match(text)
        if m:
            label, module = m.group(2), m.group(3)
            cc[int(m.group(1))] = module + ".CAF" if label == "CAF" else label
            continue
        m = SAMPLE_STR.match(text)
        if m:
            if cur is None:
                cur = {}
            cur[m.group(2)] = int(m.group(1))  # a repeated label replaces
            continue
        m = SAMPLE_CC.match(text)
        if m:
            ids = [int(x) for x in m.group(2).split(",") if x.strip()]
            name = "/".join(cc.get(i, "cc%d" % i) for i in ids) or "MAIN"
            if cur is None:
                cur = {}
            cur[name] = cur.get(name, 0) + int(m.group(1))
            continue
        if text.startswith("marker: "):
            markers += 1
            continue
        if re.match(r"^cap no \d+, prof sample \d+, cost centre stack", text):
            prof_samples += 1
            continue
        if cap is not None and text in ("starting GC", "finished GC"):
            gc_spans_by_cap.setdefault(cap, []).append((t, text[0] == "s"))
    close_census()

    spans = []
    for cap, evs in gc_spans_by_cap.items():
        evs.sort(key=lambda x: x[0])      # stable: stream order on ties
        state, st = None, 0
        for t, is_start in evs:
            if is_start:
                if state == "start" and st < t:
                    continue              # keep the earlier start
                state, st = "start", t
            elif state == "start":
                spans.append((st, t))
                state = "end"
    ncoll, longest = gc_collections(spans)

    top, top_peak = None, None
    if bands:
        best = max(v[0] for v in bands.values())
        top = sorted(b for b, v in bands.items() if v[0] == best)
        top_peak = bands[top[0]][1]
    out = {
        "peak_heap_size": peak_heap,
        "censuses": censuses,
        "heapprof_hint": None if censuses else
        "no census was taken" if prof_begun else
        "No heap profile: run the program with +RTS -hT -l",
        "top_band": top,
        "top_band_peak": top_peak,
        "gc_collections": ncoll,
        "gc_longest_pause_ns": longest if ncoll else None,
        "markers": markers,
        "profile_samples": prof_samples,
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
