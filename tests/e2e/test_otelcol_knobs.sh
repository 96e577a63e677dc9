#!/usr/bin/env bash
# The daemon's command-line knobs (issue 14 item 3): --export-interval,
# --traces/--no-traces and --no-otlp, and their precedence: command line
# over configuration file over defaults (docs/config.md "Command-line
# overrides"). Windows are read back with --print-defaults-debug; the
# expected values are worked out by hand in the comments.
# ctest-labels: e2e
set -uo pipefail
: "${EL_BUILD_DIR:?}"
: "${EL_EVENTLOGS:?}"
D=$EL_BUILD_DIR/eventlog-live-otelcol
EVLOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
W=$(mktemp -d /tmp/el-otelcol-knobs-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# want PATTERN ARGS...: --print-defaults-debug with ARGS prints PATTERN.
want() {
  local pat=$1; shift
  if "$D" "$@" --print-defaults-debug > "$W/out" 2> "$W/err" &&
     grep -qE -- "$pat" "$W/out"; then
    ok "$* -> /$pat/"
  else
    bad "$*: no /$pat/ in: $(head -c 400 "$W/out") $(head -c 200 "$W/err")"
  fi
}
# lacks PATTERN ARGS...: the same, PATTERN absent.
lacks() {
  local pat=$1; shift
  "$D" "$@" --print-defaults-debug > "$W/out" 2> "$W/err" ||
    bad "$*: status $?"
  if grep -qE -- "$pat" "$W/out"; then bad "$*: /$pat/ printed"
  else ok "$* -> no /$pat/"; fi
}

cat > "$W/c.yaml" <<'YAML'
processors:
  metrics:
    heap_size: {aggregate: 2s, export: 10s}
  traces:
    thread_state: {export: false}
YAML

# Defaults: export 30s, traces off, batch = flush interval 1 s.
want '^    heap_size: .*export: 30000ms' --eventlog-stdin
lacks 'thread_state' --eventlog-stdin
# CLI over defaults: every processor every 500 ms; batch gcd(1000, 500).
want '^# resolved: batch interval 500 ms' --export-interval 0.5s
want '^    heap_live: .*aggregate: 500ms, export: 500ms' --export-interval 0.5s
# The file's grammar (h45): "<N>x" is N flush intervals; a window past
# 31.7 years is capped, whatever its number of digits.
want '^    heap_live: .*export: 1000ms' --export-interval 2x \
  --eventlog-flush-interval 0.5
want '^    heap_live: .*export: 1000000000000ms' \
  --export-interval 99999999999999999999s
want '^    thread_state: .*export: 1000ms' --traces
want '^    capability_usage: \{name: "ghc_eventlog_CapabilityUsage".*export: 2000ms' \
  --traces --export-interval 2s
# Config over defaults: heap_size every 10 s, the trace processor off.
want '^    heap_size: .*aggregate: 2000ms, export: 10000ms' --config "$W/c.yaml"
lacks 'thread_state' --config "$W/c.yaml"
# CLI over config.
want '^    heap_size: .*aggregate: 2000ms, export: 2000ms' \
  --config "$W/c.yaml" --export-interval 2s
want '^    thread_state: ' --config "$W/c.yaml" --traces
lacks 'thread_state' --traces --no-traces   # the last one wins
lacks 'heap_live' --config "$W/c.yaml" --export-interval 1s # not listed: off

for v in 0s -1s 1h abc '' 5 1e3s 500ms 2m 1.5x; do
  st=0
  "$D" --export-interval "$v" --print-defaults-debug > /dev/null \
    2> "$W/err" || st=$?
  if [ $st = 2 ] && grep -q -- "--export-interval: expected a duration" "$W/err"
  then ok "--export-interval '$v' -> 2"
  else bad "--export-interval '$v': status $st, $(cat "$W/err")"; fi
done
# ... and the hint spells the accepted form, as for the file.
for vh in '5|(no unit: write 5s (seconds) or 5x (flush intervals))' \
  '1e3s|(write 1000s: plain digits only)' '500ms|(write 0.5s: durations'; do
  "$D" --export-interval "${vh%%|*}" --print-defaults-debug 2> "$W/err" \
    > /dev/null
  if grep -qF -- "got '${vh%%|*}' ${vh#*|}" "$W/err"
  then ok "--export-interval '${vh%%|*}': hint"
  else bad "--export-interval '${vh%%|*}': $(cat "$W/err")"; fi
done

# --no-otlp: an unreachable collector asked for through the environment is
# not contacted at all (control: without the flag the daemon warns that
# telemetry could not be delivered).
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 OTEL_METRICS_EXPORTER=otlp
st=0
"$D" --eventlog-file "$EVLOG" --otlp-shutdown-timeout 500 -v info \
  > /dev/null 2> "$W/ctl.err" || st=$?
grep -q 'could not be delivered' "$W/ctl.err" &&
  ok "control: an unreachable collector -> 'could not be delivered' (status $st)" ||
  bad "control: no delivery warning: $(tail -n 3 "$W/ctl.err")"
st=0
"$D" --eventlog-file "$EVLOG" --otlp-shutdown-timeout 500 --no-otlp -v info \
  > /dev/null 2> "$W/no.err" || st=$?
if [ $st = 0 ] && ! grep -qiE 'export over|could not be delivered|retry' "$W/no.err"
then ok "--no-otlp: status 0, no export attempted"
else bad "--no-otlp: status $st, $(grep -iE 'export|deliver' "$W/no.err" | head -3)"; fi
# Console stays: --no-otlp only removes OTLP exporters.
OTEL_METRICS_EXPORTER=console "$D" --eventlog-file "$EVLOG" --no-otlp \
  > "$W/console.out" 2> /dev/null
grep -q '"resourceMetrics"' "$W/console.out" &&
  ok "--no-otlp keeps OTEL_METRICS_EXPORTER=console" ||
  bad "--no-otlp removed the console exporter"

[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
