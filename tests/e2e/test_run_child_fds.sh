#!/usr/bin/env bash
# A child a script starts (os.execute, io.popen: docs/lua-api.md) must not
# inherit the descriptors eventlog-live opened: the input file, the FIFO
# (a child holding its read end keeps the writer from ever seeing EPIPE,
# and one holding a write end keeps us from seeing end of file), the
# socket, the tee file (--eventlog-log-file). All are opened close-on-exec.
# Checked: `eventlog-live run` over a file, a FIFO, a Unix socket and a
# TCP socket, each with a tee file; in on_session (the input open) the
# script runs `ls -l /proc/self/fd` through os.execute and through
# io.popen. The child's descriptors from 3 up must be those a child of
# this test's shell gets (the baseline, listed by the same command here),
# but for the one ls opens on /proc/PID/fd itself: nothing naming the
# input, the tee or a socket.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start child-fds
cd "$TMP"
cat > fds.lua <<'EOF'
-- List a child's descriptors while the input is open, both ways.
local el = require("eventlog_live")
local out = el.config.out
el.on_session(function()
  os.execute("exec ls -l /proc/self/fd > '" .. out .. ".execute'")
  local p = io.popen("exec ls -l /proc/self/fd")
  local text = p:read("a")
  p:close()
  local f = assert(io.open(out .. ".popen", "w"))
  f:write(text)
  f:close()
end)
EOF
ls -l /proc/self/fd > baseline

# check WHAT: the listings $TMP/WHAT.execute and WHAT.popen against the
# baseline.
check() {
  python3 - baseline "$1" <<'PY' || rc=1
import re, sys
def fds(path):
    d = {}
    for l in open(path):
        m = re.search(r' (\d+) -> (.*)$', l.rstrip('\n'))
        if m and int(m.group(1)) >= 3 and not re.fullmatch(r'/proc/\d+/fd', m.group(2)):
            d[int(m.group(1))] = m.group(2)
    return d
base = fds(sys.argv[1])
what = sys.argv[2]
bad = 0
for how in ('execute', 'popen'):
    try:
        got = fds(f'{what}.{how}')
    except FileNotFoundError:
        print(f"FAIL: {what}, {how}: no listing (on_session did not run?)")
        bad = 1
        continue
    extra = {k: v for k, v in got.items() if base.get(k) != v}
    if extra:
        print(f"FAIL: {what}, os.{how} child inherits {extra}")
        bad = 1
    else:
        print(f"ok: {what}, {how}: the child holds no descriptor of ours")
sys.exit(bad)
PY
}

# serve KIND ADDR: a server on a Unix socket path or a TCP port (ADDR
# written to $TMP/addr when bound) that sends the log to its first
# connection, holds it 3 s (the script runs meanwhile) and closes.
serve() {
  python3 - "$1" "$ODD" <<'PY' &
import socket, sys, time
kind, log = sys.argv[1:]
if kind == 'unix':
    s = socket.socket(socket.AF_UNIX); s.bind('s.sock'); addr = 's.sock'
else:
    s = socket.socket(); s.bind(('127.0.0.1', 0)); addr = str(s.getsockname()[1])
s.listen(1)
open('addr.tmp', 'w').write(addr)
import os; os.rename('addr.tmp', 'addr')
c, _ = s.accept(); c.sendall(open(log, 'rb').read()); time.sleep(3); c.close()
PY
  PID=$!
  for ((i = 0; i < 200; i++)); do [ -f addr ] && break; sleep 0.05; done
}

run() {
  local what=$1
  shift
  st=0
  "$BIN" run fds.lua --set out="$TMP/$what" --output none \
    --eventlog-log-file "$TMP/$what.tee" "$@" > /dev/null 2> "$what.err" || st=$?
  [ $st = 0 ] || bad "$what: status $st: $(head -c 300 "$what.err")"
  check "$what"
}

run file "$ODD"
mkfifo fifo
(cat "$ODD" > fifo &)
run fifo fifo
rm -f addr s.sock
serve unix
run unix --eventlog-socket s.sock --eventlog-socket-retries 0
wait "$PID"; PID=
rm -f addr
serve tcp
run tcp --eventlog-socket-host 127.0.0.1 --eventlog-socket-port "$(cat addr)" \
  --eventlog-socket-retries 0
wait "$PID"; PID=
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
