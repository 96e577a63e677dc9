#!/usr/bin/env bash
# The console exporter writing into a pipe whose reader has gone: the
# daemon must not die of SIGPIPE (status 141) but finish the input, report
# the records it could not write, and exit 0.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
otelcol=$(dirname "$EL_BIN")/eventlog-live-otelcol
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
# threads.eventlog yields many log records and metric points, more than
# fit in the 100 bytes head reads before it exits.
timeout 60 "$otelcol" --service-name=x \
  --eventlog-file "$EL_EVENTLOGS/ghc-9.0/threads.eventlog" 2> "$tmp/err" \
  | head -c 100 > /dev/null
rc=${PIPESTATUS[0]}
fail=0
if [ "$rc" != 0 ]; then echo "FAIL: daemon exit status $rc (141 = SIGPIPE)"; fail=1
else echo "ok: exit status 0 with stdout closed"; fi
if grep -Eq "(records|data points|spans|samples) dropped" "$tmp/err"; then echo "ok: drops reported"
else echo "FAIL: no drop report on stderr"; cat "$tmp/err"; fail=1; fi
exit $fail
