# producer_lib.sh: helpers for the end-to-end tests with a real producer,
# tests/e2e/test_producer_*.sh (sourced). The producer is
# tests/haskell/live_socket/Main.hs built with Debian's GHC 9.0, with the
# real eventlog-socket library from $EL_SHARED_DIR/peers/eventlog-socket
# (read from there, never copied into the project) or without it (a plain
# program writing its eventlog with -ol). The daemon exports to the test
# receiver (tests/receiver, OpenTelemetry's own decoding), which records the
# arrival time of every request; tests/e2e/producer_check.py compares what
# arrived with what the program printed on stdout (docs/testing.md).
#
# Exit 77 (skip) when ghc, the shared folder, node or the receiver's
# packages are missing. Every wait is bounded.
set -u
# wait_line, alive, wait_exit, stop_pid, stop_pids
source "$(dirname "${BASH_SOURCE[0]}")/wait_lib.sh"

SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
DAEMON=$BUILD/eventlog-live-otelcol
EL=$BUILD/eventlog-live
ESOCK=${EL_SHARED_DIR:-}/peers/eventlog-socket
PROG_SRC=$SRC/tests/haskell/live_socket/Main.hs
CHECK=(python3 "$SRC/tests/e2e/producer_check.py")
GHC=${GHC:-ghc}

skip() { echo "SKIP: $*"; exit 77; }
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
die() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }

# pl_require [socket]: skip unless everything the test needs is here;
# "socket": also the real eventlog-socket library.
pl_require() {
  command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc)"
  if [ "${1:-}" = socket ]; then
    [ -n "${EL_SHARED_DIR:-}" ] && [ -f "$ESOCK/build-ghc90.sh" ] ||
      skip "no \$EL_SHARED_DIR/peers/eventlog-socket/build-ghc90.sh" \
        "(EL_SHARED_DIR='${EL_SHARED_DIR:-}'): the real eventlog-socket library"
  fi
  [ -x "$DAEMON" ] || skip "$DAEMON not built"
  command -v node >/dev/null || skip "node missing (test receiver)"
  [ -d "$SRC/tests/receiver/node_modules/@grpc/grpc-js" ] ||
    skip "tests/receiver: run npm ci (scripts/setup.sh does)"
  command -v python3 >/dev/null || skip "python3 missing"
  command -v curl >/dev/null || skip "curl missing"
}

T=$(mktemp -d "${TMPDIR:-/tmp}/el-producer.XXXXXX")
PIDS=()
pl_cleanup() {
  stop_pids
  if [ -n "${KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap pl_cleanup EXIT

free_port() {
  python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools" && pwd)/free_port.py"
}
now_ms() { date +%s%3N; }   # Unix ms: compared with the receiver's and the program's times

# ---- the program ------------------------------------------------------------

# pl_build VARIANT: build tests/haskell/live_socket for VARIANT and set PROG.
#   socket  with the real eventlog-socket (build-ghc90.sh, -DUSE_EVENTLOG_SOCKET)
#   prof    the same, profiled (-prof -fprof-auto: cost-centre samples)
#   plain   plain GHC 9.0 (-threaded -eventlog -rtsopts), no library
# Cached in $BUILD/tests/haskell/live_socket-VARIANT/ and rebuilt only when
# the source, the library, its build script or ghc change (a key of their
# contents); concurrent tests wait for one build (flock).
pl_build() {
  local v=$1 dir=$BUILD/tests/haskell/live_socket-$1 flags=()
  case $v in
    socket) flags=(-DUSE_EVENTLOG_SOCKET) ;;
    prof) flags=(-DUSE_EVENTLOG_SOCKET -prof -fprof-auto) ;;
    plain) flags=() ;;
    *) die "pl_build: unknown variant $v" ;;
  esac
  mkdir -p "$dir"
  PROG=$dir/live_socket
  local key
  key=$({
    echo "$v ${flags[*]}"
    "$GHC" --numeric-version
    cat "$PROG_SRC"
    if [ "$v" != plain ]; then
      (cd "$ESOCK" && find . -type f | LC_ALL=C sort | xargs cat)
    fi
  } | sha256sum | cut -c1-32)
  (
    flock 9
    if [ -x "$PROG" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then
      exit 0
    fi
    echo "building $PROG ($v; cached until its sources change)"
    rm -f "$dir/key" "$PROG"
    local t0=$SECONDS
    if [ "$v" = plain ]; then
      "$GHC" -O1 -threaded -eventlog -rtsopts -outputdir "$dir/obj" \
        -o "$PROG.tmp" "$PROG_SRC" > "$dir/build.log" 2>&1
    else
      TMPDIR=$dir bash "$ESOCK/build-ghc90.sh" "$PROG_SRC" "$PROG.tmp" \
        "${flags[@]}" > "$dir/build.log" 2>&1
    fi || { cat "$dir/build.log"; exit 1; }
    mv "$PROG.tmp" "$PROG"
    echo "$key" > "$dir/key"
    echo "built in $((SECONDS - t0)) s"
  ) 9> "$dir/lock" || die "building the $v program failed"
}

