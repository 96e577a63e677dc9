#!/usr/bin/env bash
# --eventlog-log-file failures are said once, under the tee's name, with
# their count (h40):
#   1. a tee that cannot be opened (its directory does not exist) is a
#      setup error: every command (watch too, without starting its
#      program) exits 1 with the one line naming
#      --eventlog-log-file, and nothing blames the input (before, the
#      FIFO's own path was reported "No such file or directory", and the
#      daemon said "Input ended" and "eventlog source failed");
#   2. a tee whose writes fail (/dev/full) does not stop the reader, and
#      at the end the command says how many bytes were not written: the
#      whole input, stat's size of the file (before: counted, never said).
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
BIN=$BUILD/eventlog-live
DAEMON=$BUILD/eventlog-live-otelcol
LOG=$SRC/tests/data/eventlogs/ghc-9.0/threads.eventlog
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$BIN" ] && [ -x "$DAEMON" ] || skip "not built"
[ -w /dev/full ] || skip "no /dev/full"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-tee.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
BAD=$TMP/missing/tee.eventlog
mkfifo "$TMP/in.fifo"
rc=0

check_setup() { # name status errfile
  local name=$1 st=$2 err=$3
  local lines
  lines=$(grep -c . "$err")
  if [ "$st" != 1 ]; then
    echo "FAIL: $name: status $st (expected 1)"; rc=1
  fi
  if ! grep -q -- "error: --eventlog-log-file $BAD: cannot open: No such file or directory" "$err"; then
    echo "FAIL: $name: the tee's error is missing"; rc=1
  fi
  if grep -v -- "--eventlog-log-file" "$err" | grep -q -E ": error: |source failed|Input ended"; then
    echo "FAIL: $name: more than the tee's error:"; cat "$err"; rc=1
  fi
  echo "$name: status $st, $lines line(s) on stderr"
}

"$BIN" show --eventlog-log-file "$BAD" "$LOG" > /dev/null 2> "$TMP/show.err"
check_setup show $? "$TMP/show.err"
"$BIN" stats --eventlog-log-file "$BAD" "$LOG" > /dev/null 2> "$TMP/stats.err"
check_setup stats $? "$TMP/stats.err"
# the daemon on a FIFO nobody writes: it must fail before opening it
timeout 20 "$DAEMON" --no-otlp -v info --eventlog-file "$TMP/in.fifo" \
  --eventlog-log-file "$BAD" > /dev/null 2> "$TMP/daemon.err"
st=$?
[ "$st" = 124 ] && fail "the daemon waited on the FIFO instead of failing"
check_setup daemon "$st" "$TMP/daemon.err"

# watch: a setup failure, said before the program would be started, which
# it is not (h42: it ran the program, discarded its eventlog, exited 0)
"$BIN" watch --no-linger --eventlog-log-file "$BAD" -- /bin/sh -c "touch '$TMP/started'" \
  > /dev/null 2> "$TMP/watch.err"
check_setup watch $? "$TMP/watch.err"
[ -e "$TMP/started" ] && { echo "FAIL: watch started the program"; rc=1; }

size=$(stat -c %s "$LOG")
"$BIN" stats --eventlog-log-file /dev/full "$LOG" > "$TMP/full.out" 2> "$TMP/full.err"
st=$?
[ "$st" = 0 ] || { echo "FAIL: stats with a full tee: status $st"; rc=1; }
grep -q "^events:" "$TMP/full.out" || { echo "FAIL: the input was not read whole"; rc=1; }
if grep -q -- "--eventlog-log-file /dev/full: $size bytes received were not written" "$TMP/full.err"; then
  echo "full tee: $size bytes not written, said at the end"
else
  echo "FAIL: no end count of $size bytes:"; cat "$TMP/full.err"; rc=1
fi
[ "$rc" = 0 ] && echo PASS
exit "$rc"
