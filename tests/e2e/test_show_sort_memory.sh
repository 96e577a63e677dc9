#!/usr/bin/env bash
# `show --sort-memory SIZE` sorts in bounded memory: past SIZE the lines
# held are written as sorted runs to a temporary file and merged at the
# end (src/eventlog/ev_show.c). The output must not depend on SIZE:
#   - every shared ghc-events reference (the output of `ghc-events show`,
#     an independent implementation) is matched with a budget of 1K (a run
#     every few events, thousands of runs: several merge passes) and 64K;
#   - every shared eventlog and raw tee gives, with 1K, 64K and 1M, the
#     output, stderr and exit status of the default (in-memory) sort.
# That spilling happened is shown by a TMPDIR that does not exist: with
# 1K the command fails naming the directory and prints nothing; the
# default budget never touches it. Bad sizes are usage errors (exit 2).
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
check() { local what=$1; shift; if ! "$@"; then echo "FAIL: $what"; fail=1; fi; }

for ref in "$EL_EVENTLOGS"/*/*.eventlog.reference; do
  log=${ref%.reference}
  for m in 1K 64K; do
    n=$((n + 1))
    "$EL_BIN" show --sort-memory "$m" "$log" >"$tmp/out" 2>"$tmp/err"
    check "show --sort-memory $m $log exits 0 ($(cat "$tmp/err"))" test $? -eq 0
    if ! cmp -s "$tmp/out" "$ref"; then
      echo "FAIL: show --sort-memory $m $log differs from $ref"
      diff "$tmp/out" "$ref" | head -5
      fail=1
    fi
  done
done
check "at least 17 references ($((n / 2)))" test $((n / 2)) -ge 17

for log in "$EL_EVENTLOGS"/*/*.eventlog "$EL_EVENTLOGS"/eventlog-socket/*.tee; do
  "$EL_BIN" show "$log" >"$tmp/a.out" 2>"$tmp/a.err"
  ra=$?
  for m in 1K 64K 1M; do
    "$EL_BIN" show --sort-memory="$m" "$log" >"$tmp/b.out" 2>"$tmp/b.err"
    rb=$?
    check "exit status with $m on $log ($rb, in memory $ra)" test "$rb" -eq "$ra"
    check "output with $m on $log" cmp -s "$tmp/a.out" "$tmp/b.out"
    check "stderr with $m on $log" cmp -s "$tmp/a.err" "$tmp/b.err"
  done
done

big=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog
TMPDIR=$tmp/missing "$EL_BIN" show --sort-memory 1K "$big" >"$tmp/m.out" 2>"$tmp/m.err"
check "an unusable TMPDIR fails the spilling sort (exit 1)" test $? -eq 1
check "the message names the directory" grep -q "$tmp/missing" "$tmp/m.err"
check "nothing printed when the sort failed" test ! -s "$tmp/m.out"
TMPDIR=$tmp/missing "$EL_BIN" show "$big" >"$tmp/d.out" 2>"$tmp/d.err"
check "the default budget holds threads-big in memory (exit 0)" test $? -eq 0

for bad in 0 12 abc 1X -5 99999999999G ""; do
  "$EL_BIN" show --sort-memory "$bad" "$big" >/dev/null 2>"$tmp/u.err"
  check "--sort-memory '$bad' is a usage error" test $? -eq 2
  check "--sort-memory '$bad' is explained" grep -q "sort-memory" "$tmp/u.err"
done
"$EL_BIN" show --sort-memory >/dev/null 2>&1
check "--sort-memory without a value is a usage error" test $? -eq 2
exit $fail
