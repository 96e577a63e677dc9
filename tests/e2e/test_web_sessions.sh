#!/usr/bin/env bash
# End-to-end: sessions in the Prometheus endpoint and the web view's
# /api/data (docs/web.md "Sessions").
#
# 1. A corrected resource: el_peer serves the GHC 9.0 oddball-hT over a
#    socket slowly (32 KiB every 250 ms, about 5 s), the daemon exports
#    every second, so metrics go out before the program's pid, arguments
#    and exact clock (its global buffer) arrive. Each label set must stay
#    one series: /metrics has one HeapAllocated series per capability and
#    one HeapSize series, all with process_pid, holding the last values of
#    the ghc-events .reference (an independent decoder); /api/data has as
#    many series, each holding the points from before the correction too.
#    Before the fix: 4 HeapAllocated series and a stale HeapSize one.
# 2. A reconnection: el_peer serves heapy-hT twice (two connections, two
#    sessions of the same program). The first session's threads must all
#    be over (Ended or Finished) and the second session must have its own
#    rows: one per thread the reference creates, each with the same
#    running time as the first session's row of that id within 0.1 %
#    (the same file: sums across sessions would double it). HeapAllocated: one series per
#    session in /api/data, none decreasing, the first one stale; /metrics
#    one series with the reference's last total.
# 3. GC pauses: oddball-hT served twice (two connections) makes more GC
#    spans than the 2000 the ring keeps: the 100 longest of the
#    reference's (starting GC .. finished GC per capability, twice) must
#    all be in /api/data's gc_pauses, and kept + forgotten = all of them.
# 4. The end of input: the daemon reads the first 31000 bytes of
#    heapy-hT (cut inside an event; its last complete event is at
#    436021129 ns, read once by hand with `eventlog-live show`). The
#    reference (ghc-events) creates threads 1-4 before that time and
#    finishes only thread 1 (2936968 ns; thread 4 finishes at 928948803
#    ns, 2 and 3 later): once the daemon says its input ended, /api/data
#    must list no thread Running or Blocked, thread 1 Finished and
#    threads 2, 3 and 4 Ended ("input ended (was ...)"). Before the fix:
#    Blocked/Running rows after the end (docs/web.md "Sessions").
# Exit 0 pass, 1 fail, 77 skip.
set -u
source "$(dirname "$0")/serve_lib.sh" web-sessions
ODD=$EVENTLOGS/ghc-9.0/oddball-hT.eventlog
HEAPY=$EVENTLOGS/ghc-9.0/heapy-hT.eventlog

[ -x "$PEER" ] || skip "no el_peer"
sv_option --web-port
[ -f "$ODD.reference" ] && [ -f "$HEAPY.reference" ] || skip "eventlogs missing"

# run NAME EVENTLOG PEER-ARGS...: el_peer serves EVENTLOG on a socket, the
# daemon reads it until the peer is gone, then /metrics and /api/data are
# fetched into $TMP/NAME.metrics and $TMP/NAME.json.
run() {
  local name=$1 log=$2
  shift 2
  rm -f "$TMP/s.sock" "$TMP/ready"
  timeout 120 "$PEER" --unix "$TMP/s.sock" --file "$log" "$@" \
    --ready-file "$TMP/ready" > "$TMP/$name.peer" 2>&1 &
  local peer=$!
  wait_line "$TMP/ready" . 20 || fail "$name: el_peer not ready"
  sv_daemon "$name" --eventlog-socket "$TMP/s.sock" \
    --eventlog-socket-timeout 0.05 --eventlog-socket-retries 0 -hT --traces \
    --service-name sess --export-interval 1s --prometheus-port 0 --web-port 0
  wait "$peer" || fail "$name: el_peer exited $?"
  sv_ended "$name"
  sv_port "$name" "Prometheus endpoint"
  sv_get "$name" "http://127.0.0.1:$PORT/metrics" "$TMP/$name.metrics"
  sv_port "$name" "web view"
  sv_get "$name" "http://127.0.0.1:$PORT/api/data" "$TMP/$name.json"
  stop_pid "$DPID"
}

run corrected "$ODD" --chunk 32768 --pace-ms 250
run reconnect "$HEAPY" --connections 2

run pauses "$ODD" --connections 2

