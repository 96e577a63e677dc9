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
fifo_hold "$fifo"

# The program: -l eventlog, -hT heap profile by closure type, a census
# every $HEAP_INTERVAL s of mutator time (-i), -ol the FIFO; -N2: two
# capabilities.
cd "$WORK_DIR"
cmd=("$WORK_DIR/oddball" "${1:-0}" "${2:-1000}" "${3:-2000000}"
     +RTS -N2 -l -hT -i"$HEAP_INTERVAL" ${flush:+"$flush"} -ol"$fifo" -RTS)
show_cmd "${cmd[@]}"
"${cmd[@]}" 3>&- &
prog=$!
PIDS+=("$prog")

# The daemon: heap breakdown -hT as the program's. At the end of the pipe
# (the program exits) it flushes everything and exits.
daemon=("$EL_OTELCOL"
  --service-name=oddball
  --eventlog-file="$fifo"
  -hT ${flush:+"$flush"}
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
