#!/usr/bin/env python3
"""Self-test of tests/e2e/producer_check.py (run by test_producer_check.sh):
on made-up program output, receiver requests and raw streams, each check
passes when the telemetry is right and fails, with its own message, when
one thing is wrong. So the real-producer tests can both pass and fail,
whatever the daemon does today."""
import json
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "producer_check.py")
S = 1_800_000_000_000_000_000          # the program's start, Unix ns
SEC = 10 ** 9
BAD = 0


def program(path, tag, n, start, end=True, control=()):
    with open(path, "w") as f:
        f.write(f"start {start} 4242\n")
        for i in range(1, n + 1):
            f.write(f"marker {i} {start + i * SEC} {tag} tick {i}\n")
        for cid, t, text in control:
            f.write(f"control live-test {cid} {t} {text}\n")
        if end:
            f.write(f"end {start + n * SEC + 10 ** 6}\n")


def resource():
    return {"attributes": [{"key": "service.name",
                            "value": {"stringValue": "app"}}]}


def logs(at_ns, records):
    """records: [(kind, body, time_ns)]"""
    lr = [{"timeUnixNano": str(t), "body": {"stringValue": b},
           "attributes": [{"key": "kind", "value": {"stringValue": k}}]}
          for k, b, t in records]
    return {"time_ms": at_ns // 10 ** 6, "signal": "logs",
            "request": {"resourceLogs": [{"resource": resource(),
                                          "scopeLogs": [{"logRecords": lr}]}]}}


def heap(at_ns, t_ns):
    return {"time_ms": at_ns // 10 ** 6, "signal": "metrics",
            "request": {"resourceMetrics": [{"resource": resource(),
                "scopeMetrics": [{"metrics": [{"name": "ghc_eventlog_HeapSize",
                    "gauge": {"dataPoints": [{"timeUnixNano": str(t_ns)}]}}]}]}]}}


def write_jsonl(path, reqs):
    with open(path, "w") as f:
        for r in reqs:
            f.write(json.dumps(r) + "\n")


def tee(path, texts):
    b = b""
    for t in texts:
        s = t.encode()
        b += b"\x00\x01" + b"\x00" * 8 + len(s).to_bytes(2, "big") + s
    open(path, "wb").write(b)
    return b


def run(d, args, want_ok, want_text=None, what=""):
    global BAD
    p = subprocess.run([sys.executable, CHECK] + args, cwd=d,
                       capture_output=True, text=True)
    ok = (p.returncode == 0) == want_ok and (
        want_text is None or want_text in p.stdout)
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        BAD += 1
        print("    exit %d, want %s%s" % (p.returncode,
              "0" if want_ok else "1",
              f", output containing {want_text!r}" if want_text else ""))
        print("    " + "\n    ".join(p.stdout.splitlines()[:40]))


CUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "socket_cut_expect.py")


