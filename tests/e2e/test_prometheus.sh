#!/usr/bin/env bash
# End-to-end: Debian's Prometheus scrapes eventlog-live-otelcol
# --prometheus-port directly (no collector), and every PromQL expression
# of the demo's Heap and Threads dashboards returns data.
#
# Two daemons replay shared eventlogs at full speed and keep serving
# (docs/web.md): oddball-hT (heap, heap profile, capability usage) and
# ghc-9.2-events (the only recorded eventlog with blocks size and memory
# return events, for the BlocksSize and Mem* panels), both with
# --service-name oddball, the dashboards' default. Prometheus scrapes both
# every second with honor_labels (as demo/config/prometheus.yaml). The
# expressions are extracted from demo/config/grafana-dashboards/{heap,
# threads}.json with tests/demo/check_dashboards.py (template variables
# replaced by their defaults, $__to by now) and run through
# /api/v1/query; each must return a non-empty result (variables: the
# label must be present). Values are checked against the ghc-events
# .reference of oddball-hT (last heap size, live bytes and allocation
# totals per capability), an independent decoder. Exit 0/1/77.
# ctest-labels: asan
set -u
source "$(dirname "$0")/serve_lib.sh" prom-test
ODD=$EVENTLOGS/ghc-9.0/oddball-hT.eventlog
G92=$EVENTLOGS/ghc-events/ghc-9.2-events.eventlog

command -v prometheus >/dev/null || skip "prometheus not installed"
sv_option --prometheus-port
[ -f "$ODD" ] && [ -f "$G92" ] || skip "eventlogs missing"

free_port() {
  python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools" && pwd)/free_port.py"
}

# Metrics also go to the console exporter (OTLP/JSON on stdout): the
# collector's naming applied to them by tests/demo/otlp_prom_names.py must
# give the names /metrics serves.
export OTEL_METRICS_EXPORTER=console
start_daemon() {  # start_daemon NAME EVENTLOG: sets PORT
  sv_daemon "$1" --eventlog-file "$2" -hT --service-name oddball \
    --prometheus-port 0
  sv_port "$1" "Prometheus endpoint"
  sv_ended "$1"
}
start_daemon oddball "$ODD"; P1=$PORT
start_daemon ghc92 "$G92"; P2=$PORT
echo "daemons: oddball-hT on $P1, ghc-9.2-events on $P2 (replays done)"

# The endpoint itself: content types, OpenMetrics on request, 404.
ct=$(curl -s -m 5 -o "$TMP/m.txt" -w '%{content_type}' "http://127.0.0.1:$P1/metrics")
case $ct in "text/plain; version=0.0.4"*) ;; *) fail "content type '$ct'" ;; esac
ct=$(curl -s -m 5 -o "$TMP/om.txt" -w '%{content_type}' \
  -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5' \
  "http://127.0.0.1:$P1/metrics")
case $ct in "application/openmetrics-text; version=1.0.0"*) ;; *) fail "OpenMetrics content type '$ct'" ;; esac
tail -n 1 "$TMP/om.txt" | grep -qx '# EOF' || fail "OpenMetrics without # EOF"
grep -q '^# TYPE ghc_eventlog_HeapAllocated_bytes counter$' "$TMP/om.txt" ||
  fail "OpenMetrics counter family not named without _total"
grep -q '^# TYPE ghc_eventlog_HeapAllocated_bytes_total counter$' "$TMP/m.txt" ||
  fail "text format counter family"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P1/nope")
[ "$code" = 404 ] || fail "/nope -> $code"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -d x=1 "http://127.0.0.1:$P1/metrics")
[ "$code" = 405 ] || fail "POST /metrics -> $code"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -I "http://127.0.0.1:$P1/metrics")
[ "$code" = 200 ] || fail "HEAD /metrics -> $code"
# A client that sends half a request and stalls blocks nobody; 20 scrapes
# at once all get the full answer.
exec 3<>"/dev/tcp/127.0.0.1/$P1"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&3
cpids=()
for k in $(seq 20); do
  curl -s -m 10 "http://127.0.0.1:$P1/metrics" > "$TMP/par$k.txt" &
  cpids+=($!)
