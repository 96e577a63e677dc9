# common.sh: helpers sourced by the examples' run scripts (not run directly).
#
# Environment (all optional):
#   EL_OTELCOL     the daemon (default: <repo>/build/eventlog-live-otelcol)
#   OTELCOL_HOST   OpenTelemetry Collector host (default: localhost; the
#                  demo's docker-compose-external.yml publishes :4317)
#   OTELCOL_PORT   its OTLP gRPC port (default: 4317)
#   CONTROL_PORT   port of the daemon's control server (default: 30719, the
#                  port the Grafana dashboards' buttons call)
#   GHC, CABAL     compilers to use (default: ghc, cabal from PATH)
#   HEAP_INTERVAL  seconds of mutator time between heap censuses (+RTS -i,
#                  default 0.1; the RTS timer pauses while the program idles)
#   KEEP_TMP=1     keep the temporary directory (binaries, FIFO, .prof)

EXAMPLES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$EXAMPLES_DIR/../.." && pwd)
EL_OTELCOL=${EL_OTELCOL:-$REPO_DIR/build/eventlog-live-otelcol}
OTELCOL_HOST=${OTELCOL_HOST:-localhost}
OTELCOL_PORT=${OTELCOL_PORT:-4317}
CONTROL_PORT=${CONTROL_PORT:-30719}
HEAP_INTERVAL=${HEAP_INTERVAL:-0.1}
GHC=${GHC:-ghc}
CABAL=${CABAL:-cabal}
DAEMON_CONFIG=$EXAMPLES_DIR/eventlog-live-otelcol.yaml

WORK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/eventlog-live-example.XXXXXX")
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    echo "kept $WORK_DIR" >&2
  else
    rm -rf "$WORK_DIR"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

need() {
  command -v "$1" >/dev/null 2>&1 || [ -x "$1" ] || {
    echo "$0: needs $1 ($2)" >&2
    exit 1
  }
}

# Print the command, then run it (so the exact options are on screen).
show_run() {
  printf '+' >&2
  printf ' %q' "$@" >&2
  printf '\n' >&2
  "$@"
}

# Print a command line (so the exact options are on screen).
show_cmd() {
  printf '+' >&2
  printf ' %q' "$@" >&2
  printf '\n' >&2
}

# A FIFO has no writer until the program's runtime opens it, and a reader
# that opens it earlier may see end of file at once; a writer without a
# reader gets EPIPE. fifo_hold keeps the FIFO open (read-write, fd 3) so
# both ends attach whatever the order; fifo_release FIFO PID... lets go once
# every PID has the FIFO open (or has exited), so that the reader sees end
# of file exactly when the program exits. Start the program and the daemon
# with 3>&- so that they do not inherit fd 3.
fifo_hold() {
  exec 3<>"$1"
}

fifo_release() {
  local fifo=$1 pid i f attached
  shift
  for pid in "$@"; do
    for i in $(seq 600); do   # up to 30 s each
      kill -0 "$pid" 2>/dev/null || break
      attached=0
      for f in /proc/"$pid"/fd/*; do
        if [ "$(readlink "$f" 2>/dev/null)" = "$fifo" ]; then
          attached=1
          break
        fi
      done
      [ $attached = 1 ] && break
      sleep 0.05
    done
  done
  exec 3>&-
}

# ghc_at_least MAJOR MINOR: true if $GHC is at least that version.
ghc_at_least() {
  local v
  v=$("$GHC" --numeric-version) || return 1
  awk -v v="$v" -v want="$1.$2" 'BEGIN {
    split(v, a, "."); split(want, b, ".");
    exit !((a[1] > b[1]) || (a[1] == b[1] && a[2] >= b[2])) }'
}

# build_with_ghc PROGRAM [extra ghc flags...]: build examples/haskell/PROGRAM
# with plain GHC (no eventlog-socket, no Hackage) into $WORK_DIR/PROGRAM.
build_with_ghc() {
  local prog=$1; shift
  need "$GHC" "Debian: apt-get install ghc (ghc-prof for profiling)"
  mkdir -p "$WORK_DIR/build-$prog"
  show_run "$GHC" -O1 -threaded -rtsopts -eventlog "$@" \
    -outputdir "$WORK_DIR/build-$prog" -o "$WORK_DIR/$prog" \
    "$EXAMPLES_DIR/$prog/Main.hs" >/dev/null
}

# build_with_cabal PROGRAM [extra cabal flags...]: build with cabal and
# eventlog-socket +control (downloads from Hackage); sets PROG_BIN.
build_with_cabal() {
  local prog=$1; shift
  need "$CABAL" "https://www.haskell.org/ghcup/"
  (cd "$EXAMPLES_DIR" &&
     show_run "$CABAL" build -v0 -w "$GHC" \
       --constraint="eventlog-socket +control" "$@" "exe:$prog")
  PROG_BIN=$(cd "$EXAMPLES_DIR" &&
    "$CABAL" list-bin -v0 -w "$GHC" \
      --constraint="eventlog-socket +control" "$@" "exe:$prog")
}

# flush_flag: the RTS option that flushes the eventlog every second, if this
# GHC has it (9.2 and later). GHC 9.0 writes the eventlog only when a
# capability's 2 MiB buffer fills up or the program exits, so on 9.0 the
# telemetry arrives in bursts.
flush_flag() {
  if ghc_at_least 9 2; then echo "--eventlog-flush-interval=1"; fi
}