# pl_prog NAME ARGS...: run $PROG ARGS... in the folder $T/NAME (its
# .eventlog, .hp and .prof files land there), stdout in $T/NAME.out;
# sets PROG_PID.
pl_prog() {
  local name=$1; shift
  mkdir -p "$T/$name"
  (cd "$T/$name" && exec "$PROG" "$@") > "$T/$name.out" 2> "$T/$name.err" &
  PROG_PID=$!
  PIDS+=("$PROG_PID")
}

# ---- receiver, daemon, /metrics -------------------------------------------

# pl_receiver NAME: a fresh test receiver writing $T/NAME.jsonl; sets
# RCV_OUT, RCV_GRPC, RCV_PID.
pl_receiver() {
  RCV_OUT=$T/$1.jsonl
  local ready=$T/$1.rcv.ready
  node "$SRC/tests/receiver/server.js" --out "$RCV_OUT" --ready-file "$ready" \
    --quiet --profiles-proto "$SRC/proto" > "$T/$1.rcv.log" 2>&1 &
  RCV_PID=$!
  PIDS+=("$RCV_PID")
  local i
  for i in $(seq 150); do [ -s "$ready" ] && break; sleep 0.1; done
  [ -s "$ready" ] || { cat "$T/$1.rcv.log"; die "receiver did not start"; }
  RCV_GRPC=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["grpc"])' "$ready")
}

# The daemon's configuration: every processor the tests look at, exported
# every 2 s.
pl_config() {
  cat > "$T/config.yaml" <<'YAML'
processors:
  logs:
    user_marker: {export: 2s}
    user_message: {export: 2s}
  metrics:
    heap_size: {aggregate: 1s, export: 2s}
    heap_live: {aggregate: 1s, export: 2s}
    heap_prof_sample: {aggregate: 1s, export: 2s}
  profiles:
    cost_centre_stack_profile: {export: 2s}
YAML
}

# pl_daemon NAME SOURCE_OPTIONS... [-- MORE_OPTIONS...]: start
# eventlog-live-otelcol --service-name app -h$HEAP (default T) exporting to
# the current receiver with the test configuration and /metrics on a free
# port, every byte it receives teed into $T/NAME.tee; stderr in
# $T/NAME.daemon.err. Sets DPID and PROM_PORT.
pl_daemon() {
  local name=$1; shift
  PROM_PORT=$(free_port)
  [ -f "$T/config.yaml" ] || pl_config
  "$DAEMON" "$@" --service-name app -h"${HEAP:-T}" \
    --otelcol-host 127.0.0.1 --otelcol-port "$RCV_GRPC" \
    --prometheus-port "$PROM_PORT" --config "$T/config.yaml" \
    --eventlog-socket-timeout 0.2 --eventlog-log-file "$T/$name.tee" -v info \
    > "$T/$name.daemon.out" 2> "$T/$name.daemon.err" &
  DPID=$!
  PIDS+=("$DPID")
}

