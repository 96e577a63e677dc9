# serve_lib.sh: the set-up shared by the end-to-end tests that have
# eventlog-live-otelcol serve an eventlog and then read its HTTP endpoints
# (/metrics, the web view, /api/data): test_web.sh, test_web_sessions.sh,
# test_prometheus.sh (sourced).
#
# Usage: source serve_lib.sh TAG. Sets SRC, BUILD, EVENTLOGS, DAEMON, PEER
# (el_peer) and TMP (a fresh folder ${TMPDIR:-/tmp}/el-TAG.XXXXXX); on exit
# every pid in PIDS still running is stopped (stop_pids, wait_lib.sh) and
# TMP removed.
# Defines skip and fail (exit 77, exit 1) and turns every OTLP exporter
# off (a test that wants one exports its variable after sourcing). Exit 77
# (skip) when the daemon is not built or curl or python3 are missing.
# Every wait is bounded.
set -u
# wait_line, stop_pid, stop_pids
source "$(dirname "${BASH_SOURCE[0]}")/wait_lib.sh"

SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
DAEMON=$BUILD/eventlog-live-otelcol
PEER=$BUILD/tests/el_peer

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$DAEMON" ] || skip "$DAEMON not built"
command -v curl >/dev/null || skip "curl missing"
command -v python3 >/dev/null || skip "python3 missing"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-${1:?serve_lib.sh TAG}.XXXXXX")
PIDS=()
trap 'stop_pids; rm -rf "$TMP"' EXIT

export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

# sv_option OPTION: skip unless the daemon's --help lists OPTION (an
# optional server such as --web-port or --prometheus-port).
sv_option() {
  "$DAEMON" --help 2>/dev/null | grep -q -- "$1" ||
    skip "the daemon has no $1"
}

# sv_daemon NAME OPTIONS...: start `$DAEMON OPTIONS... -v info` in the
# background, stdout in $TMP/NAME.out, stderr in $TMP/NAME.err; sets DPID
# (also added to PIDS).
sv_daemon() {
  local name=$1
  shift
  "$DAEMON" "$@" -v info > "$TMP/$name.out" 2> "$TMP/$name.err" &
  DPID=$!
  PIDS+=("$DPID")
}

# sv_port NAME SERVER: the port of the daemon's "Starting SERVER on PORT"
# line in $TMP/NAME.err (SERVER: "web view" or "Prometheus endpoint"),
# waited for up to 20 s; sets PORT. Fails, the log shown, without one.
sv_port() {
  wait_line "$TMP/$1.err" "Starting $2 on [0-9]" 20 ||
    { cat "$TMP/$1.err"; fail "$1: no $2"; }
  PORT=$(sed -n "s/.*Starting $2 on \([0-9]*\).*/\1/p" "$TMP/$1.err" | head -1)
}

# sv_ended NAME: wait up to 60 s for the daemon to say its input ended and
# it keeps serving (stderr $TMP/NAME.err); fails, the log shown, if not.
sv_ended() {
  wait_line "$TMP/$1.err" "input ended: still serving" 60 ||
    { cat "$TMP/$1.err"; fail "$1: the input did not end within 60 s"; }
}

# sv_get NAME URL OUT: GET URL into OUT (30 s at most); fails on an HTTP
# error or none.
sv_get() {
  curl -sf -m 30 -o "$3" "$2" || fail "$1: GET $2"
}
