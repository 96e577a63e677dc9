#!/usr/bin/env bash
# `eventlog-live repl` at a terminal (a pseudo-terminal driven from
# Python's pty module; every wait bounded), as a tester met it:
#  - multi-line input typed or pasted while the previous line is still
#    being evaluated is shown once (the terminal echoed it, then libedit
#    again at the next prompt), at several typing speeds;
#  - Ctrl-C during a multi-line statement drops it and the next prompt is
#    the first line's `el> `, not the continuation prompt `>> `;
#  - Ctrl-C drops the line being typed at the prompt;
#  - Tab completes a word with one candidate (a global, a file name after
#    :load) without ringing the bell, as readline does (libedit rang it
#    after every completion); a word with several rings it, and a second
#    Tab lists them;
#  - Ctrl-D leaves with status 0 and the terminal echoes again afterwards
#    (its settings are put back).
# docs/repl.md "Line editing".
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
LOG=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
mkdir "$tmp/scripts"
: >"$tmp/scripts/only_one.lua"
: >"$tmp/scripts/two_a.lua"
: >"$tmp/scripts/two_b.lua"
export HOME=$tmp EVENTLOG_LIVE_HISTORY=$tmp/history TERM=xterm

timeout 120 python3 - "$EL_BIN" "$LOG" "$tmp/scripts" <<'PY'
import os, pty, re, select, sys, time

el, log, scripts = sys.argv[1], sys.argv[2], sys.argv[3].encode()
pid, fd = pty.fork()
if pid == 0:
    # After the REPL, the shell prints its status and the terminal's
    # settings, which the REPL must have put back. The terminal's ^C
    # reaches the shell too: a trap (reset in the REPL by exec) keeps it.
    os.execv("/bin/sh", ["sh", "-c",
             'trap : INT; "$0" repl "$1"; echo "repl status=$?"; stty -a',
             el, log])
out = b""
fails = 0

def pump(t):
    global out
    end = time.time() + t
    while time.time() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:
                return

def wait_for(pattern, start, t=15):
    """Until `pattern` (bytes regex) matches out[start:], at most t s."""
    end = time.time() + t
    while time.time() < end:
        m = re.search(pattern, out[start:])
        if m:
            return m
        pump(0.05)
    return None

def check(ok, what, start):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1
        print("  transcript:", repr(out[start:].decode(errors="replace")))

# The prompt after loading; then a moment for libedit to take the terminal.
check(wait_for(rb"el> $", 0, 60) is not None, "the first prompt", 0)
pump(0.3)

# 1. Multi-line input, each line shown once, at several speeds.
for i, gap in enumerate([0, 0.001, 0.003, 0.01, 0.05]):
    start = len(out)
    lines = [b"for i = 1, 2 do\r", b"print('v%d' .. i)\r" % i, b"end\r"]
    for line in lines:
        os.write(fd, line)
        if gap:
            time.sleep(gap)
    done = wait_for(rb"v%d2\r\nel> $" % i, start)
    shown = out[start:].count(b"print('v%d' .. i)" % i)
    check(done is not None and shown == 1,
          "typed %g s apart: each line shown once (print line %d times)"
          % (gap, shown), start)
    pump(0.3)

# 2. Ctrl-C inside a multi-line statement: back to the first prompt.
start = len(out)
os.write(fd, b"for i = 1, 3 do\r")
check(wait_for(rb">> $", start) is not None, "a statement continues on >> ",
      start)
pump(0.3)
mark = len(out)
os.write(fd, b"\x03")
got = wait_for(rb"el> $", mark, 5)
check(got is not None and b">> " not in out[mark:],
      "Ctrl-C on a >> line: the next prompt is el> ", start)
pump(0.3)
mark = len(out)
os.write(fd, b"print('after' .. 1)\r")
got = wait_for(rb"after1\r\nel> $", mark)
check(got is not None and b">> " not in out[mark:],
      "the statement was dropped: the next line runs alone", start)
pump(0.3)

# 3. Ctrl-C with a line typed but not entered: the line is dropped.
start = len(out)
os.write(fd, b"print('x' .. 1)")
pump(0.3)
os.write(fd, b"\x03")
wait_for(rb"el> $", start + 1, 5)
pump(0.3)
mark = len(out)
os.write(fd, b"print('y' .. 2)\r")
got = wait_for(rb"y2\r\nel> $", mark)
check(got is not None and b"x1" not in out[start:],
      "Ctrl-C drops the line being typed", start)
pump(0.3)

# 4. Completion: a unique word completes without the bell (BEL, 0x07);
# an ambiguous one rings it and a second Tab lists the candidates.
for typed, want, what in [
        (b"summ", b"ary", "a global"),
        (b":load " + scripts + b"/on", b"ly_one.lua", "a file name")]:
    start = len(out)
    os.write(fd, typed + b"\t")
    got = wait_for(re.escape(want), start, 5)
    pump(0.3)
    check(got is not None and b"\x07" not in out[start:],
          "Tab completes %s with one candidate, no bell" % what, start)
    os.write(fd, b"\x15")  # Ctrl-U: the line is dropped
    pump(0.3)
start = len(out)
os.write(fd, b":load " + scripts + b"/tw\t")
got = wait_for(rb"\x07", start, 5)
pump(0.3)
os.write(fd, b"\t")
listed = wait_for(rb"two_a\.lua\s+\S*two_b\.lua", start, 5)
check(got is not None and listed is not None,
      "an ambiguous file name rings the bell; a second Tab lists both",
      start)
os.write(fd, b"\x15")
pump(0.3)

# 5. Ctrl-D: status 0, and the terminal echoes again.
start = len(out)
os.write(fd, b"\x04")
got = wait_for(rb"repl status=(\d+)", start, 20)
check(got is not None and got.group(1) == b"0", "Ctrl-D: status 0", start)
wait_for(rb"\becho\b", start, 5)
pump(0.5)
settings = out[start:].decode(errors="replace")
check(re.search(r"(^|\s)echo(\s|$)", settings) is not None and
      re.search(r"(^|\s)icanon(\s|$)", settings) is not None,
      "the terminal's settings are back (echo, icanon)", start)
try:
    os.kill(pid, 9)
except OSError:
    pass
os.waitpid(pid, 0)
sys.exit(1 if fails else 0)
PY
