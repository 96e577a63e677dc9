#!/usr/bin/env bash
# ctest-labels: asan
# Socket sessions: a stream that begins with stale bytes; a server that
# cuts the first connection and accepts a second that sends a fresh header
# (two sessions, every byte teed in order); the control direction carries
# what the client writes.
source "$(dirname "$0")/source_lib.sh"
LOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
REF=$LOG.reference
RETRY="--eventlog-socket-timeout 0.05 --eventlog-socket-retries 0"

# 1. Stale bytes before the header are skipped.
timeout 30 "$PEER" --unix "$T/s.sock" --file "$LOG" --garbage 1000 \
  --ready-file "$T/ready" &
wait_for "$T/ready"
timeout 30 "$EL_BIN" show --eventlog-socket "$T/s.sock" $RETRY > "$T/stale.show" \
  || fail "show after stale bytes exited $?"
wait
cmp "$T/stale.show" "$REF" || fail "stale bytes changed the output"
pass "stale bytes skipped"

# 2. Cut after 5000 bytes, then a second connection with the whole file.
head -c 5000 "$LOG" > "$T/cut.eventlog"
cat "$T/cut.eventlog" "$LOG" > "$T/expected.tee"
rm -f "$T/ready"
timeout 30 "$PEER" --unix "$T/s.sock" --file "$LOG" --connections 2 \
  --close-after 5000 --ready-file "$T/ready" &
wait_for "$T/ready"
timeout 30 "$EL_BIN" stats --eventlog-socket "$T/s.sock" $RETRY \
  --eventlog-log-file "$T/tee.bin" > "$T/two.stats" 2> "$T/two.err" \
  || fail "stats over two sessions exited $?"
wait
grep -q '^sessions: *2$' "$T/two.stats" || fail "two sessions expected: $(grep sessions "$T/two.stats")"
cmp "$T/tee.bin" "$T/expected.tee" || fail "tee differs from the bytes sent"
# The events: those of the whole file plus the complete ones of the cut.
full=$(timeout 30 "$EL_BIN" stats "$LOG" | sed -n 's/^events: *//p')
part=$(timeout 30 "$EL_BIN" stats "$T/cut.eventlog" 2>/dev/null | sed -n 's/^events: *//p')
got=$(sed -n 's/^events: *//p' "$T/two.stats")
[ "$got" = $((full + part)) ] || fail "events $got, expected $full + $part"
pass "two sessions, tee equals the bytes sent"

# show over the same two sessions: every event of the whole file, plus the
# complete events of the cut session (the decoder is reset in between).
rm -f "$T/ready"
timeout 30 "$PEER" --unix "$T/s.sock" --file "$LOG" --connections 2 \
  --close-after 5000 --ready-file "$T/ready" &
wait_for "$T/ready"
timeout 30 "$EL_BIN" show --eventlog-socket "$T/s.sock" $RETRY > "$T/two.show" \
  || fail "show over two sessions exited $?"
wait
events() { sed -n '/^Events:/,$p' "$1" | grep -E '^ *[0-9]+: ' | sort; }
missing=$(comm -23 <(events "$REF") <(events "$T/two.show") | wc -l)
[ "$missing" = 0 ] || fail "show over two sessions lost $missing events of the reference"
n_ref=$(events "$REF" | wc -l)
timeout 30 "$EL_BIN" show "$T/cut.eventlog" > "$T/cut.show" 2>/dev/null || true
n_cut=$(events "$T/cut.show" | wc -l)
n_got=$(events "$T/two.show" | wc -l)
[ "$n_got" = $((n_ref + n_cut)) ] || fail "show: $n_got events, expected $n_ref + $n_cut"
pass "show over two sessions"

# The same with the byte-level tool: each session's bytes.
rm -f "$T/ready"
timeout 30 "$PEER" --unix "$T/s.sock" --file "$LOG" --connections 2 \
  --close-after 5000 --ready-file "$T/ready" &
wait_for "$T/ready"
EL_SRC_CAT_QUIET=1 timeout 30 "$CAT" --eventlog-socket "$T/s.sock" $RETRY \
  --out-prefix "$T/sess" > "$T/cat.out" || fail "el_src_cat exited $?"
wait
cmp "$T/sess.1" "$T/cut.eventlog" || fail "session 1 bytes"
cmp "$T/sess.2" "$LOG" || fail "session 2 bytes"
grep -q 'sessions=2 ' "$T/cat.out" || fail "el_src_cat: $(cat "$T/cat.out")"
pass "per-session bytes"

# 3. What the client writes reaches the program (control direction).
rm -f "$T/ready"
timeout 30 "$PEER" --unix "$T/s.sock" --file "$LOG" --hold-ms 300 \
  --record "$T/rec.bin" --ready-file "$T/ready" &
wait_for "$T/ready"
EL_SRC_CAT_QUIET=1 timeout 30 "$CAT" --eventlog-socket "$T/s.sock" $RETRY \
  --out-prefix "$T/ctl" --send-on-connect "hello control" > /dev/null \
  || fail "el_src_cat exited $?"
wait
[ "$(cat "$T/rec.bin")" = "hello control" ] || fail "peer recorded '$(cat "$T/rec.bin")'"
pass "control bytes reach the peer"
