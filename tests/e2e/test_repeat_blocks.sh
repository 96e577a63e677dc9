#!/usr/bin/env bash
# el_repeat_blocks -t (tests/tools/el_repeat_blocks.c): the benchmark log
# maker gives each repetition thread ids of its own, so a repeated log
# has REPEAT times the threads instead of threads that already finished.
#
# Inputs: ghc-events/parallelTest (an Eden log: sender threads, a STOP_THREAD
# BlockedOnBlackHole with its owner thread) and ghc-9.0/oddball-hT (two
# capabilities; labels, migration, wake-ups, spark thread), repeated 3 times.
# Expected values come from `eventlog-live show` of the source, not from the
# tool: OFF = 1 + the largest "thread N" the source's text names (the OS
# "kernel thread" of a task aside); the output's capability events (block
# markers aside) are the source's, 3 times over, each "thread N" of
# repetition k read as N + k * OFF ("owned by thread 0", owner unknown,
# unchanged); so 3x the events and 3x the distinct running threads. The
# global block is written once (as many events as the source's).
# Then --thread-offset below the largest id is refused with a message.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}" "${EL_BUILD_DIR:?}"
R=$EL_BUILD_DIR/tests/el_repeat_blocks
N=3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi; }

# split SHOW PREFIX: PREFIX.cap (capability events, time dropped, block
# markers dropped) and PREFIX.glob (events outside capabilities).
split() {
  awk -v p="$2" '
    /^[0-9]+: / && !/event block: cap/ {
      sub(/^[0-9]+: /, "")
      if ($0 ~ /^cap [0-9]+: /) print > (p ".cap"); else print > (p ".glob")
    }' "$1"
  touch "$2.cap" "$2.glob"
}

for name in ghc-events/parallelTest ghc-9.0/oddball-hT; do
  src=$EL_EVENTLOGS/$name.eventlog
  b=$(basename "$name")
  "$EL_BIN" show "$src" >"$tmp/$b.src.txt"
  "$R" -r $N -t -o "$tmp/$b.out" "$src" 2>"$tmp/$b.err"
  check "$b: el_repeat_blocks -t exits 0" test $? -eq 0
  "$EL_BIN" show "$tmp/$b.out" >"$tmp/$b.out.txt" 2>"$tmp/$b.show.err"
  check "$b: show reads the output without a word" test ! -s "$tmp/$b.show.err"
  split "$tmp/$b.src.txt" "$tmp/$b.s"
  split "$tmp/$b.out.txt" "$tmp/$b.o"
  off=$(grep -o '[a-z]* thread [0-9][0-9]*' "$tmp/$b.s.cap" "$tmp/$b.s.glob" |
        awk '$1 !~ /kernel$/ && $3 > m { m = $3 } END { print m + 1 }')
  echo "$b: largest thread id + 1 = $off"
  for k in $(seq 0 $((N - 1))); do
    awk -v d=$((k * off)) '{
      out = ""; s = $0
      while (match(s, /[a-z]* thread [0-9]+/)) {
        w = substr(s, RSTART, RLENGTH); n = w; sub(/.* /, "", n)
        if (w !~ /^kernel / && !(w ~ /^by / && n == 0))
          sub(/[0-9]+$/, n + d, w)
        out = out substr(s, 1, RSTART - 1) w; s = substr(s, RSTART + RLENGTH)
      }
      print out s
    }' "$tmp/$b.s.cap"
  done >"$tmp/$b.expect"
  ns=$(wc -l <"$tmp/$b.s.cap"); no=$(wc -l <"$tmp/$b.o.cap")
  check "$b: $N x the $ns capability events ($no)" test "$no" -eq $((N * ns))
  check "$b: repetition k's thread ids are the source's + k * $off" \
    cmp -s "$tmp/$b.expect" "$tmp/$b.o.cap"
  [ $fail = 0 ] || diff "$tmp/$b.expect" "$tmp/$b.o.cap" | head -5
  ds=$(grep -o 'running thread [0-9]*' "$tmp/$b.s.cap" | sort -u | wc -l)
  do_=$(grep -o 'running thread [0-9]*' "$tmp/$b.o.cap" | sort -u | wc -l)
  check "$b: $N x the $ds distinct running threads ($do_)" \
    test "$ds" -gt 0 -a "$do_" -eq $((N * ds))
  check "$b: the global block once" \
    test "$(wc -l <"$tmp/$b.s.glob")" -eq "$(wc -l <"$tmp/$b.o.glob")"
done
grep -q 'black hole owned by thread [1-9]' "$tmp/parallelTest.o.cap"
check "a black hole owner is among the checked ids" test $? -eq 0

"$R" -r 2 --thread-offset 6 -o "$tmp/x" "$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog" \
  2>"$tmp/x.err"
rc=$?
check "--thread-offset 6 on oddball-hT (largest id 6) is refused" \
  grep -q 'thread offset 6 is not above the largest thread id' "$tmp/x.err"
check "... with exit status 1" test $rc -eq 1
exit $fail
