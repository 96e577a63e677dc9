#!/usr/bin/env bash
# oddball over eventlog-socket, with the control server for the dashboards'
# buttons (start/stop heap profiling, request a heap census).
#   examples/haskell/oddball/oddball-with-socket.sh [ROUNDS [DELAY_MS [MAX_N]]]
# Needs cabal and GHC >= 9.2 (eventlog-socket is downloaded from Hackage and
# built with its +control flag).
set -euo pipefail
source "$(dirname "$0")/../common.sh"
need "$EL_OTELCOL" "build it with scripts/setup.sh"

build_with_cabal oddball
sock=$WORK_DIR/oddball_eventlog.sock

# The program: eventlog-socket listens on $sock and waits for the daemon.
# RTS: -l eventlog, -hT heap profile by closure type, flushed every second.
GHC_EVENTLOG_UNIX_PATH=$sock GHC_EVENTLOG_WAIT=true \
  show_run "$PROG_BIN" "${1:-0}" "${2:-1000}" "${3:-2000000}" \
  +RTS -N2 -l -hT -i"$HEAP_INTERVAL" --eventlog-flush-interval=1 -RTS &
PIDS+=($!)

# The daemon: connects to the socket (retrying until it exists), -hT and
# the flush interval must match the program's RTS options; the control
# server on $CONTROL_PORT forwards the dashboards' commands to the program.
show_run "$EL_OTELCOL" \
  --service-name=oddball \
  --eventlog-socket="$sock" \
  -hT --eventlog-flush-interval=1 \
  --config="$DAEMON_CONFIG" \
  --otelcol-host="$OTELCOL_HOST" --otelcol-port="$OTELCOL_PORT" \
  --control --control-port="$CONTROL_PORT" --control-cors-ignore-failure \
  --control-cors-allow-origin=http://localhost:3000,http://127.0.0.1:3000 \
  --verbosity=info
