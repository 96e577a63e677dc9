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
fifo_hold "$fifo"

# The program: -l eventlog (scheduler, GC, user events), -N4 capabilities.
# Thread events are plentiful, so even GHC 9.0's 2 MiB buffers fill often.
cd "$WORK_DIR"
cmd=("$WORK_DIR/threads" "${1:-0}" "${2:-500}" "${3:-4}" "${4:-32}"
     +RTS -N4 -l ${flush:+"$flush"} -ol"$fifo" -RTS)
show_cmd "${cmd[@]}"
"${cmd[@]}" 3>&- &
prog=$!
PIDS+=("$prog")

# The daemon: no heap profile, so no -h option.
daemon=("$EL_OTELCOL"
  --service-name=threads
  --eventlog-file="$fifo"
  ${flush:+"$flush"}
  --config="$DAEMON_CONFIG"
  --otelcol-host="$OTELCOL_HOST" --otelcol-port="$OTELCOL_PORT"
  --verbosity=info)
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
