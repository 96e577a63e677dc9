#!/usr/bin/env python3
"""Checks for tests/e2e/test_producer_*.sh: what the test receiver got
(tests/receiver JSON lines, each with its arrival time `time_ms`) against
what the program tests/haskell/live_socket printed on stdout, an
independent channel:

    start <unix_ns> <pid>
    marker <i> <unix_ns> <TAG> tick <i>
    control live-test <id> <unix_ns> <TAG> live-test <id> handled <n>
    end <unix_ns>

Subcommands (each prints "ok: ..." / "FAIL: ..." lines and exits 1 if a
check failed):

  live      markers and heap metrics arrived while the program ran, with
            the right times (issue 11); /metrics served HeapSize; every
            marker in the daemon's raw input (--tee) was exported
  killed    the markers of a program killed with SIGKILL carry its times
  messages  the user messages answering custom control commands arrived
  profstream  cost-centre samples stop after stop-profiling and resume
            after start-profiling (a decoded eventlog stream)
"""
import argparse
import json
import re
import statistics
import sys

BAD = 0


def check(what, ok, detail=None):
    global BAD
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        BAD += 1
        if detail:
            for line in detail:
                print("    " + line)
    return ok


def read_program(path):
    """The program's stdout: start, end (unix ns), pid, markers {i: (ns,
    text)}, control lines [(id, ns, text)]."""
    p = {"start": None, "end": None, "pid": None, "markers": {},
         "control": []}
    for line in open(path, errors="replace"):
        w = line.split()
        if not w:
            continue
        if w[0] == "start" and len(w) >= 3:
            p["start"], p["pid"] = int(w[1]), w[2]
        elif w[0] == "end" and len(w) >= 2:
            p["end"] = int(w[1])
        elif w[0] == "marker" and len(w) >= 4:
            p["markers"][int(w[1])] = (int(w[2]), " ".join(w[3:]))
        elif w[0] == "control" and len(w) >= 5:
            p["control"].append((int(w[2]), int(w[3]), " ".join(w[4:])))
    return p


def attrs(kvs):
    out = {}
    for kv in kvs or []:
        v = kv.get("value") or {}
        out[kv["key"]] = next(iter(v.values()), None) if v else None
    return out


def read_received(path):
    """Log records and metric points with the arrival time of their
    request: logs [(arrival_ms, service, resource_attrs, record_attrs,
    body, time_ns)], metrics [(arrival_ms, service, name, [point time_ns])],
    counts by signal."""
    logs, metrics, counts = [], [], {}
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        sig = r.get("signal")
        counts[sig] = counts.get(sig, 0) + 1
        at = int(r.get("time_ms") or 0)
        req = r.get("request") or {}
        for rl in req.get("resourceLogs", []):
            ra = attrs((rl.get("resource") or {}).get("attributes"))
            for sl in rl.get("scopeLogs", []):
                for lr in sl.get("logRecords", []):
                    logs.append((at, ra.get("service.name"), ra,
                                 attrs(lr.get("attributes")),
                                 (lr.get("body") or {}).get("stringValue"),
                                 int(lr.get("timeUnixNano") or 0)))
        for rm in req.get("resourceMetrics", []):
            ra = attrs((rm.get("resource") or {}).get("attributes"))
            for sm in rm.get("scopeMetrics", []):
                for m in sm.get("metrics", []):
                    body = m.get("gauge") or m.get("sum") or {}
                    metrics.append((at, ra.get("service.name"), m["name"],
                                    [int(d.get("timeUnixNano") or 0)
                                     for d in body.get("dataPoints", [])]))
    return logs, metrics, counts


