#!/usr/bin/env bash
# ctest-labels: asan
# Reconnection: a client started before the server connects once it
# listens; with no server, the client gives up after
# --eventlog-socket-retries failed attempts, having waited the backoff
# delays (--eventlog-socket-timeout times --eventlog-socket-exponent^k).
source "$(dirname "$0")/source_lib.sh"
LOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
REF=$LOG.reference

# 1. The server starts 700 ms after the client.
timeout 30 "$PEER" --unix "$T/late.sock" --file "$LOG" --listen-delay 700 &
timeout 30 "$EL_BIN" show --eventlog-socket "$T/late.sock" \
  --eventlog-socket-timeout 0.1 --eventlog-socket-exponent 1.5 \
  --eventlog-socket-max-delay 0.15 --eventlog-socket-retries 10 > "$T/late.show" 2> "$T/late.err" \
  || fail "show with a late server exited $?"
wait
cmp "$T/late.show" "$REF" || fail "late server: output differs from .reference"
pass "connects when the server starts late"

# 2. Nobody listens: 4 attempts (1 + 3 retries), delays 0.2 + 0.4 + 0.8 s.
start=$(mono_ms)
set +e
timeout 30 "$CAT" --eventlog-socket "$T/nobody.sock" \
  --eventlog-socket-timeout 0.2 --eventlog-socket-exponent 2 \
  --eventlog-socket-retries 3 --out-prefix "$T/none" > "$T/gu.out" 2> "$T/gu.err"
rc=$?
set -e
ms=$(( $(mono_ms) - start ))
[ $rc = 1 ] || fail "give-up exit status $rc"
grep -q 'status=ENOENT .*attempts=4 failures=4' "$T/gu.out" || fail "$(cat "$T/gu.out")"
grep -q 'giving up on Unix socket .* after 4 failed attempts' "$T/gu.err" \
  || fail "no give-up message: $(tail -3 "$T/gu.err")"
[ $ms -ge 1350 ] || fail "gave up after $ms ms, before the 1400 ms of backoff"
[ $ms -lt 10000 ] || fail "gave up only after $ms ms"
pass "gives up after 4 attempts and $ms ms"

# 3. The commands end with status 1 when they never connected.
set +e
timeout 30 "$EL_BIN" stats --eventlog-socket "$T/nobody.sock" \
  --eventlog-socket-timeout 0.01 --eventlog-socket-retries 2 > /dev/null 2>&1
rc=$?
set -e
[ $rc = 1 ] || fail "stats with no server exited $rc"
# TCP: a refused port.
set +e
timeout 30 "$CAT" --eventlog-socket-host 127.0.0.1 --eventlog-socket-port 1 \
  --eventlog-socket-timeout 0.01 --eventlog-socket-retries 1 \
  --out-prefix "$T/none" > "$T/tcp.out" 2>/dev/null
set -e
grep -q 'status=ECONNREFUSED .*attempts=2' "$T/tcp.out" || fail "tcp: $(cat "$T/tcp.out")"
pass "never connected: non-zero exit"
