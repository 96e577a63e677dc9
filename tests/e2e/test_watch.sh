#!/usr/bin/env bash
# `eventlog-live watch -- PROGRAM` (issue 14) with a real GHC 9.0 program
# (tests/haskell/live_socket, plain: -threaded -eventlog -rtsopts; its
# default work fills a 2 MiB capability buffer every few seconds):
#  - watch prints the web view's URL; while the program still runs (it has
#    not printed its "end" line), /metrics on that URL serves
#    ghc_eventlog_HeapSize_bytes and /api/data has HeapSize points and
#    user markers whose texts the program printed on stdout (the
#    independent channel);
#  - the program got its RTS options as its first arguments, "+RTS -l
#    -ol<fifo> -hT -RTS" before its own (/proc/PID/cmdline), and the
#    GHCRTS it was given unchanged (/proc/PID/environ): its children
#    inherit nothing of watch's (test_watch_children.sh);
#  - process.command_args (a label on /metrics, read while watch
#    lingers after the program's end) is the command line as given,
#    without the options watch put in;
#  - watch exits with the program's status (0 here; 7 from a wrapper that
#    exits 7); the private FIFO folder is gone afterwards.
set -u
source "$(dirname "$0")/watch_lib.sh"
pl_build plain

echo "== live: watch -hT -- live_socket seconds=15"
mkdir -p "$T/run"
(cd "$T/run" && GHCRTS=-A1m exec "$EL" watch -v info -hT -- "$PROG" \
  seconds=15 tag=w) < /dev/null > "$T/live.out" 2> "$T/live.err" &
WPID=$!
PIDS+=("$WPID")
wl_url live
pass "live: watch printed $URL"
wl_program_pid live
env=$(tr '\0' '\n' < "/proc/$PPID_/environ" 2>/dev/null | grep '^GHCRTS=')
[ "$env" = GHCRTS=-A1m ] && pass "live: the program's $env, unchanged" ||
  fail "live: the program's GHCRTS is '$env', want GHCRTS=-A1m"
cmd=$(tr '\0' ' ' < "/proc/$PPID_/cmdline" 2>/dev/null)
if [[ "$cmd" =~ ^$PROG\ \+RTS\ -l\ -ol$T/eventlog-live-watch\.[A-Za-z0-9]+/eventlog\.fifo\ -hT\ -RTS\ seconds=15\ tag=w\ $ ]]
then pass "live: the program's command line: $cmd"
else fail "live: the program's command line is '$cmd'"; fi
fifo=$(sed -n 's/.*Reading eventlog from \(.*\)$/\1/p' "$T/live.err" | head -1)
[ -p "$fifo" ] && pass "live: the FIFO $fifo exists during the run" ||
  fail "live: no FIFO ('$fifo')"

# Poll /metrics until HeapSize is there and /api/data has a marker,
# noting whether the program still ran (no "end" line yet) when they were.
# (Under watch the heap gauges are not aggregated, so their first points
# can be exported before the first marker is.)
got=
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ]; do
  running=1
  grep -q '^end ' "$T/live.out" && running=0
  if curl -s -m 5 "${URL}metrics" > "$T/metrics" 2>/dev/null &&
     grep -q '^ghc_eventlog_HeapSize_bytes' "$T/metrics" &&
     curl -s -m 5 "${URL}api/data" 2>/dev/null | grep -q '"markers":\[\['; then
    got=$running
    break
  fi
  alive "$WPID" || break
  sleep 0.5
done
if [ "$got" = 1 ]; then
  pass "live: /metrics served $(grep -m1 '^ghc_eventlog_HeapSize_bytes' "$T/metrics") while the program ran"
  # service.name defaults to the program's file name (no --service-name).
  want_svc=$(basename "$PROG")
  grep -m1 '^ghc_eventlog_HeapSize_bytes' "$T/metrics" |
    grep -q "service_name=\"$want_svc\"" &&
    pass "live: service.name is the program's name, $want_svc" ||
    fail "live: service.name is not '$want_svc'"
  curl -s -m 5 "${URL}api/data" > "$T/data.json"
  python3 - "$T/data.json" "$T/live.out" <<'PY' && pass "live: /api/data has HeapSize points and the program's markers" || fail "live: /api/data"
