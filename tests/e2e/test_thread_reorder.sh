#!/usr/bin/env bash
# Thread running times and run counts do not depend on how far apart in
# time the capabilities' blocks are (docs/lua-api.md §6 "Ordering").
# A GHC 9.0 capability writes a block when its 2 MiB buffer fills, so one
# block can span many seconds of the other capabilities' events; a reader
# that gave up waiting for a capability after 5 s of eventlog time
# processed its whole block late and mis-paired RUN/STOP across
# capabilities (thread 15 of a -N2 log: 174 runs, 3.38 ms instead of 4238
# runs, 73.5 ms).
#
# Input: the real -N2 log ghc-9.0/threads.eventlog (one block per
# capability, cap 0's first) with every time stretched 25 times (by the
# python pass below), so cap 0's block spans 6.8 s before cap 1's comes.
# Expected values: the ghc-events reference text of the unstretched log,
# RUN paired with the next STOP of the thread on the same capability (awk
# below), durations times 25: the stretch multiplies every time exactly.
#  1. recorded file: `run examples/thread_times.lua` gives exactly those
#     runs and running ns per thread, and no late event;
#  2. live through a FIFO (no scan ahead: cap 1 is unknown until its block
#     arrives): the same values and no late event, since the capability
#     after the highest seen is waited for during the session's first
#     horizon of quiet time;
#  3. live, with the global block (CAP_CREATEs) moved before cap 1's and a
#     2 s pause before it, horizon 300 ms: cap 1 is given up on before its
#     block comes, so its events do come late: the same values, and the
#     late events are counted and warned about at the end (with the horizon
#     set by EVENTLOG_LIVE_REORDER_HORIZON_MS; a bad value is reported).
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}" "${EL_SOURCE_DIR:?}"
src=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
ref=$src.reference
K=25
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT
fail=0
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi; }

# Stretch: every event time and block end time times K. Event sizes come
# from the header's declarations (0xFFFF: a u16 length follows the time).
python3 - "$src" "$tmp/s.eventlog" "$K" >"$tmp/blocks" <<'PY'
import struct, sys
src, dst, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, "rb").read())
assert b[:8] == b"hdrbhetb"
pos, size = 8, {}
while b[pos:pos + 4] == b"etb\0":
    tid, sz, dlen = struct.unpack(">HhI", b[pos + 4:pos + 12])
    p = pos + 12 + dlen
    (elen,) = struct.unpack(">I", b[p:p + 4])
    p += 4 + elen
    assert b[p:p + 4] == b"ete\0"
    size[tid] = sz
    pos = p + 4
assert b[pos:pos + 12] == b"hetehdredatb"
pos += 12
while True:
    (tid,) = struct.unpack(">H", b[pos:pos + 2])
    if tid == 0xFFFF:
        break
    (t,) = struct.unpack(">Q", b[pos + 2:pos + 10])
    struct.pack_into(">Q", b, pos + 2, t * k)
    p = pos + 10
    if size[tid] == -1:
        (n,) = struct.unpack(">H", b[p:p + 2])
        p += 2
    else:
        n = size[tid]
    if tid == 18:  # BLOCK_MARKER: size u32, end time u64, cap u16
        _, end, cap = struct.unpack(">IQH", b[p:p + 14])
        struct.pack_into(">Q", b, p + 4, end * k)
        print(cap, t * k, end * k, pos)
    pos = p + n
print("end", 0, 0, pos)
open(dst, "wb").write(b)
PY
check "stretch pass ran" test -s "$tmp/s.eventlog"
# The shape that matters: cap 0's block ends more than 5 s after cap 1's
# block begins, and comes first.
read -r c0 s0 e0 < <(sed -n 1p "$tmp/blocks")
read -r c1 s1 e1 < <(sed -n 2p "$tmp/blocks")
check "cap 0's block ($s0..$e0 ns) comes first and ends > 5 s past cap 1's start ($s1)" \
  test "$c0" = 0 -a "$c1" = 1 -a $((e0 - s1)) -gt 5000000000

# Expected from the reference text: thread runs running_ns.
awk -v k="$K" '
  / cap [0-9]+: running thread [0-9]+$/ {
    t = $1; sub(":", "", t); c = $3; sub(":", "", c)
    start[$6, c] = t; open[$6, c] = 1; next }
  / cap [0-9]+: stopping thread [0-9]+ / {
    t = $1; sub(":", "", t); c = $3; sub(":", "", c)
    if (open[$6, c]) { runs[$6]++; ns[$6] += (t - start[$6, c]) * k; open[$6, c] = 0 }
  }
  END { for (th in runs) printf "%d %d %d\n", th, runs[th], ns[th] }' "$ref" |
  sort -n >"$tmp/want"
check "reference gives runs for 20+ threads" test "$(wc -l <"$tmp/want")" -ge 20

# thread_times.lua's table: thread, [label], state, runs, running ns, ...
table() {
  awk '/^ *[0-9]+ / { for (i = 2; i <= NF; i++)
         if ($i ~ /^(new|running|blocked|finished)$/) { print $1, $(i+1), $(i+2); break } }' "$1" |
    sort -n
}
stats_lua='local el = require("eventlog_live"); el.threads()
el.on_end(function() local s = el.stats()
  print("reorder_late=" .. s.reorder_late .. " reorder_forced=" .. s.reorder_forced) end)'
