#!/usr/bin/env bash
# threads over eventlog-socket (needs cabal, GHC >= 9.2, Hackage).
#   examples/haskell/threads/threads-with-socket.sh [ROUNDS [DELAY_MS [WORKERS [JOBS]]]]
set -euo pipefail
source "$(dirname "$0")/../common.sh"
need "$EL_OTELCOL" "build it with scripts/setup.sh"

build_with_cabal threads
sock=$WORK_DIR/threads_eventlog.sock

GHC_EVENTLOG_UNIX_PATH=$sock GHC_EVENTLOG_WAIT=true \
  show_run "$PROG_BIN" "${1:-0}" "${2:-500}" "${3:-4}" "${4:-32}" \
  +RTS -N4 -l --eventlog-flush-interval=1 -RTS &
PIDS+=($!)

show_run "$EL_OTELCOL" \
  --service-name=threads \
  --eventlog-socket="$sock" \
  --eventlog-flush-interval=1 \
  --config="$DAEMON_CONFIG" \
  --otelcol-host="$OTELCOL_HOST" --otelcol-port="$OTELCOL_PORT" \
  --control --control-port="$CONTROL_PORT" --control-cors-ignore-failure \
  --control-cors-allow-origin=http://localhost:3000,http://127.0.0.1:3000 \
  --verbosity=info
