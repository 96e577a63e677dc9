#!/usr/bin/env bash
# The daemon's self-metrics (issue 15; the reference's keys and names):
# internal_event_count and internal_{exported,rejected}_{logs,metrics,
# samples,spans}, cumulative monotonic sums under the daemon's own resource
# eventlog-live-otelcol-for-<service>, sent to the test OTLP receiver.
# Checked against independent counts: the last internal_event_count is the
# number of events of the ghc-events `.reference` text; every exported
# count is at most what the receiver got for that signal (both resources);
# nothing is rejected (the receiver accepts everything); each series never
# decreases. A recorded file is read faster than one export round trip, so
# a second run reads it through a FIFO in two halves, the second sent once
# the receiver holds positive exported-logs and exported-spans counts from
# the first (the spans come after the reorder horizon, 5 s of quiet input:
# capability 1 may still come, docs/lua-api.md §6): the exported counts of
# logs, metrics and spans are then positive.
# Off by default: without a configuration none of them is sent.
# A daemon that keeps serving /metrics after its input ended (its
# --prometheus-port) serves a last sample taken after the final export:
# the exported counts equal what the receiver got, the event count the
# reference's (h73: they stayed at the sample before the final export).
# ctest-labels: e2e
source "$(dirname "$0")/otelcol_lib.sh"
source "$(dirname "$0")/wait_lib.sh"

start_receiver "$WORK/rcv.jsonl"
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$HTTP_PORT
export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
LOG=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
cat >"$WORK/self.yaml" <<'YAML'
processors:
  logs:
    user_marker: {export: 1s}
  metrics:
    heap_size: {export: 1s}
    internal_event_count: {export: 1s}
    internal_exported_logs: {export: 1s}
    internal_rejected_logs: {export: 1s}
    internal_exported_metrics: {export: 1s}
    internal_rejected_metrics: {export: 1s}
    internal_exported_samples: {export: 1s}
    internal_rejected_samples: {export: 1s}
    internal_exported_spans: {export: 1s}
    internal_rejected_spans: {export: 1s}
  traces:
    thread_state: {export: 1s}
YAML
fail=0
"$DAEMON" --service-name self --config "$WORK/self.yaml" -hT \
  --eventlog-file "$LOG" 2>"$WORK/err" || { echo "FAIL daemon exit"; cat "$WORK/err"; fail=1; }
"$DAEMON" --service-name plain -hT --eventlog-file "$LOG" 2>"$WORK/err2" ||
  { echo "FAIL daemon exit (defaults)"; cat "$WORK/err2"; fail=1; }
# exported_positive SERVICE: points of InternalExportedLogs > 0 and of
# InternalExportedSpans > 0 arrived.
exported_positive() {
  python3 - "$WORK/rcv.jsonl" "eventlog-live-otelcol-for-$1" <<'PY'
import json, sys
want = {"eventlog_live_InternalExportedLogs", "eventlog_live_InternalExportedSpans"}
for line in open(sys.argv[1]):
    if sys.argv[2] not in line:
        continue
    for rm in (json.loads(line).get("request") or {}).get("resourceMetrics", []):
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                if m["name"] in want and \
                        any(int(p["asInt"]) > 0 for p in m["sum"]["dataPoints"]):
                    want.discard(m["name"])
sys.exit(1 if want else 0)
PY
}
mkfifo "$WORK/fifo"
half=$(( $(stat -c %s "$LOG") / 2 ))
( exec 3>"$WORK/fifo"; head -c "$half" "$LOG" >&3
  for _ in $(seq 1200); do exported_positive live && break; sleep 0.1; done
  tail -c +"$((half + 1))" "$LOG" >&3 ) &
writer=$!
timeout 300 "$DAEMON" --service-name live --config "$WORK/self.yaml" -hT \
  --eventlog-file "$WORK/fifo" 2>"$WORK/err3" || { echo "FAIL daemon exit (fifo)"; cat "$WORK/err3"; fail=1; }
wait $writer
events=$(sed -n '/^Events:/,$p' "$LOG.reference" | grep -cE '^ *[0-9]+: ')

# The daemon that keeps serving: its /metrics once the input ended, then
# stopped (SIGINT) before the receiver's counts are read.
"$DAEMON" --service-name linger --config "$WORK/self.yaml" -hT -v info \
  --prometheus-port 0 --eventlog-file "$LOG" 2>"$WORK/err4" &
