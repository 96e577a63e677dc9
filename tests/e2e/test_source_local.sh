#!/usr/bin/env bash
# ctest-labels: asan
# Local sources: a named FIFO, stdin (a pipe and a redirected file), and a
# growing file read with --follow; --eventlog-log-file tees exactly the
# bytes read.
source "$(dirname "$0")/source_lib.sh"
LOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
REF=$LOG.reference

# 1. FIFO (through the source: the tee makes show use it).
mkfifo "$T/fifo"
timeout 30 "$EL_BIN" show --eventlog-file "$T/fifo" \
  --eventlog-log-file "$T/fifo.tee" > "$T/fifo.show" &
pid=$!
sleep 0.2   # the reader is waiting for a writer
timeout 30 cat "$LOG" > "$T/fifo"
wait_pid $pid 30 || fail "show on a FIFO exited $?"
cmp "$T/fifo.show" "$REF" || fail "FIFO: output differs from .reference"
cmp "$T/fifo.tee" "$LOG" || fail "FIFO: tee differs"
pass "FIFO"

# 2. stdin: a pipe, then a redirected file.
timeout 30 cat "$LOG" | timeout 30 "$EL_BIN" show --eventlog-stdin \
  --eventlog-log-file "$T/pipe.tee" > "$T/pipe.show" || fail "stdin pipe"
cmp "$T/pipe.show" "$REF" || fail "stdin pipe: output differs"
cmp "$T/pipe.tee" "$LOG" || fail "stdin pipe: tee differs"
timeout 30 "$EL_BIN" show --eventlog-stdin --eventlog-log-file "$T/redir.tee" \
  < "$LOG" > "$T/redir.show" || fail "stdin file"
cmp "$T/redir.show" "$REF" || fail "stdin file: output differs"
cmp "$T/redir.tee" "$LOG" || fail "stdin file: tee differs"
EL_SRC_CAT_QUIET=1 timeout 30 "$CAT" --eventlog-stdin --out-prefix "$T/in" \
  < /dev/null > "$T/null.out" || fail "stdin /dev/null"
grep -q 'status=OK sessions=1 bytes=0' "$T/null.out" || fail "$(cat "$T/null.out")"
pass "stdin"

# 3. --follow: the file grows in steps; stats is stopped by SIGINT at the end
# and reports the whole file.
size=$(stat -c %s "$LOG")
head -c 1000 "$LOG" > "$T/grow.eventlog"
# (no `timeout` wrapper: SIGINT must reach eventlog-live; wait_pid bounds it)
"$EL_BIN" stats --eventlog-file "$T/grow.eventlog" --follow \
  --eventlog-log-file "$T/grow.tee" > "$T/grow.stats" &
pid=$!
EL_SRC_CAT_QUIET=1 timeout 60 "$CAT" --eventlog-file "$T/grow.eventlog" \
  --follow --stop-after-bytes "$size" --out-prefix "$T/grow" > "$T/grow.out" &
cpid=$!
off=1000
while [ $off -lt "$size" ]; do
  sleep 0.05
  dd if="$LOG" of="$T/grow.eventlog" bs=1000 skip=$((off / 1000)) count=7 \
    oflag=append conv=notrunc status=none
  off=$((off + 7000))
done
wait_pid $cpid 30 || fail "el_src_cat --follow exited $?"
cmp "$T/grow.1" "$LOG" || fail "--follow: bytes differ"
for ((i = 0; i < 200; i++)); do
  [ "$(stat -c %s "$T/grow.tee" 2>/dev/null || echo 0)" = "$size" ] && break
  sleep 0.05
done
kill -INT $pid
wait_pid $pid 30 || fail "stats --follow after SIGINT exited $?"
cmp "$T/grow.tee" "$LOG" || fail "--follow: tee differs"
timeout 30 "$EL_BIN" stats "$LOG" | by_type > "$T/file.counts"
by_type < "$T/grow.stats" | cmp - "$T/file.counts" || fail "--follow: counts differ"
pass "--follow on a growing file, stopped by SIGINT"