head -c 31000 "$HEAPY" > "$TMP/cut.eventlog"
sv_daemon cut --eventlog-file "$TMP/cut.eventlog" -hT --traces \
  --service-name cut --export-interval 1s --web-port 0
sv_ended cut
sv_port cut "web view"
sv_get cut "http://127.0.0.1:$PORT/api/data" "$TMP/cut.json"
stop_pid "$DPID"

python3 - "$TMP" "$ODD.reference" "$HEAPY.reference" <<'EOF'
import json, re, sys
tmp, odd_ref, heapy_ref = sys.argv[1:4]
problems = []

def reference(path):
    """Last allocation total per capability, last heap size, the pid,
    threads created (ids) from a ghc-events show text."""
    alloc, size, pid, threads = {}, None, None, set()
    for line in open(path):
        m = re.search(r'cap (\d+): allocated on heap capset \d+: (\d+) total', line)
        if m: alloc[m.group(1)] = int(m.group(2))
        m = re.search(r'size of heap capset \d+: (\d+) bytes', line)
        if m: size = int(m.group(1))
        m = re.search(r'capset \d+: pid (\d+)', line)
        if m: pid = m.group(1)
        m = re.search(r'creating thread (\d+)', line)
        if m: threads.add(int(m.group(1)))
    return alloc, size, pid, threads

def prom(path, name):
    out = []
    for line in open(path):
        if line.startswith(name + '{'):
            labels, value = line.rsplit(' ', 1)
            out.append((dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels)),
                        float(value)))
    return out

def family(d, short):
    return next(f for f in d['metrics'] if f['name'].endswith(short))

# 1. the corrected resource
alloc, size, pid, _ = reference(odd_ref)
got = prom(f'{tmp}/corrected.metrics', 'ghc_eventlog_HeapAllocated_bytes_total')
if len(got) != len(alloc):
    problems.append(f'corrected: {len(got)} HeapAllocated series in /metrics, '
                    f'the reference has {len(alloc)} capabilities')
for labels, v in got:
    if labels.get('process_pid') != pid:
        problems.append(f'corrected: HeapAllocated series without pid {pid}: {labels}')
    want = alloc.get(labels.get('evCap'))
    if want != v:
        problems.append(f'corrected: HeapAllocated cap {labels.get("evCap")} = {v}, reference {want}')
got = prom(f'{tmp}/corrected.metrics', 'ghc_eventlog_HeapSize_bytes')
if [v for _, v in got] != [size] or got[0][0].get('process_pid') != pid:
    problems.append(f'corrected: HeapSize series {got}, want one with pid {pid} = {size}')
d = json.load(open(f'{tmp}/corrected.json'))
f = family(d, 'HeapAllocated')
if f['nseries'] != len(alloc):
    problems.append(f'corrected: /api/data has {f["nseries"]} HeapAllocated series, want {len(alloc)}')
for s in f['series']:
    pts = s['points']
    if len(pts) < 2 or pts[-1][1] != alloc.get(s['attrs'].get('evCap')):
        problems.append(f'corrected: /api/data series {s["attrs"]}: {len(pts)} points, '
                        f'last {pts[-1][1] if pts else None}')

# 2. the reconnection
alloc, size, pid, threads = reference(heapy_ref)
d = json.load(open(f'{tmp}/reconnect.json'))
rows = d['threads']
sessions = sorted({r.get('session') for r in rows}, key=str)
if sessions != [1, 2]:
    problems.append(f'reconnect: thread rows of sessions {sessions}, want [1, 2]')
first = {r['id']: r for r in rows if r.get('session') == 1}
second = {r['id']: r for r in rows if r.get('session') == 2}
for r in first.values():
    if r['state'] not in ('Ended', 'Finished'):
        problems.append(f'reconnect: thread {r["id"]} of the first session is {r["state"]}')
if set(second) != threads:
    problems.append(f'reconnect: second session rows {sorted(second)}, reference threads {sorted(threads)}')
for tid, r in second.items():
    # Unix ms as doubles near 1.8e12 are exact to 0.00025 ms: the sums of
    # the two sessions differ a little (a doubling is 100 %).
    a, b = first.get(tid, r)['running_ms'], r['running_ms']
    if abs(a - b) > 0.001 * max(a, b) + 0.01:
        problems.append(f'reconnect: thread {tid} ran {r["running_ms"]} ms in the second '
                        f'session, {first[tid]["running_ms"]} in the first (same eventlog)')
