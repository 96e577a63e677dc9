# source_lib.sh: helpers shared by test_socket*.sh and test_source*.sh.
# Every wait is bounded: no test can hang.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/wait_lib.sh"
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
PEER=$EL_BUILD_DIR/tests/el_peer
CAT=$EL_BUILD_DIR/tests/el_src_cat
[ -x "$PEER" ] && [ -x "$CAT" ] || { echo "SKIP: test tools not built"; exit 77; }
T=$(mktemp -d /tmp/el_e2e.XXXXXX)
cleanup() {
  local p
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# wait_for FILE [SECONDS]: until FILE exists.
wait_for() {
  local i
  for ((i = 0; i < ${2:-10} * 20; i++)); do
    [ -e "$1" ] && return 0
    sleep 0.05
  done
  fail "timed out waiting for $1"
}

# by_type: the per-type counts block of `stats` plus the event total.
by_type() { sed -n '/^events by type:/,/^events:/p'; }

# wait_pid PID SECONDS: wait for a background job, kill it after SECONDS.
wait_pid() {
  local i
  for ((i = 0; i < $2 * 20; i++)); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
    sleep 0.05
  done
  kill "$1" 2>/dev/null || true
  fail "pid $1 still running after $2 s"
}
