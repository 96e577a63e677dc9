#!/usr/bin/env bash
# A known event type redeclared with a size none of its layouts fits:
# heapy-hT.eventlog (GHC 9.0) with a second declaration of HEAP_SIZE (type
# 50) of size 1 right after the first (the last one wins, as in
# ghc-events). Its events are then unknown events (docs/eventlog.md
# "Unknown types"): known = 0, the raw payload, no fields. They used to
# reach the handlers subscribed by name anyway, with nil fields: the
# daemon's heap processor raised 'attempt to perform arithmetic on a nil
# value (local 'capset')' and `run examples/heap_metrics.lua` "bad
# argument #1 to 'point'". Now only "*" handlers get them, and the host
# says so once, naming the type and the declaration's byte.
#
# Expected values: the declaration's byte comes from a framing of the
# header written here in Python (no decoder code).
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=${EL_BIN:-$BUILD/eventlog-live}
D=$(dirname "$EL")/eventlog-live-otelcol
LOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
[ -x "$EL" ] && [ -x "$D" ] || { echo "SKIP: $EL or $D not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-nolayout.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

AT=$(python3 - "$LOGS/ghc-9.0/heapy-hT.eventlog" "$T/case.eventlog" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
p = 8
while b[p:p + 4] == b'etb\0':
    i, sz, dl = struct.unpack('>HHI', b[p + 4:p + 12])
    q = p + 12 + dl
    q += 4 + struct.unpack('>I', b[q:q + 4])[0] + 4
    if i == 50:  # HEAP_SIZE: the same declaration, size 1, after it
        d = b[p:q]
        out = b[:q] + d[:6] + struct.pack('>H', 1) + d[8:] + b[q:]
        at = q
    p = q
open(sys.argv[2], 'wb').write(out)
print(at)
PY
)
[ -n "$AT" ] || { echo "FAIL: framing"; exit 1; }
want="event HEAP_SIZE (type 50) is declared at byte $AT with size 1, which no layout of it has: its events are unknown events (raw payload, no fields), given to \"*\" handlers only, not to HEAP_SIZE handlers"

check() { # NAME COMMAND...
  local name=$1 st=0
  shift
  OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
    OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none \
    timeout 120 "$@" > "$T/out" 2> "$T/err" < /dev/null || st=$?
  local before=$fails
  [ "$st" = 0 ] || fail "$name: status $st, want 0: $(head -c 600 "$T/err")"
  grep -q 'error' "$T/err" &&
    fail "$name: an error on stderr: $(grep error "$T/err" | head -3)"
  local n
  n=$(grep -cF "$want" "$T/err")
  [ "$n" = 1 ] || fail "$name: the warning said $n times, want once: $(head -c 800 "$T/err")"
  [ "$fails" = "$before" ] && echo "ok: $name: status 0, no error, warned once"
}
check daemon "$D" -hT --eventlog-file "$T/case.eventlog"
check run "$EL" run "$SRC/examples/heap_metrics.lua" --output none "$T/case.eventlog"
[ "$fails" = 0 ] || exit 1
echo "PASS"
