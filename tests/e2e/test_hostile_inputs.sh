#!/usr/bin/env bash
# ctest-labels: asan
# Hostile inputs to `show` and `stats`: inputs that never end or never
# start (a FIFO without a writer, a pipe whose writer stays, /dev/zero) must
# stop cleanly on SIGINT/SIGTERM and print what was decoded; malformed
# eventlogs (generated here) must never crash or hang, and every error must
# name a byte offset with everything before it kept.
source "$(dirname "$0")/source_lib.sh"
LOG=$EL_EVENTLOGS/ghc-events/hello-ghc-8.2.2.eventlog
REF=$LOG.reference

# stop_and_wait PID SIGNAL: signal a background command, then it must exit
# by itself (not die of the signal) within 20 s.
stop_and_wait() {
  kill -"$2" "$1"
  local rc=0
  wait_pid "$1" 20 || rc=$?
  [ "$rc" -lt 128 ] || fail "killed by the signal (status $rc)"
  return 0
}

# 1. A FIFO nobody opens for writing: SIGINT ends the wait with a report.
mkfifo "$T/nowriter"
"$EL_BIN" stats "$T/nowriter" > "$T/nowriter.out" 2> "$T/nowriter.err" &
pid=$!
sleep 0.5
stop_and_wait $pid INT
grep -q '^events: *0$' "$T/nowriter.out" || fail "no report: $(cat "$T/nowriter.*")"
pass "stats on a FIFO without a writer stops on SIGINT"

# 2. A FIFO whose writer sent a whole log and stays: SIGINT, every event
# counted (same counts as the file).
timeout 30 "$EL_BIN" stats "$LOG" | by_type > "$T/file.counts"
mkfifo "$T/stays"
"$EL_BIN" stats "$T/stays" > "$T/stays.out" 2> "$T/stays.err" &
pid=$!
(cat "$LOG"; sleep 30) > "$T/stays" &
sleep 1
stop_and_wait $pid INT
by_type < "$T/stays.out" | cmp - "$T/file.counts" \
  || fail "FIFO counts differ: $(cat "$T/stays.err")"
pass "stats on a FIFO whose writer stays: SIGINT keeps every event"

# 3. show on a stdin pipe whose writer stays: SIGTERM prints the events,
# identical to ghc-events show.
(cat "$LOG"; sleep 30) | "$EL_BIN" show - > "$T/pipe.show" \
  2> "$T/pipe.err" &
pid=$!
sleep 1
stop_and_wait $pid TERM
cmp "$T/pipe.show" "$REF" || fail "show over a pipe differs from reference"
pass "show on a pipe whose writer stays: SIGTERM prints every event"

# 4. /dev/zero (endless, no header): SIGINT stops it, the skipped bytes are
# reported, status 1 (no header), not a death by signal.
"$EL_BIN" stats /dev/zero > "$T/zero.out" 2> "$T/zero.err" &
pid=$!
sleep 1
rc=0
kill -INT $pid
wait_pid $pid 20 || rc=$?
[ $rc = 1 ] || fail "stats /dev/zero after SIGINT: status $rc"
grep -q 'no eventlog header found in [1-9][0-9]* bytes' "$T/zero.err" \
  || fail "no skipped-bytes report: $(cat "$T/zero.err")"
pass "stats on /dev/zero stops on SIGINT and reports the bytes skipped"

# 5. Malformed eventlogs, generated from a hand-written header.
python3 - "$T" "$LOG" <<'EOF'
import struct, sys
d, log = sys.argv[1], open(sys.argv[2], 'rb').read()
def w(n, b): open(d + '/' + n + '.el', 'wb').write(b)
def decl(i, size, desc, extra=b''):
  return (b'etb\0' + struct.pack('>HhI', i, size, len(desc)) + desc +
          struct.pack('>I', len(extra)) + extra + b'ete\0')
msg = lambda t, s: struct.pack('>HQH', 19, t, len(s)) + s
hd = (b'hdrbhetb' + decl(19, -1, b'Log msg') + decl(18, 14, b'Block marker')
      + b'hetehdredatb')          # 79 bytes: events start at byte 79
