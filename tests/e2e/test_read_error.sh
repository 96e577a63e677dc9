#!/usr/bin/env bash
# A file whose first read fails (EIO: /proc/self/mem at offset 0, which
# open(2) accepts and read(2) refuses) is not an empty input: the daemon
# and `run` name the read error ("cannot read: Input/output error"),
# `show` and `stats`, which read the file themselves, name it as
# "PATH: Input/output error", and none says anything about a missing
# eventlog header; status 1. A truly empty file still gets "no eventlog
# header: the input is empty" from each.
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

# check NAME WANT CMD...: status 1, the read error named (WANT), no
# "input is empty".
check() {
  local name=$1 want=$2 rc=0
  shift 2
  timeout 60 "$@" >/dev/null 2>"$T/$name.err" || rc=$?
  [ "$rc" = 1 ] || fail "$name: status $rc, not 1"
  grep -qF "$want" "$T/$name.err" ||
    fail "$name: the read error is not named: $(cat "$T/$name.err")"
  if grep -q "the input is empty" "$T/$name.err"; then
    fail "$name: an unreadable file called empty: $(cat "$T/$name.err")"
  fi
}

E="cannot read: Input/output error"
check otelcol "$E" "$EL" otelcol --eventlog-file /proc/self/mem -hT
check run "$E" "$EL" run "$SRC/examples/event_rate.lua" \
  --eventlog-file /proc/self/mem
check show "/proc/self/mem: Input/output error" "$EL" show /proc/self/mem
check stats "/proc/self/mem: Input/output error" "$EL" stats /proc/self/mem

: >"$T/empty.eventlog"
for cmd in "otelcol -hT --eventlog-file" show stats; do
  rc=0
  # shellcheck disable=SC2086 # cmd is the command and its options
  "$EL" $cmd "$T/empty.eventlog" >/dev/null 2>"$T/empty.err" || rc=$?
  [ "$rc" = 1 ] || fail "empty, $cmd: status $rc, not 1"
  grep -q "no eventlog header: the input is empty" "$T/empty.err" ||
    fail "empty, $cmd: $(cat "$T/empty.err")"
done

[ "$fails" = 0 ] || exit 1
echo "ok: read errors are named"