done
wait "${cpids[@]}"
for k in $(seq 20); do
  cmp -s "$TMP/par$k.txt" "$TMP/m.txt" || fail "parallel scrape $k differs"
done
exec 3>&-
if command -v promtool >/dev/null; then
  # Parse errors fail; lint remarks on the GHC camelCase names do not.
  promtool check metrics < "$TMP/m.txt" > "$TMP/promtool.out" 2>&1
  grep -v "should be written in 'snake_case'\|use base unit" "$TMP/promtool.out" |
    grep . && fail "promtool rejects /metrics"
fi

# Names: /metrics against the collector's rules applied to the same
# telemetry (OTLP/JSON from the console exporter) by the demo's translator.
curl -s -m 5 "http://127.0.0.1:$P2/metrics" > "$TMP/m2.txt"
python3 "$SRC/tests/demo/otlp_prom_names.py" "$TMP/names.json" \
  "$TMP/oddball.out" "$TMP/ghc92.out" || fail "otlp_prom_names.py failed"
python3 - "$TMP/names.json" "$TMP/m.txt" "$TMP/m2.txt" <<'PY' || fail "names differ from the collector's"
import json, re, sys
names = json.load(open(sys.argv[1]))
want = names["metrics"]
extra = set(names["extra_labels"])
got = {}
for path in sys.argv[2:]:
    for line in open(path, encoding="utf-8"):
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? ', line)
        if not m or line.startswith("#"):
            continue
        labs = re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(2) or "")
        got.setdefault(m.group(1), set()).update(labs)
bad = 0
if set(got) != set(want):
    print(f"metric names: ours {sorted(got)}, collector {sorted(want)}")
    bad = 1
for name, labs in got.items():
    extra_here = labs - set(want.get(name, [])) - extra
    if extra_here:
        print(f"{name}: labels {sorted(extra_here)} the collector would not set")
        bad = 1
print(f"{len(got)} metric names as the collector names them")
sys.exit(bad)
PY

PROM_PORT=$(free_port)
cat > "$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: eventlog-live
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:$P1", "127.0.0.1:$P2"]
EOF
prometheus --config.file="$TMP/prometheus.yml" \
  --storage.tsdb.path="$TMP/prometheus-data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
  > "$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
PROM_URL=http://127.0.0.1:$PROM_PORT
ok=
for _ in $(seq 300); do
  curl -sf -m 2 "$PROM_URL/-/ready" >/dev/null 2>&1 && { ok=1; break; }
  sleep 0.1
done
[ -n "$ok" ] || { cat "$TMP/prometheus.log"; fail "prometheus not ready"; }

# Expected values from the reference (independent of our decoder): the
# last heap size / live data of capset 0, the last allocation total of
# each capability.
REF=$ODD.reference
heap_size=$(sed -n 's/.*size of heap capset 0: \([0-9]*\) bytes/\1/p' "$REF" | tail -1)
heap_live=$(sed -n 's/.*live data in heap capset 0: \([0-9]*\) bytes/\1/p' "$REF" | tail -1)
alloc0=$(sed -n 's/.*cap 0: allocated on heap capset 0: \([0-9]*\) total.*/\1/p' "$REF" | tail -1)
alloc1=$(sed -n 's/.*cap 1: allocated on heap capset 0: \([0-9]*\) total.*/\1/p' "$REF" | tail -1)

python3 - "$SRC" "$PROM_URL" "127.0.0.1:$P1" "$heap_size" "$heap_live" \
  "$alloc0" "$alloc1" <<'PY'
import json, os, sys, time, urllib.parse, urllib.request
src, url, inst1 = sys.argv[1], sys.argv[2], sys.argv[3]
want = dict(zip(["size", "live", "alloc0", "alloc1"], sys.argv[4:8]))
sys.path.insert(0, os.path.join(src, "tests", "demo"))
import check_dashboards as cd
import promql_names

