#!/usr/bin/env bash
# An undeclared event type outside any block, in a log that has blocks:
# one byte (0x07) inserted right before the second block marker of a real
# GHC 9.0 log (threads.eventlog; GHC 9.0 writes markers between blocks).
# With the marker's first byte it reads as event type 0x0700, outside any
# block. It is a corrupt part like any other (docs/eventlog.md, "Behaviour
# on bad input"; docs/exit-codes.md): said once, naming the file and the
# byte (an error in `show` and `stats`, which exit 1 for it, a warning in
# `run`, `report` and the daemon, which exit 0), 1 byte skipped, decoding
# goes on at the marker. It used to be said twice (the
# warning and an error "not declared in the header (corrupt stream)") and
# `run`, `report` and the daemon exited 1.
#
# Expected values: where the marker is comes from a framing of the clean
# log written here in Python (header sizes, event lengths, no decoder
# code); `stats` of the damaged log must count every event of the clean
# one (the same framing's count).
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=${EL_BIN:-$BUILD/eventlog-live}
D=$(dirname "$EL")/eventlog-live-otelcol
LOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-undecl.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

read -r AT NEV < <(python3 - "$LOGS/ghc-9.0/threads.eventlog" "$T/ins.eventlog" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
p, size = 8, {}
while b[p:p + 4] == b'etb\0':
    i, sz, dl = struct.unpack('>HHI', b[p + 4:p + 12])
    p += 12 + dl
    p += 4 + struct.unpack('>I', b[p:p + 4])[0] + 4
    size[i] = sz
assert b[p:p + 12] == b'hetehdredatb'
p += 12
markers, n = [], 0
while struct.unpack('>H', b[p:p + 2])[0] != 0xFFFF:
    t = struct.unpack('>H', b[p:p + 2])[0]
    if t == 18:
        markers.append(p)
    s, hl = size[t], 10
    if s == 0xFFFF:
        s, hl = struct.unpack('>H', b[p + 10:p + 12])[0], 12
    p += hl + s
    n += 1
at = markers[1]
open(sys.argv[2], 'wb').write(b[:at] + b'\x07' + b[at:])
print(at, n)
PY
)
[ -n "${AT:-}" ] || { echo "FAIL: framing"; exit 1; }
want="corrupt stream: event type 1792 at byte $AT is not declared in the header (outside any block); skipped 1 byte ($AT to $((AT + 1))) to the block marker at byte $((AT + 1))"
echo 'local el = require("eventlog_live")' > "$T/ok.lua"
check() { # NAME STATUS COMMAND...
  local name=$1 want_st=$2 st=0
  shift 2
  timeout 120 "$@" > "$T/out" 2> "$T/err" < /dev/null || st=$?
  [ "$st" = "$want_st" ] || fail "$name: status $st, want $want_st: $(head -c 600 "$T/err")"
  local n
  n=$(grep -c 'at byte '"$AT"'\b' "$T/err")
  [ "$n" = 1 ] || fail "$name: the byte named $n times, want once: $(head -c 800 "$T/err")"
  # In every command's words (test_corrupt_part_messages.sh): an error
  # where it makes the command fail (show, stats), else a warning.
  local level=warning
  [ "$want_st" = 1 ] && level=error
  grep -qF ": $level: $T/ins.eventlog: $want" "$T/err" ||
    fail "$name: no $level \"$T/ins.eventlog: $want\": $(head -c 600 "$T/err")"
  grep -vF "$want" "$T/err" | grep -q 'error' &&
    fail "$name: another error on stderr: $(grep -vF "$want" "$T/err" | grep error | head -2)"
  [ "$fails" = 0 ] && pass "$name: status $want_st, said once"
}
check show 1 "$EL" show "$T/ins.eventlog"
check stats 1 "$EL" stats "$T/ins.eventlog"
awk -v n="$NEV" '/^  [A-Z_]+ +[0-9]+ +[0-9]+ +[0-9]+$/ { s += $3 } END { exit s != n }' "$T/out" ||
  fail "stats: not all $NEV events counted: $(head -40 "$T/out")"
check run 0 "$EL" run "$T/ok.lua" "$T/ins.eventlog" --output none
check report 0 "$EL" report "$T/ins.eventlog" -o "$T/r.html"
check otelcol 0 "$D" --eventlog-file "$T/ins.eventlog" --service-name t --no-otlp
[ $fails = 0 ] && { echo PASS; exit 0; }
exit 1
