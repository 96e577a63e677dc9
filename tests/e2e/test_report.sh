#!/usr/bin/env bash
# End-to-end: `eventlog-live report` (docs/report.md).
#
# 1. Command line: usage errors exit 2 (also -o naming the input, through
#    a symlink or a hard link: the input untouched); an unreadable input
#    or one with no eventlog exits 1 and writes nothing; corrupt input
#    exits 1, names the byte offset on stderr and in the report it still
#    writes; a log cut inside an event is a warning (exit 0); `-o -`
#    writes to stdout.
# 2. A report for every shared eventlog (kept in $BUILD/reports/): exit 0,
#    under 5 MB, nothing referenced outside the file. Expected figures come
#    from each .reference (ghc-events show, an independent decoder) through
#    tests/e2e/report_expect.py: peak heap size, censuses, top band and its
#    peak, GC collections, longest pause, markers, profile samples.
# 3. A section script (examples/report_gc.lua): its table must give the
#    collections and bytes copied per generation that the reference's
#    "GC stats" lines add up to, its series one point per such line.
# 4. Chromium (tests/web/report_check.js): every report opened from
#    file:// with the network blocked, no console error, the numbers on the
#    page equal to the expectations, charts, timeline (with the thread on
#    hover) and flame graphs drawn, hints naming the RTS flag where data is
#    missing. Screenshots: $BUILD/report-{heap,time,profiles,logs,custom,
#    page,top}.png (docs/report.md links them).
# 5. Bounded memory: oddball-hT and threads stretched to 128 MB each
#    (tests/tools/el_stretch: R repetitions, thread ids and times shifted):
#    peak RSS at most 128 MiB, report under 5 MB, and the counts are R times
#    the reference's (collections, censuses, markers; the top band's peak
#    unchanged).
# Exit 0 pass, 1 fail, 77 skip (no browser: the other parts still run).
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
BIN=$BUILD/eventlog-live
STRETCH=$BUILD/tests/el_stretch
EXPECT=$SRC/tests/e2e/report_expect.py
[ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 77; }
"$BIN" report --help >/dev/null 2>&1 || { echo "SKIP: no report command"; exit 77; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-report-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
rc=0
bad() { echo "FAIL: $*"; rc=1; }
ok() { echo "ok: $*"; }
# data FILE.html: the page's data document on stdout
data() { python3 "$SRC/tests/e2e/report_data.py" "$1"; }
# jq-like: field PATH of the data of FILE.html (python expression on d)
field() { python3 "$SRC/tests/e2e/report_data.py" "$1" "$2"; }

ODD=$EVENTLOGS/ghc-9.0/oddball-hT.eventlog

# {====== 1. command line ======}
expect_status() {  # expect_status WANT DESC ARGS...
  local want=$1 desc=$2 st=0
  shift 2
  "$BIN" report "$@" > "$TMP/cli.out" 2> "$TMP/cli.err" || st=$?
  [ "$st" = "$want" ] || bad "$desc: exit $st, want $want: $(head -c 400 "$TMP/cli.err")"
}
expect_status 2 "no output" "$ODD"
expect_status 2 "unknown option" "$ODD" -o "$TMP/x.html" --frobnicate
expect_status 2 "--top 0" "$ODD" -o "$TMP/x.html" --top 0
expect_status 2 "two inputs" "$ODD" "$ODD" -o "$TMP/x.html"
expect_status 2 "--open with stdout" "$ODD" -o - --open
[ -e "$TMP/x.html" ] && bad "a usage error wrote a report"
# -o naming the input (or a link to it): refused before anything is read,
# as --eventlog-log-file is (docs/exit-codes.md: a usage error), the
# eventlog untouched.
cp "$ODD" "$TMP/self.eventlog"
ln -s self.eventlog "$TMP/self-symlink.html"
ln "$TMP/self.eventlog" "$TMP/self-hardlink.html"
for out in self.eventlog self-symlink.html self-hardlink.html; do
  expect_status 2 "-o $out (the input)" "$TMP/self.eventlog" -o "$TMP/$out"
  grep -q "is the input itself" "$TMP/cli.err" || bad "-o $out: $(cat "$TMP/cli.err")"
  cmp -s "$ODD" "$TMP/self.eventlog" || { bad "-o $out: the input was overwritten"; cp "$ODD" "$TMP/self.eventlog"; }
  [ -L "$TMP/self-symlink.html" ] || bad "-o $out: the symlink was replaced"
done
expect_status 1 "missing input" "$TMP/nonexistent.eventlog" -o "$TMP/none.html"
grep -q "cannot open" "$TMP/cli.err" || bad "missing input: $(cat "$TMP/cli.err")"
printf 'not an eventlog\n' > "$TMP/text.eventlog"
expect_status 1 "not an eventlog" "$TMP/text.eventlog" -o "$TMP/none.html"
[ -e "$TMP/none.html" ] && bad "a report was written for an unreadable input"
# Corrupt: an event of an undeclared type appended after the last block: a
# corrupt part (skipped to the end of the data), listed on the page; status
# 0 as for any corrupt part (docs/exit-codes.md).
python3 - "$ODD" "$TMP/corrupt.eventlog" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert b.endswith(b'\xff\xff')
open(sys.argv[2], 'wb').write(b[:-2] + struct.pack('>HQ', 77, 1183473046)
                              + b'zzzz' + b'\xff\xff')
EOF
off=$(( $(stat -c %s "$ODD") - 2 ))
expect_status 0 "corrupt input" "$TMP/corrupt.eventlog" -o "$TMP/corrupt.html"
grep -q "at byte $off" "$TMP/cli.err" || bad "corrupt input: no offset $off on stderr: $(cat "$TMP/cli.err")"
if [ -s "$TMP/corrupt.html" ]; then
  [ "$(field "$TMP/corrupt.html" 'd["errors"][0]["offset"]')" = "$off" ] ||
    bad "corrupt input: the report does not list offset $off"
  [ "$(field "$TMP/corrupt.html" 'd["gc"]["collections"]')" = 645 ] ||
    bad "corrupt input: what came before the fault is not all there"
else
  bad "corrupt input: no report written"
fi
expect_status 0 "cut inside an event" "$EVENTLOGS/ghc-events/testlog-part.eventlog" -o "$TMP/cut.html"
grep -q "truncated inside an event" "$TMP/cli.err" || bad "cut log: no warning"
"$BIN" report "$ODD" -o - > "$TMP/stdout.html" 2> "$TMP/cli.err" || bad "-o -: $(cat "$TMP/cli.err")"
head -c 15 "$TMP/stdout.html" | grep -q '<!doctype html>' || bad "-o - wrote no page"
cmp -s <(data "$TMP/stdout.html" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["gc"], d["heapprof"]["censuses"])') \
       <(data "$TMP/corrupt.html" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["gc"], d["heapprof"]["censuses"])') ||
  bad "-o - and a file differ in content"