f = family(d, 'HeapAllocated')
by_session = {}
for s in f['series']:
    by_session.setdefault(s.get('session'), []).append(s)
    vals = [p[1] for p in s['points']]
    if any(b < a for a, b in zip(vals, vals[1:])):
        problems.append(f'reconnect: HeapAllocated series of session {s.get("session")} decreases')
if sorted(by_session, key=str) != [1, 2]:
    problems.append(f'reconnect: HeapAllocated series of sessions {sorted(by_session, key=str)}')
else:
    if not all(s['stale'] for s in by_session[1]) or any(s['stale'] for s in by_session[2]):
        problems.append('reconnect: the first session\'s series must be stale, the second\'s not')
    for s in by_session[1] + by_session[2]:
        if s['points'][-1][1] != alloc.get(s['attrs'].get('evCap')):
            problems.append(f'reconnect: session {s["session"]} ends at {s["points"][-1][1]}, '
                            f'reference {alloc}')
got = prom(f'{tmp}/reconnect.metrics', 'ghc_eventlog_HeapAllocated_bytes_total')
if sorted(v for _, v in got) != sorted(alloc.values()):
    problems.append(f'reconnect: /metrics HeapAllocated {got}, reference {alloc}')

# 3. the longest GC pauses
start, durs = {}, []
for line in open(odd_ref):
    m = re.match(r'(\d+): cap (\d+): (starting|finished) GC', line)
    if not m: continue
    t, cap = int(m.group(1)), m.group(2)
    if m.group(3) == 'starting':
        start.setdefault(cap, t)
    elif cap in start:
        durs += [(t - start.pop(cap)) / 1e6] * 2  # two sessions
d = json.load(open(f'{tmp}/pauses.json'))
got = sorted((p[1] for p in d['gc_pauses']), reverse=True)
want = sorted(durs, reverse=True)
if len(d['gc_pauses']) + d.get('gc_pauses_forgotten', 0) != len(durs):
    problems.append(f'pauses: {len(d["gc_pauses"])} kept + {d.get("gc_pauses_forgotten")} '
                    f'forgotten, the reference has {len(durs)} GC spans')
if len(durs) <= 2000:
    problems.append(f'pauses: only {len(durs)} GC spans: the test needs more than 2000')
# Unix ms as doubles near 1.8e12 are exact to 0.00025 ms
bad = [(g, w) for g, w in zip(got[:100], want[:100]) if abs(g - w) > 0.002]
if len(got) < 100 or bad:
    problems.append(f'pauses: the 100 longest differ from the reference\'s: {bad[:5]}')

# 4. the end of input (times in ns, RTS clock, from the reference)
CUT_NS = 436021129
created, finished = set(), set()
for line in open(heapy_ref):
    m = re.match(r'(\d+): cap \d+: (creating|stopping) thread (\d+)( \(thread finished\))?', line)
    if not m or int(m.group(1)) > CUT_NS: continue
    if m.group(2) == 'creating': created.add(int(m.group(3)))
    elif m.group(4): finished.add(int(m.group(3)))
d = json.load(open(f'{tmp}/cut.json'))
if not d.get('ended'):
    problems.append('cut: /api/data is not "ended"')
states = {r['id']: r['state'] for r in d['threads']}
want_states = {t: 'Finished' if t in finished else 'Ended' for t in created}
if want_states != {1: 'Finished', 2: 'Ended', 3: 'Ended', 4: 'Ended'}:
    problems.append(f'cut: the reference gives {want_states}, by hand 1 Finished, 2-4 Ended')
if states != want_states:
    problems.append(f'cut: thread states {states} after the end of input, want {want_states}')
for r in d['threads']:
    if r['state'] == 'Ended' and not (r['status'] or '').startswith('input ended (was '):
        problems.append(f'cut: thread {r["id"]} Ended with status {r["status"]}')

for p in problems:
    print('FAIL:', p)
sys.exit(1 if problems else 0)
EOF
rc=$?
[ $rc = 0 ] || fail "see above"
echo "PASS: corrected resource re-keyed; sessions cut; threads ended with the input"
