# lib.sh: shell helpers for tests/e2e/test_demo*.sh (sourced).
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-demo-test.XXXXXX")
BG_PIDS=()

demo_cleanup() {
  local p
  for p in "${BG_PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null
  done
  for p in "${BG_PIDS[@]:-}"; do
    [ -n "$p" ] && wait "$p" 2>/dev/null
  done
  rm -rf "$TMP"
}
trap demo_cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

free_port() {
  python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools" && pwd)/free_port.py"
}

# start_prometheus [TSDB_DIR]: Debian's prometheus on a free port with an
# empty configuration (only its query API is used: it rejects expressions
# that do not parse), over TSDB_DIR if given (kept however old its data).
# Sets PROM_URL.
start_prometheus() {
  local tsdb=${1:-$TMP/prometheus-data-$RANDOM}
  command -v prometheus >/dev/null || skip "prometheus not installed (apt-get install prometheus)"
  local port
  port=$(free_port)
  echo "global: {}" > "$TMP/prometheus.yml"
  prometheus --config.file="$TMP/prometheus.yml" \
    --storage.tsdb.path="$tsdb" --storage.tsdb.retention.time=100y \
    --web.listen-address="127.0.0.1:$port" --log.level=warn \
    >> "$TMP/prometheus.log" 2>&1 &
  BG_PIDS+=($!)
  PROM_URL=http://127.0.0.1:$port
  local i
  for i in $(seq 100); do
    python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/-/ready", timeout=1)' "$PROM_URL" \
      >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$TMP/prometheus.log"
  fail "prometheus did not become ready"
}