[ $rc = 0 ] && ok "command line: usage 2, unreadable 1 (nothing written), corrupt 1 with offset $off, cut 0, stdout"

# {====== 2. every shared eventlog ======}
mkdir -p "$BUILD/reports"
pairs=()
for f in "$EVENTLOGS"/*/*.eventlog; do
  name=$(basename "$f" .eventlog)
  out=$BUILD/reports/$name.html
  st=0
  timeout 300 "$BIN" report "$f" -o "$out" 2> "$TMP/$name.err" || st=$?
  [ $st = 0 ] || { bad "$name: exit $st: $(tail -3 "$TMP/$name.err")"; continue; }
  size=$(stat -c %s "$out")
  [ "$size" -lt 5000000 ] || bad "$name: $size bytes"
  if grep -Eqo '(src|href)="[a-z]+://' "$out"; then bad "$name: refers to another host"; fi
  if [ -f "$f.reference" ]; then
    python3 "$EXPECT" "$f.reference" > "$TMP/$name.json" || bad "$name: no expectations"
  elif [ "$name" = idle-hT ]; then
    # No ghc-events 0.21 reference (README.md); Debian's ghc-events 0.17
    # shows its HEAP_PROF_BEGIN ("start heap profiling 0 at sampling period
    # 200000000 broken down by closure type") and no census: the page
    # must say profiling was on, not tell the user to turn it on.
    echo '{"censuses": 0, "heapprof_hint": "no census was taken"}' > "$TMP/$name.json"
  elif [ "$name" = heapy-prof-hy-nomatch ]; then
    # `-hy -hyNOPE`: a filter that matches no type. Debian's ghc-events
    # 0.17 shows 4 "start heap prof sample" lines and no "heap prof
    # sample N, residency" line: the page must say the censuses held no
    # sample, not that none was taken (h68).
    echo '{"censuses": 4, "heapprof_hint": "censuses were taken (-hy) but none held a sample"}' \
      > "$TMP/$name.json"
  else
    echo '{}' > "$TMP/$name.json"  # no reference: only load without errors
  fi
  pairs+=("$out" "$TMP/$name.json")
done
ok "${#pairs[@]} files: a report for each of $(ls "$EVENTLOGS"/*/*.eventlog | wc -l) shared eventlogs"