# fifo_read_up PID FIFO BYTES: until the reader under PID (a `timeout`
# or the reader itself) has read at least BYTES (rchar, /proc/PID/io) and
# holds no descriptor of FIFO: it read the writer's bytes and saw the
# end of file (it reads the FIFO once its writer opened it, so reading
# BYTES means it had it open). 1 after 30 s.
fifo_read_up() {
  local p f r held i
  p=$(pgrep -P "$1" | head -1)
  p=${p:-$1}
  for ((i = 0; i < 600; i++)); do
    r=$(sed -n 's/^rchar: //p' "/proc/$p/io" 2>/dev/null)
    held=0
    for f in /proc/"$p"/fd/*; do
      [ "$(readlink "$f" 2>/dev/null)" = "$2" ] && held=1
    done
    [ "${r:-0}" -ge "$3" ] && [ $held = 0 ] && return 0
    sleep 0.05
  done
  return 1
}

# 4. FIFO with --follow: every writer is a new session.
mkfifo "$T/ff"
EL_SRC_CAT_QUIET=1 timeout 30 "$CAT" --eventlog-file "$T/ff" --follow \
  --stop-after-bytes $((size * 2)) --out-prefix "$T/ff" > "$T/ff.out" &
cpid=$!
timeout 10 cat "$LOG" > "$T/ff"
# The second writer must open the FIFO only once the reader has seen the
# first one's end of file: a writer that opens it while the reader still
# holds it open (bytes left in the pipe, a reader slow under load) joins
# the first writer's session, as a FIFO has it: the reader never sees EOF.
# (A sleep of 0.2 s was this test's premise before.)
fifo_read_up "$cpid" "$T/ff" "$size" || fail "FIFO --follow: the reader did not read to EOF"
timeout 10 cat "$LOG" > "$T/ff"
wait_pid $cpid 30 || fail "FIFO --follow exited $?"
cmp "$T/ff.1" "$LOG" && cmp "$T/ff.2" "$LOG" || fail "FIFO --follow sessions"
pass "FIFO --follow: one session per writer"

# 5. A followed file that is truncated and rewritten: a new session.
head -c 3000 "$LOG" > "$T/trunc.eventlog"
EL_SRC_CAT_QUIET=1 timeout 30 "$CAT" --eventlog-file "$T/trunc.eventlog" \
  --follow --stop-after-bytes $((3000 + size)) --out-prefix "$T/tr" \
  > "$T/tr.out" 2> "$T/tr.err" &
cpid=$!
for ((i = 0; i < 200; i++)); do [ -s "$T/tr.1" ] && break; sleep 0.05; done
sleep 0.3
: > "$T/trunc.eventlog"      # truncate ...
# ... until the poll (every 100 ms) saw it: a poll only after the rewrite
# finds a longer file, which no reader can tell from growth (a fixed
# 0.3 s was this test's premise before, short for a loaded machine) ...
for ((i = 0; i < 600; i++)); do
  grep -q 'truncated' "$T/tr.err" && break
  sleep 0.05
done
cat "$LOG" >> "$T/trunc.eventlog"  # ... and write the whole log again
wait_pid $cpid 30 || fail "truncated --follow exited $?"
cmp "$T/tr.1" <(head -c 3000 "$LOG") || fail "truncated: session 1"
cmp "$T/tr.2" "$LOG" || fail "truncated: session 2"
grep -q 'truncated' "$T/tr.err" || fail "no truncation warning"
pass "--follow: truncation starts a new session"

# 6. The tee must not be the input (it would be truncated).
cp "$LOG" "$T/self.eventlog"
set +e
timeout 30 "$EL_BIN" stats --eventlog-file "$T/self.eventlog" \
  --eventlog-log-file "$T/self.eventlog" > /dev/null 2> "$T/self.err"
rc=$?
set -e
[ $rc != 0 ] || fail "tee onto the input accepted"
cmp "$T/self.eventlog" "$LOG" || fail "the input was damaged"
pass "tee onto the input refused"

# 7. --follow waits for a file that does not exist yet.
EL_SRC_CAT_QUIET=1 timeout 30 "$CAT" --eventlog-file "$T/later.eventlog" \
  --follow --eventlog-socket-timeout 0.05 --stop-after-bytes "$size" \
  --out-prefix "$T/later" > /dev/null 2>&1 &
cpid=$!
sleep 0.3
cp "$LOG" "$T/later.eventlog"
wait_pid $cpid 30 || fail "--follow on a missing file exited $?"
cmp "$T/later.1" "$LOG" || fail "--follow on a file created later"
pass "--follow waits for the file to appear"
