#!/usr/bin/env bash
# A GHC program's own output written over its eventlog's header:
# `prog +RTS -l -ol/dev/stdout -RTS > file` with prog printing. The RTS
# opens /dev/stdout (the file) anew and writes the header from byte 0;
# the program's stdout writes from byte 0 too, after it: the text lies
# over the header, and there is no header to find. Before, every command
# said only "no eventlog header found in N bytes from byte 0"; now the
# message says the bytes begin with text, quoting 16 of them (line feeds
# as spaces), and asks whether the program's output was written over the
# header (docs/eventlog.md, "Behaviour on bad input").
#
# The program: tests/haskell/live_socket (plain GHC 9.0 build), whose
# first line is "start <unix_ns> <pid>". Independent expectations: the
# file begins with that line (read here) and holds no "hdrbhetb"; the
# quote is its first 16 bytes, "start " and 10 digits.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/producer_lib.sh"
command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc)"
[ -x "$EL" ] || skip "$EL not built"
command -v python3 >/dev/null || skip "python3 missing"
pl_build plain
F=$T/mixed.eventlog
(cd "$T" && timeout 60 "$PROG" seconds=1 tag=t work=10 \
  +RTS -l -ol/dev/stdout -RTS > "$F") || die "the program failed"
python3 - "$F" <<'PY' || die "the file is not what the test expects"
import re, sys
b = open(sys.argv[1], 'rb').read()
assert re.match(rb'start \d{10,} \d+\n', b), b[:40]
assert b'hdrbhetb' not in b, "a header is left"
print(f"ok: {len(b)} bytes, beginning with {b[:16]!r}, no header")
PY
n=$(stat -c %s "$F")
want="no eventlog header found in $n bytes from byte 0; they begin with text \(\"start [0-9]{10}\.\.\.\"\): not an eventlog, or a program's own output written over its header \(\+RTS -ol/dev/stdout"
for cmd in show stats report; do
  st=0
  case $cmd in
    report) "$EL" report "$F" -o "$T/r.html" > /dev/null 2> "$T/$cmd.err" || st=$? ;;
    *) "$EL" $cmd "$F" > /dev/null 2> "$T/$cmd.err" || st=$? ;;
  esac
  [ "$st" = 1 ] || fail "$cmd: status $st, want 1"
  grep -qE "$want" "$T/$cmd.err" && pass "$cmd: the text over the header is named" ||
    fail "$cmd: no '$want': $(cat "$T/$cmd.err")"
done
[ "$FAILS" = 0 ] && { echo PASS; exit 0; }
exit 1
