#!/usr/bin/env bash
# `show --json`: every line is a JSON object (checked with jq), one per
# event in stream order, and values agree with the ghc-events reference
# text of the same log.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
command -v jq >/dev/null || { echo "jq not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { local what=$1; shift; if ! "$@"; then echo "FAIL: $what"; fail=1; fi; }

for log in "$EL_EVENTLOGS"/ghc-events/*.eventlog "$EL_EVENTLOGS"/ghc-9.0/heapy-hT.eventlog; do
  "$EL_BIN" show --json "$log" >"$tmp/out" 2>/dev/null
  if ! jq -e . "$tmp/out" >/dev/null 2>&1; then
    echo "FAIL: invalid JSON for $log"
    fail=1
  fi
done

log=$EL_EVENTLOGS/ghc-events/unicode.eventlog
ref=$log.reference
"$EL_BIN" show --json "$log" >"$tmp/u.json"
check "exit status 0" test $? -eq 0
# One object per event: the reference lists every event except none
# (block markers are printed by ghc-events 0.21 too).
nref=$(sed -n '/^Events:/,$p' "$ref" | grep -c '^[0-9]*: ')
check "one line per event ($nref)" test "$(wc -l <"$tmp/u.json")" -eq "$nref"
check "user message text" test "$(jq -r 'select(.name=="USER_MSG") | .fields.text' "$tmp/u.json")" = "こんにちは"
# Reference: "capset 1: wall clock time 1576909771s 759746000ns (unix epoch)"
check "wall clock fields" test "$(jq -r 'select(.name=="WALL_CLOCK_TIME") | "\(.fields.capset) \(.fields.unix_sec) \(.fields.nsec)"' "$tmp/u.json")" = "1 1576909771 759746000"
check "args as a list" test "$(jq -c 'select(.name=="PROGRAM_ARGS") | .fields.args' "$tmp/u.json")" = '["./unicode","+RTS","-lu"]'
check "unix time of the wall clock event" test "$(jq -r 'select(.name=="WALL_CLOCK_TIME") | .unix_ns' "$tmp/u.json")" = "1576909771759746000"
check "cap is null or a number" test "$(jq -r 'select(.cap != null and (.cap|type) != "number")' "$tmp/u.json" | wc -l)" -eq 0

log=$EL_EVENTLOGS/ghc-events/time-prof.eventlog
# Reference: "cap no 0, prof sample 1, cost centre stack 1, 2, 3"
"$EL_BIN" show --json "$log" >"$tmp/t.json"
check "cost-centre stack" test "$(jq -c 'select(.name=="PROF_SAMPLE_COST_CENTRE" and .fields.tick==1) | .fields.stack' "$tmp/t.json")" = "[1,2,3]"
"$EL_BIN" show --json - <"$log" >"$tmp/t2.json"
check "stdin gives the same" cmp -s "$tmp/t.json" "$tmp/t2.json"
exit $fail
