#!/usr/bin/env bash
# End-to-end: the daemon's live web view (--web-port) in Debian's Chromium,
# driven by playwright-core (tests/web/check.js).
#
# 1. File source: oddball-hT replayed at full speed, then served until
#    interrupted. The page loads without console errors; its charts have
#    data points; the counts match the data endpoint (heap profile sample
#    times) and the ghc-events .reference (an independent decoder: user
#    markers, threads created, GCs started, last heap size); the numbers
#    it shows too (check.js checkNumbers): axis labels fully visible and
#    of the data's magnitude, allocation total, capability usage within
#    the reference's capabilities, each thread's state (finished threads
#    "Finished"), one shared time range, marker labels apart.
# 2. Socket source: el_peer plays the program (serves oddball-hT, then
#    holds the connection, recording what it receives); the daemon runs
#    with --control-port. Clicking "Request heap census" must deliver the
#    22-byte control message of docs/control.md to the peer.
# Screenshots: $EL_BUILD_DIR/test_web-file.png, test_web-socket.png.
# Exit 0 pass, 1 fail, 77 skip.
# ctest-labels: asan
set -u
source "$(dirname "$0")/serve_lib.sh" web-test
LOG=$EVENTLOGS/ghc-9.0/oddball-hT.eventlog
REF=$LOG.reference

[ -x /usr/bin/chromium ] || skip "chromium not installed (apt-get install chromium)"
command -v node >/dev/null || skip "node missing"
[ -d "$SRC/tests/web/node_modules/playwright-core" ] ||
  skip "tests/web: run npm ci (scripts/setup.sh)"
sv_option --web-port
[ -x "$PEER" ] || skip "no el_peer"
[ -f "$REF" ] || skip "$REF missing"

# The defaults with the trace processors on (thread states, GC pauses) and
# every window 1 s, so a live stream shows up at once.
"$DAEMON" --print-defaults |
  sed -e '/^  traces:/,/^  [a-z]/ s/export: false/export: true/' \
      -e 's/^\(      export:\) [0-9][0-9]*s$/\1 1s/' > "$TMP/config.yaml"
grep -q 'export: true' "$TMP/config.yaml" || fail "could not enable the traces"

# Expectations from the reference.
heap_size=$(sed -n 's/.*size of heap capset 0: \([0-9]*\) bytes/\1/p' "$REF" | tail -1)
markers=$(grep -c ': marker: ' "$REF")
threads=$(grep -c ': creating thread ' "$REF")
gcs=$(grep -c ': starting GC$' "$REF")
# Numbers the page must show, from the reference alone: the capabilities,
# the bytes allocated (the last "total bytes till now" of each capability),
# the program's start in Unix ms (its WALL_CLOCK_TIME minus that event's
# time since the RTS started) and the state each thread's last run/stop
# event leaves it in.
python3 - "$REF" > "$TMP/ref-numbers.json" <<'PY' || fail "cannot read $REF"
import json, re, sys
caps, alloc, last, start_ms = set(), {}, {}, None
pat = re.compile(r"^(\d+): cap (\d+): (.*)$")
wall = re.compile(r"^(\d+): capset \d+: wall clock time (\d+)s (\d+)ns")
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    w = wall.match(line)
    if w and start_ms is None:
        start_ms = int(w[2]) * 1000 + int(w[3]) / 1e6 - int(w[1]) / 1e6
    m = pat.match(line)
    if not m:
        continue
    t, cap, text = int(m[1]), int(m[2]), m[3]
    caps.add(cap)
    a = re.match(r"allocated on heap capset \d+: (\d+) total bytes", text)
    if a and t >= alloc.get(cap, (-1, 0))[0]:
        alloc[cap] = (t, int(a[1]))
    r = re.match(r"(running|stopping) thread (\d+)(?: \((.*)\))?$", text)
    if r and t >= last.get(r[2], (-1, ""))[0]:
        # a preempted or moving thread waits on a run queue (docs/web.md)
        state = ("Running" if r[1] == "running" else
                 "Finished" if r[3] == "thread finished" else
                 "Runnable" if re.match(r"(thread yielding|heap overflow|"
                                        r"stack overflow|thread migrating)",
                                        r[3] or "") else "Blocked")
        last[r[2]] = (t, state)
