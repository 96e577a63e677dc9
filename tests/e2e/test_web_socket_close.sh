#!/usr/bin/env bash
# End-to-end: the web view when an eventlog-socket connection closes and
# the daemon waits for the next (docs/web.md "Sessions"), with the real
# eventlog-socket library on GHC 9.0 (tests/haskell/live_socket, built by
# producer_lib.sh from $EL_SHARED_DIR/peers/eventlog-socket).
# The daemon (--eventlog-socket SOCK, retrying for ever, --traces, export
# every second, --web-port) is started first.
# 1. Run 1 (seconds=3) exits by itself. Once the connection closed,
#    /api/data must say "reconnecting": true, "ended": false, and list no
#    thread Running, Runnable or Blocked: each row of run 1's session Finished
#    (at exit the RTS finishes every thread, when the library sends
#    those events before it cuts the connection: docs/sources.md) or
#    Ended with status "connection closed (was <state>[: <status>])".
# 2. Run 2 (seconds=30) on the same path: the daemon reconnects; once a
#    row of the new session is Running, Runnable or Blocked (its first 2 MiB buffer
#    arrived), "reconnecting" is false and run 1's rows (those still
#    listed) kept their statuses. Run 2 is then SIGKILLed: no finish is ever written, so at
#    least its worker and the worker's ping-pong partner, which loop for
#    ever (Main.hs), must be Ended "connection closed (was ...)"; the
#    rest as in 1, run 1's rows still as they were.
# Before the fix, run 2's rows stayed Running/Blocked while the daemon
# waited ("reconnecting" absent; run 1's too when its end was cut).
# With the argument `fifo` (test_web_fifo_close.sh) the same runs, of the
# plain program (no library: +RTS -l -ol FIFO), write a named FIFO that the
# daemon reads with --eventlog-file FIFO --follow (opened again after each
# writer: docs/sources.md); rows end "writer closed the FIFO (was ...)".
# Exit 0 pass, 1 fail, 77 skip.
set -u
MODE=${1:-socket}
source "$(dirname "$0")/producer_lib.sh"
command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc)"
[ -n "${EL_SHARED_DIR:-}" ] && [ -f "$ESOCK/build-ghc90.sh" ] ||
  [ "$MODE" = fifo ] ||
  skip "no \$EL_SHARED_DIR/peers/eventlog-socket/build-ghc90.sh"
[ -x "$DAEMON" ] || skip "$DAEMON not built"
command -v python3 >/dev/null || skip "python3 missing"
"$DAEMON" --help 2>&1 | grep -q -- --web-port || skip "built without the web view"
sock=$T/app.sock
if [ "$MODE" = fifo ]; then
  pl_build plain
  mkfifo "$sock" || die "mkfifo failed"
  SOURCE=(--eventlog-file "$sock" --follow)
  ADDR=(addr=none)          # run N: $PROG ${ADDR[@]} ... +RTS -ol$sock
  RTS_OUT=(-ol"$sock")
  WHY='writer closed the FIFO'
else
  pl_build socket
  SOURCE=(--eventlog-socket "$sock" --eventlog-socket-timeout 0.2)
  ADDR=(addr=unix:"$sock")
  RTS_OUT=()
  WHY='connection closed'
fi
"$DAEMON" "${SOURCE[@]}" \
  --service-name app -hT --traces --export-interval 1s --no-otlp \
  --web-port 0 -v info > "$T/daemon.out" 2> "$T/daemon.err" &
DPID=$!
PIDS+=("$DPID")
wait_line "$T/daemon.err" "Starting web view on [0-9]" 20 ||
  { cat "$T/daemon.err"; die "no web view"; }
PORT=$(sed -n 's/.*Starting web view on \([0-9]*\).*/\1/p' "$T/daemon.err" | head -1)
URL=http://127.0.0.1:$PORT/api/data

# check.py MODE URL [ARGS]: polls /api/data (bounded) and checks.
#   alive AFTER     until a row of a session > AFTER is Running, Runnable
#                   or Blocked
#                   (40 s); then "reconnecting" must be false. Prints the
#                   session.
#   closed AFTER KEEP.json MIN
#                   until "reconnecting" is true and a row of a session >
#                   AFTER is listed (30 s); then the checks of 1, and at
#                   least MIN rows of that session Ended. KEEP.json:
#                   the rows of earlier sessions, which must be unchanged
#                   (written with the current rows). Prints the session.
cat > "$T/check.py" <<'EOF'
import json, re, sys, time, urllib.request
mode, url = sys.argv[1], sys.argv[2]
after = int(sys.argv[3])
WHY = re.escape(sys.argv[-1])  # the source's words (the last argument)
STATUS = re.compile('^' + WHY + r' \(was (Running|(Runnable|Blocked)(: \w+)?|unknown)\)$')
LIVE = ('Running', 'Runnable', 'Blocked')