# The allocation rate (docs/report.md "Heap"): each capability's bytes
# between two HEAP_ALLOCATED events spread over that interval, the first
# event's whole total from the RTS start (t = 0). Expected rates from the
# reference's events (ghc-events show), by hand: every column wholly
# inside one interval of every capability (up to each one's third event)
# must show the sum of the capabilities' bytes / interval.
for name in heapy-hT threads; do
  f=$EVENTLOGS/ghc-9.0/$name.eventlog
  [ -f "$f.reference" ] || continue
  data "$BUILD/reports/$name.html" > "$TMP/$name-data.json"
  msg=$(python3 - "$f.reference" "$TMP/$name-data.json" <<'EOF2'
import json, re, sys
caps = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*(\d+): cap (\d+): allocated on heap capset \d+: (\d+) total bytes", line)
    if m:
        caps.setdefault(int(m.group(2)), []).append((int(m.group(1)) / 1e9, int(m.group(3))))
ivs = {c: [(0.0, e[0][0], e[0][1])] + [(a[0], b[0], b[1] - a[1]) for a, b in zip(e, e[1:3])]
       for c, e in caps.items()}
end = min(iv[-1][1] for iv in ivs.values())
d = json.load(open(sys.argv[2]))
h = d["heap"]
w = h["width_s"]
rate = next(s for s in h["series"] if s["key"] == "HeapAllocated")["rate"]
eps = 1.5e-6  # column times are written to the microsecond
checked = first = 0
for t, r in zip(h["t"], rate):
    lo, hi = t - w / 2, t + w / 2
    if lo < eps or hi > end - eps:
        continue
    want, inside = 0.0, True
    for iv in ivs.values():
        k = [i for i in iv if i[0] - eps <= lo and hi <= i[1] + eps]
        if not k:
            inside = False
            break
        want += k[0][2] / (k[0][1] - k[0][0])
    if not inside:
        continue
    checked += 1
    first += hi <= min(iv[0][1] for iv in ivs.values())
    if abs(r - want) > 1 + 1e-6 * want:
        print("column at %.6f s: rate %d, want %.0f" % (t, r, want))
        sys.exit(1)
if first < 3 or checked < 10:
    print("only %d columns checked (%d in the first interval)" % (checked, first))
    sys.exit(1)
print("%d columns over %d capabilities, %d in the first interval (%.0f bytes/s)" % (
    checked, len(ivs), first, sum(iv[0][2] / iv[0][1] for iv in ivs.values())))
EOF2
  ) && ok "$name: allocation rate as the reference's HEAP_ALLOCATED: $msg" ||
    bad "$name: allocation rate: $msg"
done

# {====== 3. a section script ======}
gc=$BUILD/reports/oddball-hT-gc.html
"$BIN" report --script "$SRC/examples/report_gc.lua" "$ODD" -o "$gc" 2> "$TMP/gc.err" ||
  bad "--script: $(cat "$TMP/gc.err")"