print(json.dumps({"caps": len(caps), "alloc_total": sum(v for _, v in alloc.values()),
                  "start_ms": start_ms,
                  "thread_states": {k: v for k, (_, v) in last.items()}}))
PY
cat > "$TMP/expect.json" <<EOF
{"heap_size": $heap_size, "markers": $markers, "threads": $threads,
 "gc_pauses": $gcs, "service": "oddball",
 $(sed -e 's/^{//' -e 's/}$//' "$TMP/ref-numbers.json")}
EOF
echo "reference: heap size $heap_size, $markers markers, $threads threads, $gcs GCs, $(cat "$TMP/ref-numbers.json")"

check() {  # check NAME URL ARGS...: run the browser check
  local name=$1 url=$2
  shift 2
  rm -rf "$TMP/udd-$name"
  timeout 120 node "$SRC/tests/web/check.js" --url "$url" \
    --screenshot "$BUILD/test_web-$name.png" --user-data-dir "$TMP/udd-$name" \
    --expect "$TMP/expect.json" "$@" > "$TMP/check-$name.json" 2> "$TMP/check-$name.err"
  local rc=$?
  cat "$TMP/check-$name.json"
  [ $rc = 0 ] || { cat "$TMP/check-$name.err"; return 1; }
  [ -s "$BUILD/test_web-$name.png" ] || { echo "no screenshot"; return 1; }
}

rc=0
# {====== 1. file source ======}
sv_daemon file --eventlog-file "$LOG" -hT --service-name oddball \
  --config "$TMP/config.yaml" --web-port 0
fpid=$DPID
sv_port file "web view"
port=$PORT
sv_ended file
# The page and its assets come from the daemon, none from elsewhere.
for f in / /app.js /style.css /uPlot.iife.min.js /uPlot.min.css; do
  code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$f")
  [ "$code" = 200 ] || { echo "FAIL: GET $f -> $code"; rc=1; }
done
if grep -Eo '(src|href)="[a-z]+://[^"]*"' "$SRC"/web/*.html; then
  echo "FAIL: the page loads something from another host"; rc=1
fi
check file "http://127.0.0.1:$port/" --ended ||
  { echo "FAIL: browser check of the file replay"; rc=1; }
stop_pid "$fpid"; st=$?
[ $st = 0 ] || { echo "FAIL: daemon exit status $st after SIGTERM"; rc=1; }

# {====== 2. socket source, control server ======}
"$PEER" --unix "$TMP/sock" --file "$LOG" --record "$TMP/rec" \
  --ready-file "$TMP/ready" --hold-ms 60000 --timeout 90 2> "$TMP/peer.err" &
PIDS+=($!)
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
[ -e "$TMP/ready" ] || fail "el_peer did not start"
sv_daemon sock --eventlog-socket "$TMP/sock" -hT --service-name oddball \
  --config "$TMP/config.yaml" --web-port 0 --control-port 0
sv_port sock "web view"
port=$PORT
# Live: the reference counts may still be arriving; only the census click
# and the charts' data are checked here.
echo '{"heap_size": null, "markers": null, "threads": null, "gc_pauses": 0, "service": "oddball"}' \
  > "$TMP/expect-live.json"
cp "$TMP/expect.json" "$TMP/expect-file.json"
cp "$TMP/expect-live.json" "$TMP/expect.json"
check socket "http://127.0.0.1:$port/" --click-census --live ||
  { echo "FAIL: browser check of the live stream"; rc=1; }
want=f09e978c000f6576656e746c6f672d736f636b657405
got=
for _ in $(seq 50); do
  got=$(od -An -v -tx1 "$TMP/rec" 2>/dev/null | tr -d ' \n')
  [ "$got" = "$want" ] && break
  sleep 0.1
done
[ "$got" = "$want" ] || { echo "FAIL: the peer received '$got', want $want"; rc=1; }

[ $rc = 0 ] || { for f in "$TMP"/*.err; do echo "== $f"; tail -n 5 "$f"; done; exit 1; }
echo "PASS: web view (file replay and live stream with a heap census request)"
