#!/usr/bin/env bash
# ctest-labels: asan
# Issue 4, live end to end: telemetry arrives while the Haskell program is
# still running. examples/haskell/oddball is built with Debian's GHC 9.0
# (-threaded -rtsopts -eventlog) and run with
#   +RTS -N2 -l -hT -i0.01 -ol FIFO -RTS
# for ROUNDS rounds of DELAY_MS each; its eventlog streams through the FIFO
# into eventlog-live-otelcol, which exports over OTLP gRPC (export every 1 s)
# to the test receiver (tests/receiver, OpenTelemetry's own decoding).
# GHC 9.0 has no --eventlog-flush-interval: it writes each capability's
# 2 MiB event buffer, and the global one, only when full (or at exit). So
# oddball's PINGS argument makes two threads per capability pass an MVar
# token back and forth every round (scheduler events fill the capabilities'
# buffers), and BOUND starts bound threads (forkOS) every round: their task
# events fill the global buffer, which holds the heap census samples and the
# WALL_CLOCK_TIME event the daemon waits for before it exports anything.
# With these figures the global buffer first reaches the pipe after about
# 10 s of a run of about 30 s.
#
# While the program is alive (not exited, not a zombie), the receiver's
# decoded output is polled for (a) a heap data point (ghc_eventlog_HeapSize
# or ghc_eventlog_HeapProfSample) and (b) a UserMarker log record whose body
# is "Summing <n> numbers" for an n the program has already printed on
# stdout ("Generating <n> random numbers", an independent channel). Both
# must be seen while the program still runs and before it printed its last
# round. Then the program finishes, the daemon must exit 0 at the end of
# the FIFO, and the received UserMarker records, in timestamp order, must be
# exactly the markers of every round on stdout.
set -u
source "$(dirname "$0")/../demo/lib.sh"
source "$(dirname "$0")/wait_lib.sh" # alive, wait_exit

GHC=${GHC:-ghc}
command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc)"
DAEMON=${EL_BIN_OTELCOL:-$BUILD/eventlog-live-otelcol}
[ -x "$DAEMON" ] || skip "$DAEMON not built"
command -v node >/dev/null || skip "node missing (test receiver)"
[ -d "$SRC/tests/receiver/node_modules" ] || skip "tests/receiver: run npm ci"

ROUNDS=40 DELAY_MS=300 MAX_N=100000 SEED=42 PINGS=5000 BOUND=3000
LIVE_TIMEOUT=240   # seconds for the program's whole run (about 30 s)

# ---- build ------------------------------------------------------------------
mkdir -p "$TMP/build"
"$GHC" -O1 -threaded -rtsopts -eventlog -outputdir "$TMP/build" \
  -o "$TMP/oddball" "$SRC/examples/haskell/oddball/Main.hs" \
  > "$TMP/ghc.log" 2>&1 || { cat "$TMP/ghc.log"; fail "ghc failed"; }

# ---- receiver ---------------------------------------------------------------
node "$SRC/tests/receiver/server.js" --out "$TMP/received.jsonl" \
  --ready-file "$TMP/ready.json" --quiet > "$TMP/receiver.log" 2>&1 &
BG_PIDS+=($!)
for i in $(seq 150); do [ -s "$TMP/ready.json" ] && break; sleep 0.1; done
[ -s "$TMP/ready.json" ] || { cat "$TMP/receiver.log"; fail "receiver did not start"; }
port=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["grpc"])' "$TMP/ready.json")

# ---- daemon and program -----------------------------------------------------
cat > "$TMP/config.yaml" <<'YAML'
processors:
  logs:
    user_marker:
      export: 1s
  metrics:
    heap_size:
      aggregate: 1s
      export: 1s
    heap_prof_sample:
      aggregate: 1s
      export: 1s
YAML
fifo=$TMP/oddball.fifo
mkfifo "$fifo"
# Hold the FIFO open read-write (fd 3) until both ends have it open, so
# neither sees end of file or EPIPE whatever the order they open it in.
exec 3<>"$fifo"

"$DAEMON" --eventlog-file="$fifo" -hT --config="$TMP/config.yaml" \
  --service-name=oddball-live --otelcol-host=127.0.0.1 --otelcol-port="$port" \
  --verbosity=info 3>&- > "$TMP/daemon.out" 2> "$TMP/daemon.err" &
dpid=$!
BG_PIDS+=($dpid)

(cd "$TMP" && exec "$TMP/oddball" $ROUNDS $DELAY_MS $MAX_N $SEED $PINGS $BOUND \
   +RTS -N2 -l -hT -i0.01 -ol"$fifo" -RTS) 3>&- \
  > "$TMP/prog.out" 2> "$TMP/prog.err" &
prog=$!
BG_PIDS+=($prog)
t0=$SECONDS

