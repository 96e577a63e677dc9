#!/usr/bin/env bash
# The benchmark stream synthesiser (tests/tools/el_synth.c) writes a valid
# stream: stats decodes it without warnings, with the expected number of
# non-marker events (source events x repetitions), one session, and show
# accepts it. Also: two sessions back to back decode as two sessions.
set -u
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
synth=$EL_BUILD_DIR/tests/el_synth
[ -x "$synth" ] || { echo "el_synth not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { local what=$1; shift; if ! "$@"; then echo "FAIL: $what"; fail=1; fi; }
count() { sed -n "s/^$1: *\([0-9]*\).*/\1/p" "$2"; }

src=$EL_EVENTLOGS/ghc-events/time-prof.eventlog
"$EL_BIN" stats "$src" >"$tmp/src.stats"
src_events=$(count events "$tmp/src.stats")
src_markers=$(sed -n 's/^  BLOCK_MARKER *18 *\([0-9]*\).*/\1/p' "$tmp/src.stats")
"$synth" -n 1M -o "$tmp/s.eventlog" "$src"
check "synth exit status" test $? -eq 0
size=$(stat -c %s "$tmp/s.eventlog")
check "at least 1 MiB written ($size)" test "$size" -ge 1048576
"$EL_BIN" stats "$tmp/s.eventlog" >"$tmp/s.stats" 2>"$tmp/s.err"
check "stats on synthesised stream exits 0" test $? -eq 0
check "no warnings" grep -q "^warnings: *0 " "$tmp/s.stats"
check "one session" grep -q "^sessions: *1$" "$tmp/s.stats"
ev=$(count events "$tmp/s.stats")
mk=$(sed -n 's/^  BLOCK_MARKER *18 *\([0-9]*\).*/\1/p' "$tmp/s.stats")
per=$((src_events - src_markers))
check "whole repetitions of the source's events" test $(((ev - mk) % per)) -eq 0
check "more than one repetition" test $(((ev - mk) / per)) -gt 1
"$EL_BIN" show "$tmp/s.eventlog" >"$tmp/s.show"
check "show on synthesised stream exits 0" test $? -eq 0

# Two sessions back to back: two headers, twice the events.
cat "$src" "$src" >"$tmp/two.eventlog"
"$EL_BIN" stats "$tmp/two.eventlog" >"$tmp/two.stats"
check "two sessions" grep -q "^sessions: *2$" "$tmp/two.stats"
check "twice the events" test "$(count events "$tmp/two.stats")" -eq $((2 * src_events))
"$EL_BIN" show "$tmp/two.eventlog" >"$tmp/two.show"
check "show of two sessions exits 0" test $? -eq 0
check "show lists each event twice" test \
  "$(grep -c '^[0-9]*: ' "$tmp/two.show")" -eq \
  $(( $(grep -c '^[0-9]*: ' "$src.reference") + $(sed -n '/^Events:/,$p' "$src.reference" | grep -c '^[0-9]*: ') ))
exit $fail