# pl_daemon_stop NAME: SIGTERM the daemon (a socket source never ends by
# itself), which flushes and exports what it holds; 0 if it exited 0.
pl_daemon_stop() {
  stop_pid "$DPID"
  local st=$?
  if [ $st != 0 ]; then
    tail -n 20 "$T/$1.daemon.err" | sed 's/^/  daemon: /'
    fail "$1: the daemon exited $st after SIGTERM"
  fi
  return $st
}

# pl_poll_metrics NAME: every 0.5 s, GET the daemon's /metrics and append
# "<unix_ms> <first ghc_eventlog_HeapSize_bytes line or none>" (unix_ms:
# when the answer had arrived) to
# $T/NAME.metrics. Sets POLL_PID; stop it with stop_pid.
pl_poll_metrics() {
  local out=$T/$1.metrics port=$PROM_PORT
  (
    while :; do
      v=$(curl -s -m 2 "http://127.0.0.1:$port/metrics" 2>/dev/null |
        grep -m1 '^ghc_eventlog_HeapSize_bytes')
      echo "$(now_ms) ${v:-none}"   # when the answer was complete
      sleep 0.5
    done
  ) > "$out" 2>/dev/null &
  POLL_PID=$!
  PIDS+=("$POLL_PID")
}

# pl_socket_ready PATH SECONDS: until the Unix socket PATH exists.
pl_socket_ready() {
  local end=$((SECONDS + $2))
  until [ -S "$1" ]; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.05
  done
}

# ---- control server ---------------------------------------------------------

# pl_control_port NAME: the port of the daemon's control server (started
# with --control-port 0), from its log; sets CTL.
pl_control_port() {
  local i
  CTL=
  for i in $(seq 200); do
    CTL=$(sed -n 's/.*Starting control server on \([0-9][0-9]*\).*/\1/p' \
      "$T/$1.daemon.err" | head -1)
    [ -n "$CTL" ] && return 0
    sleep 0.05
  done
  cat "$T/$1.daemon.err"
  die "$1: the daemon did not start its control server"
}

# pl_post ROUTE: POST /control/ROUTE with service-name=app (as Grafana's
# buttons); prints the HTTP status, the answer is in $T/post.body.
pl_post() {
  curl -s -o "$T/post.body" -w '%{http_code}' -m 10 -X POST \
    -H 'Content-Type: application/x-www-form-urlencoded' \
    -d service-name=app "http://127.0.0.1:$CTL/control/$1"
}

# pl_post_ok ROUTE: pl_post, and a failure unless the answer is 200.
pl_post_ok() {
  local st
  st=$(pl_post "$1")
  if [ "$st" = 200 ]; then
    pass "POST /control/$1: 200 $(cat "$T/post.body")"
  else
    fail "POST /control/$1: $st $(cat "$T/post.body")"
  fi
}

# pl_post_connected ROUTE SECONDS: POST ROUTE until the daemon answers 200
# (503 until it is connected to the program).
pl_post_connected() {
  local st end=$((SECONDS + $2))
  while :; do
    st=$(pl_post "$1")
    [ "$st" = 200 ] && { pass "POST /control/$1: 200 once connected"; return 0; }
    [ "$st" = 503 ] || { fail "POST /control/$1: $st $(cat "$T/post.body")"; return 1; }
    [ $SECONDS -lt $end ] || { fail "POST /control/$1: still 503 after $2 s"; return 1; }
    sleep 0.2
  done
}

# ---- one live run -----------------------------------------------------------

