#!/usr/bin/env bash
# One message prefix per binary (issue 14 item 7, docs/exit-codes.md
# "Messages"): every line a command writes on stderr that names a program
# names the binary it was started as, `eventlog-live:` or
# `eventlog-live-otelcol:` (the same executable under its two names), never
# the other one nor a "eventlog-live run:"-style variant; and the
# did-you-mean hints for commands, flags, event names (Lua el.on) and
# OTEL_* values, through the real binaries. The error paths are the
# usual mistakes: missing, empty, foreign and cut inputs, unknown options
# and commands, bad environment values, script errors, watch misuse.
# ctest-labels: e2e
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
E=$EL_BIN
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
EV=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
W=$(mktemp -d /tmp/el-msg-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
sz=$(stat -c %s "$EV")
head -c $((sz - 37)) "$EV" >"$W/cut"
head -c 1000 "$EV" >"$W/header"
: >"$W/empty"
printf 'local el = require("eventlog_live")\nel.on("USER_MARKERS", print)\n' >"$W/um.lua"
printf 'local el = require("eventlog_live")\nerror("boom")\n' >"$W/err.lua"
printf 'processors: [\n' >"$W/bad.yaml"

# check PREFIX NAME CMD...: run CMD (stdin closed); its stderr must not be
# empty, its first line must begin with "PREFIX: ", and no line may begin
# with another program prefix.
n=0
check() {
  local pre=$1 name=$2
  shift 2
  n=$((n + 1))
  "$@" </dev/null >/dev/null 2>"$W/err.$n"
  local first other
  first=$(head -n 1 "$W/err.$n")
  other=$(grep -E '^eventlog-live[-a-z ]*:' "$W/err.$n" | grep -v "^$pre: ")
  if [ -z "$first" ]; then
    bad "$name: nothing on stderr"
  elif [ "${first#"$pre: "}" = "$first" ]; then
    bad "$name: first line is not prefixed '$pre: ': $first"
  elif [ -n "$other" ]; then
    bad "$name: another prefix than '$pre:': $other"
  else
    ok "$name"
  fi
}

# The same situations for the daemon under both names and for the other
# commands.
for f in "$W/missing" "$W/empty" /bin/ls "$W/cut" "$W/header"; do
  b=$(basename "$f")
  check eventlog-live-otelcol "otelcol binary, $b" "$D" --eventlog-file "$f"
  check eventlog-live "eventlog-live otelcol, $b" "$E" otelcol --eventlog-file "$f"
  for c in show stats; do
    check eventlog-live "$c, $b" "$E" "$c" --eventlog-file "$f"
  done
  check eventlog-live "run, $b" "$E" run "$W/um.lua" --eventlog-file "$f"
  check eventlog-live "report, $b" "$E" report --eventlog-file "$f" -o "$W/r.html"
done
for c in show stats report otelcol watch; do
  check eventlog-live "$c --bogus" "$E" $c --bogus
done
check eventlog-live "run --bogus" "$E" run "$W/err.lua" --bogus
check eventlog-live-otelcol "otelcol binary --bogus" "$D" --bogus
check eventlog-live-otelcol "otelcol binary, bad config" \
  "$D" --config "$W/bad.yaml" --eventlog-file "$EV"
check eventlog-live "eventlog-live otelcol, bad config" \
  "$E" otelcol --config "$W/bad.yaml" --eventlog-file "$EV"
check eventlog-live-otelcol "otelcol binary, bad OTEL_LOG_LEVEL" \
  env OTEL_LOG_LEVEL=loud "$D" --eventlog-file "$EV"
check eventlog-live-otelcol "otelcol binary, bad exporter" \
  env OTEL_TRACES_EXPORTER=otlpp "$D" --eventlog-file "$EV"
check eventlog-live-otelcol "otelcol binary, no source" "$D"
check eventlog-live "unknown command" "$E" shwo
check eventlog-live "run, script error" "$E" run "$W/err.lua" "$EV"
check eventlog-live "run, unknown event name" "$E" run "$W/um.lua" "$EV"
check eventlog-live "repl, no input" "$E" repl --bogus
check eventlog-live "watch, no program" "$E" watch --
check eventlog-live "watch, missing program" "$E" watch -- "$W/no-such-program"
check eventlog-live "watch, source option" "$E" watch --eventlog-file "$EV" -- true
# The daemon's own warnings (the host's log) under its name: -v debug
# logs through el_log.
check eventlog-live-otelcol "otelcol binary, log lines" \
  "$D" -v debug --no-otlp --eventlog-file "$W/cut"

# hint NAME WANT CMD...: stderr of CMD holds WANT (a fixed string).
hint() {
  local name=$1 want=$2
  shift 2
  "$@" </dev/null >/dev/null 2>"$W/hint"
  if grep -qF -- "$want" "$W/hint"; then ok "$name"; else
    bad "$name: no \"$want\" in: $(head -c 400 "$W/hint")"
  fi
}
hint "did you mean: command" "unknown command 'shwo' (did you mean 'show'?)" "$E" shwo
hint "did you mean: flag" "did you mean --eventlog-file?" "$D" --eventlog-fil "$EV"
hint "did you mean: event name in el.on" \
  "unknown event type 'USER_MARKERS' (did you mean 'USER_MARKER'?)" \
  "$E" run "$W/um.lua" "$EV"
hint "did you mean: OTEL_TRACES_EXPORTER" \
  "OTEL_TRACES_EXPORTER specifies unknown exporter 'otlpp'. Did you mean 'otlp'?" \
  env OTEL_TRACES_EXPORTER=otlpp "$D" --eventlog-file "$EV"
hint "OTEL_METRICS_EXPORTER=prometheus points at --prometheus-port" \
  "use --prometheus-port PORT" \
  env OTEL_METRICS_EXPORTER=prometheus "$D" --eventlog-file "$EV"
hint "did you mean: OTEL_LOG_LEVEL" "'debgu' (did you mean 'debug'?)" \
  env OTEL_LOG_LEVEL=debgu "$D" --eventlog-file "$EV"
hint "did you mean: OTEL_EXPORTER_OTLP_PROTOCOL" "Did you mean 'grpc'?" \
  env OTEL_METRICS_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=gprc \
  "$D" --eventlog-file "$EV"
exit $fail
