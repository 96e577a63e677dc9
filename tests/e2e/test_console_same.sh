#!/usr/bin/env bash
# The same telemetry, three ways: eventlog-live-otelcol runs the default
# processors (plus both trace processors) over ghc-9.0/oddball-hT.eventlog
# once with the console exporter, once over gRPC and once over
# HTTP/protobuf to the test receiver (tests/receiver: OpenTelemetry's own
# decoders). Every data point, log record and span of the program's
# resource, flattened with its resource, scope and metric, must be
# identical in the three outputs (request boundaries and the random
# trace/span ids aside; the host's own logs, which carry wall-clock
# times, are left out).
. "$(dirname "$0")/otlp_lib.sh"
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
OTELCOL=$(dirname "$EL_BIN")/eventlog-live-otelcol
[ -x "$OTELCOL" ] || { echo "FAIL: $OTELCOL not built"; exit 1; }
LOG=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog

# All processors on: the defaults with every `export: false` turned on.
"$OTELCOL" --print-defaults | sed 's/export: false/export: true/' \
  >"$TMP/all.yaml"

export OTEL_SERVICE_NAME=oddball OTEL_PROFILES_EXPORTER=none
run_otelcol() { # OUT [env assignments...]
  local out=$1; shift
  env "$@" timeout 120 "$OTELCOL" --config "$TMP/all.yaml" \
    --eventlog-file "$LOG" -hT >"$out" 2>"$out.err" \
    || { cat "$out.err"; fail "otelcol ($*) exited with $?"; }
}

# flatten: one sorted line per record of a request stream (stdin: OTLP/JSON
# requests, one per line).
flatten() {
  jq -c -S '
    def attrs: (. // []) | map({(.key): .value}) | add // {};
    def program: (.resource.attributes | attrs) as $r
      | select(($r["service.name"].stringValue // "")
               | startswith("eventlog-live-otelcol-for-") | not) | $r;
    ( .resourceMetrics[]? | program as $res | .scopeMetrics[] | .scope as $sc
      | .metrics[] | . as $m | ($m.gauge // $m.sum) as $d | $d.dataPoints[]
      | {s: "metric", res: $res, scope: $sc, name: $m.name,
         description: $m.description, unit: $m.unit,
         gauge: ($m.gauge != null),
         temporality: $d.aggregationTemporality,
         monotonic: $d.isMonotonic, rec: (.attributes |= attrs)} ),
    ( .resourceLogs[]? | program as $res | .scopeLogs[] | .scope as $sc
      | .logRecords[]
      | {s: "log", res: $res, scope: $sc, rec: (.attributes |= attrs)} ),
    ( .resourceSpans[]? | program as $res | .scopeSpans[] | .scope as $sc
      | .spans[]
      | {s: "span", res: $res, scope: $sc,
         rec: (.attributes |= attrs | del(.traceId, .spanId,
                                          .parentSpanId))} )' | sort
}

# 1. console.
run_otelcol "$TMP/console.jsonl" OTEL_METRICS_EXPORTER=console \
  OTEL_LOGS_EXPORTER=console OTEL_TRACES_EXPORTER=console
flatten <"$TMP/console.jsonl" >"$TMP/console.flat"
n=$(wc -l <"$TMP/console.flat")
for s in metric log span; do
  c=$(grep -c "\"s\":\"$s\"" "$TMP/console.flat" || true)
  [ "$c" -gt 0 ] || fail "console: no $s records"
  echo "console: $c ${s}s"
done

# 2. and 3. gRPC and HTTP/protobuf to the receiver.
for t in grpc http; do
  rcv_start "$t"
  if [ "$t" = grpc ]; then
    run_otelcol "$TMP/$t.out" OTEL_EXPORTER_OTLP_PROTOCOL=grpc \
      OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$RCV_GRPC"
  else
    run_otelcol "$TMP/$t.out" OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \
      OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$RCV_HTTP"
  fi
  rcv_stop
  jq -c '.request' "$RCV_OUT" | flatten >"$TMP/$t.flat"
  if cmp -s "$TMP/console.flat" "$TMP/$t.flat"; then
    pass "$t: all $n records decoded identically to the console's"
  else
    fail "$t: records differ from the console's:"
    diff "$TMP/console.flat" "$TMP/$t.flat" | head -6 | cut -c1-300
  fi
done
finish
