#!/usr/bin/env bash
# The end of `eventlog-live watch --eventlog-socket PATH` with the real GHC
# 9.0 program (tests/haskell/live_socket):
#  - never: the plain build (no eventlog-socket library) never listens on
#    PATH; its RTS (-l) writes live_socket.eventlog in the current folder
#    instead. watch exits with its status 0 and warns that it never
#    listened on PATH (naming startFromEnv) and names that file;
#  - linger: the socket build with --linger: after the program's end watch
#    says "... exited with status 0; the web view stays at URL until
#    Ctrl-C" and keeps running; SIGINT ends it with status 0.
# Every wait is bounded.
set -u
source "$(dirname "$0")/watch_lib.sh"
pl_build plain

echo "== never: a program that never listens on the socket"
mkdir -p "$T/never"
(cd "$T/never" && exec "$EL" watch --web-port 0 --eventlog-socket \
  "$T/never.sock" -- "$PROG" seconds=2 tag=n) < /dev/null \
  > "$T/never.out" 2> "$T/never.err" &
WPID=$!
PIDS+=("$WPID")
wl_exits never 0 60 "watch exited 0, the program's status"
grep -q "warning: .* never listened on $T/never.sock.*startFromEnv" \
  "$T/never.err" && pass "never: watch says it never listened" ||
  { cat "$T/never.err"; fail "never: no 'never listened' warning"; }
[ -s "$T/never/live_socket.eventlog" ] ||
  fail "never: the program wrote no live_socket.eventlog (test premise)"
grep -q "wrote its eventlog to live_socket.eventlog instead" "$T/never.err" &&
  pass "never: watch names live_socket.eventlog" ||
  fail "never: the file it wrote is not named"

echo "== linger: --linger with --eventlog-socket"
if [ -z "${EL_SHARED_DIR:-}" ] || [ ! -f "$ESOCK/build-ghc90.sh" ]; then
  echo "note: no eventlog-socket library (\$EL_SHARED_DIR); case skipped"
  pl_finish
fi
pl_build socket
sock=$T/app.sock
wl_start linger --linger --eventlog-socket "$sock" -- "$PROG" \
  addr="unix:$sock" seconds=2 tag=l
wl_url linger
wait_line "$T/linger.out" '^end ' 60 || die "linger: the program did not end"
if wait_line "$T/linger.err" 'exited with status 0; the web view stays at http://[0-9.:]+/ until Ctrl-C' 60; then
  pass "linger: watch says the web view stays"
else
  tail -n 5 "$T/linger.err"; fail "linger: no 'stays at' line"
fi
alive "$WPID" && pass "linger: watch still runs after the program's end" ||
  fail "linger: watch exited (status $(wait "$WPID"; echo $?))"
kill -INT "$WPID"
wl_exits linger 0 30 "SIGINT ended watch with the program's status 0"
pl_finish
