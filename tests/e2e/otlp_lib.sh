# otlp_lib.sh: helpers for the OTLP end-to-end tests (sourced by
# tests/e2e/test_otlp_*.sh). They run the test receiver
# (tests/receiver/server.js, real OpenTelemetry decoders) and the driver
# tests/tools/otlp_send.c, and check what the receiver decoded.
# Exit 77 (skip) when node or the receiver's packages are missing.

set -euo pipefail

SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
RECEIVER=$SRC/tests/receiver/server.js
SEND=$BUILD/tests/otlp_send
. "$SRC/tests/e2e/wait_lib.sh"

command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
[ -d "$SRC/tests/receiver/node_modules/@grpc/grpc-js" ] || {
  echo "SKIP: run 'npm ci' in tests/receiver (scripts/setup.sh does)"; exit 77; }
[ -x "$SEND" ] || { echo "FAIL: $SEND not built"; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-otlp.XXXXXX")
RCV_PID=
FAILS=0
cleanup() {
  rcv_stop
  rm -rf "$TMP"
}
trap cleanup EXIT

# Fast retries for tests (production defaults: 500 ms initial, 5 s cap).
export EL_OTLP_RETRY_INITIAL=${EL_OTLP_RETRY_INITIAL:-100}
export EL_OTLP_RETRY_MAX=${EL_OTLP_RETRY_MAX:-1000}
export EL_LOG_LEVEL=${EL_LOG_LEVEL:-warn}
# A loaded 2-core machine (and the ASan build) can make the Node receiver
# slow: give the exit flush time to deliver everything rather than drop it
# (default 10 s; the driver itself is bounded by `timeout 60` in send).
# Tests of the shutdown bound set their own value.
export EL_OTLP_SHUTDOWN_TIMEOUT=${EL_OTLP_SHUTDOWN_TIMEOUT:-45000}

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

# rcv_start NAME [receiver options...]: start a receiver writing
# $TMP/NAME.jsonl; sets RCV_OUT RCV_GRPC RCV_HTTP RCV_CTL RCV_PID.
rcv_start() {
  local name=$1; shift
  rcv_stop
  RCV_OUT=$TMP/$name.jsonl
  local ready=$TMP/$name.ready
  rm -f "$ready"
  node "$RECEIVER" --out "$RCV_OUT" --ready-file "$ready" --quiet "$@" \
    >"$TMP/$name.rcv.log" 2>&1 &
  RCV_PID=$!
  for _ in $(seq 100); do
    [ -s "$ready" ] && break
    kill -0 "$RCV_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -s "$ready" ] || { cat "$TMP/$name.rcv.log"; echo "FAIL: receiver did not start"; exit 1; }
  RCV_GRPC=$(jq .grpc "$ready")
  RCV_HTTP=$(jq .http "$ready")
  RCV_CTL=$(jq .control "$ready")
}

rcv_stop() {
  if [ -n "${RCV_PID:-}" ]; then
    kill "$RCV_PID" 2>/dev/null || true
    wait "$RCV_PID" 2>/dev/null || true
    RCV_PID=
  fi
}

# rcv_ctl PATH JSON: POST to the control endpoint.
rcv_ctl() {
  curl -sf -X POST -H 'Content-Type: application/json' -d "$2" \
    "http://127.0.0.1:$RCV_CTL$1" >/dev/null
}

# send TRANSPORT OUTJSON [otlp_send args...]: run the driver against the
# current receiver over grpc or http, stats JSON into OUTJSON. Bounded by
# timeout: a hang is a failure.
send() {
  local transport=$1 out=$2; shift 2
  local endpoint proto
  if [ "$transport" = grpc ]; then
    proto=grpc; endpoint=http://127.0.0.1:$RCV_GRPC
  else
    proto=http/protobuf; endpoint=http://127.0.0.1:$RCV_HTTP
  fi
  local rc=0
  OTEL_SERVICE_NAME=${OTEL_SERVICE_NAME:-otlp-e2e} \
  OTEL_EXPORTER_OTLP_PROTOCOL=$proto OTEL_EXPORTER_OTLP_ENDPOINT=$endpoint \
    timeout 60 "$SEND" "$@" >"$out" 2>"$out.err" || rc=$?
  if [ $rc -ne 0 ]; then
    cat "$out.err"
    fail "otlp_send exited with $rc (124 = hung)"
    return 1
  fi
}

# received_ids SIGNAL: the "i" attributes of SIGNAL's records, one a line.
received_ids() {
  jq -r --arg s "$1" 'select(.signal == $s) | .request | ..
    | objects | select(.key? == "i") | .value.intValue' "$RCV_OUT"
}

# exactly_once LABEL SIGNAL N: ids 0..N-1 each received exactly once.
exactly_once() {
  local label=$1 sig=$2 n=$3
  local got dup missing
  got=$(received_ids "$sig" | sort -n)
  dup=$(printf '%s\n' "$got" | uniq -d | grep -c . || true)
  missing=$(comm -23 <(seq 0 $((n - 1)) | sort) <(printf '%s\n' "$got" | sort -u) | grep -c . || true)
  local count
  count=$(printf '%s\n' "$got" | grep -c . || true)
  if [ "$count" -eq "$n" ] && [ "$dup" -eq 0 ] && [ "$missing" -eq 0 ]; then
    pass "$label: $sig: all $n records received exactly once"
  else
    fail "$label: $sig: received $count of $n ($dup duplicated, $missing missing)"
  fi
}

# stat FILE SIGNAL FIELD: a counter from otlp_send's JSON.
stat() { jq -r --arg s "$2" --arg f "$3" '.[$s][$f]' "$1"; }

finish() {
  if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