end = b'\xff\xff'
w('empty', b'')
w('hdronly', log[:log.index(b'datb') + 4])
w('nodecls', b'hdrbhetbhetehdredatb' + end)
w('hugedesc', b'hdrbhetbetb\0' + struct.pack('>HhI', 1, 8, 0xfffffff0))
w('hugeextra', b'hdrbhetbetb\0' + struct.pack('>HhI', 1, 8, 1)
  + b'a' + struct.pack('>I', 0xfffffff0))
w('varabsurd', hd + msg(10, b'ok') + struct.pack('>HQH', 19, 11, 0xffff)
  + b'x' * 100)
w('undecl', hd + msg(10, b'abc') + struct.pack('>HQ', 77, 12) + b'zzzz')
w('bigid', hd + msg(10, b'abc') + struct.pack('>HQ', 0xfffe, 12))
w('blkhuge', hd + struct.pack('>HQIQH', 18, 1, 0xffffffff, 2**64 - 1,
                              0xfffe) + msg(10, b'abc') + end)
w('blktiny', hd + struct.pack('>HQIQH', 18, 1, 3, 0, 1) + msg(10, b'abc')
  + end)
w('declffff', b'hdrbhetb' + decl(0xffff, 4, b'x') + b'hetehdredatb'
  + struct.pack('>HQ', 0xffff, 1) + b'abcd')
w('dupheader', log[:log.index(b'datb') + 4] + log)
# MIGRATE_THREAD's declaration (id 4, size 6; no such event in the log) with
# its id turned into RUN_THREAD's (1, size 4): a conflicting duplicate.
steal = b'etb\0' + struct.pack('>Hh', 4, 6)
assert log.count(steal) == 1
open(d + '/dupconflict.eventlog', 'wb').write(
    log.replace(steal, b'etb\0' + struct.pack('>Hh', 1, 6)))
# A THREAD_LABEL whose 2-byte payload is shorter than its thread id,
# between two USER_MSGs (hand count: header 79 + 25 = 104 bytes, the label
# at 104 + 15 = 119).
tl = b'etb\0' + struct.pack('>HhI', 44, -1, 5) + b'Label' + b'\0' * 4 + b'ete\0'
hd2 = hd[:-12] + tl + b'hetehdredatb'
w('badlabel', hd2 + msg(10, b'abc') + struct.pack('>HQH', 44, 11, 2) + b'\0\7'
  + msg(12, b'after') + end)
