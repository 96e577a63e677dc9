#!/usr/bin/env bash
# show, stats and `report -o -` writing into a pipe whose reader is gone
# (`... | head -c 100`) behave alike, as filters such as cat do:
#   SIGPIPE at its default: killed by it, silently (the shell's 141);
#   SIGPIPE ignored (inherited so from the parent): EPIPE, one line
#     "eventlog-live: CMD: writing the output: Broken pipe", status 1
#     (docs/exit-codes.md: the output could not be written).
# Before, report said "report: writing to stdout: Broken pipe" where show
# and stats said "writing the output".
# The pipe's read end is closed before the command starts (no race with a
# reader that has not yet gone); the expected words are strerror(EPIPE)'s.
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start closed-stdout
F=$EVENTLOGS/ghc-9.0/heapy-hT.eventlog
[ -f "$F" ] || { echo "SKIP: no $F"; exit 77; }
python3 - "$BIN" "$F" <<'PY' || rc=1
import errno, os, signal, subprocess, sys
binary, log = sys.argv[1:]
bad = 0
for cmd, argv in (('show', ['show', log]), ('show', ['show', '--json', log]),
                  ('stats', ['stats', log]), ('report', ['report', '-o', '-', log])):
    for disp, name in ((signal.SIG_DFL, 'default'), (signal.SIG_IGN, 'ignored')):
        r, w = os.pipe()
        os.close(r)
        p = subprocess.run([binary] + argv, stdout=w, stderr=subprocess.PIPE,
                           preexec_fn=lambda: signal.signal(signal.SIGPIPE, disp),
                           restore_signals=False, timeout=120)
        os.close(w)
        err = p.stderr.decode(errors='replace')
        what = f"{' '.join(argv[:-1])} (SIGPIPE {name})"
        if disp == signal.SIG_DFL:
            want_st, want_err = -signal.SIGPIPE, ''
        else:
            want_st = 1
            want_err = f"eventlog-live: {cmd}: writing the output: {os.strerror(errno.EPIPE)}\n"
        if p.returncode != want_st or err != want_err:
            print(f"FAIL: {what}: status {p.returncode}, stderr {err!r}; "
                  f"want {want_st}, {want_err!r}")
            bad = 1
        else:
            print(f"ok: {what}: status {p.returncode}, stderr {err!r}")
sys.exit(bad)
PY
[ $rc = 0 ] && { echo PASS; exit 0; }
exit 1