def tee_texts(path, pattern, offsets=False):
    """Texts of the complete user markers / messages in the raw stream the
    daemon received (its --eventlog-log-file), found by their bytes: a
    variable-size event's payload is a 2-byte big-endian length and, for
    USER_MARKER and USER_MSG, the text itself. Independent of our decoder.
    pattern: a regex (bytes) for the text. Returns the list of texts, or
    with offsets, of (byte offset of the length field, text)."""
    data = open(path, "rb").read()
    out = []
    for m in re.finditer(rb"(?s)(..)(" + pattern + rb")", data):
        if int.from_bytes(m.group(1), "big") == len(m.group(2)):
            t = m.group(2).decode()
            out.append((m.start(), t) if offsets else t)
    return out


# The decoder's report of a corrupt part it skipped (docs/eventlog.md,
# Resynchronisation): "skipped N bytes (A to B) to ..." or, when the tail
# of a cut event after the block marker at B was skipped too, "skipped N
# bytes (A to B, and after the marker the tail of a cut event) to ...".
# Offsets count every byte the daemon's decoder was fed, i.e. tee offsets.
PART_RE = re.compile(r"corrupt stream: .*?; skipped (\d+) bytes? "
                     r"\((\d+) to (\d+)(, and after the marker)?")


def corrupt_parts(err_path):
    """[(from, to)] byte ranges of the tee the daemon reported as skipped
    corrupt parts on its stderr."""
    parts = []
    if not err_path:
        return parts
    for line in open(err_path, errors="replace"):
        m = PART_RE.search(line)
        if not m:
            continue
        n, a, b = int(m.group(1)), int(m.group(2)), int(m.group(3))
        parts.append((a, b))
        if m.group(4):
            parts.append((b + 24, b + 24 + n - (b - a)))
    return parts


def tee_check(name, tee, tag, got_bodies, daemon_err=None):
    """Every marker of TAG that reached the daemon was exported, except
    those inside a corrupt part the daemon reported skipping (the real
    producer on GHC 9.0 damages blocks when it restarts event logging:
    their bytes are there but cannot be framed)."""
    pat = re.escape(tag.encode()) + rb" tick \d+"
    parts = corrupt_parts(daemon_err)
    seen, lost = set(), set()
    for off, text in tee_texts(tee, pat, offsets=True):
        if any(a <= off < b for a, b in parts):
            lost.add(text)
        else:
            seen.add(text)
    key = lambda t: int(t.split()[-1])
    missing = sorted(seen - set(got_bodies), key=key)
    if parts:
        print(f"    (the daemon reported {len(parts)} skipped corrupt "
              f"range(s) {parts}; markers inside them, not required: "
              f"{sorted(lost, key=key)})")
    check(f"{name}: every one of the {len(seen)} markers in the bytes "
          f"the daemon received (its --eventlog-log-file) outside the "
          f"corrupt parts it reported was exported (missing: {missing})",
          not missing)


def rel(ns, base_ns):
    return "%.1fs" % ((ns - base_ns) / 1e9)


