#!/usr/bin/env bash
# Issue 11 with a plain GHC 9.0 program (no eventlog-socket) writing its
# eventlog into a named pipe: tests/haskell/live_socket built with
# `ghc -threaded -eventlog -rtsopts`, run 30 s with
#   +RTS -l -hT -i0.2 -ol FIFO -RTS
# into `eventlog-live-otelcol --eventlog-file FIFO` (same options as
# test_producer_socket.sh). GHC 9.0 writes WALL_CLOCK_TIME into its global
# buffer, which reaches the pipe only at exit; the capability buffer (the
# markers, the GC events) every ~1.5 s. Checked as in
# test_producer_socket.sh: heap points and at least half of the markers
# arrive before the program exits, with times within 1 s (median) of the
# printed ones, /metrics serves HeapSize during the run; then the daemon
# sees the end of the FIFO (and, serving /metrics, exits 0 on SIGTERM).
#
# PRODUCER_CONTROL=1 adds a control run that shows the checks can pass
# with a daemon that waits for WALL_CLOCK_TIME: the program (built with the
# library, which supplies GHC 9.0's missing requestHeapCensus) first
# requests ~3 MiB of heap censuses, which pushes its global buffer (and
# WALL_CLOCK_TIME in it) into the pipe within the first second.
set -u
source "$(dirname "$0")/producer_lib.sh"
pl_require
SECS=30

# scenario NAME ARGS...: one run over a FIFO; ARGS go to the program.
scenario() {
  local name=$1 t0=$SECONDS; shift
  local fifo=$T/$name.fifo
  echo "== $name: -ol FIFO, the daemon first"
  pl_receiver "$name"
  mkfifo "$fifo"
  pl_daemon "$name" --eventlog-file "$fifo"
  # The daemon's open of the FIFO (on libuv's thread pool) and the RTS's
  # both block until the other end is open: either may come first.
  sleep 1
  pl_prog "$name" "$@" seconds=$SECS tag="$name" \
    +RTS -l -hT -i0.2 -ol"$fifo" -RTS
  local prog=$PROG_PID
  pl_poll_metrics "$name"
  wait_exit "$prog" $((SECS + 60))
  local st=$?
  [ $st = 0 ] || { tail -n 5 "$T/$name.err"; fail "$name: the program exited $st"; }
  # With --prometheus-port the daemon keeps serving /metrics after the end
  # of its input (docs/web.md): it must say so, then stop on SIGTERM.
  if wait_line "$T/$name.daemon.err" 'input ended' 60; then
    pass "$name: the daemon saw the end of the FIFO"
  else
    tail -n 20 "$T/$name.daemon.err" | sed 's/^/  daemon: /'
    fail "$name: the daemon did not see the end of the FIFO within 60 s"
  fi
  stop_pid "$POLL_PID"
  pl_daemon_stop "$name" && pass "$name: the daemon exited 0 on SIGTERM"
  stop_pid "$RCV_PID"
  "${CHECK[@]}" live --name "$name" --out "$T/$name.out" \
    --received "$RCV_OUT" --metrics "$T/$name.metrics" --tag "$name" \
    --seconds $SECS --tee "$T/$name.tee" || FAILS=$((FAILS + 1))
  grep -i 'warn\|error' "$T/$name.daemon.err" | head -n 5 | sed 's/^/  daemon: /'
  echo "   ($name took $((SECONDS - t0)) s)"
}

pl_build plain
scenario fifo
if [ "${PRODUCER_CONTROL:-}" = 1 ]; then
  pl_require socket
  pl_build socket
  scenario fifo-control census=start
fi
pl_finish