def cut_case(d, tail=5, next_marker=None, next_event=False):
    """A made-up eventlog-socket connection for socket_cut_expect.py: the
    library's 24-byte marker of capability 0xFFFF, a header declaring
    RUN_THREAD (1, 4-byte payload) and the block marker (18, 14 bytes),
    a block of capability 0 with three events, 40 bytes no framing reads
    (GHC 9.0's restart of event logging), a block of capability 1
    declaring five events, two of them whole, then TAIL bytes of the
    third (1: a cut inside its 2-byte type, whose size is then 2; 0: the
    connection ends between events). NEXT_MARKER: the block of capability
    1 declares three events, all whole, and NEXT_MARKER bytes of the next
    block's 24-byte marker (capability 0) follow: the cut event is in no
    block and no block is left short (NEXT_EVENT: NEXT_MARKER bytes of
    a RUN_THREAD instead, an event cut outside any block).
    Returns (tee path, the damage's offset, the line the script must
    print, computed here by hand)."""
    def ev(t, payload):
        return b"\x00\x01" + t.to_bytes(8, "big") + payload

    def marker(size, cap):
        return (b"\x00\x12" + (0).to_bytes(8, "big") + size.to_bytes(4, "big")
                + (0).to_bytes(8, "big") + cap.to_bytes(2, "big"))

    def decl(et, sz, name):
        return (b"etb\x00" + et.to_bytes(2, "big")
                + sz.to_bytes(2, "big", signed=True)
                + len(name).to_bytes(4, "big") + name
                + (0).to_bytes(4, "big") + b"ete\x00")
    b = marker(0, 0xFFFF) + b"hdrbhetb" + decl(1, 4, b"Run thread") \
        + decl(18, 14, b"Block marker") + b"hetehdredatb"
    b += marker(24 + 3 * 14, 0) + b"".join(ev(i, b"\x00\x00\x00\x07")
                                           for i in (1, 2, 3))
    bad = len(b)
    b += b"\x77" * 40
    blk = len(b)
    if next_marker is not None:
        b += marker(24 + 3 * 14, 1) + b"".join(ev(i, b"\x00" * 4)
                                               for i in (4, 5, 6))
        cut = len(b)
        b += (ev(7, b"\x00" * 4) if next_event
              else marker(24, 0))[:next_marker]
        end = len(b)
        open(f"{d}/cut.tee", "wb").write(b)
        return f"{d}/cut.tee", bad, (
            f"at byte {cut} ({next_marker} of "
            f"{24 if next_marker >= 2 else 2} bytes present): the input "
            f"ends at byte {end}")
    b += marker(24 + 5 * 14, 1) + ev(4, b"\x00" * 4) + ev(5, b"\x00" * 4)
    cut = len(b)
    b += ev(6, b"\x00" * 4)[:tail]
    end = len(b)
    open(f"{d}/cut.tee", "wb").write(b)
    short = (f"{blk + 24 + 5 * 14 - end} bytes short of the end of "
             f"capability 1's block from byte {blk}")
    if tail == 0:  # between events: no event cut
        want = f"ends at byte {end} without its end-of-data marker, {short}"
    else:
        want = (f"at byte {cut} ({tail} of {14 if tail >= 2 else 2} bytes "
                f"present): the input ends at byte {end}, {short}")
    return f"{d}/cut.tee", bad, want


def run_cut(d, bad, skipped, want_ok, want_text, what):
    """socket_cut_expect.py on cut.tee with a daemon stderr reporting
    SKIPPED bytes skipped from BAD (none: no stderr given)."""
    global BAD
    args = [sys.executable, CUT, f"{d}/cut.tee"]
    if skipped is not None:
        with open(f"{d}/cut.err", "w") as f:
            f.write(f"eventlog-live-otelcol: warning: Unix socket s: corrupt "
                    f"stream: event type 30583 at byte {bad} is not declared "
                    f"in the header (inside a block); skipped {skipped} bytes "
                    f"({bad} to {bad + skipped}) to the block marker at byte "
                    f"{bad + skipped}\n")
        args.append(f"{d}/cut.err")
    p = subprocess.run(args, capture_output=True, text=True)
    ok = (p.returncode == 0) == want_ok and want_text in p.stdout + p.stderr
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        BAD += 1
        print(f"    exit {p.returncode}, want {'0' if want_ok else '1'} and "
              f"{want_text!r}; got {(p.stdout + p.stderr).strip()!r}")


def live_case(d, name, *, arrive=8, shift=0, zero=False, dup=False,
              heap_t=None, tee_extra=(), metrics=True):
    n = 16
    program(f"{d}/{name}.out", name, n, S)
    got = range(1, 12)
    recs = [(("UserMarker", f"{name} tick {i}",
              0 if zero else S + i * SEC + 5 * 10 ** 6 + shift)) for i in got]
    if dup:
        recs.append(recs[0])
    reqs = [logs(S + arrive * SEC, recs),
            heap(S + arrive * SEC, S + 3 * SEC if heap_t is None else heap_t)]
    write_jsonl(f"{d}/{name}.jsonl", reqs)
    tee(f"{d}/{name}.tee", [f"{name} tick {i}" for i in got] + list(tee_extra))
    with open(f"{d}/{name}.metrics", "w") as f:
        t = S // 10 ** 6
        f.write(f"{t + 5000} ghc_eventlog_HeapSize_bytes{{}} 1\n" if metrics
                else f"{t + 5000} none\n")
    return ["live", "--name", name, "--out", f"{name}.out", "--received",
            f"{name}.jsonl", "--metrics", f"{name}.metrics", "--tag", name,
            "--seconds", str(n), "--window", "--tee", f"{name}.tee"]


