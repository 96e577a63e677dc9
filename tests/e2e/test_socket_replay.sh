#!/usr/bin/env bash
# ctest-labels: asan
# A shared eventlog replayed by el_peer (the program's side of
# eventlog-socket) over a Unix socket, TCP/IPv4 and TCP/IPv6 (::1): `show`
# prints exactly the ghc-events .reference text, and `stats` gives the same
# per-type counts as reading the file.
source "$(dirname "$0")/source_lib.sh"
LOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
REF=$LOG.reference
RETRY="--eventlog-socket-timeout 0.05 --eventlog-socket-retries 0"
timeout 60 "$EL_BIN" stats "$LOG" | by_type > "$T/file.counts"
[ -s "$T/file.counts" ] || fail "stats on the file printed nothing"

# Unix socket.
for cmd in show stats; do
  rm -f "$T/ready"
  timeout 30 "$PEER" --unix "$T/s.sock" --file "$LOG" --ready-file "$T/ready" &
  wait_for "$T/ready"
  timeout 30 "$EL_BIN" $cmd --eventlog-socket "$T/s.sock" $RETRY \
    > "$T/unix.$cmd" || fail "$cmd over a Unix socket exited $?"
  wait
done
cmp "$T/unix.show" "$REF" || fail "show over a Unix socket differs from .reference"
by_type < "$T/unix.stats" | cmp - "$T/file.counts" || fail "stats over Unix differ"
grep -q '^sessions: *1$' "$T/unix.stats" || fail "one session expected"
pass "Unix socket"

# TCP, IPv4 and IPv6 (skipped where ::1 is missing).
for host in 127.0.0.1 ::1; do
  for cmd in show stats; do
    rm -f "$T/ready" "$T/port"
    timeout 30 "$PEER" --tcp "$host" --port 0 --port-file "$T/port" \
      --file "$LOG" --ready-file "$T/ready" 2> "$T/peer.err" &
    pid=$!
    for ((i = 0; i < 100; i++)); do
      [ -e "$T/ready" ] || ! kill -0 $pid 2>/dev/null && break
      sleep 0.05
    done
    if [ ! -e "$T/ready" ]; then
      wait $pid || true
      [ "$host" = ::1 ] && { echo "skip: no IPv6 loopback"; continue 2; }
      fail "el_peer could not listen on $host"
    fi
    timeout 30 "$EL_BIN" $cmd --eventlog-socket-host "$host" \
      --eventlog-socket-port="$(cat "$T/port")" $RETRY > "$T/tcp.$cmd" \
      || fail "$cmd over TCP $host exited $?"
    wait $pid
  done
  cmp "$T/tcp.show" "$REF" || fail "show over TCP $host differs from .reference"
  by_type < "$T/tcp.stats" | cmp - "$T/file.counts" || fail "stats over TCP $host differ"
  pass "TCP $host"
done
