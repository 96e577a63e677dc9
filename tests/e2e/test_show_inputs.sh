#!/usr/bin/env bash
# Input forms and exit statuses of `show` and `stats`: FILE, -, 
# --eventlog-file FILE, --eventlog-stdin; a truncated log (exit 0, message
# with the byte offset on stderr, the events before the cut printed); a
# corrupt log (exit 1, offset on stderr); /dev/null as an empty file; a
# missing file and bad usage.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # description, condition...
  local what=$1
  shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
log=$EL_EVENTLOGS/ghc-events/unicode.eventlog
ref=$log.reference

"$EL_BIN" show "$log" >"$tmp/a"
"$EL_BIN" show - <"$log" >"$tmp/b"
"$EL_BIN" show --eventlog-stdin <"$log" >"$tmp/c"
"$EL_BIN" show --eventlog-file "$log" >"$tmp/d"
for f in a b c d; do check "show input form $f" cmp -s "$tmp/$f" "$ref"; done

# Truncated inside an event: exit 0, diagnostic with offset, prefix shown.
head -c 2900 "$log" >"$tmp/cut.eventlog"
"$EL_BIN" show "$tmp/cut.eventlog" >"$tmp/cut.out" 2>"$tmp/cut.err"
check "truncated log exits 0" test $? -eq 0
check "truncation reported with an offset" grep -q "truncated.*byte" "$tmp/cut.err"
check "events before the cut printed" grep -q "creating thread 1" "$tmp/cut.out"

# testlog-part: a real cut-off log.
"$EL_BIN" show "$EL_EVENTLOGS/ghc-events/testlog-part.eventlog" \
  >"$tmp/part.out" 2>"$tmp/part.err"
check "testlog-part exits 0" test $? -eq 0
check "testlog-part truncation reported" grep -q "truncated" "$tmp/part.err"

# Corrupt: replace an event type in the data section with an undeclared id.
python3 - "$log" "$tmp/bad.eventlog" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.index(b'datb') + 4
# skip the first event (a block marker: 2 + 8 + 14 bytes)
i += 24
d[i:i+2] = (4321).to_bytes(2, 'big')
open(sys.argv[2], 'wb').write(d)
PY
"$EL_BIN" show "$tmp/bad.eventlog" >"$tmp/bad.out" 2>"$tmp/bad.err"
check "corrupt log exits 1" test $? -eq 1
check "corruption reported with offset" grep -q "4321.*byte" "$tmp/bad.err"
check "header still printed" grep -q "^Event Types:" "$tmp/bad.out"

# /dev/null (a character device that is not a terminal) is read to its
# end like a regular file: the message of an empty file, by path or on
# stdin, from show and stats (it went through the live source path, with
# another message).
: >"$tmp/empty.eventlog"
for cmd in show stats; do
  "$EL_BIN" $cmd "$tmp/empty.eventlog" >/dev/null 2>"$tmp/e.err"
  st_empty=$?
  "$EL_BIN" $cmd /dev/null >/dev/null 2>"$tmp/n.err"
  check "$cmd /dev/null exits as an empty file" test $? -eq $st_empty
  check "$cmd /dev/null: the message of an empty file" \
    test "$(sed "s|$tmp/empty.eventlog|/dev/null|" "$tmp/e.err")" = "$(cat "$tmp/n.err")"
  "$EL_BIN" $cmd --eventlog-stdin <"$tmp/empty.eventlog" >/dev/null 2>"$tmp/e.err"
  "$EL_BIN" $cmd --eventlog-stdin </dev/null >/dev/null 2>"$tmp/n.err"
  check "$cmd </dev/null: the message of an empty file on stdin" \
    cmp -s "$tmp/e.err" "$tmp/n.err"
done

"$EL_BIN" show "$tmp/does-not-exist" >/dev/null 2>&1
check "missing file exits 1" test $? -eq 1
"$EL_BIN" show >/dev/null 2>&1
check "no argument exits 2" test $? -eq 2

# stats: same input forms, counts.
"$EL_BIN" stats "$log" >"$tmp/s1"
check "stats exits 0" test $? -eq 0
"$EL_BIN" stats --eventlog-stdin <"$log" >"$tmp/s2"
check "stats counts events" grep -q "^events: *44$" "$tmp/s1"
check "stats from stdin" grep -q "^events: *44$" "$tmp/s2"
check "stats names types" grep -q "USER_MSG" "$tmp/s1"
check "stats peak RSS" grep -q "^peak RSS:" "$tmp/s1"
# One USER_MSG of 5 three-byte UTF-8 characters: 15 payload bytes plus a
# 12-byte variable-size event header.
check "stats bytes per type" grep -Eq "^  USER_MSG +19 +1 +27$" "$tmp/s1"
check "stats capabilities" grep -q "^capabilities: *1 (0)$" "$tmp/s1"
"$EL_BIN" stats "$tmp/bad.eventlog" >/dev/null 2>&1
check "stats on corrupt log exits 1" test $? -eq 1
exit $fail
