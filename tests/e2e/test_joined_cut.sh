#!/usr/bin/env bash
# A cut eventlog followed directly by a whole one in the same byte stream
# (`cat cut.eventlog whole.eventlog`, a FIFO that the next program opens
# after the first was killed mid-write): the whole log's header begins a
# new session wherever the cut fell, the event cut there is dropped with a
# warning naming both bytes, and nothing is made up from the new header's
# bytes (before the fix a cut 7 bytes into a RUN_THREAD printed "running
# thread 1651008884": "bhet" of "hdrbhetb"). For each cut, `show --json`
# of the joined stream, read from a file, a pipe and a FIFO, must be the
# cut log's own `show --json` followed by the whole log's own, offsets
# shifted by the cut: independent figures (each log decoded alone). The
# daemon and `stats` warn with the same byte and exit 0, and so does `show`
# for an event cut off.
#   heapy-hT.eventlog: 2799 (7 bytes into the first RUN_THREAD, the
#   tester's case), 2700 (inside the block marker at 2688), 2895 (inside
#   THREAD_LABEL, variable size, at 2888), 2792 (between events), 1000
#   (inside the header); threads.eventlog: 100005 (inside a STOP_THREAD).
# Every wait is bounded.
# ctest-labels: e2e asan
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=$BUILD/eventlog-live
D=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
[ -f "$D/heapy-hT.eventlog" ] || { echo "SKIP: no $D/heapy-hT.eventlog"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-joined.XXXXXX")
trap 'rm -rf "$T"' EXIT
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# expected X LOG: the cut log's show --json, then the whole log's with its
# offsets shifted by X.
expected() {
  head -c "$1" "$2" > "$T/cut.eventlog"
  "$EL" show --json "$T/cut.eventlog" 2> /dev/null
  "$EL" show --json "$2" | python3 -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    o["offset"] += int(sys.argv[1])
    print(json.dumps(o, separators=(",", ":")))' "$1"
}

# canon: the same JSON text for the same values.
canon() {
  python3 -c '
import json, sys
for line in sys.stdin:
    print(json.dumps(json.loads(line), separators=(",", ":")))'
}

# run_as HOW CMD...: CMD reads $T/joined.eventlog as HOW (file, pipe,
# fifo); stdout in $T/out, stderr in $T/err; returns CMD's status.
run_as() {
  local how=$1 st; shift
  case $how in
    file)
      timeout 60 "$@" --eventlog-file "$T/joined.eventlog" > "$T/out" 2> "$T/err"
      st=$? ;;
    pipe)
      cat "$T/joined.eventlog" | timeout 60 "$@" --eventlog-stdin > "$T/out" 2> "$T/err"
      st=${PIPESTATUS[1]} ;;
    fifo)
      rm -f "$T/fifo"; mkfifo "$T/fifo"
      timeout 60 cp "$T/joined.eventlog" "$T/fifo" &
      timeout 60 "$@" --eventlog-file "$T/fifo" > "$T/out" 2> "$T/err"
      st=$?
      wait ;;
  esac
  return "$st"
}

# check X LOG WANT: LOG cut at X, then LOG whole; WANT: words the
# warnings must hold.
check() {
  local x=$1 log=$2 want=$3 name how st
  name="$(basename "$log") cut at $x"
  expected "$x" "$log" | canon > "$T/want"
  head -c "$x" "$log" | cat - "$log" > "$T/joined.eventlog"
  for how in file pipe fifo; do
    run_as "$how" "$EL" show --json
    st=$?
    [ "$st" = 0 ] || { sed 's/^/  /' "$T/err"; fail "$name, show --json ($how): status $st"; }
    if canon < "$T/out" | cmp -s - "$T/want"; then
      pass "$name, show --json ($how): the cut log's events, then the whole log's"
    else
      fail "$name, show --json ($how): events differ from the two logs decoded alone"
      canon < "$T/out" | diff - "$T/want" | head -5 | sed 's/^/  /'
    fi
    # (show warns of a cut event only, as of one at the end of its input)
    case $want in *"is cut off"*)
      grep -q "$want" "$T/err" && pass "$name, show --json ($how): warns '$want'" ||
        { sed 's/^/  /' "$T/err"; fail "$name, show --json ($how): no '$want'"; } ;;
    esac
  done
  run_as pipe "$EL" show
  st=$?
  [ "$st" = 0 ] || fail "$name, show (pipe): status $st"
  if grep -q 'thread 1651008884\|thread 1751413346\|thread 1684173410' "$T/out"; then
    fail "$name, show: a thread id made of the header's bytes"
  fi
  for c in "$BUILD/eventlog-live-otelcol" "$EL stats"; do
    # shellcheck disable=SC2086
    run_as fifo $c
    st=$?
    [ "$st" = 0 ] || fail "$name, ${c#$BUILD/} (fifo): status $st"
    grep -q "$want" "$T/err" && pass "$name, ${c#$BUILD/} (fifo): warns '$want'" ||
      { sed 's/^/  /' "$T/err"; fail "$name, ${c#$BUILD/} (fifo): no '$want'"; }
  done
}

H=$D/heapy-hT.eventlog
check 2799 "$H" "event RUN_THREAD (type 1) at byte 2792 is cut off at byte 2799, where a new header begins"
check 2700 "$H" "event BLOCK_MARKER (type 18) at byte 2688 is cut off at byte 2700"
check 2895 "$H" "event THREAD_LABEL (type 44) at byte 2888 is cut off at byte 2895"
check 2792 "$H" "session 1 ends at byte 2792 without DATA_END"
check 1000 "$H" "header at byte 0 cut off at byte 1000 by a new header"
[ -f "$D/threads.eventlog" ] &&
  check 100005 "$D/threads.eventlog" "event STOP_THREAD (type 2) at byte 100000 is cut off at byte 100005"
[ $fails = 0 ] && { echo PASS; exit 0; }
echo "FAIL: $fails step(s)"
exit 1
