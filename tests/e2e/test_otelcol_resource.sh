#!/usr/bin/env bash
# The program resource carries the session's process attributes (issue 8
# item 5): process.pid, process.command_args, process.runtime.name = GHC,
# process.runtime.version; and service.name. Expected values come from the
# ghc-events reference text of each log ("capset 0: pid N",
# "capset 0: RTS version "GHC-x.y.z ..."", "capset 0: args: [...]").
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
command -v jq >/dev/null || { echo "jq missing"; exit 77; }
otelcol=$(dirname "$EL_BIN")/eventlog-live-otelcol
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
for log in "$EL_EVENTLOGS"/ghc-9.0/{oddball-hT,threads,heapy-prof-hc}.eventlog; do
  ref=$log.reference; name=$(basename "$log" .eventlog)
  pid=$(sed -n 's/^[0-9]*: capset 0: pid \([0-9]*\)$/\1/p' "$ref" | head -1)
  ver=$(sed -n 's/^[0-9]*: capset 0: RTS version "GHC-\([0-9.]*\) .*$/\1/p' "$ref" | head -1)
  # args: [\"a\",\"b\"] in Haskell show syntax; these logs hold plain ASCII.
  args=$(sed -n 's/^[0-9]*: capset 0: args: \(\[.*\]\)$/\1/p' "$ref" | head -1)
  OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none \
    timeout 60 "$otelcol" --service-name="svc-$name" --eventlog-file "$log" \
    > "$tmp/out" 2> "$tmp/err" || { echo "FAIL: $name: daemon failed"; cat "$tmp/err"; fail=1; continue; }
  jq -c '[.resourceMetrics[]?, .resourceLogs[]?] | .[].resource.attributes
         | map({(.key): (.value.stringValue // .value.intValue //
                         (.value.arrayValue.values // [] | map(.stringValue)))})
         | add' "$tmp/out" | grep '"svc-' | sort -u > "$tmp/res"
  if [ ! -s "$tmp/res" ]; then echo "FAIL: $name: no program resource"; fail=1; continue; fi
  while read -r r; do
    got_pid=$(jq -r '."process.pid"' <<<"$r")
    got_ver=$(jq -r '."process.runtime.version"' <<<"$r")
    got_rt=$(jq -r '."process.runtime.name"' <<<"$r")
    got_svc=$(jq -r '."service.name"' <<<"$r")
    got_args=$(jq -c '."process.command_args"' <<<"$r")
    if [ "$got_pid" != "$pid" ] || [ "$got_ver" != "$ver" ] || [ "$got_rt" != GHC ] \
       || [ "$got_svc" != "svc-$name" ] || [ "$got_args" != "$args" ]; then
      echo "FAIL: $name: resource $r"
      echo "      want pid=$pid version=$ver args=$args"; fail=1
    fi
  done < "$tmp/res"
  [ $fail = 0 ] && echo "ok: $name: pid $pid, GHC $ver, args $args"
done

# The daemon's own resource: the name --print-defaults gives, with the
# service filled in, is the one its log records carry (a WARN for -hb).
pattern=$("$otelcol" --print-defaults | grep -o 'eventlog-live[a-z-]*-for-<service>' | sort -u)
if [ "$pattern" != "eventlog-live-otelcol-for-<service>" ]; then
  echo "FAIL: --print-defaults names the daemon's resource '$pattern'"; fail=1
fi
OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=console \
OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none \
  timeout 60 "$otelcol" --service-name=own -hb \
  --eventlog-file "$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog" > "$tmp/out" 2>/dev/null
own=$(jq -r '.resourceLogs[]?.resource.attributes[]
             | select(.key == "service.name") | .value.stringValue' "$tmp/out" |
      grep -v '^own$' | sort -u)
want=${pattern/<service>/own}
if [ "$own" = "$want" ] && [ -n "$own" ]; then
  echo "ok: the daemon's own resource is $own, as --print-defaults says"
else
  echo "FAIL: daemon's own resource '$own', --print-defaults says '$want'"; fail=1
fi
exit $fail