python3 - "$ODD.reference" "$TMP/oddball-hT.json" > "$TMP/gc.json" <<'EOF'
import json, re, sys
gens = {}
for line in open(sys.argv[1]):
    m = re.search(r"GC stats for heap capset \d+: generation (\d+), (\d+) bytes copied", line)
    if m:
        g = gens.setdefault(int(m.group(1)), [0, 0, 0])
        c = int(m.group(2))
        g[0] += 1; g[1] += c; g[2] = max(g[2], c)
e = json.load(open(sys.argv[2]))
e["sections"] = [
    {"title": "Collections by generation",
     "rows": [[g, v[0], v[1], v[2]] for g, v in sorted(gens.items())]},
    {"title": "Bytes copied per collection",
     "points": sum(v[0] for v in gens.values())}]
json.dump(e, sys.stdout)
EOF
pairs+=("$gc" "$TMP/gc.json")

# {====== 3b. ghc-stack-profiler call stacks ======}
# No shared eventlog carries them: a small one with stacks chosen here
# (reference-behaviour.md §5.4.3: string definitions, then final stacks
# listing string frames outermost first): main>go>leaf twice, main>work
# once.
python3 - "$TMP/stacks.eventlog" <<'EOF'
import struct, sys
def decl(i, size, desc):
    d = desc.encode()
    return (b"etb\0" + struct.pack(">HhI", i, size, len(d)) + d +
            struct.pack(">I", 0) + b"ete\0")
hdr = (b"hdrbhetb" + decl(18, 14, "Block marker")
       + decl(181, -1, "User binary message") + b"hetehdredatb")
def msg(t, payload):
    return struct.pack(">HQH", 181, t, len(payload)) + payload
def string(i, text):
    b = text.encode()
    return struct.pack(">HQH", 0xFFCC, i, len(b)) + b
def stack(cap, thread, ids):
    return (struct.pack(">HIIH", 0xFFCA, cap, thread, len(ids))
            + b"".join(struct.pack(">BQ", 2, i) for i in ids))
evs = [string(1, "main"), string(2, "go"), string(3, "leaf"), string(4, "work"),
       stack(0, 7, [1, 2, 3]), stack(0, 7, [1, 2, 3]), stack(0, 8, [1, 4])]
body = b"".join(msg(1000 * (k + 1), p) for k, p in enumerate(evs))
block = struct.pack(">HQIQH", 18, 500, 24 + len(body), 1000 * len(evs), 0) + body
open(sys.argv[1], "wb").write(hdr + block + b"\xff\xff")
EOF
stacks=$BUILD/reports/call-stacks.html
"$BIN" report "$TMP/stacks.eventlog" -o "$stacks" 2> "$TMP/stacks.err" ||
  bad "call stacks: $(cat "$TMP/stacks.err")"
echo '{"profile_samples": 3, "call_stack_samples": 3, "censuses": 0, "markers": 0}' > "$TMP/stacks.json"
got=$(field "$stacks" 'sorted((p["names"][s[0]], s[1], s[2]) for p in d["profiles"] for s in p["symbols"])')
[ "$got" = "[('go', 0, 2), ('leaf', 2, 2), ('main', 0, 3), ('work', 1, 1)]" ] ||
  bad "call stacks: symbols (name, self, total) $got"
pairs+=("$stacks" "$TMP/stacks.json")
# An eventlog-socket capture on GHC 9.0 (a client that connected after
# start-up): no start-up events, so no HEAP_PROF_BEGIN nor census either,
# whatever the program was run with. The heap profile hint says so before
# its advice to run with -hT (h51: it only gave that advice, which had
# been followed).
sock=$BUILD/reports/socket-capture.html
"$BIN" report "$EVENTLOGS/eventlog-socket/restart-stale-marker.tee" -o "$sock" \
  2> "$TMP/sock.err" || bad "socket capture: $(cat "$TMP/sock.err")"
[ "$(field "$sock" 'd["session"]["rts_version"], d["heapprof"]["censuses"]')" = "(None, 0)" ] ||
  bad "socket capture: has start-up events or censuses (the check below needs neither)"
echo '{"heapprof_hint": "No heap profile, and no start-up events either"}' > "$TMP/sock.json"
pairs+=("$sock" "$TMP/sock.json")