now = time.time()

class Dash(cd.Dash):
    def sample(self, name, fmt=None):
        if name == "__to":
            return str(int(now)) if fmt == "date:seconds" else str(int(now * 1000))
        if name == "__from":
            return str(int((now - 900) * 1000))
        return super().sample(name, fmt)

def query(expr):
    q = urllib.parse.urlencode({"query": expr, "time": f"{time.time():.3f}"})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{expr}: {body}")
    return body["data"]["result"]

checks = []   # (where, expr, label or None)
for name in ("heap", "threads"):
    path = os.path.join(src, "demo", "config", "grafana-dashboards", name + ".json")
    d = Dash(path, json.load(open(path, encoding="utf-8")))
    for where, expr, _ in cd.prom_exprs(d):
        lv = promql_names.label_values_query(expr)
        if lv is not None:
            sel, lab = lv
            checks.append((where, d.substitute(sel or "up"), lab))
        else:
            checks.append((where, d.substitute(expr), None))
assert len(checks) >= 10, f"only {len(checks)} expressions found"

def ok(res, lab):
    if not res:
        return False
    return lab is None or any(lab in r["metric"] for r in res)

# rate(...[1m]) needs two scrapes: retry every expression for up to 60 s.
pending = list(checks)
deadline = time.time() + 60
while pending and time.time() < deadline:
    pending = [c for c in pending if not ok(query(c[1]), c[2])]
    if pending:
        time.sleep(1)
failed = 0
for where, expr, lab in checks:
    res = query(expr)
    if ok(res, lab):
        vals = ", ".join(f"{r['value'][1]}" for r in res[:3])
        print(f"ok   {where}: {len(res)} series ({vals}{', ...' if len(res) > 3 else ''})")
    else:
        failed += 1
        print(f"FAIL {where}: no data for {expr!r}" + (f" with label {lab}" if lab else ""))

# The test can fail: a name without the unit suffix has no data.
if query('ghc_eventlog_HeapSize{service_name="oddball"}'):
    failed += 1
    print("FAIL: ghc_eventlog_HeapSize without _bytes returned data")

# Values from the reference.
def one(expr):
    res = query(expr)
    return [r["value"][1] for r in res]
sel = f'service_name="oddball",job="oddball",instance="{inst1}"'
for expr, exp in [
        (f"ghc_eventlog_HeapSize_bytes{{{sel}}}", want["size"]),
        (f"ghc_eventlog_HeapLive_bytes{{{sel}}}", want["live"]),
        (f'ghc_eventlog_HeapAllocated_bytes_total{{{sel},evCap="0"}}', want["alloc0"]),
        (f'ghc_eventlog_HeapAllocated_bytes_total{{{sel},evCap="1"}}', want["alloc1"])]:
    got = one(expr)
    if got != [exp]:
        failed += 1
        print(f"FAIL {expr}: {got}, the reference says {exp}")
    else:
        print(f"ok   {expr} = {exp} (reference)")
# Labels the dashboards and Prometheus rely on.
res = query(f"ghc_eventlog_HeapProfSample_bytes{{{sel}}}")
labs = set().union(*(r["metric"].keys() for r in res)) if res else set()
for lab in ("heapProfLabel", "heapProfBreakdown", "otel_scope_name"):
    if lab not in labs:
        failed += 1
        print(f"FAIL: HeapProfSample has no label {lab} ({sorted(labs)})")
for lab in ("heapProfSampleEra", "heapProfId", "evCap"):
    if lab in labs:
        failed += 1
        print(f"FAIL: HeapProfSample keeps {lab} (the demo collector drops it)")
print(f"{len(checks)} dashboard expressions, {failed} problem(s)")
sys.exit(1 if failed else 0)
PY
rc=$?
[ $rc = 0 ] || { tail -5 "$TMP/prometheus.log"; fail "PromQL checks"; }
echo "PASS: the Heap and Threads dashboards' PromQL return data from the daemon"