import json, sys
d = json.load(open(sys.argv[1]))
printed = {" ".join(l.split()[3:]) for l in open(sys.argv[2]) if l.startswith("marker ")}
hs = [m for m in d["metrics"] if m["name"] == "ghc_eventlog_HeapSize"]
pts = sum(len(s["points"]) for m in hs for s in m["series"])
marks = {t for _, t in d["markers"]}
print(f"   HeapSize points {pts}, markers {len(marks)}, of them printed by the program {len(marks & printed)}")
sys.exit(0 if pts > 0 and marks and marks <= printed else 1)
PY
else
  tail -n 5 "$T/live.err"
  fail "live: no ghc_eventlog_HeapSize_bytes on ${URL}metrics while the program ran (got='$got')"
fi
wl_exits live 0 60 "watch exited 0, the program's status"
grep -q '^end ' "$T/live.out" && pass "live: the program ran to its end" ||
  fail "live: the program did not print its end line"
if [ -n "$fifo" ] && [ ! -e "$(dirname "$fifo")" ] &&
   ! ls -d "$T"/eventlog-live-watch.* >/dev/null 2>&1; then
  pass "live: the private folder $(dirname "$fifo") is gone"
else
  fail "live: a private folder is left: $(ls -d "$T"/eventlog-live-watch.* 2>/dev/null)"
fi

echo "== args: --linger -hT -- live_socket seconds=2 'tag=a b'"
# process.command_args is the command line as the test gave it, without the
# "+RTS -l -ol<fifo> -hT -RTS" watch put in (a random path per run; the
# program's PROGRAM_ARGS holds it). GHC 9.0 writes PROGRAM_ARGS with its
# global buffer at exit: read once the program ended, while watch lingers.
wl_start args --linger -hT -- "$PROG" seconds=2 'tag=a b'
wl_url args
wait_line "$T/args.err" 'the web view stays at' 60 || fail "args: no linger"
curl -s -m 5 "${URL}metrics" > "$T/args.metrics" 2>/dev/null
python3 - "$T/args.metrics" "$PROG" <<'PY' && pass "args: process.command_args is the command line given" || fail "args: process.command_args"
import json, re, sys
want = [sys.argv[2], "seconds=2", "tag=a b"]
got = None
for line in open(sys.argv[1]):
    m = re.search(r'process_command_args="((?:[^"\\]|\\.)*)"', line)
    if m:
        esc = {"n": "\n", "\\": "\\", '"': '"'}
        got = json.loads(re.sub(r'\\(.)', lambda x: esc[x.group(1)], m.group(1)))
        break
print(f"   process_command_args {got}")
sys.exit(0 if got == want else 1)
PY
kill -INT "$WPID" 2>/dev/null
wl_exits args 0 30 "SIGINT ended the linger, status 0"

echo "== status: a program that exits 7"
wl_start status -- sh -c '"$0" "$@"; exit 7' "$PROG" seconds=2 tag=s
wl_exits status 7 60 "watch exited 7, the program's status"
ls -d "$T"/eventlog-live-watch.* >/dev/null 2>&1 &&
  fail "status: a private folder is left" || pass "status: no folder left"

# service.name from OTEL_RESOURCE_ATTRIBUTES as the daemon reads it (h49:
# a substring test missed "service.name = foo", spaces allowed, and took
# "my.service.name=foo" for it, leaving "undefined"): the console's
# resources name foo, then the program.
echo "== service.name from OTEL_RESOURCE_ATTRIBUTES"
for ra in 'service.name = foo:foo' "my.service.name=foo:$(basename "$PROG")"; do
  OTEL_RESOURCE_ATTRIBUTES=${ra%:*} OTEL_METRICS_EXPORTER=console \
    OTEL_LOGS_EXPORTER=none OTEL_TRACES_EXPORTER=none \
    OTEL_PROFILES_EXPORTER=none timeout 60 "$EL" watch --no-linger -- \
    "$PROG" seconds=1 tag=r < /dev/null > "$T/ra.out" 2> "$T/ra.err"
  got=$(grep -o '"service.name","value":{"stringValue":"[^"]*"' "$T/ra.out" |
    sed 's/.*"stringValue":"//; s/"$//' | sort -u | tr '\n' ' ')
  [ "$got" = "${ra##*:} " ] &&
    pass "OTEL_RESOURCE_ATTRIBUTES='${ra%:*}': service.name $got" ||
    fail "OTEL_RESOURCE_ATTRIBUTES='${ra%:*}': service.name '$got', want '${ra##*:}'"
done
pl_finish
