#!/usr/bin/env bash
# `eventlog-live run SCRIPT --output console` on a real eventlog: a script
# turns every HEAP_SIZE event of ghc-9.0/heapy-hT.eventlog into a gauge
# point and, at the end, emits a host log, a span and a profile sample.
# The OTLP/JSON lines are checked with jq: the point values and attributes
# against the ghc-events .reference text of the same log (independent
# decoder), the rest against the script's literal values.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
log=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog

cat >"$tmp/s.lua" <<'LUA'
local el = require("eventlog_live")
el.set_resource("service.name", "heapy")
local heap = el.metric{name = "heap_size", unit = "By",
                       description = "Heap size."}
el.on("HEAP_SIZE", function(ev, capset, size_bytes)
  heap:point(size_bytes, {evCap = ev.cap, heapCapset = capset})
end)
el.on_end(function()
  el.log{body = "done", severity = "info", host = true}
  el.span{name = "whole", trace_id = "000102030405060708090a0b0c0dfeff",
          span_id = "deadbeef00112233", start_unix_ns = 1, end_unix_ns = 2,
          attrs = {n = 3}}
  el.profile_sample{frames = {{func = "Main:f", file = "F.hs", line = 3,
                               column = 4}, "Main:main"},
                    sample_type = "cpu", sample_unit = "samples",
                    unix_ns = 5, attrs = {thread = 7}}
end)
LUA

if ! "$EL_BIN" run "$tmp/s.lua" "$log" --output console >"$tmp/out" \
    2>"$tmp/err"; then
  echo "FAIL: run exited $?"; cat "$tmp/err"; exit 1
fi
jq -e -c . "$tmp/out" >/dev/null || { echo "FAIL: invalid JSON line"; exit 1; }

check() { # description, got, want
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1"; echo "  want: $3"; echo "  got:  $2"; fail=1
  fi
}

# Heap sizes, in order, from the reference: "cap C: size of heap capset S:
# N bytes" lines.
awk '/size of heap capset/ { print $(NF-1) }' "$log.reference" >"$tmp/want"
jq -r 'select(.resourceMetrics) | .resourceMetrics[].scopeMetrics[].metrics[]
       | select(.name == "heap_size") | .gauge.dataPoints[].asInt' \
  "$tmp/out" >"$tmp/got"
check "heap_size points equal the reference" \
  "$(md5sum <"$tmp/got")" "$(md5sum <"$tmp/want")"
check "136 points" "$(wc -l <"$tmp/got")" "136"
# Attributes: capability and capset of each event, from the reference.
awk '/size of heap capset/ { sub(":", "", $3); sub(":", "", $8);
       print $3 " " $8 }' "$log.reference" >"$tmp/want_attrs"
jq -r 'select(.resourceMetrics) | .resourceMetrics[].scopeMetrics[].metrics[]
       | select(.name == "heap_size") | .gauge.dataPoints[]
       | (.attributes | from_entries | map_values(.intValue))
       | "\(.evCap) \(.heapCapset)"' "$tmp/out" >"$tmp/got_attrs"
check "heap_size attributes equal the reference" \
  "$(md5sum <"$tmp/got_attrs")" "$(md5sum <"$tmp/want_attrs")"
check "metric description/unit" \
  "$(jq -c 'select(.resourceMetrics) | .resourceMetrics[0].scopeMetrics[0]
            .metrics[0] | [.description, .unit]' "$tmp/out" | head -1)" \
  '["Heap size.","By"]'
check "program resource" \
  "$(jq -c 'select(.resourceMetrics) | .resourceMetrics[0].resource' \
     "$tmp/out" | head -1)" \
  '{"attributes":[{"key":"service.name","value":{"stringValue":"heapy"}}]}'

# Host log under the host resource.
check "host log" \
  "$(jq -c 'select(.resourceLogs) | .resourceLogs[]
            | [(.resource.attributes | from_entries
                | .["service.name"].stringValue),
               (.scopeLogs[0].logRecords[0] | .severityNumber,
                .body.stringValue)]' "$tmp/out")" \
  '["eventlog-live-otelcol-for-heapy",9,"done"]'

# Span.
check "span" \
  "$(jq -c 'select(.resourceSpans) | .resourceSpans[0].scopeSpans[0].spans[0]
            | [.traceId, .spanId, .name, .kind, .startTimeUnixNano,
               .endTimeUnixNano, .attributes, .status]' "$tmp/out")" \
  '["000102030405060708090a0b0c0dfeff","deadbeef00112233","whole",1,"1","2",[{"key":"n","value":{"intValue":"3"}}],{"code":1}]'

# Profile sample and its dictionary (order of reference §5.4.2).
check "profile dictionary strings" \
  "$(jq -c 'select(.resourceProfiles) | .dictionary.stringTable' "$tmp/out")" \
  '["","F.hs","Main:f","Main:main","thread","cpu","samples"]'
check "profile sample" \
  "$(jq -c 'select(.resourceProfiles) | .resourceProfiles[0].scopeProfiles[0]
            .profiles[0] | [.sampleType, .samples]' "$tmp/out")" \
  '[{"typeStrindex":5,"unitStrindex":6},[{"stackIndex":1,"attributeIndices":[1],"values":["1"],"timestampsUnixNano":["5"]}]]'
check "profile stack" \
  "$(jq -c 'select(.resourceProfiles) | .dictionary
            | [.stackTable, .locationTable, .functionTable]' "$tmp/out")" \
  '[[{},{"locationIndices":[1,2]}],[{},{"lines":[{"functionIndex":1,"line":"3","column":"4"}]},{"lines":[{"functionIndex":2}]}],[{},{"nameStrindex":2,"filenameStrindex":1,"startLine":"3"},{"nameStrindex":3}]]'

[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
