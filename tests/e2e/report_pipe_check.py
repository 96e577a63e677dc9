#!/usr/bin/env python3
"""Check the data of a report read through a pipe (tests/e2e/
test_report_pipe.sh):

  report_pipe_check.py PIPE.html FILE.html A.reference B.reference
  report_pipe_check.py --after PIPE.html FILE.html B.reference

PIPE.html is the report of eventlogs A and B concatenated and piped into
`eventlog-live report -`, FILE.html the report of the same bytes as a
file. The data each page embeds (<script id="el-data">, docs/report.md
"Data") is read and checked:

  * against the file's page: every part of the data but what names the
    input and measures the run (title, input, generated_unix_ms, stats'
    elapsed_s and peak_mem_bytes) must be equal: a pipe is read as the
    program wrote it, so it must end on the page as the file does;
  * against the inputs' ghc-events references (an independent decoder):
    each session's RTS start is its WALL_CLOCK_TIME's Unix time minus the
    event's time; the sessions lie there on the page's axis, which
    (range) runs from 0 (the first session's start) to the second
    session's last event (its last record, within 10 ms); the heap size
    and live data charts have one point per HEAP_SIZE / HEAP_LIVE event,
    their peaks are the largest value, reached at an event with that
    value; every column of the heap charts lies within a session; the
    bytes allocated are each capability's last total summed; each heap
    census lies within 1 ms after a census begin.

With --after, the input is a session without WALL_CLOCK_TIME (a killed
GHC 9.0 run, cut) followed by B: the page's data must equal the file's as
above, the header's session estimated from the next session's start in
both (clock_from "next_session": before, "arrival" through the pipe and
"file_mtime" for the file, neither of which placed it); and, from B's
reference: the first session starts at 0 and ends
where B's RTS starts (its WALL_CLOCK_TIME's Unix time minus the event's
time, origin_unix_ns + the second span's start), within 10 ms after its
end (its last record; the session's largest time may be a block's end),
and the axis runs from the first session's first record (within 10 ms
of its start) to B's last event (within 10 ms).

Prints what failed; exit 0 pass, 1 fail."""
import json
import re
import sys

from report_data import page_data

EVENT = re.compile(r'\s*(\d+): ')
WALL = re.compile(r'\s*(\d+): .*wall clock time (\d+)s (\d+)ns')
SIZE = re.compile(r'\s*(\d+): cap \d+: size of heap capset \d+: (\d+) bytes')
LIVE = re.compile(
    r'\s*(\d+): cap \d+: live data in heap capset \d+: (\d+) bytes')
ALLOC = re.compile(
    r'\s*\d+: cap (\d+): allocated on heap capset \d+: (\d+) total bytes')
CENSUS = re.compile(r'\s*(\d+): start heap prof sample')


def session(path):
    s = {'start': None, 'last': 0, 'size': [], 'live': [], 'alloc': {},
         'census': []}
    events = False
    for line in open(path, encoding='utf-8', errors='replace'):
        if line.startswith('Events:'):
            events = True
            continue
        if not events:
            continue
        m = EVENT.match(line)
        if m:
            s['last'] = max(s['last'], int(m.group(1)))
        m = WALL.match(line)
        if m and s['start'] is None:
            t, sec, ns = map(int, m.groups())
            s['start'] = sec * 10**9 + ns - t
        for key, rx in (('size', SIZE), ('live', LIVE)):
            m = rx.match(line)
            if m:
                s[key].append((int(m.group(1)), int(m.group(2))))
        m = ALLOC.match(line)
        if m:
            s['alloc'][m.group(1)] = int(m.group(2))
        m = CENSUS.match(line)
        if m:
            s['census'].append(int(m.group(1)))
    return s


def after(p, ref, bad):
    """The first session (no WALL_CLOCK_TIME) ends where B starts."""
    b = session(ref)
    origin = int(p['origin_unix_ns'])
    sp = sorted(p['spans'], key=lambda s: s['number'])
    if len(sp) != 2:
        bad.append(f'{len(sp)} sessions on the axis, want 2')
        return
    want = (b['start'] - origin) / 1e9
    if abs(sp[1]['start'] - want) > 2e-6:
        bad.append(f'the second session starts at {sp[1]["start"]} s, want '
                   f'{want:.6f} (its WALL_CLOCK_TIME)')
    if abs(sp[0]['start']) > 2e-6 or not (
            sp[1]['start'] - 0.01 <= sp[0]['end'] <= sp[1]['start']):
        bad.append(f'the first session at [{sp[0]["start"]}, '
                   f'{sp[0]["end"]}] s, want [0, up to '
                   f'{sp[1]["start"]}] ending within 10 ms of the second')
    end = (b['start'] + b['last'] - origin) / 1e9
    rng = p['range']
    if not 0 <= rng[0] < 0.01 or not end - 0.01 <= rng[1] <= end + 2e-6:
        bad.append(f'range {rng}, want [0, {end:.6f}] (the first record '
                   f'may come after the RTS start, the last before the end, '
                   f'by up to 10 ms)')


