#!/usr/bin/env bash
# A daemon that is stopped (SIGSTOP, Ctrl-Z, a paused VM) while it waits
# for a live writer does not take its own suspension for the writer's
# silence (docs/lua-api.md §6 "Ordering"). A capability's silence is quiet
# time: time the input waited for its writer while this process ran. The
# source reports every 250 ms that it still waits, and a stretch between
# two reports counts for at most 500 ms (src/host/host_clock.c): the rest
# the process did not run, and the writer may have written meanwhile.
#
# Input: ghc-9.0/threads-big.eventlog (-N2, 12 MB), replayed into a FIFO
# in 64 KiB pieces 5 ms apart (the daemon waits for the writer in
# between; a capability's next block, 2 MiB on, comes 0.16 s later, well
# within the 3 s below even when a loaded machine slows the writer
# tenfold: at 20 ms apart such a slowdown gave up on a capability between
# two of its blocks, which the wait for capability 2 hid while it lasted,
# until it was bounded in memory). Reorder horizon and longest wait 3 s, so a capability silent
# for 3 s of quiet time is given up on. After 4 MiB the writer pauses
# 0.2 s (the daemon surely waits), stops the daemon with SIGSTOP, and
# continues it with SIGCONT 6 s later (from a timer: the writer itself
# blocks on the full pipe meanwhile). The daemon must warn of no late
# event and export as many spans as from the recorded file. Before the fix
# the 6 s counted as silence: both capabilities were given up on at
# SIGCONT and "thread/GC events arrived after the reorder horizon" (tens of
# thousands). The writer says whether the daemon was still stopped when it
# continued it (else the case proves nothing, and fails).
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
OTELCOL=$(dirname "$EL_BIN")/eventlog-live-otelcol
[ -x "$OTELCOL" ] || { echo "FAIL: $OTELCOL not built"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/wait_lib.sh"
LOG=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog
tmp=$(mktemp -d)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -CONT "$p" 2>/dev/null; done
  stop_pids
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi; }

"$OTELCOL" --print-defaults | sed 's/export: false/export: true/' >"$tmp/all.yaml"
export OTEL_SERVICE_NAME=threads OTEL_PROFILES_EXPORTER=none \
  OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=console
export EVENTLOG_LIVE_REORDER_HORIZON_MS=3000 EVENTLOG_LIVE_REORDER_MAX_WAIT_MS=3000

spans() { grep -o '"spanId"' "$1" | wc -l; }
late_of() {
  grep -o 'session [0-9]*: [0-9]* [a-zA-Z/]* *events arrived after the reorder horizon' "$1"
}

timeout 300 "$OTELCOL" --config "$tmp/all.yaml" --eventlog-file "$LOG" \
  >"$tmp/file.jsonl" 2>"$tmp/file.err"
check "file: otelcol exits 0" test $? -eq 0
ref=$(spans "$tmp/file.jsonl")
check "file: the reference has spans ($ref)" test "$ref" -gt 0

mkfifo "$tmp/fifo"
"$OTELCOL" --config "$tmp/all.yaml" --eventlog-file "$tmp/fifo" \
  >"$tmp/live.jsonl" 2>"$tmp/live.err" &
DPID=$!
PIDS+=("$DPID")
python3 - "$LOG" "$tmp/fifo" "$DPID" >"$tmp/writer.out" <<'PY' &
import os, signal, sys, threading, time
data = open(sys.argv[1], "rb").read()
pid = int(sys.argv[3])
def state():  # the daemon's state letter (T: stopped)
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]
def cont():
    print("stopped until SIGCONT:", state() == "T", flush=True)
    os.kill(pid, signal.SIGCONT)
piece, stop_at = 64 << 10, 4 << 20
with open(sys.argv[2], "wb", buffering=0) as f:
    for i in range(0, len(data), piece):
        if i == stop_at:
            time.sleep(0.2)  # the daemon has read everything: it waits
            os.kill(pid, signal.SIGSTOP)
            threading.Timer(6.0, cont).start()
        f.write(data[i:i + piece])  # blocks while the pipe is full
        time.sleep(0.005)
PY
WPID=$!
PIDS+=("$WPID")
wait_exit "$WPID" 120
check "writer: wrote the whole file" test $? -eq 0
check "writer: the daemon stayed stopped until the SIGCONT" \
  grep -q 'stopped until SIGCONT: True' "$tmp/writer.out"
wait_exit "$DPID" 120
check "live: otelcol exits 0 at the FIFO's end" test $? -eq 0
late=$(late_of "$tmp/live.err")
check "live: no late event after SIGSTOP/SIGCONT (${late:-none warned})" \
  test -z "$late"
got=$(spans "$tmp/live.jsonl")
check "live: as many spans as the recorded file ($got of $ref)" \
  test "$got" -eq "$ref"

[ "$fail" = 0 ] && echo PASS
exit "$fail"