lpid=$!
if wait_line "$WORK/err4" "input ended: still serving" 120; then
  port=$(sed -n 's/.*Starting Prometheus endpoint on \([0-9]*\).*/\1/p' "$WORK/err4" | head -1)
  curl -sf -m 30 "http://127.0.0.1:$port/metrics" >"$WORK/linger.prom" ||
    { echo "FAIL GET /metrics"; fail=1; }
else
  echo "FAIL linger: the input did not end"; cat "$WORK/err4"; fail=1
fi
kill -INT $lpid 2>/dev/null; wait $lpid || true

python3 - "$WORK/rcv.jsonl" "$events" "$WORK/linger.prom" <<'PY' || fail=1
import json, sys
from collections import defaultdict
events = int(sys.argv[2])
OWN = {k: "eventlog-live-otelcol-for-" + k for k in ("self", "plain", "live", "linger")}
got = defaultdict(list)        # (service, name) -> [(t, v, kind, temp, mono)]
recv = defaultdict(int)        # (svc, signal) -> records received, both resources
def svc_of(res):
    a = {x["key"]: x["value"].get("stringValue") for x in res.get("attributes", [])}
    s = a.get("service.name", "")
    for k, own in OWN.items():
        if s in (k, own):
            return k, s == own
    return None, False
for line in open(sys.argv[1]):
    req = json.loads(line).get("request") or {}
    for rm in req.get("resourceMetrics", []):
        svc, own = svc_of(rm["resource"])
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                body = m.get("gauge") or m.get("sum")
                recv[(svc, "metrics")] += len(body["dataPoints"])
                if own:
                    for p in body["dataPoints"]:
                        got[(svc, m["name"])].append(
                            (int(p["timeUnixNano"]), int(p["asInt"]), "sum" in m,
                             body.get("aggregationTemporality"), body.get("isMonotonic"),
                             m.get("unit")))
    for rl in req.get("resourceLogs", []):
        svc, _ = svc_of(rl["resource"])
        recv[(svc, "logs")] += sum(len(sl["logRecords"]) for sl in rl["scopeLogs"])
    for rs in req.get("resourceSpans", []):
        svc, _ = svc_of(rs["resource"])
        recv[(svc, "spans")] += sum(len(ss["spans"]) for ss in rs["scopeSpans"])
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)
names = {"eventlog_live_InternalEventCount": None}
for sig, noun in (("logs", "Logs"), ("metrics", "Metrics"), ("samples", "Samples"),
                  ("spans", "Spans")):
    names["eventlog_live_InternalExported" + noun] = ("exported", sig)
    names["eventlog_live_InternalRejected" + noun] = ("rejected", sig)
for name, what in names.items():
    pts = sorted(got.get(("self", name), []))
    if not pts:
        check(False, f"{name}: no points under {OWN['self']}")
        continue
    vals = [p[1] for p in pts]
    check(all(p[2] and p[3] == 2 and p[4] for p in pts),
          f"{name}: cumulative monotonic sum, unit {pts[0][5]}")
    check(vals == sorted(vals), f"{name}: never decreases ({len(vals)} points)")
    if what is None:
        check(vals[-1] == events, f"{name}: last {vals[-1]} = {events} events of the reference")
    elif what[0] == "rejected":
        check(vals[-1] == 0, f"{name}: nothing rejected")
    else:
        r = recv[("self", what[1])] if what[1] != "samples" else 0
        check(vals[-1] <= r, f"{name}: last {vals[-1]} <= {r} received")
        if what[1] != "samples":
            lv = sorted(got.get(("live", name), []))
            r = recv[("live", what[1])]
            last = lv[-1][1] if lv else None
            check(last is not None and 0 < last <= r,
                  f"{name}, input in two halves: last {last}, 0 < last <= {r} received")
check(not [k for k in got if k[0] == "plain" and k[1].startswith("eventlog_live_Internal")],
      "off by default")
# /metrics of the daemon that kept serving: the last sample
prom = {}
try:
    for line in open(sys.argv[3]):
        if line.startswith("eventlog_live_Internal") and OWN["linger"] in line:
            name = line.split("{")[0].replace("_total", "")
            prom[name] = int(float(line.split()[-1]))
except OSError:
    pass
check(prom.get("eventlog_live_InternalEventCount") == events,
      f"/metrics after the end: InternalEventCount {prom.get('eventlog_live_InternalEventCount')} = {events}")
for sig, noun in (("logs", "Logs"), ("metrics", "Metrics"), ("spans", "Spans")):
    v, r = prom.get("eventlog_live_InternalExported" + noun), recv[("linger", sig)]
    check(v == r and r > 0, f"/metrics after the end: InternalExported{noun} {v} = {r} received")
sys.exit(0 if ok else 1)
PY
exit $fail