def live(a):
    prog = read_program(a.out)
    logs, metrics, counts = read_received(a.received)
    n = len(prog["markers"])
    start, end = prog["start"], prog["end"]
    if not check(f"{a.name}: the program printed start, {a.seconds} markers "
                 f"and end", start and end and n == a.seconds,
                 [open(a.out).read()[-2000:]]):
        return
    end_ms = end / 1e6
    print(f"  program: pid {prog['pid']}, ran {(end - start) / 1e9:.1f} s; "
          f"receiver: {counts or 'nothing'}")

    # Markers: body "<TAG> tick <i>", kind UserMarker, service app.
    pat = re.compile(re.escape(a.tag) + r" tick (\d+)$")
    got = {}   # i -> [(arrival_ms, time_ns, service, resource)]
    for at, svc, ra, la, body, tns in logs:
        m = pat.match(body or "")
        if m and la.get("kind") == "UserMarker":
            got.setdefault(int(m.group(1)), []).append((at, tns, svc, ra))
    rows = []
    for i in sorted(prog["markers"]):
        pns, _ = prog["markers"][i]
        arr = got.get(i, [])
        rows.append("marker %2d: printed at %s, arrived %s, time - printed %s"
                    % (i, rel(pns, start),
                       ",".join(rel(x[0] * 1e6, start) for x in arr) or "-",
                       ",".join("%+.1f ms" % ((x[1] - pns) / 1e6) if x[1]
                                else "0 (no time)" for x in arr) or "-"))
    live_n = sum(1 for i, arr in got.items()
                 if i in prog["markers"] and min(x[0] for x in arr) <= end_ms)
    need = (n + 1) // 2
    check(f"{a.name}: {live_n} of the {n} markers reached the receiver "
          f"before the program exited (at least {need} needed)",
          live_n >= need, rows)
    unknown = sorted(i for i in got if i not in prog["markers"])
    check(f"{a.name}: no marker the program did not print "
          f"(unexpected: {unknown})", not unknown)
    dup = sorted(i for i, arr in got.items() if len(arr) > 1)
    check(f"{a.name}: no marker arrived twice (twice: {dup})", not dup, rows)
    zero = sorted(i for i, arr in got.items() for x in arr if not x[1])
    check(f"{a.name}: every marker received has a timeUnixNano (0 in: "
          f"{zero})", not zero)
    diffs = [abs(x[1] - prog["markers"][i][0])
             for i, arr in got.items() if i in prog["markers"] for x in arr]
    if diffs:
        med = statistics.median(diffs)
        check(f"{a.name}: timeUnixNano of the {len(diffs)} markers received "
              f"within 1 s (median) of the printed wall-clock time: median "
              f"{med / 1e6:.1f} ms, max {max(diffs) / 1e6:.1f} ms",
              med <= 1e9, rows)
    else:
        check(f"{a.name}: timeUnixNano of the markers within 1 s (median) of "
              f"the printed wall-clock time: no marker received", False, rows)
    if a.window:
        # A restarted program: its markers must carry its own times, not
        # those of the program before it on the same socket.
        out = [(i, x[1]) for i, arr in got.items() for x in arr
               if not (start - 3e9 <= x[1] <= end + 3e9)]
        check(f"{a.name}: every marker's time lies within this run "
              f"[start - 3 s, end + 3 s] (outside: "
              f"{[(i, rel(t, start)) for i, t in out]})",
              bool(got) and not out, rows)
    svcs = sorted({str(x[2]) for arr in got.values() for x in arr})
    check(f"{a.name}: markers carry service.name app ({svcs})",
          bool(got) and svcs == ["app"])
    pids = sorted({str(x[3].get("process.pid")) for arr in got.values()
                   for x in arr if x[3].get("process.pid") is not None})
    check(f"{a.name}: no marker carries another process's process.pid "
          f"({pids}, the program's {prog['pid']})",
          all(p == prog["pid"] for p in pids))

    # Heap metrics from the capabilities' GC events, dated inside this run
    # (a point of an earlier program on the same socket does not count).
    lo, hi = start - 2e9, end + 2e9
    heap = [(at, name, ts) for at, svc, name, ts in metrics
            if name in ("ghc_eventlog_HeapSize", "ghc_eventlog_HeapLive")
            and ts and svc == "app"]
    ours = [(at, t) for at, _, ts in heap for t in ts if lo <= t <= hi]
    early = [x for x in ours if x[0] <= end_ms]
    first = min((x[0] for x in ours), default=None)
    times = [rel(t, start) for t in sorted({t for _, _, ts in heap
                                            for t in ts})]
    check(f"{a.name}: a HeapSize or HeapLive point dated in this run reached "
          f"the receiver before the program exited ({len(early)} of "
          f"{len(ours)} such points; first arrived at "
          f"{rel(first * 1e6, start) if first else '-'})", bool(early),
          [f"heap points received (dated, from the start): {len(times)}: "
           + ", ".join(times[:12]) + (" ..." if len(times) > 12 else "")])

    if a.tee:
        tee_check(a.name, a.tee, a.tag,
                  [body for _, _, _, la, body, _ in logs
                   if la.get("kind") == "UserMarker"], a.daemon_err)

    if a.metrics:
        polls = []
        for line in open(a.metrics):
            w = line.split(None, 1)
            if len(w) == 2:
                polls.append((int(w[0]), w[1].strip()))
        during = [p for p in polls if start / 1e6 <= p[0] <= end_ms]
        served = [p for p in during if p[1] != "none"]
        check(f"{a.name}: /metrics served ghc_eventlog_HeapSize_bytes while "
              f"the program ran ({len(served)} of {len(during)} scrapes; "
              f"first: {served[0][1] if served else '-'})", bool(served))