# {====== 5. bounded memory (before the browser: no skip hides it) ======}
# maxrss OUT CMD...: peak RSS (KiB) of CMD from wait4, into OUT
maxrss() {
  local out=$1; shift
  python3 - "$out" "$@" <<'EOF'
import os, sys
out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_RDWR)
    os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvp(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
open(out, "w").write("%d %d\n" % (os.waitstatus_to_exitcode(status), ru.ru_maxrss))
EOF
}
if [ -x "$STRETCH" ]; then
  for src in ghc-9.0/oddball-hT ghc-9.0/threads; do
    name=$(basename "$src")
    big=$TMP/$name-128M.eventlog
    "$STRETCH" -n 128M -o "$big" "$EVENTLOGS/$src.eventlog" 2> "$TMP/stretch.err" ||
      { bad "el_stretch $name"; continue; }
    reps=$(sed -n 's/^el_stretch: \([0-9]*\) repetitions.*/\1/p' "$TMP/stretch.err")
    maxrss "$TMP/rss" "$BIN" report "$big" -o "$TMP/$name-big.html"
    read -r st kib < "$TMP/rss"
    [ "$st" = 0 ] || { bad "$name x$reps: exit $st"; continue; }
    size=$(stat -c %s "$TMP/$name-big.html")
    [ "$kib" -le $((128 * 1024)) ] || bad "$name x$reps: peak RSS $kib KiB"
    [ "$size" -lt 5000000 ] || bad "$name x$reps: report of $size bytes"
    got=$(field "$TMP/$name-big.html" '"%d %d %d" % (d["gc"]["collections"], d["heapprof"]["censuses_begun"], d["markers"]["total"])')
    want=$(python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); r = int(sys.argv[2])
print("%d %d %d" % (r * e["gc_collections"], r * e["censuses"], r * e["markers"]))' "$TMP/$name.json" "$reps")
    [ "$got" = "$want" ] || bad "$name x$reps: collections, censuses, markers $got, want $want"
    if [ "$name" = oddball-hT ]; then
      peak=$(field "$TMP/$name-big.html" 'd["heapprof"]["top"][0]["band"][1]')
      [ "$peak" = "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["top_band_peak"])' "$TMP/$name.json")" ] ||
        bad "$name x$reps: top band peak $peak"
    fi
    ok "$name x$reps ($(stat -c %s "$big") bytes): peak RSS $((kib / 1024)) MiB, report $size bytes, counts x$reps"
  done
else
  bad "$STRETCH not built"
fi

# {====== 4. the browser ======}
if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null ||
   [ ! -d "$SRC/tests/web/node_modules/playwright-core" ]; then
  echo "SKIP (browser part): chromium, node or tests/web/node_modules missing"
  [ $rc = 0 ] && exit 77
  exit 1
fi
timeout 600 node "$SRC/tests/web/report_check.js" --user-data-dir "$TMP/udd" \
  --shot oddball-hT.html:heap:"$BUILD/report-heap.png" \
  --shot threads.html:time:"$BUILD/report-time.png" \
  --shot heapy-prof-hc.html:profiles:"$BUILD/report-profiles.png" \
  --shot threads.html:logs:"$BUILD/report-logs.png" \
  --shot oddball-hT-gc.html:custom:"$BUILD/report-custom.png" \
  --shot oddball-hT.html:page:"$BUILD/report-page.png" \
  --shot heapy-prof-hc.html:top:"$BUILD/report-top.png" \
  "${pairs[@]}" > "$TMP/check.out" 2> "$TMP/check.err" || rc=1
cat "$TMP/check.out"
[ -s "$TMP/check.err" ] && cat "$TMP/check.err"
n=$(grep -c '"problems":\[\]' "$TMP/check.out")
[ "$n" = $(( ${#pairs[@]} / 2 )) ] || bad "$n of $(( ${#pairs[@]} / 2 )) pages passed the browser check"
for s in heap time profiles logs custom page top; do
  [ -s "$BUILD/report-$s.png" ] || bad "no screenshot report-$s.png"
done
[ $rc = 0 ] && ok "browser: $n pages offline, no console errors, figures as the references"
[ $rc = 0 ] && echo "PASS: report"
exit $rc
