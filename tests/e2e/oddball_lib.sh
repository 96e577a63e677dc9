# oddball_lib.sh: the common start of the end-to-end scripts that run
# eventlog-live on the shared oddball-hT log (test_report_corrupt_part.sh,
# test_report_signal.sh, test_repl_load_interrupt.sh, test_run_os_exit.sh,
# test_run_end_signal.sh, test_header_error_messages.sh,
# test_later_header_messages.sh; sourced after `set -u`).
#
# oddball_start NAME [SUFFIX]: sets SRC, BUILD, EVENTLOGS (EL_SOURCE_DIR,
# EL_BUILD_DIR, EL_EVENTLOGS or the checkout's own), BIN (eventlog-live),
# ODD (ghc-9.0/oddball-hT.eventlog); exits 77 (skipped) without BIN or
# without the file ODD + SUFFIX (e.g. ".reference"); makes TMP, a fresh folder
# ${TMPDIR:-/tmp}/el-NAME.XXXXXX, removed at exit, when also the process
# in PID (empty: none) is killed and the commands in ODD_CLEANUP (if any)
# run first; sets rc=0 and the step reporters bad (rc=1) and ok.
oddball_start() {
  SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
  BUILD=${EL_BUILD_DIR:-$SRC/build}
  EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
  BIN=$BUILD/eventlog-live
  ODD=$EVENTLOGS/ghc-9.0/oddball-hT.eventlog
  local need=$ODD${2:-}
  [ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 77; }
  [ -f "$need" ] || { echo "SKIP: no $need"; exit 77; }
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-$1.XXXXXX")
  PID=
  ODD_CLEANUP=${ODD_CLEANUP:-}
  trap 'eval "$ODD_CLEANUP"; [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT
  rc=0
}
bad() { echo "FAIL: $*"; rc=1; }
ok() { echo "ok: $*"; }

# oddball_socket_run INPUT CMD...: CMD (given --eventlog-socket S.SOCK)
# reads a Unix socket $TMP/s.sock whose first connection sends the bytes of
# $TMP/INPUT.eventlog and closes; later connections are accepted and get
# nothing (held open for at most 20 s). CMD's stdout goes to /dev/null, its
# stderr to $TMP/err. CMD gets SIGINT 0.3 s after its stderr first names
# the header (or after 10 s); st is then CMD's exit status.
oddball_socket_run() {
  local in=$1 s=$TMP/s.sock pid spid i
  shift
  rm -f "$s"
  python3 - "$s" "$TMP/$in.eventlog" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(4)
c, _ = s.accept(); c.sendall(open(sys.argv[2], 'rb').read()); c.close()
held = []
end = time.time() + 20
s.settimeout(1)
while time.time() < end:
    try: held.append(s.accept()[0])
    except OSError: pass
PY
  spid=$!
  for ((i = 0; i < 200; i++)); do [ -S "$s" ] && break; sleep 0.05; done
  "$@" --eventlog-socket "$s" > /dev/null 2> "$TMP/err" &
  pid=$!
  for ((i = 0; i < 200; i++)); do
    grep -q "header" "$TMP/err" 2>/dev/null && break
    sleep 0.05
  done
  sleep 0.3
  kill -INT $pid 2>/dev/null
  st=0; wait $pid || st=$?
  kill $spid 2>/dev/null; wait $spid 2>/dev/null
}
