#!/usr/bin/env bash
# `eventlog-live repl` on live sources, through a pseudo-terminal (expect,
# test_repl_live_drive.exp): a FIFO followed across two writers while the
# prompt is in use (events arrive between prompts; a handler typed at the
# prompt and a :load-ed script see the later session), and an eventlog
# piped into stdin with the prompt on /dev/tty, and a Unix socket served
# slowly over two connections by tests/tools/el_peer (counts grow between
# prompts; two sessions). Expected counts come from
# the ghc-events `.reference` text.
# ctest-labels: asan
set -uo pipefail
: "${EL_BIN:?}" "${EL_SOURCE_DIR:?}" "${EL_EVENTLOGS:?}"
command -v expect >/dev/null || { echo "expect not installed"; exit 77; }
timeout 20 expect -c 'spawn -noecho true; expect eof' >/dev/null 2>&1 ||
  { echo "expect cannot open a pseudo-terminal here"; exit 77; }
LOG=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/fifo"
nev=$(awk '/^Events:/{e=1;next} e && /^[0-9]+: /{n++} END{print n}' "$LOG.reference")
nmark=$(awk '/^Events:/{e=1;next} e && /^[0-9]+: (cap [0-9]+: )?marker: /{n++}
  END{print n}' "$LOG.reference")
echo "reference: $nev events, $nmark markers"
peer=${EL_BUILD_DIR:+$EL_BUILD_DIR/tests/el_peer}
[ -n "$peer" ] && [ -x "$peer" ] || { echo "(el_peer not built: no socket part)"; peer=; }
export HOME=$tmp EVENTLOG_LIVE_HISTORY=$tmp/history TERM=xterm
timeout 240 expect -f "$EL_SOURCE_DIR/tests/e2e/test_repl_live_drive.exp" \
  "$EL_BIN" "$tmp/fifo" "$LOG" "$EL_SOURCE_DIR/examples/markers.lua" \
  "$nev" "$nmark" "$peer" "$tmp/sock" > "$tmp/out" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
  echo "FAIL live REPL session (status $rc)"; tr -d '\r' < "$tmp/out" | tail -40
  exit 1
fi
echo "ok   FIFO across two writers, typed handler, :load, stdin + /dev/tty"
[ -n "$peer" ] && echo "ok   Unix socket, two slow connections, counts grow while typing"
exit 0
