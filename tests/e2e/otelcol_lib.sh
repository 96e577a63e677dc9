# otelcol_lib.sh: helpers shared by tests/e2e/test_otelcol*.sh (sourced).
# Starts the test OTLP receiver (tests/receiver) and provides the
# independent checker (otelcol_check.py) that recomputes the expected
# telemetry from the ghc-events `.reference` texts.
set -euo pipefail

: "${EL_SOURCE_DIR:?}" "${EL_BUILD_DIR:?}"
EL_EVENTLOGS=${EL_EVENTLOGS:-$EL_SOURCE_DIR/tests/data/eventlogs}
DAEMON=$EL_BUILD_DIR/eventlog-live-otelcol
CHECK="python3 $EL_SOURCE_DIR/tests/e2e/otelcol_check.py"

command -v node >/dev/null || { echo "skip: node missing"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
[ -d "$EL_SOURCE_DIR/tests/receiver/node_modules" ] ||
  { echo "skip: receiver dependencies missing (npm ci)"; exit 77; }

# A loaded test machine and a Node receiver can be slow: give the daemon
# time to deliver everything at exit rather than drop it (default 5 s).
export EL_OTLP_SHUTDOWN_TIMEOUT=${EL_OTLP_SHUTDOWN_TIMEOUT:-120000}

WORK=$(mktemp -d /tmp/el-otelcol-XXXXXX)
RCV_PID=
cleanup() {
  [ -n "$RCV_PID" ] && kill "$RCV_PID" 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# start_receiver OUT: start a receiver writing to OUT; sets HTTP_PORT,
# GRPC_PORT, CONTROL_PORT.
start_receiver() {
  local out=$1
  rm -f "$WORK/ready"
  node "$EL_SOURCE_DIR/tests/receiver/server.js" --out "$out" \
    --ready-file "$WORK/ready" --quiet \
    --profiles-proto "$EL_SOURCE_DIR/proto" >"$WORK/receiver.log" 2>&1 &
  RCV_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/ready" ] && break; sleep 0.1; done
  [ -s "$WORK/ready" ] || { echo "receiver did not start"; cat "$WORK/receiver.log"; exit 1; }
  HTTP_PORT=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["http"])' "$WORK/ready")
  GRPC_PORT=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["grpc"])' "$WORK/ready")
  CONTROL_PORT=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["control"])' "$WORK/ready")
}