def main():
    d = tempfile.mkdtemp(prefix="el-producer-selftest.")
    run(d, live_case(d, "good"), True, what="live: right telemetry passes")
    run(d, live_case(d, "late", arrive=17), False,
        "0 of the 16 markers reached the receiver before",
        "live: everything after the exit fails")
    run(d, live_case(d, "shift", shift=-9 * SEC), False,
        "lies within this run", "live: times 9 s early (another session's "
        "clock) fail")
    run(d, live_case(d, "slow", shift=2 * SEC), False,
        "within 1 s (median)", "live: times 2 s late fail")
    run(d, live_case(d, "zero", zero=True), False, "has a timeUnixNano",
        "live: timeUnixNano 0 fails")
    run(d, live_case(d, "dup", dup=True), False, "arrived twice",
        "live: a marker exported twice fails")
    run(d, live_case(d, "oldheap", heap_t=S - 20 * SEC), False,
        "HeapSize or HeapLive point dated in this run",
        "live: a heap point of an earlier program fails")
    run(d, live_case(d, "lost", tee_extra=["lost tick 12"]), False,
        "missing: ['lost tick 12']",
        "live: a marker received but not exported fails")
    # A marker inside a corrupt part the daemon reported skipping (the
    # real producer damages blocks) is not required; one outside is.
    args = live_case(d, "part", tee_extra=["part tick 12", "part tick 13"])
    whole = open(f"{d}/part.tee", "rb").read()
    at12 = whole.index(b"part tick 12") - 2
    at13 = whole.index(b"part tick 13") - 2
    with open(f"{d}/part.err", "w") as f:
        f.write(f"eventlog-live: warning: input offset {at12 - 5}: corrupt "
                f"stream: event type 6 at byte {at12 - 5} is not declared in "
                f"the header (inside a block); skipped 20 bytes "
                f"({at12 - 5} to {at12 + 15}) to the block marker at byte "
                f"{at12 + 15}\n")
    run(d, args + ["--daemon-err", "part.err"], False,
        "missing: ['part tick 13']",
        "live: a marker outside the reported corrupt part is still required")
    with open(f"{d}/part.err", "a") as f:
        f.write(f"eventlog-live: warning: input offset {at13 - 7}: corrupt "
                f"stream: event RUN_THREAD (type 1) at byte {at13 - 7} does "
                f"not fit its block (cap 0, ending at byte {at13 - 5}); "
                f"skipped 9 bytes ({at13 - 7} to {at13 - 5}, and after the "
                f"marker the tail of a cut event) to the block marker at "
                f"byte {at13 - 5}\n")
    run(d, args + ["--daemon-err", "part.err"], False,
        "missing: ['part tick 13']",
        "live: a marker after a reported part's tail is still required")
    with open(f"{d}/part.err", "a") as f:
        f.write(f"eventlog-live: warning: input offset {at13 - 1}: corrupt "
                f"stream: event type 6 at byte {at13 - 1} is not declared; "
                f"skipped 3 bytes ({at13 - 1} to {at13 + 2}) to the end of "
                f"the input\n")
    run(d, args + ["--daemon-err", "part.err"], True,
        "markers inside them, not required: ['part tick 12', 'part tick 13']",
        "live: markers inside reported corrupt parts are not required")
    run(d, live_case(d, "nometrics", metrics=False), False,
        "/metrics served", "live: /metrics without HeapSize fails")

    # Where the connection was cut, framed across a damaged part the
    # daemon reported skipping (test_producer_socket, program first).
    _, bad, want = cut_case(d)
    run_cut(d, bad, 40, True, want, "socket cut: framed on after the "
            "reported corrupt part, the cut event and its block found")
    run_cut(d, bad, None, False, "undeclared event type 30583",
            "socket cut: without the daemon's report the damage fails")
    run_cut(d, bad, 38, False, "undeclared event type 30583",
            "socket cut: a reported part 2 bytes short fails")
    # Cut after the first byte of an event's type (seen in CI, program
    # first): the daemon says "(1 of 2 bytes present)".
    _, bad, want = cut_case(d, tail=1)
    run_cut(d, bad, 40, True, want, "socket cut inside an event's type: "
            "1 of 2 bytes, its block found")
    # The library's last write ended on an event's boundary.
    _, bad, want = cut_case(d, tail=0)
    run_cut(d, bad, 40, True, want, "socket connection ended between "
            "events: the block left short found")
    # Cut inside the block marker after a whole block (the library's last
    # write ended 10 bytes, or 1 byte, into the next block): no block
    # left short, not a failed premise.
    for k in (10, 1):
        _, bad, want = cut_case(d, next_marker=k)
        run_cut(d, bad, 40, True, want + "\n", f"socket cut inside the next "
                f"block's marker ({k} bytes): no block left short")
    _, bad, _ = cut_case(d, next_marker=10, next_event=True)
    run_cut(d, bad, 40, False, "the cut at 278 is outside any block",
            "socket cut: another event cut after a whole block still fails")

    # killed: run 1 killed at 9 s
    program(f"{d}/k.out", "k", 8, S, end=False)
    for name, shift, ok, text in (("kgood", 0, True, None),
                                  ("kbad", 9 * SEC, False, "time of this run")):
        write_jsonl(f"{d}/{name}.jsonl", [logs(S + 5 * SEC, [
            ("UserMarker", f"k tick {i}", S + i * SEC + shift)
            for i in (1, 2, 3)])])
        tee(f"{d}/{name}.tee", [f"k tick {i}" for i in (1, 2, 3)])
        run(d, ["killed", "--name", name, "--out", "k.out", "--received",
                f"{name}.jsonl", "--tag", "k", "--tee", f"{name}.tee",
                "--killed-ms", str((S + 9 * SEC) // 10 ** 6)], ok, text,
            "killed: the run's own times pass" if ok else
            "killed: times of a later run fail")

    # messages
    program(f"{d}/m.out", "m", 3, S, control=[
        (1, S + SEC, "m live-test 1 handled 1")])
    write_jsonl(f"{d}/m.jsonl", [logs(S + 2 * SEC, [
        ("UserMessage", "m live-test 1 handled 1", S + SEC)])])
    run(d, ["messages", "--name", "m", "--out", "m.out", "--received",
            "m.jsonl", "m live-test 1 handled 1"], True,
        what="messages: the answer received passes")
    write_jsonl(f"{d}/m0.jsonl", [])
    run(d, ["messages", "--name", "m", "--out", "m.out", "--received",
            "m0.jsonl", "m live-test 1 handled 1"], False, "reached the receiver",
        what="messages: no answer received fails")

    # profstream
    def stream(name, gap_sample):
        ev = [("PROF_SAMPLE_COST_CENTRE", {}, t) for t in (1, 2, 3)]
        ev += [("USER_MSG", {"text": "A"}, 10), ("USER_MSG", {"text": "B"},
               10 + 3 * SEC), ("USER_MSG", {"text": "C"}, 20 + 3 * SEC)]
        ev += [("PROF_SAMPLE_COST_CENTRE", {}, 30 + 3 * SEC)]
        if gap_sample:
            ev.append(("PROF_SAMPLE_COST_CENTRE", {}, 2 * SEC))
        with open(f"{d}/{name}.stream", "w") as f:
            for n, fields, t in ev:
                f.write(json.dumps({"name": n, "t_ns": t, "fields": fields})
                        + "\n")
        return ["profstream", "--name", name, "--stream", f"{name}.stream",
                "--stop", "A", "--still", "B", "--start", "C"]
    run(d, stream("pgood", False), True,
        what="profstream: samples stop and resume passes")
    run(d, stream("pbad", True), False, "none in the 3.0 s after",
        "profstream: a sample after stop-profiling fails")
    subprocess.run(["rm", "-rf", d])
    print("PASS" if not BAD else f"FAIL: {BAD} case(s)")
    sys.exit(1 if BAD else 0)


if __name__ == "__main__":
    main()
