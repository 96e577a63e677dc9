#!/usr/bin/env python3
"""Independent figures for tests/e2e/test_time_order.sh, from the text
`ghc-events show` printed for an eventlog (its .reference file), whose
events section ghc-events sorts by time.

  time_order_expect.py markers REFERENCE
      one line per USER_MARKER, in time order: "t<TAB>text<TAB>bytes", bytes
      = the growth of the process's allocation total (the sum of every
      capability's latest HEAP_ALLOCATED running total) since the previous
      marker (the first: since the start).
  time_order_expect.py allocs REFERENCE
      every HEAP_ALLOCATED as "t<TAB>cap<TAB>bytes", sorted.
  time_order_expect.py gcheap REFERENCE
      every GC_START ("starting GC") and HEAP_PROF_SAMPLE_STRING ("heap
      prof sample ...") as "t<TAB>GC_START" or "t<TAB>HEAP_PROF_SAMPLE_STRING",
      sorted by (time, name).
"""
import re
import sys

EVENT = re.compile(r"^(\d+): (?:cap (\d+): )?(.*)$")
ALLOC = re.compile(r"^allocated on heap capset \d+: (\d+) total bytes till now$")
MARKER = re.compile(r"^marker: (.*)$")


def events(path):
    """(t, cap or None, text) of the events section, sorted by time."""
    out, inside = [], False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("Events:"):
                inside = True
                continue
            m = EVENT.match(line) if inside else None
            if m:
                cap = int(m.group(2)) if m.group(2) is not None else None
                out.append((int(m.group(1)), cap, m.group(3)))
    out.sort(key=lambda e: e[0])  # stable: ties keep ghc-events' order
    return out


def markers(path):
    latest, prev = {}, 0
    for t, cap, text in events(path):
        a = ALLOC.match(text)
        if a:
            latest[cap] = int(a.group(1))
            continue
        m = MARKER.match(text)
        if m:
            total = sum(latest.values())
            print(f"{t}\t{m.group(1)}\t{total - prev}")
            prev = total


def gcheap(path):
    rows = []
    for t, cap, text in events(path):
        if text == "starting GC":
            rows.append((t, "GC_START"))
        elif text.startswith("heap prof sample "):
            rows.append((t, "HEAP_PROF_SAMPLE_STRING"))
    for r in sorted(rows):
        print("\t".join(map(str, r)))


def allocs(path):
    rows = []
    for t, cap, text in events(path):
        a = ALLOC.match(text)
        if a:
            rows.append((t, -1 if cap is None else cap, int(a.group(1))))
    for r in sorted(rows):
        print("\t".join(map(str, r)))


if __name__ == "__main__":
    {"markers": markers, "allocs": allocs, "gcheap": gcheap}[sys.argv[1]](sys.argv[2])
