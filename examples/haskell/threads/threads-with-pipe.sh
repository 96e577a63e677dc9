#!/usr/bin/env bash
# threads over a named pipe: needs only GHC (Debian's ghc 9.0 works).
#   examples/haskell/threads/threads-with-pipe.sh [ROUNDS [DELAY_MS [WORKERS [JOBS]]]]
# Feeds the Threads dashboard (productivity from capability usage) and the
# Logs dashboard (thread labels, round markers and messages).
set -euo pipefail
source "$(dirname "$0")/../common.sh"
need "$EL_OTELCOL" "build it with scripts/setup.sh"

build_with_ghc threads
fifo=$WORK_DIR/threads.eventlog.fifo
mkfifo "$fifo"
flush=$(flush_flag)   # empty on GHC 9.0: buffers flush at 2 MiB or at exit

show_run "$EL_OTELCOL" \
  --service-name=threads \
  --eventlog-file="$fifo" \
  ${flush:+"$flush"} \
  --config="$DAEMON_CONFIG" \
  --otelcol-host="$OTELCOL_HOST" --otelcol-port="$OTELCOL_PORT" \
  --verbosity=info &
PIDS+=($!)

# The program: -l eventlog (scheduler, GC, user events), -N4 capabilities.
# Thread events are plentiful, so even GHC 9.0's 2 MiB buffers fill often.
cd "$WORK_DIR"
show_run "$WORK_DIR/threads" "${1:-0}" "${2:-500}" "${3:-4}" "${4:-32}" \
  +RTS -N4 -l ${flush:+"$flush"} -ol"$fifo" -RTS
wait "${PIDS[0]}"
