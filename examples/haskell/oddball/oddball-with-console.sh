#!/usr/bin/env bash
# oddball over a named pipe, telemetry printed instead of sent: no collector
# needed. eventlog-live-otelcol writes OTLP/JSON lines (one export request
# per line) on stdout; the program's own output goes to stderr.
#   examples/haskell/oddball/oddball-with-console.sh [ROUNDS [DELAY_MS [MAX_N]]] | jq .
set -euo pipefail
source "$(dirname "$0")/../common.sh"
need "$EL_OTELCOL" "build it with scripts/setup.sh"

build_with_ghc oddball >&2
fifo=$WORK_DIR/oddball.eventlog.fifo
mkfifo "$fifo"
flush=$(flush_flag)   # empty on GHC 9.0: buffers flush at 2 MiB or at exit
fifo_hold "$fifo"

cd "$WORK_DIR"
cmd=("$WORK_DIR/oddball" "${1:-3}" "${2:-1000}" "${3:-2000000}"
     +RTS -N2 -l -hT -i"$HEAP_INTERVAL" ${flush:+"$flush"} -ol"$fifo" -RTS)
show_cmd "${cmd[@]}"
"${cmd[@]}" 3>&- >&2 &
prog=$!
PIDS+=("$prog")

# Every signal to the console exporter (OTEL_<SIGNAL>_EXPORTER=console).
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=console OTEL_PROFILES_EXPORTER=console
daemon=("$EL_OTELCOL"
  --service-name=oddball
  --eventlog-file="$fifo"
  -hT ${flush:+"$flush"}
  --config="$DAEMON_CONFIG")
show_cmd "${daemon[@]}"
"${daemon[@]}" 3>&- &
dpid=$!
PIDS+=("$dpid")
fifo_release "$fifo" "$prog" "$dpid"
if wait "$dpid"; then
  wait "$prog"
else
  st=$?
  echo "$0: eventlog-live-otelcol failed ($st)" >&2
  exit "$st"   # the cleanup stops the program
fi
