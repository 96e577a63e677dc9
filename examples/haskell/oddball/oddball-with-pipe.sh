#!/usr/bin/env bash
# oddball over a named pipe: needs only GHC (Debian's ghc 9.0 works).
#   examples/haskell/oddball/oddball-with-pipe.sh [ROUNDS [DELAY_MS [MAX_N]]]
# The program writes its eventlog into a FIFO (+RTS -l -ol FIFO) and
# eventlog-live-otelcol reads the FIFO like a file (--eventlog-file), then
# exports to the OpenTelemetry Collector at $OTELCOL_HOST:$OTELCOL_PORT.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
need "$EL_OTELCOL" "build it with scripts/setup.sh"

build_with_ghc oddball
fifo=$WORK_DIR/oddball.eventlog.fifo
mkfifo "$fifo"
flush=$(flush_flag)   # empty on GHC 9.0: buffers flush at 2 MiB or at exit

# The daemon: heap breakdown -hT must match the program's RTS option.
show_run "$EL_OTELCOL" \
  --service-name=oddball \
  --eventlog-file="$fifo" \
  -hT ${flush:+"$flush"} \
  --config="$DAEMON_CONFIG" \
  --otelcol-host="$OTELCOL_HOST" --otelcol-port="$OTELCOL_PORT" \
  --verbosity=info &
PIDS+=($!)

# The program: -l eventlog, -hT heap profile by closure type sampled every
# 0.1 s (-i0.1), -ol the FIFO. -N2: two capabilities.
cd "$WORK_DIR"
show_run "$WORK_DIR/oddball" "${1:-0}" "${2:-1000}" "${3:-2000000}" \
  +RTS -N2 -l -hT -i0.1 ${flush:+"$flush"} -ol"$fifo" -RTS
# The program has exited: the daemon sees end of file, flushes and exits.
wait "${PIDS[0]}"
