#!/usr/bin/env bash
# A recorded file truncated by another process while it is scanned ahead
# (src/source/src_pump.c scan_file; the daemon reads it with pread,
# el_ev_scan_fd, `report` maps it; docs/eventlog.md "A file that shrinks
# while it is read"): no SIGBUS. The daemon and `report` say that the file
# shrank, from how many bytes to how many, read on with read(2), report the
# cut at the new end as they do for any truncated file, and exit 0. The
# daemon exports as many records as it does for a copy that was that short
# from the start (counted per signal from the OTLP/JSON lines), and its
# warning that the file shrank.
#
# Deterministic, no sleeps: the LD_PRELOAD library el_shrink_on_map
# (tests/tools/preload/) truncates the file right after the mmap returns
# (report), or right before the first pread (the daemon), before the scan
# reads a byte. Kept to 1335296 bytes (a page boundary,
# 1335296 = 326 * 4096): the header and cap 0's block marker are readable,
# cap 1's block marker at byte 1338275 is not (threads.eventlog, see
# tests/unit/test_eventlog_sessions.c test_scan_threads_log).
# Not labelled asan: an ASan executable refuses an LD_PRELOAD before it.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}" "${EL_BUILD_DIR:?}"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
SHIM=$EL_BUILD_DIR/tests/el_shrink_on_map.so
[ -f "$SHIM" ] || { echo "SKIP: no $SHIM"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
src=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
size=$(stat -c %s "$src")
keep=1335296

shrinking() {  # shrinking FILE CMD...: CMD with FILE cut after its mmap
  local f=$1
  shift
  cp "$src" "$f"
  EL_SHRINK_PATH=$f EL_SHRINK_TO=$keep LD_PRELOAD=$SHIM timeout 120 "$@"
}

otelcol() {  # otelcol FILE: the daemon, console exporters
  OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
    OTEL_TRACES_EXPORTER=console timeout 120 "$D" --eventlog-file "$1" \
    --service-name m
}

count() {  # count OUT: "metrics logs spans" records
  python3 - "$1" <<'PY'
import json, sys
n = [0, 0, 0]
for line in open(sys.argv[1]):
    if not line.strip(): continue
    d = json.loads(line)
    for rm in d.get("resourceMetrics", []):
        for sm in rm.get("scopeMetrics", []):
            for m in sm.get("metrics", []):
                body = m.get("gauge") or m.get("sum") or m.get("histogram") or {}
                n[0] += len(body.get("dataPoints", []))
    for rl in d.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            n[1] += len(sl.get("logRecords", []))
    for rs in d.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            n[2] += len(ss.get("spans", []))
print(*n)
PY
}

check_err() {  # check_err WHAT STATUS ERRFILE
  local what=$1 st=$2 err=$3
  if [ "$st" -ne 0 ]; then
    echo "FAIL: $what: exit status $st (135: SIGBUS), expected 0"
    sed 's/^/  /' "$err"
    fail=1
  fi
  if ! grep -q "shrank from $size to $keep bytes" "$err"; then
    echo "FAIL: $what: no 'shrank from $size to $keep bytes' message"
    sed 's/^/  /' "$err"
    fail=1
  fi
  if ! grep -q "truncated inside an event.*at byte 13352[0-9][0-9]" "$err"; then
    echo "FAIL: $what: the cut at the new end ($keep) is not reported"
    sed 's/^/  /' "$err"
    fail=1
  fi
}

f=$tmp/shrinks.eventlog
shrinking "$f" env OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=console "$D" --eventlog-file "$f" --service-name m \
  >"$tmp/d.out" 2>"$tmp/d.err"
check_err "otelcol" $? "$tmp/d.err"
[ "$(stat -c %s "$f")" = "$keep" ] ||
  { echo "FAIL: the preload library did not truncate the file"; fail=1; }
head -c "$keep" "$src" >"$tmp/short.eventlog"
otelcol "$tmp/short.eventlog" >"$tmp/s.out" 2>"$tmp/s.err" ||
  { echo "FAIL: otelcol on the short copy failed"; fail=1; }
# The same records, and one log record more: the daemon exports its own
# warnings, and the one saying that the file shrank is new.
read -r m l s < <(count "$tmp/s.out")
want="$m $((l + 1)) $s" got=$(count "$tmp/d.out")
if [ "$got" != "$want" ] || [ "$m" = 0 ]; then
  echo "FAIL: records (metrics logs spans) $got, expected $want (the short"
  echo "  copy's, and the warning that the file shrank)"
  fail=1
fi

shrinking "$f" "$EL_BIN" report "$f" -o "$tmp/r.html" 2>"$tmp/r.err"
check_err "report" $? "$tmp/r.err"
[ -s "$tmp/r.html" ] || { echo "FAIL: report wrote no page"; fail=1; }

[ "$fail" = 0 ] && echo "ok: a file shrinking under the scan's mapping"
exit "$fail"
