#!/usr/bin/env bash
# A truncated eventlog is reported in the same words however it is read
# (docs/exit-codes.md "cut"): a regular file (--eventlog-file, or
# redirected to stdin, both read by `show` and `stats` with read(2)), a
# pipe on stdin, or a named FIFO (read through src/source). For
# eventlog-live-otelcol, stats, run and show (text and --json), each cut
# gives the same stderr once the source's name is replaced, status 0, and
# the message names the byte where the input ended: head -c's count, an
# independent figure.
#   - 100005: inside an event of threads.eventlog (a STOP_THREAD);
#   - 100000: between two events (no end-of-data marker).
# Every wait is bounded.
# ctest-labels: e2e asan
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=$BUILD/eventlog-live
EV=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/threads.eventlog
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
[ -f "$EV" ] || { echo "SKIP: no $EV"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-trunc.XXXXXX")
trap 'rm -rf "$T"' EXIT
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# read_as HOW CMD...: run CMD with the cut log $T/cut.eventlog read as HOW
# (file, redirect, pipe, fifo); stderr, with the source's name replaced by
# SRC, in $T/HOW.err; returns CMD's status.
read_as() {
  local how=$1 st; shift
  case $how in
    file)
      timeout 60 "$@" --eventlog-file "$T/cut.eventlog" 2> "$T/raw.err" > /dev/null
      st=$? ;;
    redirect)
      timeout 60 "$@" --eventlog-stdin < "$T/cut.eventlog" 2> "$T/raw.err" > /dev/null
      st=$? ;;
    pipe)
      cat "$T/cut.eventlog" | timeout 60 "$@" --eventlog-stdin 2> "$T/raw.err" > /dev/null
      st=${PIPESTATUS[1]} ;;
    fifo)
      rm -f "$T/fifo"; mkfifo "$T/fifo"
      timeout 60 cp "$T/cut.eventlog" "$T/fifo" &
      timeout 60 "$@" --eventlog-file "$T/fifo" 2> "$T/raw.err" > /dev/null
      st=$?
      wait ;;
  esac
  # the daemon's info lines name the source ("Reading eventlog from"): kept
  # out, as lines that say where the input comes from, not what it held
  sed -e "s#$T/cut.eventlog#SRC#g; s#$T/fifo#SRC#g; s#stdin#SRC#g" \
    -e '/Reading eventlog from/d' "$T/raw.err" > "$T/$how.err"
  return "$st"
}

check() { # CUT WHAT: the cut at byte CUT, the words expected
  local cut=$1 want=$2 c how st name
  head -c "$cut" "$EV" > "$T/cut.eventlog"
  for c in "$BUILD/eventlog-live-otelcol" "$EL stats" \
    "$EL run $SRC/examples/gc_pauses.lua" "$EL show" "$EL show --json"; do
    name="${c#$BUILD/}"; name="${name%% $SRC*}"
    for how in file redirect pipe fifo; do
      # shellcheck disable=SC2086
      read_as "$how" $c
      st=$?
      [ "$st" = 0 ] || fail "$cut $name ($how): status $st"
    done
    if cmp -s "$T/file.err" "$T/fifo.err" && cmp -s "$T/file.err" "$T/pipe.err" &&
      cmp -s "$T/file.err" "$T/redirect.err"; then
      pass "$cut $name: the same words for a file, a redirect, a pipe and a FIFO"
    else
      fail "$cut $name: the words differ"
      for how in file redirect pipe fifo; do sed "s/^/  $how: /" "$T/$how.err"; done
    fi
    if [ "$name" != "eventlog-live show" ] && [ "$name" != "eventlog-live show --json" ] ||
      [ "$cut" = 100005 ]; then
      grep -q "$want" "$T/file.err" &&
        pass "$cut $name: names byte $cut, where the input ended" ||
        { sed 's/^/  file: /' "$T/file.err"; fail "$cut $name: no '$want'"; }
    fi
  done
}

check 100005 "truncated inside an event, STOP_THREAD (type 2), .*the input ends at byte 100005"
check 100000 "ends at byte 100000 without its end-of-data marker"
# stats counts the one warning it said for either cut, read from a file or
# a FIFO (h67: a cut inside an event was said but counted 0).
for cut in 100005 100000; do
  head -c "$cut" "$EV" > "$T/cut.eventlog"
  rm -f "$T/fifo"; mkfifo "$T/fifo"
  timeout 60 cp "$T/cut.eventlog" "$T/fifo" &
  for src in "$T/cut.eventlog" "$T/fifo"; do
    w=$(timeout 60 "$EL" stats "$src" 2>/dev/null | grep '^warnings:')
    [ "$w" = "warnings:         1 (0 reporting corruption)" ] &&
      pass "$cut stats ${src##*/}: the warning counted" ||
      fail "$cut stats ${src##*/}: '$w', want 1 warning"
  done
  wait
done
[ $fails = 0 ] && { echo PASS; exit 0; }
echo "FAIL: $fails step(s)"
exit 1