# pl_live_run NAME ORDER ADDR READY DAEMON_SOURCE_OPTIONS...: the live
# scenario of issue 11 with the program built by pl_build. A fresh
# receiver; the program runs $SECS s (default 30) with
#   addr=ADDR seconds=$SECS tag=NAME +RTS -l -hT -i0.2 -RTS
# ORDER "daemon": the daemon starts first and retries until the program
# listens; "program": the daemon starts once the program printed its 4th
# marker (READY: a command that succeeds once the program listens). While
# the program runs /metrics is polled; once it exited (and 1 s more) the
# daemon is stopped (SIGTERM: it flushes) and producer_check.py live checks
# what arrived against the program's stdout.
pl_live_run() {
  local name=$1 order=$2 addr=$3 ready=$4 t0=$SECONDS; shift 4
  local secs=${SECS:-30}
  echo "== $name: $order first, addr=$addr"
  pl_receiver "$name"
  if [ "$order" = daemon ]; then
    pl_daemon "$name" "$@"
    sleep 1
    pl_prog "$name" addr="$addr" seconds="$secs" tag="$name" \
      +RTS -l -hT -i0.2 -RTS
  else
    pl_prog "$name" addr="$addr" seconds="$secs" tag="$name" \
      +RTS -l -hT -i0.2 -RTS
    $ready || die "$name: the program does not listen"
    wait_line "$T/$name.out" '^marker 4 ' 20 || die "$name: no 4th marker"
    pl_daemon "$name" "$@"
  fi
  local prog=$PROG_PID
  pl_poll_metrics "$name"
  wait_exit "$prog" $((secs + 60))
  local st=$?
  [ $st = 0 ] || { tail -n 5 "$T/$name.err"; fail "$name: the program exited $st"; }
  sleep 1   # the last scrape, the last export of what arrived in time
  stop_pid "$POLL_PID"
  pl_daemon_stop "$name"
  stop_pid "$RCV_PID"
  "${CHECK[@]}" live --name "$name" --out "$T/$name.out" \
    --received "$RCV_OUT" --metrics "$T/$name.metrics" --tag "$name" \
    --seconds "$secs" --tee "$T/$name.tee" \
    --daemon-err "$T/$name.daemon.err" || FAILS=$((FAILS + 1))
  grep -i 'warn\|error' "$T/$name.daemon.err" | head -n 5 | sed 's/^/  daemon: /'
  echo "   ($name took $((SECONDS - t0)) s)"
}

# pl_blocked_in_pipe_write PID: one of its threads sleeps in pipe_write
# (anon_pipe_write on newer kernels).
pl_blocked_in_pipe_write() {
  grep -qE '(^|_)pipe_write$' /proc/"$1"/task/*/wchan 2>/dev/null
}

# pl_check_undrained NAME: the control case of the drain tests. The
# reader of $T/NAME.fifo stopped without draining it
# (--eventlog-drain-timeout 0), so the program PROG_PID must still be
# blocked in pipe_write after its run; a `cat` of the FIFO then releases
# it and it exits 0.
pl_check_undrained() {
  local name=$1 st
  wait_exit "$PROG_PID" $((SECS + 20))
  st=$?
  if [ $st = 124 ] && pl_blocked_in_pipe_write "$PROG_PID"; then
    pass "$name: without the drain the program is blocked in pipe_write"
    cat "$T/$name.fifo" > /dev/null &   # release it
    PIDS+=($!)
    wait_exit "$PROG_PID" 60 && pass "$name: drained by hand, it exited 0" ||
      fail "$name: the program did not exit once drained by hand"
  else
    fail "$name: expected the program blocked in pipe_write (exit $st)"
  fi
}

# pl_finish: exit 0 if no check failed, else 1.
pl_finish() {
  if [ "$FAILS" -gt 0 ]; then
    echo "FAIL: $FAILS failing step(s), see the FAIL lines above"
    exit 1
  fi
  echo "PASS"
  exit 0
}
