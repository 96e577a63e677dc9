# oddball_lib.sh: the common start of the end-to-end scripts that run
# eventlog-live on the shared oddball-hT log (test_report_corrupt_part.sh,
# test_report_signal.sh, test_repl_load_interrupt.sh, test_run_os_exit.sh,
# test_run_end_signal.sh; sourced after `set -u`).
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
