# watch_lib.sh: helpers for the tests of `eventlog-live watch`
# (tests/e2e/test_watch*.sh, sourced): the real GHC 9.0 program of the
# producer tests (tests/haskell/live_socket, plain build: -threaded
# -eventlog -rtsopts, no library) run under watch. Exit 77 (skip) when ghc,
# curl or python3 are missing. Every wait is bounded.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/producer_lib.sh"
command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc)"
[ -x "$EL" ] || skip "$EL not built"
command -v curl >/dev/null || skip "curl missing"
command -v python3 >/dev/null || skip "python3 missing"
# watch's private folders go under $T, so that the test can see them go.
export TMPDIR=$T

# wl_start NAME [WATCH_OPTIONS...] -- PROGRAM_ARGS...: run
#   eventlog-live watch -v info WATCH_OPTIONS -- $PROG PROGRAM_ARGS
# in the background, stdout (the program's) in $T/NAME.out, stderr in
# $T/NAME.err, stdin /dev/null (not a terminal: watch does not linger
# unless told to). Sets WPID.
wl_start() {
  local name=$1; shift
  "$EL" watch -v info "$@" < /dev/null > "$T/$name.out" 2> "$T/$name.err" &
  WPID=$!
  PIDS+=("$WPID")
}

# wl_url NAME: the web view's base URL watch printed (http://H:P/); sets
# URL. Fails the test when none comes within 30 s.
wl_url() {
  wait_line "$T/$1.err" 'web view http://[0-9.]+:[0-9]+/' 30 || {
    cat "$T/$1.err"; die "$1: watch printed no URL in 30 s"; }
  URL=$(sed -n 's/.*web view \(http:[^ ]*\/\) .*/\1/p' "$T/$1.err" | head -1)
}

# wl_program_pid NAME: the program's pid (its "start" line); sets PPID_.
wl_program_pid() {
  wait_line "$T/$1.out" '^start ' 30 || die "$1: the program did not start"
  PPID_=$(awk '/^start /{print $3; exit}' "$T/$1.out")
}

# wl_exits NAME STATUS SECONDS WHAT: watch ($WPID) must exit with STATUS
# within SECONDS: passes "NAME: WHAT"; otherwise fails, the tail of
# $T/NAME.err shown (status 124: watch still ran after SECONDS).
wl_exits() {
  wait_exit "$WPID" "$3"
  local st=$?
  if [ "$st" = "$2" ]; then
    pass "$1: $4"
  else
    tail -n 10 "$T/$1.err"
    fail "$1: watch exited $st, want $2$([ "$st" = 124 ] && echo " (124: still running after $3 s)")"
  fi
}
