#!/usr/bin/env bash
# End-to-end: eventlog-live-otelcol reads recorded eventlogs from files and
# exports to the test OTLP receiver over HTTP/protobuf; every value the
# receiver decoded is checked against values recomputed independently from
# the ghc-events `.reference` texts (tests/e2e/otelcol_check.py):
# heap metrics (every event, then the last per 100 ms window), heap
# censuses (-hc: residency per cost-centre stack label, every census),
# user markers (TRACE), user messages (DEBUG), thread labels, capability
# usage totals (sums of run and GC intervals), GC statistics
# (gc_copied/slop/fragmentation per GC_STATS_GHC event), productivity per
# capability (running totals of run and GC intervals), cost-centre
# profile stacks (PROF_SAMPLE_COST_CENTRE with HEAP_PROF_COST_CENTRE names),
# thread-state Running spans (one trace id per thread).
# ctest-labels: e2e
source "$(dirname "$0")/otelcol_lib.sh"

start_receiver "$WORK/rcv.jsonl"
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$HTTP_PORT
export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf

config() {  # config AGGREGATE [TRACES]
  cat <<YAML
processors:
  logs:
    thread_label: {export: 1s}
    user_marker: {export: 1s}
    user_message: {export: 1s}
  metrics:
    heap_size: {aggregate: $1, export: 1s}
    heap_live: {aggregate: $1, export: 1s}
    blocks_size: {aggregate: $1, export: 1s}
    heap_allocated: {aggregate: $1, export: 1s}
    heap_prof_sample: {aggregate: $1, export: 1s}
    capability_usage: {aggregate: $1, export: 1s}
    gc_copied: {aggregate: $1, export: 1s}
    gc_slop: {aggregate: $1, export: 1s}
    gc_fragmentation: {aggregate: $1, export: 1s}
    productivity: {aggregate: $1, export: 1s}
  traces:
    thread_state: {export: ${2:-false}}
    capability_usage: {export: ${2:-false}}
  profiles:
    cost_centre_stack_profile: {export: 1s}
YAML
}
config false true >"$WORK/exact.yaml"
config 0.1s >"$WORK/agg.yaml"

fail=0
# file  breakdown  checks
cases=(
  "ghc-9.0/oddball-hT -hT heap,gcstats,census,markers,messages,labels,capusage,productivity,threadspans"
  "ghc-9.0/heapy-hT -hT heap,gcstats,census,markers,messages,labels,capusage,productivity"
  "ghc-9.0/heapy-prof-hy -hy heap,gcstats,census,markers,messages,labels"
  "ghc-9.0/threads -hT heap,gcstats,markers,messages,labels,capusage,productivity,threadspans"
  "ghc-events/ghc-9.2-events -hT heap,gcstats,markers,labels"
  "ghc-events/parallelTest -hT gcstats,capusage,productivity"
  "ghc-9.0/heapy-prof-hc -hc heap,census,markers,labels,ccprofile"
  "ghc-events/time-prof -hT heap,ccprofile"
)
n=0
for c in "${cases[@]}"; do
  read -r name bd checks <<<"$c"
  for mode in exact agg; do
    n=$((n + 1))
    svc="t$n"
    agg_ns=0; [ $mode = agg ] && agg_ns=100000000
    # Unset breakdown flag for files whose args carry -h (checks fallback).
    flag=$bd; [ "$name" = ghc-9.0/oddball-hT ] && [ $mode = agg ] && flag=
    echo "== $name ($mode) $flag"
    if ! "$DAEMON" --service-name "$svc" --config "$WORK/$mode.yaml" \
        --eventlog-file "$EL_EVENTLOGS/$name.eventlog" $flag \
        2>"$WORK/daemon.err"; then
      echo "FAIL daemon exit status"; cat "$WORK/daemon.err"; fail=1; continue
    fi
    grep -q "error" "$WORK/daemon.err" && { echo "daemon stderr:"; cat "$WORK/daemon.err"; }
    c=$checks; [ $mode = agg ] && c=${checks/,threadspans/}  # spans: exact only
    $CHECK "$EL_EVENTLOGS/$name.eventlog.reference" "$WORK/rcv.jsonl" \
      "$svc" $agg_ns "$c" "$bd" || fail=1
  done
done

# internal_log_message: the daemon's own WARN about -hb arrives as a log
# record (severity WARN = 13) under the resource eventlog-live-otelcol-for-<svc>.
"$DAEMON" --service-name hb --eventlog-file "$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog" \
  -hb 2>/dev/null || { echo "FAIL -hb run"; fail=1; }
python3 - "$WORK/rcv.jsonl" <<'PY' && echo "ok   internal log record" || { echo "FAIL internal log record"; fail=1; }
import json, sys
for line in open(sys.argv[1]):
    for rl in (json.loads(line).get("request") or {}).get("resourceLogs", []):
        a = {x["key"]: x["value"].get("stringValue") for x in rl["resource"]["attributes"]}
        if a.get("service.name") != "eventlog-live-otelcol-for-hb":
            continue
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                if r["body"]["stringValue"] == "Unsupported heap profile breakdown -hb" \
                        and r["severityNumber"] == 13:
                    sys.exit(0)
sys.exit(1)
PY
exit $fail
