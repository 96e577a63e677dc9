#!/usr/bin/env bash
# A recorded GHC 9.0 eventlog writes its init events (OSPROCESS_PID,
# RTS_IDENTIFIER, PROGRAM_ARGS) in the global block at the end of the
# file. Read with --eventlog-file (or stdin redirected from the file), the
# scan ahead finds them, so every record exported to the receiver, the
# first ones included, carries the complete program resource:
# process.runtime.name = GHC, process.runtime.description = the RTS
# identifier, process.runtime.version = its GHC version, process.pid and
# process.command_args (docs/otlp.md "Resources"). Before the scan kept
# them, the spans exported before the global block carried service.name
# only (threads: all 138,470). Live input (a pipe) whose init events
# come first has the resource from el.on_session on (ghc-9.2-events).
# Expected values: from the ghc-events reference text (threads), and from
# `ghc-events show` run here (threads-big, which has no reference; the
# case is skipped without ghc-events).
# ctest-labels: e2e
source "$(dirname "$0")/otelcol_lib.sh"

start_receiver "$WORK/rcv.jsonl"
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$HTTP_PORT
export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
cat >"$WORK/c.yaml" <<'YAML'
processors:
  logs:
    thread_label: {export: 1s}
    user_message: {export: 1s}
  metrics:
    capability_usage: {export: 1s}
    heap_size: {export: 1s}
  traces:
    thread_state: {export: true}
    capability_usage: {export: true}
YAML

# expect REF: "pid|rts identifier|args as JSON" from ghc-events' text.
expect() {
  python3 - "$1" <<'PY'
import json, re, sys
pid = rts = args = None
for line in open(sys.argv[1]):
    m = re.match(r'\d+: capset 0: (pid (\d+)|RTS version "(.*)"|args: (\[.*\]))$',
                 line.rstrip("\n"))
    if not m: continue
    if m.group(2) and pid is None: pid = m.group(2)
    if m.group(3) is not None and rts is None: rts = m.group(3)
    if m.group(4) and args is None: args = json.loads(m.group(4))
print("%s|%s|%s" % (pid, rts, json.dumps(args)))
PY
}

# check OUT WANT SERVICE [NEED]: every record of SERVICE's resource carries
# WANT; NEED (default "all") = "spans": only spans must be present.
check() {
  python3 - "$1" "$2" "$3" "${4:-all}" <<'PY'
import json, sys, collections
out, want, svc, need = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
pid, rts, args = want.split("|", 2)
args = json.loads(args)
exp = {"process.runtime.name": "GHC", "process.runtime.description": rts,
       "process.runtime.version": rts.split(" ")[0][len("GHC-"):],
       "process.pid": int(pid), "process.command_args": args}
def val(v):
    if "stringValue" in v: return v["stringValue"]
    if "intValue" in v: return int(v["intValue"])
    if "arrayValue" in v:
        return [val(x) for x in v["arrayValue"].get("values", [])]
    return v
n, bad, shown = collections.Counter(), collections.Counter(), 0
for line in open(out):
    req = json.loads(line).get("request") or {}
    for key, sk, rk in (("resourceMetrics", "scopeMetrics", "metrics"),
                        ("resourceLogs", "scopeLogs", "logRecords"),
                        ("resourceSpans", "scopeSpans", "spans")):
        for r in req.get(key, []):
            a = {x["key"]: val(x["value"])
                 for x in r.get("resource", {}).get("attributes", [])}
            if a.get("service.name") != svc: continue
            k = 0
            for s in r.get(sk, []):
                for m in s.get(rk, []):
                    if key == "resourceMetrics":
                        body = m.get("gauge") or m.get("sum") or {}
                        k += len(body.get("dataPoints", []))
                    else:
                        k += 1
            n[key] += k
            diff = {x: a.get(x) for x in exp if a.get(x) != exp[x]}
            if diff:
                bad[key] += k
                if shown < 3:
                    shown += 1
                    print("  %s: %d records with %s" % (key, k, diff))
print("records %s; without the resource %s" % (dict(n), dict(bad)))
present = n["resourceSpans"] and (need == "spans" or (
    n["resourceMetrics"] and n["resourceLogs"]))
sys.exit(0 if present and not bad else 1)
PY
}

fail=0
run_case() {  # run_case NAME WANT MODE (file | stdin | pipe) [DIR [NEED]]
  local name=$1 want=$2 mode=$3 log=$EL_EVENTLOGS/${4:-ghc-9.0}/$1.eventlog
  : >"$WORK/rcv.jsonl"
  if [ "$mode" = pipe ]; then  # live input: no scan ahead
    cat "$log" | timeout 300 "$DAEMON" --config "$WORK/c.yaml" \
      --service-name "svc-$name" --eventlog-stdin 2>"$WORK/err"
  elif [ "$mode" = file ]; then
    timeout 300 "$DAEMON" --config "$WORK/c.yaml" --service-name "svc-$name" \
      --eventlog-file "$log" 2>"$WORK/err"
  else
    timeout 300 "$DAEMON" --config "$WORK/c.yaml" --service-name "svc-$name" \
      --eventlog-stdin <"$log" 2>"$WORK/err"
  fi || { echo "FAIL: $name ($mode): daemon failed"; cat "$WORK/err"; fail=1; return; }
  if check "$WORK/rcv.jsonl" "$want" "svc-$name" "${5:-all}" >"$WORK/check"; then
    echo "ok: $name ($mode): $(tail -1 "$WORK/check")"
  else
    echo "FAIL: $name ($mode): expected pid|rts|args = $want"
    sed 's/^/  /' "$WORK/check"
    fail=1
  fi
}

want=$(expect "$EL_EVENTLOGS/ghc-9.0/threads.eventlog.reference")
case $want in None*|*"|None|"*|*"|null") echo "FAIL: reference unread: $want"; exit 1;; esac
run_case threads "$want" file
run_case threads "$want" stdin
# Live input whose init events come first (GHC >= 9.2 writes them at the
# start): no scan ahead, but the records from el.on_session on carry the
# resource, the spans of the first batch included (before, those exported
# before the first tick had service.name only: all 63 of this log's).
want=$(expect "$EL_EVENTLOGS/ghc-events/ghc-9.2-events.eventlog.reference")
case $want in None*|*"|None|"*|*"|null") echo "FAIL: reference unread: $want"; exit 1;; esac
run_case ghc-9.2-events "$want" pipe ghc-events spans
if command -v ghc-events >/dev/null; then
  ghc-events show "$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog" |
    grep ': capset 0: ' >"$WORK/big.ref"
  run_case threads-big "$(expect "$WORK/big.ref")" file
else
  echo "skip: threads-big (ghc-events not installed)"
fi
exit $fail
