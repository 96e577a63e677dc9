#!/usr/bin/env bash
# A corrupt part of a live input is said, never swallowed (h88):
#  - stop: the daemon reads a FIFO whose eventlog goes bad at byte ~1e6
#    and then stays open; at SIGINT the part in progress is counted and
#    said, from its first byte to the last byte read ("up to the stop").
#    Before, nothing was said of it (the stop ended the session quietly),
#    and the --stats summary said "decode errors 0". So too 500000 bytes
#    without any header (h89).
#  - while it lasts: 70 MiB of garbage after an eventlog through a pipe
#    (`stats -`) is said once 64 MiB of it were skipped ("still
#    looking"), before its end; a regular file is not (the end comes at
#    once there).
# Expected values come from the bytes written here, not from our decoder:
# the damage is 4 bytes at byte 1000000 of threads.eventlog (GHC 9.0), so
# the part begins within one event (< 64 bytes) before them and at most
# at their end; the FIFO gets the first 1200000 bytes, so the part ends
# at byte 1200000 less what the drain after the stop discarded. The
# garbage follows the eventlog less its 2-byte end-of-data marker, so it
# begins at that size.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/wait_lib.sh"
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=${EL_BIN:-$BUILD/eventlog-live}
D=$BUILD/eventlog-live-otelcol
LOG=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/threads.eventlog
[ -x "$EL" ] && [ -x "$D" ] || { echo "SKIP: not built"; exit 77; }
[ -f "$LOG" ] || { echo "SKIP: $LOG missing"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-cplive.XXXXXX")
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

python3 - "$LOG" "$T" <<'PY'
import sys
log = open(sys.argv[1], "rb").read()
d = bytearray(log)
d[1000000:1000004] = b"\xde\xad\xbe\xef"
open(sys.argv[2] + "/damaged.part", "wb").write(d[:1200000])
# 0xAB bytes: never a block marker's or a header's first byte
with open(sys.argv[2] + "/garbage.eventlog", "wb") as f:
    f.write(log[:-2])
    f.write(b"\xab" * (70 << 20))
open(sys.argv[2] + "/start", "w").write(str(len(log) - 2))
PY

# fifo_stop NAME FILE ERR [DAEMON OPTION...]: the daemon reads the FIFO
# $T/NAME.fifo (stderr to ERR), a writer writes FILE into it and keeps it
# open; SIGINT to the daemon 1 s after the writer wrote it all. Sets st:
# the daemon's status.
fifo_stop() {
  local name=$1 file=$2 err=$3 dpid wpid
  shift 3
  mkfifo "$T/$name.fifo"
  "$D" --eventlog-file "$T/$name.fifo" "$@" > /dev/null 2> "$err" &
  dpid=$!
  PIDS+=("$dpid")
  ( cat "$file"; touch "$T/$name.written"; sleep 60 ) > "$T/$name.fifo" &
  wpid=$!
  PIDS+=("$wpid")
  for _ in $(seq 300); do [ -e "$T/$name.written" ] && break; sleep 0.1; done
  [ -e "$T/$name.written" ] || fail "$name: the writer did not finish in 30 s"
  sleep 1 # (the last MiB in the pipe read)
  kill -INT "$dpid"
  wait_exit "$dpid" 60
  st=$?
  kill "$wpid" 2>/dev/null
}

echo "== stop: SIGINT while a corrupt part of a FIFO is being skipped"
fifo_stop in "$T/damaged.part" "$T/d.err" --eventlog-drain-timeout 2 -v info -s
[ "$st" = 0 ] || fail "stop: the daemon exited $st"
python3 - "$T/d.err" <<'PY' || fails=$((fails + 1))
import re, sys
err = open(sys.argv[1]).read()
m = re.search(r"warning: \S+in\.fifo: corrupt stream: .* at byte (\d+) .*; "
              r"skipped (\d+) bytes \((\d+) to (\d+)\) up to the stop "
              r"\(not read further\)", err)
disc = re.search(r"discarded (\d+) bytes", err)
if not m:
    print("FAIL: stop: the part in progress is not said:\n" + err[-1500:])
    sys.exit(1)
at, n, a, b = map(int, m.groups())
drained = int(disc.group(1)) if disc else 0
ok = (1000000 - 64 < at <= 1000004 and a == at and b == 1200000 - drained
      and n == b - a)
s = re.search(r"decode errors 0, corrupt parts 1 \((\d+) bytes in them\)", err)
if not ok or not s or int(s.group(1)) != n:
    print(f"FAIL: stop: part at {at}, {n} bytes ({a} to {b}), drained "
          f"{drained}; summary: {s.group(0) if s else None}")
    sys.exit(1)
print(f"ok: stop: the part from byte {a} to {b} ({n} bytes) said at the "
      "stop and counted in the summary")
PY

echo "== stop: SIGINT while a FIFO has brought 500000 bytes and no header"
# (h89: nothing was said of them; at the end of input they are an error)
python3 -c "open('$T/nohdr.bin', 'wb').write(b'\xee' * 500000)"
fifo_stop nohdr "$T/nohdr.bin" "$T/n.err" --eventlog-drain-timeout 1
if [ "$st" = 0 ] &&
   grep -q "warning: .*nohdr.fifo: no eventlog header found in 500000 bytes from byte 0$" "$T/n.err"; then
  pass "stop: 500000 bytes without a header said at the stop"
else
  fail "stop, no header: status $st: $(cat "$T/n.err")"
fi

echo "== while it lasts: 70 MiB of garbage through a pipe"
start=$(cat "$T/start")
cat "$T/garbage.eventlog" | "$EL" stats - > /dev/null 2> "$T/s.err"
grep -q "corrupt stream: .* at byte $start .*; 64 MiB skipped so far (from byte $start), no believable block marker or header yet (still looking; said again at 128 MiB)" "$T/s.err" &&
  grep -q "skipped 73400320 bytes ($start to $((start + 73400320))) to the end of the input" "$T/s.err" &&
  [ "$(grep -n 'still looking' "$T/s.err" | cut -d: -f1)" -lt \
    "$(grep -n 'to the end of the input' "$T/s.err" | cut -d: -f1)" ] &&
  pass "pipe: said at 64 MiB, then its whole extent at the end" ||
  fail "pipe: $(cat "$T/s.err")"
"$EL" stats "$T/garbage.eventlog" > /dev/null 2> "$T/f.err"
if grep -q "still looking" "$T/f.err"; then
  fail "file: said while it lasts: $(cat "$T/f.err")"
elif grep -q "skipped 73400320 bytes ($start to" "$T/f.err"; then
  pass "file: said once, at its end"
else
  fail "file: $(cat "$T/f.err")"
fi
[ $fails = 0 ] && { echo PASS; exit 0; }
exit 1