w('splice', log[:len(log) // 2] + log[len(log) // 3:])
EOF
n=0
for f in "$T"/*.el; do
  for cmd in show stats; do
    rc=0
    timeout 30 "$EL_BIN" $cmd "$f" > "$T/out" 2> "$T/err" || rc=$?
    [ $rc -le 1 ] || fail "$cmd $(basename "$f"): status $rc: $(head -c 600 "$T/err")"
    if grep -v 'warning' "$T/err" | grep -q .; then
      # (an empty input has no position: said as such)
      grep -v warning "$T/err" | grep -qE 'byte [0-9]+|the input is empty' \
        || fail "$cmd $(basename "$f"): error without an offset: $(cat "$T/err")"
    fi
    n=$((n + 1))
  done
done
# Everything before the fault is kept, the fault is located.
timeout 30 "$EL_BIN" stats "$T/varabsurd.el" > "$T/out" 2> "$T/err"
grep -q 'truncated inside an event, USER_MSG (type 19), at byte 93' "$T/err" \
  || fail "varabsurd: $(cat "$T/err")"
grep -qE '^  USER_MSG +19 +1 ' "$T/out" || fail "varabsurd: $(cat "$T/out")"
rc=0; timeout 30 "$EL_BIN" stats "$T/undecl.el" > "$T/out" 2> "$T/err" || rc=$?
[ $rc = 1 ] && grep -q 'event type 77 at byte 94' "$T/err" \
  && grep -qE '^  USER_MSG +19 +1 ' "$T/out" || fail "undecl: $(cat "$T/err")"
pass "$n runs over malformed eventlogs: no crash, no hang, offsets given"

# A conflicting duplicate declaration: reported with its offset and name;
# the declaration in id order is used, so every event decodes as in the
# reference (status 1: the header is malformed).
rc=0
timeout 30 "$EL_BIN" show "$T/dupconflict.eventlog" > "$T/out" 2> "$T/err" || rc=$?
[ $rc = 1 ] || fail "dupconflict: status $rc"
grep -qE 'conflicting declarations of event RUN_THREAD \(type 1\): size 4 at byte [0-9]+, size 6 at byte [0-9]+; using the one at byte' "$T/err" \
  || fail "dupconflict: $(cat "$T/err")"
diff <(sed -n '/^Events:/,$p' "$T/out") <(sed -n '/^Events:/,$p' "$REF") \
  > /dev/null || fail "dupconflict: events differ from the reference"
grep -q '^1: Migrate thread (size 6)$' "$T/out" || fail "dupconflict: type list"
pass "a conflicting duplicate declaration is reported; events as the reference"

# A malformed THREAD_LABEL: reported by name and offset, not decoded, the
# event after it is.
rc=0
timeout 30 "$EL_BIN" stats "$T/badlabel.el" > "$T/out" 2> "$T/err" || rc=$?
grep -q 'malformed event THREAD_LABEL (type 44) at byte 119' "$T/err" \
  || fail "badlabel: $(cat "$T/err")"
grep -qE '^  USER_MSG +19 +2 ' "$T/out" || fail "badlabel: $(cat "$T/out")"
timeout 30 "$EL_BIN" show --json "$T/badlabel.el" > "$T/out" 2>/dev/null || true
jq -s -e 'map(select(.type == 44)) | length == 1 and .[0].name == null
  and .[0].malformed' "$T/out" > /dev/null \
  || fail "badlabel json: $(cat "$T/out")"
pass "a malformed event is reported by name and offset, the next decoded"

# 6. A tee that cannot be opened is named as the tee, not as the input.
mkfifo "$T/noreader"
for tee in /nonexistent/dir/tee "$T/noreader" "$T"; do
  rc=0
  timeout 30 "$EL_BIN" stats "$LOG" --eventlog-log-file "$tee" \
    > /dev/null 2> "$T/err" || rc=$?
  [ $rc = 1 ] || fail "tee $tee: status $rc"
  grep -q -- "--eventlog-log-file $tee: cannot open" "$T/err" \
    || fail "tee $tee: $(cat "$T/err")"
done
pass "an unopenable tee is reported as the tee"

# 6b. A tee naming the input (also through a symlink) is a usage error
# in every command, before anything is read or written: status 2, one
# line, the input unchanged.
cp "$LOG" "$T/self.el"
ln -sf "$T/self.el" "$T/self-link.el"
sum=$(cksum < "$T/self.el")
echo 'require("eventlog_live.fmt")' > "$T/self.lua"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
for cmd in "$EL_BIN stats" "$EL_BIN show" "$EL_BIN run $T/self.lua" \
           "$EL_BIN report -o $T/self.html" "$D --no-otlp"; do
  for tee in "$T/self.el" "$T/self-link.el"; do
    rc=0
    timeout 30 $cmd --eventlog-file "$T/self.el" --eventlog-log-file "$tee" \
      > /dev/null 2> "$T/err" || rc=$?
    [ $rc = 2 ] || fail "$cmd, tee $tee: status $rc: $(cat "$T/err")"
    grep -q -- "--eventlog-log-file $tee is the input itself" "$T/err" \
      || fail "$cmd, tee $tee: $(cat "$T/err")"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$cmd: not one line: $(cat "$T/err")"
    [ "$(cksum < "$T/self.el")" = "$sum" ] || fail "$cmd: the input changed"
  done
done
pass "a tee naming the input is refused up front (status 2)"

# 7. Output that cannot be written (a full disk) fails loudly, also when
# the input itself was truncated (which alone exits 0).
head -c 5000 "$LOG" > "$T/cut.el"
for args in "show $LOG" "show --json $LOG" "stats $LOG" "show $T/cut.el" \
            "show --eventlog-file $LOG --eventlog-log-file /dev/null" \
            "stats --eventlog-file $LOG --eventlog-log-file /dev/null"; do
  rc=0
  timeout 30 "$EL_BIN" $args > /dev/full 2> "$T/err" || rc=$?
  [ $rc = 1 ] || fail "$args > /dev/full: status $rc"
  grep -q 'writing the output: No space left on device' "$T/err" \
    || fail "$args > /dev/full: $(cat "$T/err")"
done
pass "a full disk on stdout is an error, with its reason"

# 8. Cut 1 byte into an event, inside its 2-byte type (the real
# eventlog-socket's last flush on GHC 9.0 can end anywhere): the daemon
# warns that it was truncated and exits 0 like for any other cut event,
# not "session ended early" with status 1. The cut event's offset comes
# from stats' message on a longer cut.
head -c 5000 "$LOG" > "$T/cut5000.el"
at=$(timeout 30 "$EL_BIN" stats "$T/cut5000.el" 2>&1 >/dev/null |
  sed -n 's/.*truncated inside an event, .*, at byte \([0-9]*\) .*/\1/p')
[ -n "$at" ] || fail "no cut event found in the first 5000 bytes"
head -c $((at + 1)) "$LOG" > "$T/cut1.el"
rc=0
OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none OTEL_TRACES_EXPORTER=none \
  timeout 60 "$(dirname "$EL_BIN")/eventlog-live-otelcol" \
  --eventlog-file "$T/cut1.el" > /dev/null 2> "$T/err" || rc=$?
[ $rc = 0 ] && grep -q "truncated inside an event, unknown type, at byte $at (1 of" "$T/err" \
  && ! grep -q 'session ended early' "$T/err" \
  || fail "daemon on a cut inside an event's type: status $rc: $(cat "$T/err")"
pass "a cut inside an event's type is a truncation warning (daemon exits 0)"

# 9. A declaration whose description claims 2 GiB: a malformed header,
# named with the event and the declaration's byte (the first declaration
# follows 'hdrb' 'hetb' 'etb\0' at byte 12).
python3 - "$LOG" "$T/baddesc.el" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = b.index(b'etb\x00') + 4
b[i + 4:i + 8] = struct.pack('>I', 0x7fffffff)
open(sys.argv[2], 'wb').write(b)
PY
rc=0; timeout 30 "$EL_BIN" stats "$T/baddesc.el" > /dev/null 2> "$T/err" || rc=$?
[ $rc = 1 ] && grep -q 'malformed header: description of event CREATE_THREAD (type 0) at byte 12 is 2147483647 bytes long' "$T/err" \
  || fail "a 2 GiB description: status $rc: $(cat "$T/err")"
pass "a declaration's absurd description length is a malformed header at its byte"

# 10. A directory: one error naming it and the reason, status 1, and no
# second, untrue "no eventlog header: the input is empty" nor a report of
# zeros (show, stats, the daemon).
mkdir -p "$T/adir"
for cmd in "stats" "show" "otelcol --no-otlp --eventlog-file"; do
  rc=0; timeout 30 "$EL_BIN" $cmd "$T/adir" > "$T/dir.out" 2> "$T/dir.err" || rc=$?
  [ $rc = 1 ] || fail "$cmd on a directory: status $rc"
  grep -q "cannot open $T/adir: Is a directory" "$T/dir.err" \
    || fail "$cmd on a directory: no reason: $(cat "$T/dir.err")"
  ! grep -q "no eventlog header" "$T/dir.err" \
    || fail "$cmd on a directory: an untrue second error: $(cat "$T/dir.err")"
  ! grep -q "^events:" "$T/dir.out" || fail "$cmd on a directory: a report of zeros"
  [ "$(grep -c "Is a directory" "$T/dir.err")" = 1 ] \
    || fail "$cmd on a directory: the cause said more than once: $(cat "$T/dir.err")"
done
pass "a directory is one error naming it, status 1"
# ... and with OTLP on to a collector that is not there, the daemon's own
# records get at most 1 s, not the 10 s budget (h75): nothing was decoded.
rc=0
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 timeout 30 "$EL_BIN" otelcol \
  --eventlog-file "$T/adir" > "$T/dir.out" 2> "$T/dir.err" || rc=$?
[ $rc = 1 ] && grep -q "flushing and exporting (at most 1000 ms)" "$T/dir.err" \
  || fail "otelcol on a directory with OTLP: status $rc: $(cat "$T/dir.err")"
pass "no event decoded: the final export's budget is at most 1 s"
# ... and a file that does not exist fails at once, labelled as the
# daemon's other errors are (h76: "error:" was missing).
rc=0
timeout 30 "$EL_BIN" otelcol --eventlog-file "$T/missing.eventlog" \
  > "$T/miss.out" 2> "$T/miss.err" || rc=$?
[ $rc = 1 ] && grep -qx "eventlog-live: error: cannot open $T/missing.eventlog: No such file or directory" "$T/miss.err" \
  || fail "otelcol on a missing file: status $rc: $(cat "$T/miss.err")"
pass "a missing file: one labelled error, status 1"
