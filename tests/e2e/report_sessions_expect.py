#!/usr/bin/env python3
"""What the report of eventlogs A and B concatenated must show, from their
ghc-events references (`ghc-events show`, an independent decoder):

  report_sessions_expect.py A.reference B.reference > expect.json

Per session (the inputs in file order): its RTS start (Unix ns: the
WALL_CLOCK_TIME event's Unix time minus its eventlog time), its end (the
start plus its last event's time), its threads (CREATE_THREAD: id and
time); and the bytes allocated over both (each capability's last
HEAP_ALLOCATED total, summed per session). Times in the output are
seconds on the page's axis, since the earliest session's RTS start."""
import json
import re
import sys

WALL = re.compile(r'\s*(\d+): .*wall clock time (\d+)s (\d+)ns')
CREATE = re.compile(r'\s*(\d+): cap \d+: creating thread (\d+)')
ALLOC = re.compile(
    r'\s*\d+: cap (\d+): allocated on heap capset \d+: (\d+) total bytes')
EVENT = re.compile(r'\s*(\d+): ')


def session(path):
    start, last, threads, alloc = None, 0, [], {}
    events = False
    for line in open(path, encoding='utf-8', errors='replace'):
        if line.startswith('Events:'):
            events = True
            continue
        if not events:
            continue
        m = EVENT.match(line)
        if m:
            last = max(last, int(m.group(1)))
        m = WALL.match(line)
        if m and start is None:
            t, s, ns = map(int, m.groups())
            start = s * 10**9 + ns - t
        m = CREATE.match(line)
        if m:
            threads.append((int(m.group(2)), int(m.group(1))))
        m = ALLOC.match(line)
        if m:
            alloc[m.group(1)] = int(m.group(2))
    return {'start': start, 'last': last, 'threads': threads,
            'allocated': sum(alloc.values())}


def main():
    ss = [session(p) for p in sys.argv[1:]]
    origin = min(s['start'] for s in ss)
    out = {'sessions': [], 'threads': [], 'allocated': 0}
    for n, s in enumerate(ss, 1):
        out['sessions'].append({'number': n,
                                'start': (s['start'] - origin) / 1e9,
                                'end': (s['start'] + s['last'] - origin) / 1e9})
        for tid, t in s['threads']:
            out['threads'].append(
                [n, tid, (s['start'] + t - origin) / 1e9])
        out['allocated'] += s['allocated']
    json.dump(out, sys.stdout)


main()