has_fifo() {  # has_fifo PID: PID has the FIFO open
  local f
  for f in /proc/"$1"/fd/*; do
    [ "$(readlink "$f" 2>/dev/null)" = "$fifo" ] && return 0
  done
  return 1
}
for pid in $dpid $prog; do
  for i in $(seq 300); do   # up to 30 s each
    alive "$pid" || break
    has_fifo "$pid" && break
    sleep 0.1
  done
done
exec 3>&-

# ---- live: poll the receiver while the program runs -------------------------
# live_check prints "<heap metric> <marker> <rounds printed>" and exits 0
# once both kinds of telemetry are in the receiver's output.
cat > "$TMP/live_check.py" <<'PY'
import json, re, sys
tmp = sys.argv[1]
out = open(f"{tmp}/prog.out").read()
printed = ["Summing %s numbers" % n
           for n in re.findall(r"Generating (\d+) random numbers", out)]
heap, marker = None, None
try:
    lines = open(f"{tmp}/received.jsonl").read().splitlines()
except FileNotFoundError:
    lines = []
for line in lines:
    try:
        req = json.loads(line).get("request") or {}
    except ValueError:
        continue  # a line being written
    for rm in req.get("resourceMetrics", []):
        for sm in rm.get("scopeMetrics", []):
            for m in sm.get("metrics", []):
                if m["name"] in ("ghc_eventlog_HeapSize",
                                 "ghc_eventlog_HeapProfSample"):
                    body = m.get("gauge") or m.get("sum") or {}
                    if body.get("dataPoints"):
                        heap = heap or m["name"]
    for rl in req.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for lr in sl.get("logRecords", []):
                kinds = [a["value"].get("stringValue")
                         for a in lr.get("attributes", [])
                         if a["key"] == "kind"]
                b = (lr.get("body") or {}).get("stringValue")
                if kinds == ["UserMarker"] and b in printed:
                    marker = marker or b
print(f"{heap} {marker!r} {len(printed)}")
sys.exit(0 if heap and marker else 1)
PY

seen=""
while alive "$prog"; do
  if [ $((SECONDS - t0)) -ge $LIVE_TIMEOUT ]; then
    fail "the program still runs after ${LIVE_TIMEOUT}s"
  fi
  if res=$(python3 "$TMP/live_check.py" "$TMP"); then
    # Telemetry read before this liveness check: it arrived before exit.
    if alive "$prog"; then
      seen="$res after $((SECONDS - t0))s"
    fi
    break
  fi
  sleep 0.5
done

rc=0
if [ -n "$seen" ]; then
  echo "ok: while the program ran: heap metric, UserMarker, rounds printed" \
       "then: $seen"
  printed_then=$(echo "$seen" | awk '{print $(NF-2)}')
  if [ "$printed_then" -lt $ROUNDS ]; then
    echo "ok: seen before the program printed its last round" \
         "($printed_then of $ROUNDS rounds)"
  else
    echo "FAIL: seen only after all $ROUNDS rounds were printed"; rc=1
  fi
else
  echo "FAIL: no heap and UserMarker telemetry arrived while the program ran"
  python3 "$TMP/live_check.py" "$TMP"
  rc=1
fi

# ---- the end: program and daemon exit, every marker arrived ----------------
wait_exit "$prog" $((LIVE_TIMEOUT - (SECONDS - t0) + 10))
st=$?
[ $st = 0 ] || { cat "$TMP/prog.err"; echo "FAIL: the program exited $st"; rc=1; }
wait_exit "$dpid" 120
st=$?
if [ $st = 0 ]; then
  echo "ok: daemon exited 0 at the end of the FIFO"
else
  tail -n 30 "$TMP/daemon.err"; echo "FAIL: daemon exited $st"; rc=1
fi
grep -i 'drop\|warn\|error' "$TMP/daemon.err" | head -n 10 | sed 's/^/  daemon: /'

python3 - "$TMP" "$ROUNDS" <<'PY' || rc=1
import json, re, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
out = open(f"{tmp}/prog.out").read()
want = ["Summing %s numbers" % n
        for n in re.findall(r"Generating (\d+) random numbers", out)]
got, heap = [], {}
for line in open(f"{tmp}/received.jsonl"):
    req = json.loads(line).get("request") or {}
    for rl in req.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for lr in sl.get("logRecords", []):
                kinds = [a["value"].get("stringValue")
                         for a in lr.get("attributes", [])
                         if a["key"] == "kind"]
                if kinds == ["UserMarker"]:
                    got.append((int(lr.get("timeUnixNano") or 0),
                                lr["body"]["stringValue"]))
    for rm in req.get("resourceMetrics", []):
        for sm in rm.get("scopeMetrics", []):
            for m in sm.get("metrics", []):
                body = m.get("gauge") or m.get("sum") or {}
                heap[m["name"]] = (heap.get(m["name"], 0)
                                   + len(body.get("dataPoints", [])))
# The capabilities' buffers reach the pipe out of time order, so records
# arrive out of order too: put them in the order of their timestamps.
times = [t for t, _ in got]
got = [b for _, b in sorted(got)]
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAIL: ") + what)
    bad += not ok
check(f"{rounds} rounds on stdout ({len(want)})", len(want) == rounds)
check("every UserMarker record has a timestamp", all(times))
check(f"UserMarker records ({len(got)}) == the markers of every printed "
      f"round, in timestamp order", got == want)
if got != want:
    print("  got: ", got)
    print("  want:", want)
for m in ("ghc_eventlog_HeapSize", "ghc_eventlog_HeapProfSample"):
    check(f"{m}: {heap.get(m, 0)} data points", heap.get(m, 0) > 0)
sys.exit(1 if bad else 0)
PY
echo "run time: $((SECONDS - t0))s from the program's start"
[ $rc = 0 ] && echo "PASS: telemetry arrived while the GHC program ran"
exit $rc