printf '%s\n' "$stats_lua" >"$tmp/stats.lua"

# same_times NAME WHAT INPUT [NOTE]: `run examples/thread_times.lua INPUT`
# (60 s at most), stdout in $tmp/NAME.out, stderr in $tmp/NAME.err; it
# must exit 0 and give the runs and running ns per thread of $tmp/want
# (WHAT names the case in the output, NOTE is added to the ok line).
same_times() {
  local name=$1 what=$2 input=$3 note=${4:-}
  timeout 60 "$EL_BIN" run "$EL_SOURCE_DIR/examples/thread_times.lua" "$input" \
    >"$tmp/$name.out" 2>"$tmp/$name.err"
  check "$what: run exits 0" test $? -eq 0
  table "$tmp/$name.out" >"$tmp/$name.got"
  if diff "$tmp/want" "$tmp/$name.got" >"$tmp/$name.diff"; then
    echo "ok: $what: runs and running ns of $(wc -l <"$tmp/want") threads as the reference$note"
  else
    echo "FAIL: $what: per-thread runs/running ns differ from the reference (want < > got):"
    head -10 "$tmp/$name.diff"; fail=1
  fi
}

same_times file recorded "$tmp/s.eventlog"
"$EL_BIN" run "$tmp/stats.lua" "$tmp/s.eventlog" >"$tmp/file.stats" 2>&1
check "recorded: nothing late or forced ($(cat "$tmp/file.stats"))" \
  grep -qx "reorder_late=0 reorder_forced=0" "$tmp/file.stats"
check "recorded: no ordering warning" bash -c "! grep -q 'reorder horizon' '$tmp/file.err'"

# Live: the stretched log through a FIFO, all at once.
mkfifo "$tmp/fifo"
(cat "$tmp/s.eventlog" >"$tmp/fifo") &
same_times live live "$tmp/fifo"
check "live: no ordering warning" bash -c "! grep -q 'reorder horizon' '$tmp/live.err'"
(cat "$tmp/s.eventlog" >"$tmp/fifo") &
timeout 60 "$EL_BIN" run "$tmp/stats.lua" "$tmp/fifo" >"$tmp/live.stats" 2>&1
check "live: nothing late or forced ($(cat "$tmp/live.stats"))" \
  grep -qx "reorder_late=0 reorder_forced=0" "$tmp/live.stats"

# Live, cap 1 given up on: header and cap 0's block, 2 s of waiting, the
# global block (a marker: the watermark is recomputed, nothing is waited
# for, cap 0's events leave), then cap 1's block and DATA_END.
read -r _ _ _ o1 < <(sed -n 2p "$tmp/blocks")
read -r _ _ _ og < <(sed -n 3p "$tmp/blocks")
read -r _ _ _ oe < <(sed -n 4p "$tmp/blocks")
late_writer() {
  python3 - "$tmp/s.eventlog" "$tmp/fifo" "$o1" "$og" "$oe" <<'PY'
import sys, time
b = open(sys.argv[1], "rb").read()
o1, og, oe = (int(x) for x in sys.argv[3:6])
with open(sys.argv[2], "wb", buffering=0) as f:
    f.write(b[:o1])
    time.sleep(2)
    f.write(b[og:oe])
    f.write(b[o1:og] + b[oe:])
PY
}
export EVENTLOG_LIVE_REORDER_HORIZON_MS=300
late_writer &
same_times late "live, cap 1 given up on" "$tmp/fifo" ", despite late events"
late=$(sed -n 's/.*session 1: \([0-9]*\) thread\/GC events arrived after the reorder horizon.*reorder_late.*may be off.*raise the reorder horizon.*EVENTLOG_LIVE_REORDER_HORIZON_MS.*/\1/p' "$tmp/late.err")
check "live, cap 1 given up on: the late events are warned about with the consequence and the knob (${late:-no warning})" \
  test "${late:-0}" -gt 0
late_writer &
timeout 60 "$EL_BIN" run "$tmp/stats.lua" "$tmp/fifo" >"$tmp/late.stats" 2>"$tmp/late2.err"
check "live, cap 1 given up on: el.stats() counts the same late events ($(cat "$tmp/late.stats"))" \
  grep -qx "reorder_late=${late:-x} reorder_forced=0" "$tmp/late.stats"
check "live, cap 1 given up on: the warning gives the horizon set by EVENTLOG_LIVE_REORDER_HORIZON_MS" \
  grep -q "now 300 ms: \$EVENTLOG_LIVE_REORDER_HORIZON_MS" "$tmp/late2.err"
unset EVENTLOG_LIVE_REORDER_HORIZON_MS
EVENTLOG_LIVE_REORDER_HORIZON_MS=5s "$EL_BIN" run "$tmp/stats.lua" "$tmp/s.eventlog" >/dev/null 2>"$tmp/bad.err"
check "a horizon that is not a positive number of ms is reported" \
  grep -q 'EVENTLOG_LIVE_REORDER_HORIZON_MS="5s" is not a positive number of milliseconds' "$tmp/bad.err"
[ "$fail" = 0 ] && echo PASS
exit "$fail"
