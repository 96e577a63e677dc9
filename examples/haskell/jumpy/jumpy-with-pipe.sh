#!/usr/bin/env bash
# jumpy with the cost-centre profiler over a named pipe: needs only GHC with
# profiling libraries (Debian: ghc ghc-prof).
#   examples/haskell/jumpy/jumpy-with-pipe.sh [ROUNDS [DELAY_MS [SEED]]]
# Feeds the Profiles dashboard (cost-centre stack flame graph) and, with
# -hy, the Heap dashboard.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
need "$EL_OTELCOL" "build it with scripts/setup.sh"

# A profiled build: every top-level function becomes a cost centre.
build_with_ghc jumpy -prof -fprof-auto
fifo=$WORK_DIR/jumpy.eventlog.fifo
mkfifo "$fifo"
flush=$(flush_flag)   # empty on GHC 9.0: buffers flush at 2 MiB or at exit
fifo_hold "$fifo"

# The program: -p cost-centre profiler (its samples go into the eventlog
# with -l; jumpy.prof is written into $WORK_DIR at exit), -hy heap profile
# by type (the profiled RTS has no -hT).
cd "$WORK_DIR"
cmd=("$WORK_DIR/jumpy" "${1:-0}" "${2:-100}" "${3:-7}"
     +RTS -N2 -l -p -hy -i"$HEAP_INTERVAL" ${flush:+"$flush"} -ol"$fifo" -RTS)
show_cmd "${cmd[@]}"
"${cmd[@]}" 3>&- &
prog=$!
PIDS+=("$prog")

# The daemon: -hy as the program.
daemon=("$EL_OTELCOL"
  --service-name=jumpy
  --eventlog-file="$fifo"
  -hy ${flush:+"$flush"}
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
