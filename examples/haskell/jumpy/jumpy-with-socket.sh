#!/usr/bin/env bash
# jumpy with the cost-centre profiler over eventlog-socket (needs cabal,
# GHC >= 9.2 with profiling libraries, Hackage). The Profiles dashboard's
# buttons start and stop the cost-centre profiler through the control
# server.
#   examples/haskell/jumpy/jumpy-with-socket.sh [ROUNDS [DELAY_MS [SEED]]]
set -euo pipefail
# The Profiles dashboard's control_url defaults to port 30720 (the demo runs
# one daemon per program; oddball's uses 30719).
: "${CONTROL_PORT:=30720}"
source "$(dirname "$0")/../common.sh"
need "$EL_OTELCOL" "build it with scripts/setup.sh"

build_with_cabal jumpy --enable-profiling
sock=$WORK_DIR/jumpy_eventlog.sock

cd "$WORK_DIR"   # jumpy.prof is written here at exit
GHC_EVENTLOG_UNIX_PATH=$sock GHC_EVENTLOG_WAIT=true \
  show_run "$PROG_BIN" "${1:-0}" "${2:-100}" "${3:-7}" \
  +RTS -N2 -l -p -hy -i"$HEAP_INTERVAL" --eventlog-flush-interval=1 -RTS &
PIDS+=($!)

show_run "$EL_OTELCOL" \
  --service-name=jumpy \
  --eventlog-socket="$sock" \
  -hy --eventlog-flush-interval=1 \
  --config="$DAEMON_CONFIG" \
  --otelcol-host="$OTELCOL_HOST" --otelcol-port="$OTELCOL_PORT" \
  --control --control-port="$CONTROL_PORT" --control-cors-ignore-failure \
  --control-cors-allow-origin=http://localhost:3000,http://127.0.0.1:3000 \
  --verbosity=info