def killed(a):
    """A program killed after its marker K: its markers that arrived carry
    its own times and were not doubled; every one of them the daemon
    received was exported."""
    prog = read_program(a.out)
    logs, _, counts = read_received(a.received)
    start = prog["start"]
    last = max(prog["markers"]) if prog["markers"] else 0
    kill_ns = a.killed_ms * 1e6
    pat = re.compile(re.escape(a.tag) + r" tick (\d+)$")
    got = {}
    for at, svc, ra, la, body, tns in logs:
        m = pat.match(body or "")
        if m and la.get("kind") == "UserMarker":
            got.setdefault(int(m.group(1)), []).append((at, tns))
    before = sorted(i for i, arr in got.items()
                    if min(x[0] for x in arr) <= a.killed_ms)
    print(f"  {a.name}: printed markers 1..{last}, killed at "
          f"{rel(kill_ns, start)}; received {sorted(got)} ({before} before "
          f"the kill)")
    unknown = sorted(i for i in got if i not in prog["markers"])
    check(f"{a.name}: no marker the program did not print ({unknown})",
          not unknown)
    dup = sorted(i for i, arr in got.items() if len(arr) > 1)
    check(f"{a.name}: no marker arrived twice ({dup})", not dup)
    out = [(i, rel(x[1], start)) for i, arr in got.items() for x in arr
           if not (start - 3e9 <= x[1] <= kill_ns + 3e9)]
    check(f"{a.name}: every marker received carries a time of this run "
          f"[start - 3 s, kill + 3 s] (outside: {out})", not out)
    diffs = [abs(x[1] - prog["markers"][i][0])
             for i, arr in got.items() if i in prog["markers"] for x in arr]
    if diffs:
        med = statistics.median(diffs)
        check(f"{a.name}: their times within 1 s (median) of the printed "
              f"ones: median {med / 1e6:.1f} ms", med <= 1e9)
    tee_check(a.name, a.tee, a.tag,
              [body for _, _, _, la, body, _ in logs
               if la.get("kind") == "UserMarker"], a.daemon_err)


def messages(a):
    prog = read_program(a.out)
    logs, _, counts = read_received(a.received)
    end_ms = (prog["end"] or 0) / 1e6
    for want in a.want:
        printed = [c for c in prog["control"] if c[2] == want]
        check(f"{a.name}: the program handled the command and printed "
              f"{want!r}", bool(printed),
              [l.rstrip() for l in open(a.out) if l.startswith("control")])
        got = [(at, tns) for at, svc, ra, la, body, tns in logs
               if body == want and la.get("kind") == "UserMessage"]
        when = (", ".join("arrived %s, time - printed %+d ms"
                          % (rel(at * 1e6, prog["start"]),
                             (tns - printed[0][1]) / 1e6)
                          for at, tns in got) if got and printed else "-")
        check(f"{a.name}: UserMessage {want!r} reached the receiver ({when})",
              len(got) == 1,
              [f"receiver: {counts}", "user messages received: "
               + repr([b for _, _, _, la, b, _ in logs
                       if la.get("kind") == "UserMessage"])])
        if got and a.before_exit:
            check(f"{a.name}: ... before the program exited",
                  got[0][0] <= end_ms)


