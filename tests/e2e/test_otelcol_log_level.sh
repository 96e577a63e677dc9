#!/usr/bin/env bash
# The daemon's log threshold (issue 15): -v LEVEL if given, else the
# environment variable OTEL_LOG_LEVEL (the reference's; same names,
# case-insensitive), else info (the reference's default). The threshold
# governs both stderr and the internal_log_message records sent over OTLP.
# Probes: INFO "Reading eventlog from <path>" and DEBUG "Received <n>
# events.", which every run logs.
# A malformed OTEL_LOG_LEVEL is a configuration error (status 1) naming
# the value, unless -v was given (then the variable is not read).
# ctest-labels: e2e
set -uo pipefail
: "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
D=$EL_BUILD_DIR/eventlog-live-otelcol
LOG=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
command -v jq >/dev/null || { echo "skip: jq missing"; exit 77; }
W=$(mktemp -d /tmp/el-otelcol-lvl-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
printf 'processors:\n  logs:\n    internal_log_message: {export: 1s}\n' >"$W/c.yaml"
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

# run NAME [ENV=VALUE] -- ARGS...: stderr in $W/NAME.err, the bodies of
# the daemon's own log records (console exporter) in $W/NAME.rec.
run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env -u OTEL_LOG_LEVEL "${envs[@]}" "$D" --service-name lvl --config "$W/c.yaml" \
    --eventlog-file "$LOG" "$@" >"$W/$name.out" 2>"$W/$name.err"
  local st=$?
  jq -r '.resourceLogs[]? | select(.resource.attributes[]
           | .key == "service.name" and .value.stringValue == "eventlog-live-otelcol-for-lvl")
         | .scopeLogs[].logRecords[].body.stringValue' "$W/$name.out" >"$W/$name.rec" 2>/dev/null
  return $st
}
# expect NAME INFO DEBUG: whether (1/0) the INFO and DEBUG probes show, on
# stderr and among the records alike.
expect() {
  local name=$1 info=$2 debug=$3 what=$4 got_i got_d rec_i rec_d
  got_i=$(grep -c "info: Reading eventlog from $LOG" "$W/$name.err")
  got_d=$(grep -c "debug: Received [0-9]* events\.$" "$W/$name.err" | sed 's/^[1-9][0-9]*$/1/')
  rec_i=$(grep -c "^Reading eventlog from $LOG" "$W/$name.rec")
  rec_d=$(grep -c "^Received [0-9]* events\.$" "$W/$name.rec" | sed 's/^[1-9][0-9]*$/1/')
  if [ "$got_i$got_d$rec_i$rec_d" = "$info$debug$info$debug" ]; then
    echo "ok   $what"
  else
    echo "FAIL $what: stderr info=$got_i debug=$got_d, records info=$rec_i" \
         "debug=$rec_d; want info=$info debug=$debug"
    cat "$W/$name.err"; fail=1
  fi
}

run default -- || { echo "FAIL default run"; fail=1; }
expect default 1 0 "no -v, no OTEL_LOG_LEVEL: info"
run envdebug OTEL_LOG_LEVEL=debug -- || { echo "FAIL env debug run"; fail=1; }
expect envdebug 1 1 "OTEL_LOG_LEVEL=debug"
run envwarn OTEL_LOG_LEVEL=WARN -- || { echo "FAIL env WARN run"; fail=1; }
expect envwarn 0 0 "OTEL_LOG_LEVEL=WARN (case-insensitive)"
run vwins OTEL_LOG_LEVEL=debug -- -v warn || { echo "FAIL -v warn run"; fail=1; }
expect vwins 0 0 "-v warn wins over OTEL_LOG_LEVEL=debug"
run vwins2 OTEL_LOG_LEVEL=error -- -v debug || { echo "FAIL -v debug run"; fail=1; }
expect vwins2 1 1 "-v debug wins over OTEL_LOG_LEVEL=error"

run bad OTEL_LOG_LEVEL=loud --
st=$?
if [ $st = 1 ] && grep -qF "Environment variable OTEL_LOG_LEVEL specifies malformed log level 'loud'" "$W/bad.err"; then
  echo "ok   malformed OTEL_LOG_LEVEL: status 1, names the value"
else
  echo "FAIL malformed OTEL_LOG_LEVEL: status $st"; cat "$W/bad.err"; fail=1
fi
run badv OTEL_LOG_LEVEL=loud -- -v info &&
  echo "ok   malformed OTEL_LOG_LEVEL is not read when -v is given" ||
  { echo "FAIL -v with a malformed OTEL_LOG_LEVEL"; cat "$W/badv.err"; fail=1; }
exit $fail
