#!/usr/bin/env bash
# An event dated far in the future inside a block (eventlog-socket's
# damaged first block: a stale buffer's bytes read as a CREATE_THREAD at
# 291977279045632 ns, seen in CI and in docs/testing.md's captures) is
# damage: the decoder skips to the next block marker, and the daemon keeps
# exporting while the input is open. Before, the one event moved the
# daemon's eventlog time to 81 hours, and nothing was exported until the
# input ended.
#
# threads-big.eventlog (GHC 9.0, 12 MB, 7 blocks over 0.78 s) gets the
# timestamp of the third event after its first block marker set to 2^48
# ns (offsets found by the test's own framing of the file), and is written
# into the daemon's stdin in 12 pieces, 0.5 s apart; the pipe stays open
# 4 s more. Checked:
#   - a warning names the byte of the damaged event and the block it is
#     dated after;
#   - console exports (metrics exported every 0.1 s of eventlog time)
#     reach stdout before the last piece is written.
# Every wait is bounded.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EL=$BUILD/eventlog-live
EV=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/threads-big.eventlog
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
[ -f "$EV" ] || { echo "SKIP: no $EV"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-future.XXXXXX")
trap 'rm -rf "$T"' EXIT

# The damaged copy; prints the damaged event's offset.
off=$(python3 - "$EV" "$T/damaged.eventlog" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
# Frame the header: event types and sizes (spec/eventlog-format.md §1).
i = b.index(b'hetb') + 4
sizes = {}
while b[i:i + 4] == b'etb\0':
    # type (u16), size (i16, -1: variable), name (u32 length + bytes),
    # extra info (u32 length + bytes), "ete\0"
    t, s = struct.unpack_from('>Hh', b, i + 4)
    sizes[t] = s
    i += 8
    for _ in range(2):
        i += 4 + struct.unpack_from('>I', b, i)[0]
    assert b[i:i + 4] == b'ete\0', i
    i += 4
for tag in (b'hete', b'hdre', b'datb'):
    assert b[i:i + 4] == tag, (tag, i)
    i += 4
def length(i):
    t = struct.unpack_from('>H', b, i)[0]
    s = sizes[t]
    return 10 + (s if s != -1 else 2 + struct.unpack_from('>H', b, i + 10)[0])
# The first block marker (type 18), then its third event.
while struct.unpack_from('>H', b, i)[0] != 18:
    i += length(i)
i += length(i)
for _ in range(2):
    i += length(i)
b[i + 2:i + 10] = struct.pack('>Q', 1 << 48)
open(sys.argv[2], 'wb').write(b)
print(i)
EOF
) || { echo "FAIL: could not frame $EV"; exit 1; }
echo "damaged event at byte $off"

cat > "$T/config.yaml" <<'YAML'
processors:
  metrics:
    heap_size: {aggregate: false, export: 0.1s}
    capability_usage: {aggregate: 0.1s, export: 0.1s}
YAML

# Pace the copy into the daemon; print "end T" when the last piece is
# written and each stdout line as "T line" (T: seconds since start).
python3 - "$T/damaged.eventlog" "$EL" "$T/config.yaml" > "$T/out" \
  2> "$T/err" <<'EOF'
import os, subprocess, sys, threading, time
data = open(sys.argv[1], 'rb').read()
env = dict(os.environ, OTEL_METRICS_EXPORTER='console',
           OTEL_LOGS_EXPORTER='none', OTEL_TRACES_EXPORTER='none',
           OTEL_PROFILES_EXPORTER='none')
p = subprocess.Popen([sys.argv[2], 'otelcol', '--eventlog-stdin',
                      '--config', sys.argv[3]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=sys.stderr, env=env)
t0 = time.time()
def reader():
    for line in p.stdout:
        if line.strip():
            print('%.2f %s' % (time.time() - t0, line[:60].decode('utf-8', 'replace')), flush=True)
th = threading.Thread(target=reader)
th.start()
n = (len(data) + 11) // 12
for k in range(12):
    p.stdin.write(data[k * n:(k + 1) * n])
    p.stdin.flush()
    if k < 11:
        time.sleep(0.5)
print('end %.2f' % (time.time() - t0), flush=True)
time.sleep(4)
p.stdin.close()
try:
    p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    print('FAIL: the daemon did not exit within 30 s of the end of input')
th.join(timeout=5)
EOF

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if grep -q "event .* at byte $off is dated 281474976710656 ns, after the end of its block" "$T/err"; then
  echo "ok: the damaged event is reported at byte $off"
else
  fail "no warning names the event dated 2^48 ns at byte $off"
fi
grep -q '^FAIL' "$T/out" && fail "$(grep '^FAIL' "$T/out")"
end=$(awk '$1 == "end" {print $2}' "$T/out")
early=$(awk -v e="${end:-0}" '$2 ~ /resourceMetrics/ && $1 + 0 < e + 0' "$T/out" | wc -l)
total=$(grep -c resourceMetrics "$T/out")
echo "exports: $early of $total before the last piece was written (at ${end:-?} s)"
if [ -n "$end" ] && [ "$early" -ge 1 ]; then
  echo "ok: metrics were exported while the input was open"
else
  fail "no metrics export before the end of input"
fi
if [ "$fails" -ne 0 ]; then
  echo "--- stderr"; head -20 "$T/err"; echo "--- stdout"; head -20 "$T/out"
fi
exit $((fails > 0))