def profstream(a):
    """A decoded stream (eventlog-live show --json of the daemon's tee):
    PROF_SAMPLE_COST_CENTRE events before the user message STOP (sent right
    after stop-profiling), none between STOP and STILL (sent just before
    start-profiling), some after START (sent right after it)."""
    ev = []
    for line in open(a.stream):
        try:
            ev.append(json.loads(line))
        except ValueError:
            continue

    def msg_t(text):
        ts = [e["t_ns"] for e in ev if e["name"] == "USER_MSG"
              and (e.get("fields") or {}).get("text") == text]
        return ts[0] if ts else None
    t_stop, t_still, t_start = msg_t(a.stop), msg_t(a.still), msg_t(a.start)
    samples = [e["t_ns"] for e in ev if e["name"] == "PROF_SAMPLE_COST_CENTRE"]
    print(f"  stream: {len(samples)} cost-centre samples; RTS times of the "
          f"marks: {a.stop!r} {t_stop}, {a.still!r} {t_still}, {a.start!r} "
          f"{t_start}")
    if not check(f"{a.name}: the three marks are in the stream",
                 None not in (t_stop, t_still, t_start),
                 ["user messages: " + repr(
                     [(e.get("fields") or {}).get("text")
                      for e in ev if e["name"] == "USER_MSG"])]):
        return
    before = sum(1 for t in samples if t < t_stop)
    between = [t for t in samples if t_stop < t < t_still]
    after = sum(1 for t in samples if t > t_start)
    gap = (t_still - t_stop) / 1e9
    check(f"{a.name}: cost-centre samples before stop-profiling: {before}",
          before > 0)
    check(f"{a.name}: none in the {gap:.1f} s after stop-profiling: "
          f"{len(between)}", not between and gap >= 1,
          [f"at {(t - t_stop) / 1e9:.3f} s" for t in between[:5]])
    # The samples after START sit, like every event without a
    # capability, in GHC 9.0's global buffer, which reaches the daemon when
    # the census burst at exit fills it, if eventlog-socket sends it before
    # the exit cuts the connection (it sometimes does not: docs/sources.md,
    # the cut at exit). With no global event after START in the stream
    # there is nothing to look at: said, not failed. With one other than
    # the samples (a census, the RTS's exit events), the samples must be
    # there.
    late_other = sum(1 for e in ev
                     if e.get("cap") is None and e["t_ns"] > t_start
                     and e["name"] != "PROF_SAMPLE_COST_CENTRE")
    if not after and not late_other:
        print(f"SKIP: {a.name}: samples again after start-profiling: no "
              f"event of the global buffer after {a.start!r} reached the "
              f"daemon (the connection was cut at exit before it)")
        return
    check(f"{a.name}: samples again after start-profiling: {after} "
          f"({late_other} other global events after it)", after > 0)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("live")
    p.add_argument("--name", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--received", required=True)
    p.add_argument("--metrics")
    p.add_argument("--tag", required=True)
    p.add_argument("--seconds", type=int, required=True)
    p.add_argument("--window", action="store_true")
    p.add_argument("--tee")
    p.add_argument("--daemon-err")
    p = sub.add_parser("killed")
    p.add_argument("--name", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--received", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--tee", required=True)
    p.add_argument("--daemon-err")
    p.add_argument("--killed-ms", type=int, required=True)
    p = sub.add_parser("messages")
    p.add_argument("--name", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--received", required=True)
    p.add_argument("--before-exit", action="store_true")
    p.add_argument("want", nargs="+")
    p = sub.add_parser("profstream")
    p.add_argument("--name", required=True)
    p.add_argument("--stream", required=True)
    p.add_argument("--stop", required=True)
    p.add_argument("--still", required=True)
    p.add_argument("--start", required=True)
    a = ap.parse_args()
    {"live": live, "killed": killed, "messages": messages,
     "profstream": profstream}[a.cmd](a)
    sys.exit(1 if BAD else 0)


if __name__ == "__main__":
    main()
