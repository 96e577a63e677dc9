#!/usr/bin/env bash
# A file whose first read fails (EIO: /proc/self/mem at offset 0, which
# open(2) accepts and read(2) refuses) is not an empty input: the daemon
# and `run` name the read error ("cannot read: Input/output error") and
# say nothing about a missing eventlog header; status 1. A truly empty
# file still gets "no eventlog header: the input is empty".
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=$BUILD/eventlog-live
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
[ -r /proc/self/mem ] || { echo "SKIP: no /proc/self/mem"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-readerr.XXXXXX")
trap 'rm -rf "$T"' EXIT
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check NAME CMD...: status 1, the read error named, no "input is empty".
check() {
  local name=$1 rc=0
  shift
  timeout 60 "$@" >/dev/null 2>"$T/$name.err" || rc=$?
  [ "$rc" = 1 ] || fail "$name: status $rc, not 1"
  grep -q "cannot read: Input/output error" "$T/$name.err" ||
    fail "$name: the read error is not named: $(cat "$T/$name.err")"
  if grep -q "the input is empty" "$T/$name.err"; then
    fail "$name: an unreadable file called empty: $(cat "$T/$name.err")"
  fi
}

check otelcol "$EL" otelcol --eventlog-file /proc/self/mem -hT
check run "$EL" run "$SRC/examples/event_rate.lua" \
  --eventlog-file /proc/self/mem

: >"$T/empty.eventlog"
rc=0
"$EL" otelcol --eventlog-file "$T/empty.eventlog" -hT >/dev/null \
  2>"$T/empty.err" || rc=$?
[ "$rc" = 1 ] || fail "empty: status $rc, not 1"
grep -q "no eventlog header: the input is empty" "$T/empty.err" ||
  fail "empty: $(cat "$T/empty.err")"

[ "$fails" = 0 ] || exit 1
echo "ok: read errors are named"