def get():
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)

def newer(d):
    return [r for r in d['threads'] if r['session'] > after]

def until(cond, secs):
    end = time.time() + secs
    while True:
        d = get()
        if cond(d) or time.time() > end:
            return d
        time.sleep(0.3)

problems = []
if mode == 'alive':
    d = until(lambda d: any(r['state'] in LIVE for r in newer(d)), 40)
    rows = newer(d)
    if not any(r['state'] in LIVE for r in rows):
        problems.append(f'no live row of a session after {after}: {rows}')
    if d.get('reconnecting') is not False:
        problems.append(f'connected, but "reconnecting" is {d.get("reconnecting")}')
    sess = max([r['session'] for r in rows] or [0])
else:
    keep, least = sys.argv[4], int(sys.argv[5])
    d = until(lambda d: d.get('reconnecting') is True and newer(d), 30)
    rows = newer(d)
    sess = max([r['session'] for r in rows] or [0])
    if d.get('reconnecting') is not True:
        problems.append(f'"reconnecting" is {d.get("reconnecting")} after the close')
    if d.get('ended') is not False:
        problems.append(f'"ended" is {d.get("ended")}: the daemon still waits')
    for r in d['threads']:
        if r['state'] in LIVE:
            problems.append(f'thread {r["id"]} of session {r["session"]} is '
                            f'{r["state"]} ({r["status"]}) after its connection closed')
    ended = [r for r in rows if r['state'] == 'Ended']
    if len(ended) < least:
        problems.append(f'{len(ended)} rows of session {sess} Ended, want at '
                        f'least {least}: {rows}')
    for r in rows:
        if r['state'] not in ('Ended', 'Finished'):
            problems.append(f'thread {r["id"]} of session {sess} is {r["state"]}')
    for r in ended:
        if not STATUS.match(r['status'] or ''):
            problems.append(f'thread {r["id"]} Ended with status {r["status"]!r}')
    old = [r for r in d['threads'] if r['session'] <= after]
    try:
        want = json.load(open(keep))
    except FileNotFoundError:
        want = []
    # An ended row leaves the table 30 s (eventlog time) after its end
    # (docs/web.md): a row may be gone, none may have changed.
    def key(r): return (r['session'], r['id'], r['state'], r['status'])
    changed = set(map(key, old)) - set(map(key, want))
    if changed:
        problems.append(f'earlier sessions\' rows changed: {sorted(map(key, want))} '
                        f'-> {sorted(map(key, old))}')
    json.dump(d['threads'], open(keep, 'w'))
    print(f'session {sess}: {len(ended)} rows Ended: ' +
          ', '.join(f'{r["id"]} {r["status"]}' for r in ended), file=sys.stderr)
for p in problems:
    print('FAIL:', p, file=sys.stderr)
print(sess)
sys.exit(1 if problems else 0)
EOF
CHECK=(python3 "$T/check.py")
# "${CHECK[@]}" MODE URL ARGS... "$WHY"

# 1. run 1 exits by itself
pl_prog run1 "${ADDR[@]}" seconds=3 tag=run1 +RTS -l "${RTS_OUT[@]}" -hT -i0.2 -RTS
wait_exit "$PROG_PID" 60 || fail "run 1 exited $?"
s1=$("${CHECK[@]}" closed "$URL" 0 "$T/keep.json" 0 "$WHY") &&
  pass "run 1 exited: its threads ended with the connection (session $s1)" ||
  fail "run 1 exited: see above"
[ -n "$s1" ] && [ "$s1" -gt 0 ] || die "no row of run 1"

# 2. run 2 connects, is killed
pl_prog run2 "${ADDR[@]}" seconds=30 tag=run2 +RTS -l "${RTS_OUT[@]}" -hT -i0.2 -RTS
run2=$PROG_PID
s2=$("${CHECK[@]}" alive "$URL" "$s1" "$WHY") &&
  pass "run 2 connected: session $s2 live, no longer reconnecting" ||
  fail "run 2 connected: see above"
kill -KILL "$run2"
wait "$run2" 2>/dev/null
# the worker and its ping-pong partner (Main.hs) never finish
"${CHECK[@]}" closed "$URL" "$s1" "$T/keep.json" 2 "$WHY" > /dev/null &&
  pass "run 2 killed: its threads ended with the connection" ||
  fail "run 2 killed: see above"
stop_pid "$DPID" || fail "the daemon exited $? after SIGTERM"
pl_finish
