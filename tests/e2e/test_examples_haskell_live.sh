#!/usr/bin/env bash
# ctest-labels: asan
# The examples' run scripts, live: examples/haskell/*/*-with-pipe.sh (and
# oddball-with-console.sh, whose OTLP/JSON lines are checked too) build
# each program with Debian GHC, stream its eventlog through a named pipe
# into build/eventlog-live-otelcol, which exports over OTLP gRPC to the test
# receiver (tests/receiver) standing in for the collector. Checked against
# what the programs printed on stdout (an independent channel):
#   oddball  one UserMarker log record "Summing <n> numbers" per round with
#            the n of "Generating <n> random numbers", service.name oddball,
#            heap metrics incl. ghc_eventlog_HeapProfSample (-hT);
#   threads  ThreadLabel records for its labelled threads, capability usage;
#   jumpy    (profiled, if ghc-prof is installed) a cost-centre profile.
set -u
source "$(dirname "$0")/../demo/lib.sh"

GHC=${GHC:-ghc}
command -v "$GHC" >/dev/null || skip "ghc not installed"
DAEMON=$BUILD/eventlog-live-otelcol
[ -x "$DAEMON" ] || skip "$DAEMON not built"
command -v node >/dev/null || skip "node missing (test receiver)"
[ -d "$SRC/tests/receiver/node_modules" ] || skip "tests/receiver: run npm ci"

node "$SRC/tests/receiver/server.js" --out "$TMP/received.jsonl" \
  --ready-file "$TMP/ready.json" --quiet > "$TMP/receiver.log" 2>&1 &
BG_PIDS+=($!)
for i in $(seq 100); do [ -s "$TMP/ready.json" ] && break; sleep 0.1; done
[ -s "$TMP/ready.json" ] || { cat "$TMP/receiver.log"; fail "receiver did not start"; }
port=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["grpc"])' "$TMP/ready.json")

export EL_OTELCOL=$DAEMON OTELCOL_HOST=127.0.0.1 OTELCOL_PORT=$port GHC
# A heap census at every major GC (oddball forces one per round).
export HEAP_INTERVAL=0

run() {  # run NAME SCRIPT ARGS...: stdout to $TMP/NAME.out
  local name=$1 script=$2; shift 2
  echo "== $script $*"
  timeout 300 bash "$SRC/examples/haskell/$script" "$@" \
    > "$TMP/$name.out" 2> "$TMP/$name.err"
  local st=$?
  tail -n 20 "$TMP/$name.err" | sed 's/^/   /'
  return $st
}

rc=0
run oddball oddball/oddball-with-pipe.sh 6 50 100000 || {
  echo "FAIL: oddball-with-pipe.sh exited non-zero"; rc=1; }
run threads threads/threads-with-pipe.sh 3 50 4 8 || {
  echo "FAIL: threads-with-pipe.sh exited non-zero"; rc=1; }
profiled=0
if run jumpy jumpy/jumpy-with-pipe.sh 20 5; then
  profiled=1
elif grep -q -i 'p_hi\|prof' "$TMP/jumpy.err"; then
  echo "note: profiled build failed (ghc-prof missing?): jumpy not checked"
else
  echo "FAIL: jumpy-with-pipe.sh exited non-zero"; rc=1
fi
# The console variant: OTLP/JSON lines on stdout, the program's output on
# stderr, no collector.
echo "== oddball/oddball-with-console.sh 3 10 50000"
if timeout 300 bash "$SRC/examples/haskell/oddball/oddball-with-console.sh" \
     3 10 50000 > "$TMP/console.jsonl" 2> "$TMP/console.err"; then
  python3 - "$TMP" <<'PY' || rc=1
import json, re, sys
tmp = sys.argv[1]
want = ["Summing %s numbers" % n for n in re.findall(
    r"Generating (\d+) random numbers", open(f"{tmp}/console.err").read())]
got = []
for line in open(f"{tmp}/console.jsonl"):
    req = json.loads(line)
    for rl in req.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for lr in sl.get("logRecords", []):
                kinds = [a["value"].get("stringValue") for a in
                         lr.get("attributes", []) if a["key"] == "kind"]
                if kinds == ["UserMarker"]:
                    got.append(lr["body"]["stringValue"])
ok = len(want) == 3 and got == want
print(("ok" if ok else "FAIL") + f": console: UserMarker records {got} == {want}")
sys.exit(0 if ok else 1)
PY
else
  tail -n 20 "$TMP/console.err"
  echo "FAIL: oddball-with-console.sh exited non-zero"; rc=1
fi
sleep 0.5

python3 - "$TMP" "$profiled" <<'PY' || rc=1
import json, re, sys
tmp, profiled = sys.argv[1], sys.argv[2] == "1"
recs = [json.loads(l) for l in open(f"{tmp}/received.jsonl")]
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAIL: ") + what)
    bad += not ok

def attrs(a):
    out = {}
    for kv in a or []:
        v = kv.get("value") or {}
        out[kv["key"]] = next(iter(v.values()), None) if v else None
    return out

logs, metrics, profiles = {}, {}, {}
for r in recs:
    req = r.get("request") or {}
    for rl in req.get("resourceLogs", []):
        svc = attrs(rl.get("resource", {}).get("attributes")).get("service.name")
        for sl in rl.get("scopeLogs", []):
            for lr in sl.get("logRecords", []):
                logs.setdefault(svc, []).append(
                    (attrs(lr.get("attributes")).get("kind"),
                     (lr.get("body") or {}).get("stringValue")))
    for rm in req.get("resourceMetrics", []):
        svc = attrs(rm.get("resource", {}).get("attributes")).get("service.name")
        for sm in rm.get("scopeMetrics", []):
            for m in sm.get("metrics", []):
                metrics.setdefault(svc, set()).add(m["name"])
    if r.get("signal") == "profiles":
        profiles[r.get("signal")] = profiles.get(r.get("signal"), 0) + 1

out = open(f"{tmp}/oddball.out").read()
want = ["Summing %s numbers" % n for n in
        re.findall(r"Generating (\d+) random numbers", out)]
got = [b for k, b in logs.get("oddball", []) if k == "UserMarker"]
check(f"oddball: 6 rounds on stdout ({len(want)})", len(want) == 6)
check(f"oddball: UserMarker records {got} == {want}", got == want)
sums = re.findall(r"Sum: (-?\d+)", out)
msgs = [b for k, b in logs.get("oddball", []) if k == "UserMessage"]
check(f"oddball: UserMessage records {msgs}", msgs == ["Sum: " + s for s in sums])
for m in ("ghc_eventlog_HeapSize", "ghc_eventlog_HeapAllocated",
          "ghc_eventlog_HeapProfSample"):
    check(f"oddball: metric {m}", m in metrics.get("oddball", set()))

labels = {b for k, b in logs.get("threads", []) if k == "ThreadLabel"}
for l in ("main", "ticker", "producer", "worker-1", "worker-4"):
    check(f"threads: ThreadLabel {l}", l in labels)
check("threads: ghc_eventlog_CapabilityUsageDuration",
      "ghc_eventlog_CapabilityUsageDuration" in metrics.get("threads", set()))
if profiled:
    check("jumpy: profiles request received", profiles.get("profiles", 0) > 0)
sys.exit(1 if bad else 0)
PY
[ $rc = 0 ] && echo "PASS: example run scripts through the daemon"
exit $rc