def main():
    args = sys.argv[1:]
    joined = args[0] == '--after'
    if joined:
        args = args[1:]
    pipe, file_, refs = args[0], args[1], args[2:]
    p, f = page_data(pipe), page_data(file_)
    bad = []

    # The file's page.
    if joined:
        for d, name in ((p, 'the pipe'), (f, 'the file')):
            got = d['session'].get('clock_from')
            if got != 'next_session' or d['session'].get('clock') != 'estimated':
                bad.append(f'{name}: session clock {d["session"].get("clock")} '
                           f'from {got}, want estimated from next_session')
    for k in sorted(set(p) | set(f)):
        if k in ('title', 'input', 'generated_unix_ms', 'stats'):
            continue
        if p.get(k) != f.get(k):
            bad.append(f'{k} differs from the file\'s report: '
                       f'{json.dumps(p.get(k))[:300]} vs '
                       f'{json.dumps(f.get(k))[:300]}')
    ps, fs = dict(p['stats']), dict(f['stats'])
    for d in (ps, fs):
        d.pop('elapsed_s', None)
        d.pop('peak_mem_bytes', None)
    if ps != fs:
        bad.append(f'stats differ: {ps} vs {fs}')

    if joined:
        after(p, refs[0], bad)
        for b in bad:
            print('FAIL:', b)
        print(json.dumps({'range': p['range'], 'problems': len(bad)}))
        return 1 if bad else 0

    # The references.
    ss = [session(r) for r in refs]
    origin = ss[0]['start']

    def axis(s, t):
        return (s['start'] + t - origin) / 1e9

    spans = [(axis(s, 0), axis(s, s['last'])) for s in ss]
    rng = p['range']
    end = spans[-1][1]
    if abs(rng[0]) > 2e-6 or not end - 0.01 <= rng[1] <= end + 2e-6:
        bad.append(f'range {rng}, want [0, {end:.6f}] (the second session '
                   f'ends there; its last records up to 10 ms before)')
    got = [(s['start'], s['end']) for s in p['spans']]
    if len(got) != len(spans) or any(
            abs(a - c) > 2e-6 or abs(b - d) > 2e-6
            for (a, b), (c, d) in zip(got, spans)):
        bad.append(f'sessions at {got}, want {spans}')
    series = {s['key']: s for s in p['heap']['series']}
    for key, ref in (('HeapSize', 'size'), ('HeapLive', 'live')):
        pts = [(axis(s, t), v) for s in ss for t, v in s[ref]]
        got = series.get(key)
        if not got:
            bad.append(f'no {key} series')
            continue
        if got['points'] != len(pts):
            bad.append(f'{key}: {got["points"]} points, want {len(pts)}')
        peak = max(v for _, v in pts)
        if got['peak'] != peak:
            bad.append(f'{key}: peak {got["peak"]}, want {peak}')
        if not any(v == peak and abs(t - got['peak_t']) <= 2e-6
                   for t, v in pts):
            bad.append(f'{key}: peak at {got["peak_t"]} s, no event of '
                       f'{peak} bytes there')
    w = p['heap']['width_s']
    if w > 0.1:
        bad.append(f'heap columns {w} s wide: the axis is too long')
    for t in p['heap']['t']:
        if not any(a - w <= t <= b + w for a, b in spans):
            bad.append(f'a heap column at {t} s, outside both sessions '
                       f'{spans}')
            break
    alloc = sum(sum(s['alloc'].values()) for s in ss)
    got = series.get('HeapAllocated', {}).get('total')
    if got != alloc:
        bad.append(f'HeapAllocated total {got}, want {alloc}')
    begins = [axis(s, t) for s in ss for t in s['census']]
    hp = p['heapprof']
    if len(hp['t']) != len(begins):
        bad.append(f'{len(hp["t"])} heap censuses, want {len(begins)}')
    for t in hp['t']:
        if not any(0 <= t - b <= 1e-3 for b in begins):
            bad.append(f'a heap census at {t} s, not after a census begin')
            break

    for b in bad:
        print('FAIL:', b)
    print(json.dumps({'range': rng, 'heap_columns': len(p['heap']['t']),
                      'censuses': len(hp['t']), 'problems': len(bad)}))
    return 1 if bad else 0


sys.exit(main())
