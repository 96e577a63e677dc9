#!/usr/bin/env bash
# The console exporter (src/otlp/exp_console.c): a fixed set of telemetry
# (tests/tools/el_console_emit.c) printed as OTLP/JSON, one line per
# request, checked field by field with jq against values written by hand
# from that tool's inputs and the OTLP/JSON encoding rules (lowerCamelCase
# names, hex trace/span ids, 64-bit integers as decimal strings, enums as
# integers, defaults omitted). Then splitting: many points under a small
# --max-bytes bound give several lines that together hold every point
# exactly once, in order (the byte bound itself is checked on the protobuf
# requests in tests/unit/test_otlp_encode.c).
set -u
: "${EL_BUILD_DIR:?}"
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
emit=$EL_BUILD_DIR/tests/el_console_emit
[ -x "$emit" ] || { echo "FAIL: $emit not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$emit" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: emit exited $?"; exit 1; }
[ "$(wc -l <"$tmp/out")" -eq 4 ] || { echo "FAIL: want 4 lines"; fail=1; }
grep -q "lines=4 dropped=0" "$tmp/err" || { echo "FAIL: stats"; fail=1; }
# Every line is one JSON object (jq -e fails on invalid JSON).
jq -e -c . "$tmp/out" >/dev/null || { echo "FAIL: invalid JSON"; fail=1; }

# expect LINE JQ-FILTER EXPECTED-JSON: compare the filter's compact output.
expect() {
  local got
  got=$(sed -n "$1p" "$tmp/out" | jq -c "$2" 2>&1)
  if [ "$got" != "$3" ]; then
    echo "FAIL: line $1: $2"
    echo "  want: $3"
    echo "  got:  $got"
    fail=1
  fi
}

# Line 1: metrics.
M='.resourceMetrics[0]'
expect 1 '.resourceMetrics|length' '1'
expect 1 "$M.resource.attributes" \
  '[{"key":"service.name","value":{"stringValue":"oddball"}}]'
expect 1 "$M.scopeMetrics[0].scope" '{"name":"eventlog-live","version":"0.1.0"}'
expect 1 "$M.scopeMetrics[0].metrics|map(.name)" \
  '["ghc_eventlog_HeapSize","ghc_eventlog_CapabilityUsageDuration"]'
H="$M.scopeMetrics[0].metrics[0]"
expect 1 "$H.description" '"The current heap size."'
expect 1 "$H.unit" '"By"'
expect 1 "$H.gauge.dataPoints[0].startTimeUnixNano" '"1785000000000000000"'
expect 1 "$H.gauge.dataPoints[0].timeUnixNano" '"1785000000123456789"'
expect 1 "$H.gauge.dataPoints[0].asInt" '"8388608"'
expect 1 "$H.gauge.dataPoints[0].attributes" \
  '[{"key":"evCap","value":{"intValue":"0"}},{"key":"heapCapset","value":{"intValue":"-1"}}]'
# Zero value inside the oneof is kept; zero times and empty lists omitted.
expect 1 "$H.gauge.dataPoints[1]" '{"asInt":"0"}'
C="$M.scopeMetrics[0].metrics[1]"
expect 1 "$C|has(\"description\")" 'false'
expect 1 "$C.unit" '"ns"'
expect 1 "$C.sum.aggregationTemporality" '1'
expect 1 "$C.sum.isMonotonic" 'true'
expect 1 "$C.sum.dataPoints[0].asDouble" '0.5'
expect 1 "$C.sum.dataPoints[0].timeUnixNano" '"18446744073709551615"'
expect 1 "$C.sum.dataPoints[0].attributes|map(.key)" '["cap","category","user"]'

# Line 2: logs under two resources (program, host).
expect 2 '.resourceLogs|length' '2'
L='.resourceLogs[0].scopeLogs[0].logRecords[0]'
expect 2 "$L.timeUnixNano" '"100"'
expect 2 "$L.observedTimeUnixNano" '"100"'
expect 2 "$L.severityNumber" '1'
expect 2 "$L.body.stringValue" '"say \"hi\"\n\ttab"'
expect 2 "$L.attributes[1]" '{"key":"kind","value":{"stringValue":"UserMarker"}}'
expect 2 "$L|has(\"traceId\")" 'false'
expect 2 '.resourceLogs[1].resource.attributes|from_entries|map_values(.stringValue)' \
  '{"service.name":"eventlog-live-otelcol-for-oddball","service.version":"0.1.0"}'
HL='.resourceLogs[1].scopeLogs[0].logRecords[0]'
expect 2 "$HL.severityNumber" '13'
expect 2 "$HL.severityText" '"WARN"'
expect 2 "$HL.traceId" '"000102030405060708090a0b0c0dfeff"'
expect 2 "$HL.spanId" '"deadbeef00112233"'

# Line 3: spans.
S='.resourceSpans[0].scopeSpans[0].spans'
expect 3 "$S|length" '2'
expect 3 "$S[0].traceId" '"000102030405060708090a0b0c0dfeff"'
expect 3 "$S[0].spanId" '"deadbeef00112233"'
expect 3 "$S[0]|has(\"parentSpanId\")" 'false'
expect 3 "$S[0].name" '"ghc_eventlog_ThreadState Blocked"'
expect 3 "$S[0].kind" '1'
expect 3 "$S[0].startTimeUnixNano" '"1000"'
expect 3 "$S[0].endTimeUnixNano" '"2000"'
expect 3 "$S[0].status" '{"code":1}'
expect 3 "$S[0].attributes" \
  '[{"key":"thread","value":{"stringValue":"7"}},{"key":"flag","value":{"boolValue":true}},{"key":"ratio","value":{"doubleValue":0.25}},{"key":"args","value":{"arrayValue":{"values":[{"stringValue":"./oddball"},{"stringValue":"+RTS"}]}}}]'
expect 3 "$S[1].parentSpanId" '"deadbeef00112233"'
expect 3 "$S[1].spanId" '"1111111111111111"'
expect 3 "$S[1].kind" '3'
expect 3 "$S[1]|has(\"status\")" 'false'

# Line 4: profiles with their dictionary (reference §5.4.2, Appendix A).
D='.dictionary'
expect 4 "$D.stringTable" \
  '["","src/Foo.hs","Main:foo","Main:main","__name__","capability","thread","cpu","samples"]'
expect 4 "$D.functionTable" \
  '[{},{"nameStrindex":2,"filenameStrindex":1,"startLine":"10"},{"nameStrindex":3}]'
expect 4 "$D.locationTable" \
  '[{},{"lines":[{"functionIndex":1,"line":"10","column":"5"}]},{"lines":[{"functionIndex":2}]}]'
expect 4 "$D.stackTable" '[{},{"locationIndices":[1,2]}]'
expect 4 "$D.attributeTable" \
  '[{},{"keyStrindex":4,"value":{"stringValue":"ghc_eventlog_CallStackProfile"}},{"keyStrindex":5,"value":{"intValue":"0"}},{"keyStrindex":6,"value":{"intValue":"7"}}]'
expect 4 "$D.mappingTable" '[{}]'
expect 4 "$D.linkTable" '[{}]'
P='.resourceProfiles[0].scopeProfiles[0].profiles[0]'
expect 4 "$P.sampleType" '{"typeStrindex":7,"unitStrindex":8}'
expect 4 "$P.samples" \
  '[{"stackIndex":1,"attributeIndices":[1,2,3],"values":["1"],"timestampsUnixNano":["1785000000000000001"]}]'

# Splitting: 2000 extra points, requests bounded to 8000 bytes.
"$emit" --points 2000 --max-bytes 8000 >"$tmp/split" 2>"$tmp/split.err" \
  || { echo "FAIL: split run exited $?"; fail=1; }
nmetric=$(grep -c '"resourceMetrics"' "$tmp/split")
[ "$nmetric" -gt 5 ] || { echo "FAIL: want several metrics lines, got $nmetric"; fail=1; }
got=$(grep '"resourceMetrics"' "$tmp/split" | jq -c \
  '.resourceMetrics[].scopeMetrics[].metrics[]|select(.name=="bulk")|.gauge.dataPoints[]|.asInt // "0"|tonumber' \
  | jq -s -c 'sort == . and length == 2000 and (unique|length) == 2000 and .[0] == 0 and .[-1] == 1999')
[ "$got" = true ] || { echo "FAIL: split points not each exactly once in order"; fail=1; }
grep -q "dropped=0" "$tmp/split.err" || { echo "FAIL: split dropped points"; fail=1; }

[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
