#!/usr/bin/env bash
# --follow on a file that does not exist yet (docs/sources.md "End of
# input, per source"): the file is waited for, and the messages say so in
# a file's words, not a socket's ("Failed to connect on ...").
#   missing:  stats and the daemon on a missing file with 2 retries 0.1 s
#             apart: one warning "the file does not exist: waiting for it
#             to be created", then "still does not exist after 3 attempts:
#             giving up"; status 1; no "Failed to connect".
#   once:     --eventlog-socket-retries 0: "does not exist (not waited
#             for...)", status 1.
#   late:     the file appears 1 s after stats started: it is read whole
#             (its event count is the ghc-events reference's), after a
#             SIGINT once the tee holds all its bytes; status 0.
# Every wait is bounded.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/wait_lib.sh"
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=$BUILD/eventlog-live
LOG=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/threads.eventlog
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
[ -f "$LOG.reference" ] || { echo "SKIP: no $LOG.reference"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-follow.XXXXXX")
PIDS=()
trap 'stop_pids; rm -rf "$T"' EXIT
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# missing NAME CMD...: CMD on the missing file $T/none with --follow and
# 2 retries; checks its messages and status 1.
missing() {
  local name=$1 st n; shift
  timeout 30 "$@" --eventlog-file "$T/none" --follow \
    --eventlog-socket-retries 2 --eventlog-socket-timeout 0.1 \
    > /dev/null 2> "$T/$name.err"
  st=$?
  [ $st = 1 ] && pass "$name: status 1" || fail "$name: status $st"
  n=$(grep -c "$T/none (following): the file does not exist: waiting for it to be created" "$T/$name.err")
  [ "$n" = 1 ] && pass "$name: one warning: the file does not exist, waited for" ||
    { sed 's/^/  /' "$T/$name.err"; fail "$name: $n 'does not exist: waiting' lines"; }
  grep -q "$T/none (following): the file still does not exist after 3 attempts: giving up" \
    "$T/$name.err" && pass "$name: gives up after 3 attempts, saying why" ||
    { sed 's/^/  /' "$T/$name.err"; fail "$name: no 'still does not exist ... giving up'"; }
  grep -qi "connect" "$T/$name.err" &&
    { sed 's/^/  /' "$T/$name.err"; fail "$name: a word of connecting"; } ||
    pass "$name: no word of connecting"
}

echo "== missing"
missing stats "$EL" stats
missing daemon "$BUILD/eventlog-live-otelcol"
missing run "$EL" run "$SRC/examples/gc_pauses.lua"

echo "== once: --eventlog-socket-retries 0"
timeout 30 "$EL" stats --eventlog-file "$T/none" --follow \
  --eventlog-socket-retries 0 > /dev/null 2> "$T/once.err"
st=$?
[ $st = 1 ] && grep -q "$T/none (following): the file does not exist (not waited for" \
  "$T/once.err" && pass "once: the file does not exist, not waited for, status 1" ||
  { sed 's/^/  /' "$T/once.err"; fail "once: status $st"; }

echo "== late: the file appears after the start"
want=$(awk '/^Events:/{e=1;next} e && /^[0-9]+: /{n++} END{print n}' "$LOG.reference")
"$EL" stats --eventlog-file "$T/late.eventlog" --follow \
  --eventlog-socket-timeout 0.2 --eventlog-log-file "$T/late.tee" \
  > "$T/late.out" 2> "$T/late.err" &
pid=$!
PIDS+=("$pid")
wait_line "$T/late.err" 'the file does not exist: waiting for it' 30 ||
  fail "late: no 'waiting for it' warning"
sleep 1
cp "$LOG" "$T/late.eventlog.tmp" && mv "$T/late.eventlog.tmp" "$T/late.eventlog"
size=$(stat -c %s "$LOG")
end=$((SECONDS + 30))
while [ "$(stat -c %s "$T/late.tee" 2>/dev/null || echo 0)" -lt "$size" ] &&
  [ $SECONDS -lt $end ]; do sleep 0.1; done
kill -INT "$pid"
wait_exit "$pid" 30
st=$?
got=$(sed -n 's/^events: *//p' "$T/late.out")
[ $st = 0 ] && [ "$got" = "$want" ] &&
  pass "late: read whole once it appeared ($got events, as the reference), status 0" ||
  { sed 's/^/  /' "$T/late.err"; fail "late: status $st, $got events (want $want)"; }
[ $fails = 0 ] && { echo PASS; exit 0; }
echo "FAIL: $fails step(s)"
exit 1
