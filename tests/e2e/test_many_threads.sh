#!/usr/bin/env bash
# Issue 13: memory must not grow with every thread a program ever made.
# A stream of 1,000,000 short-lived threads (tests/tools/many_threads.lua:
# thread k runs 4 us on capability k % 2, every 10th is labelled) goes
# through the daemon (exporters none):
#   - peak RSS <= 64 MiB with the default config and with every processor
#     on (before the bound: 1.5 GB);
#   - with metrics.capability_usage.max_threads = 100 and an export every
#     2 s (console exporter): no export request carries more than 100
#     thread series; the time of the others is in
#     user="other"; and, computed by hand, the final values of every
#     Mutator series of a capability add up to 500,000 threads x 4000 ns.
# ctest-labels: e2e
set -euo pipefail
: "${EL_BIN:?}"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
S=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
N=1000000
LIMIT_KB=$((64 * 1024))

lua5.4 "$S/tests/tools/many_threads.lua" $N "$tmp/t.eventlog"
"$EL_BIN" stats "$tmp/t.eventlog" | grep -q "^  CREATE_THREAD  *0  *$N " \
  || { echo "FAIL: the generated log does not hold $N CREATE_THREAD"; exit 1; }

export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
"$D" --print-defaults | sed 's/^\(      export:\) false$/\1 true/' >"$tmp/all.yaml"
grep -q "^      export: false" "$tmp/all.yaml" && { echo "FAIL: all.yaml"; exit 1; }

rss() {  # rss LABEL DAEMON-ARGS...: run, print and check peak RSS
  local label=$1; shift
  /usr/bin/time -f "%M" -o "$tmp/rss" "$D" --eventlog-file "$tmp/t.eventlog" \
    --service-name many "$@" >/dev/null 2>"$tmp/err" \
    || { cat "$tmp/err"; echo "FAIL: $label: daemon failed"; fail=1; return; }
  local kb
  kb=$(tail -n 1 "$tmp/rss")
  if [ "$kb" -le $LIMIT_KB ]; then
    echo "ok: $label: peak RSS $((kb / 1024)) MiB for $N threads (<= 64)"
  else
    echo "FAIL: $label: peak RSS $((kb / 1024)) MiB for $N threads (> 64)"
    fail=1
  fi
}
rss "default config"
rss "every processor on" --config "$tmp/all.yaml"

cat >"$tmp/cu.yaml" <<'YAML'
processors:
  metrics:
    capability_usage:
      max_threads: 100
      export: 2s
YAML
OTEL_METRICS_EXPORTER=console "$D" --eventlog-file "$tmp/t.eventlog" \
  --service-name many --config "$tmp/cu.yaml" >"$tmp/cu.jsonl" 2>"$tmp/err" \
  || { cat "$tmp/err"; echo "FAIL: console run"; exit 1; }
python3 - "$tmp/cu.jsonl" $N <<'PY' || fail=1
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
final = {}        # (cap, user) -> latest cumulative value (Mutator)
worst = 0         # most thread series in one request
requests = 0
for line in open(path):
    req = json.loads(line)
    series = set()
    for rm in req.get("resourceMetrics", []):
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                if m["name"] != "ghc_eventlog_CapabilityUsageDuration":
                    continue
                requests += 1
                for p in m["sum"]["dataPoints"]:
                    a = {x["key"]: list(x["value"].values())[0]
                         for x in p["attributes"]}
                    if a["category"] != "Mutator":
                        continue
                    cap, user = int(a["cap"]), a["user"]
                    k = (cap, user)
                    v = int(p["asInt"])
                    # cumulative: a later point of a series is never lower
                    final[k] = max(final.get(k, 0), v)
                    if user != "other":
                        series.add(k)
    worst = max(worst, len(series))
bad = 0
def check(ok, msg):
    global bad
    print(("ok: " if ok else "FAIL: ") + msg)
    bad += not ok
check(requests >= 3, f"{requests} export requests (one every 2 s of a 10 s log)")
check(0 < worst <= 100,
      f"at most 100 thread series in one request (most: {worst})")
for cap in (0, 1):
    users = [u for (c, u) in final if c == cap]
    total = sum(v for (c, u), v in final.items() if c == cap)
    want = (n // 2) * 4000
    check("other" in users,
          f"cap {cap}: the other threads' time is in user=other")
    check(total == want,
          f"cap {cap}: Mutator series add up to {total} ns, "
          f"by hand {n // 2} threads x 4000 ns = {want}")
sys.exit(1 if bad else 0)
PY
exit $fail
