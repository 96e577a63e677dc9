#!/usr/bin/env bash
# `eventlog-live show` must reproduce every shared ghc-events 0.21
# reference byte for byte (tests/data/eventlogs/**/X.eventlog.reference is
# the output of `ghc-events show X.eventlog`). Names every file that
# differs, with the first differing lines.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
for ref in "$EL_EVENTLOGS"/*/*.eventlog.reference; do
  log=${ref%.reference}
  n=$((n + 1))
  if ! "$EL_BIN" show "$log" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: show $log exited non-zero: $(cat "$tmp/err")"
    fail=1
    continue
  fi
  if ! cmp -s "$tmp/out" "$ref"; then
    echo "FAIL: show output differs from $ref"
    diff "$tmp/out" "$ref" | head -10
    fail=1
  fi
done
[ "$n" -ge 17 ] || { echo "FAIL: only $n reference files found"; fail=1; }
[ $fail = 0 ] && echo "all $n references match"
exit $fail
