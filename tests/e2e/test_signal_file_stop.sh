#!/usr/bin/env bash
# SIGINT/SIGTERM to `run` while it processes a complete recorded file (a
# slow handler keeps it busy): the input is cut by the stop, not by the
# program that wrote it, so there must be no "without its end-of-data
# marker: the log is incomplete" warning (a tester saw it, for a log that
# has its marker) and no "truncated inside an event"; instead one warning
# says where reading stopped, a byte offset short of the file's size, and
# the exit status is 0 (docs/exit-codes.md: stopped by a signal).
# The byte is counted in the file as now open: a file followed (--follow),
# truncated and written again is read again from byte 0, and a stop after
# that names at most its size (it named the bytes of both readings).
# ctest-labels: e2e
set -u
: "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
BIN=$EL_BUILD_DIR/eventlog-live
LOG=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
size=$(stat -c %s "$LOG")
cat >"$tmp/slow.lua" <<LUA
local el = require("eventlog_live")
local marked = false
el.on("RUN_THREAD", function()
  if not marked then
    marked = true
    local f = assert(io.open("$tmp/busy", "w")); f:close()
  end
  local x = 0
  for i = 1, 2e6 do x = x + i end
end)
LUA
for sig in INT TERM; do
  rm -f "$tmp/busy"
  "$BIN" run "$tmp/slow.lua" "$LOG" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 200); do [ -e "$tmp/busy" ] && break; sleep 0.05; done
  [ -e "$tmp/busy" ] || { echo "FAIL($sig): the handler never ran"; fail=1; }
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  pid=
  [ "$rc" = 0 ] || { echo "FAIL($sig): exit status $rc, want 0"; fail=1; }
  if grep -q "end-of-data marker\|truncated" "$tmp/err"; then
    echo "FAIL($sig): a complete log called incomplete after the stop:"
    cat "$tmp/err"
    fail=1
  fi
  at=$(sed -n 's/.*: stopped by a signal at byte \([0-9]*\)$/\1/p' "$tmp/err")
  if [ -z "$at" ]; then
    echo "FAIL($sig): no 'stopped by a signal at byte N' warning:"
    cat "$tmp/err"
    fail=1
  elif [ "$at" -le 0 ] || [ "$at" -ge "$size" ]; then
    echo "FAIL($sig): stopped at byte $at, want 0 < N < $size"
    fail=1
  fi
done
# --follow: the file read whole, truncated, written again (read again from
# byte 0), then SIGINT while waiting at its end: stopped at its size,
# after the log's end-of-data marker, so nothing of it was left unread:
# an info line says so, not a warning (h88 took that warning for a loss).
echo 'local el = require("eventlog_live")' >"$tmp/nop.lua"
cp "$LOG" "$tmp/f.eventlog"
"$BIN" run "$tmp/nop.lua" --eventlog-file "$tmp/f.eventlog" --follow \
  -v info >"$tmp/out" 2>"$tmp/err" &
pid=$!
# wait_err PATTERN: until the daemon's stderr has it (10 s at most)
wait_err() {
  for _ in $(seq 200); do grep -q "$1" "$tmp/err" && return 0; sleep 0.05; done
  return 1
}
sleep 1 # read to the end (2.8 MB: well under a second)
: >"$tmp/f.eventlog"
wait_err "file truncated" || { echo "FAIL(follow): truncation not seen"; fail=1; }
cat "$LOG" >"$tmp/f.eventlog"
sleep 1
kill -INT "$pid"
wait "$pid"
pid=
at=$(sed -n 's/.*info: .*: stopped by a signal at byte \([0-9]*\), after the end of its data (read whole)$/\1/p' "$tmp/err")
if [ "$at" != "$size" ] || grep -q "warning: .*stopped by a signal" "$tmp/err"; then
  echo "FAIL(follow): stopped at byte '$at', want an info line at the size $size:"
  cat "$tmp/err"
  fail=1
fi
# stop_after_1s CMD...: run CMD (stderr to $tmp/err), SIGINT after 1 s
stop_after_1s() {
  "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  sleep 1
  kill -INT "$pid"
  wait "$pid"
  pid=
}
# report the same (h89: it warned, its decoder holding the end-of-data
# marker back to see whether more data follows, not being live).
stop_after_1s "$BIN" report --eventlog-file "$tmp/f.eventlog" --follow \
  -o "$tmp/f.html" -v info
grep -q "info: .*f.eventlog (following): stopped by a signal at byte $size, after the end of its data (read whole)$" "$tmp/err" ||
  { echo "FAIL(follow, report): no info line at byte $size:"; cat "$tmp/err"; fail=1; }
# The same log cut short of its end-of-data marker (the program still
# writing): the stop leaves the rest unread, a warning at the cut.
head -c 2000000 "$LOG" >"$tmp/g.eventlog"
stop_after_1s "$BIN" run "$tmp/nop.lua" --eventlog-file "$tmp/g.eventlog" \
  --follow
grep -q "warning: .*g.eventlog (following): stopped by a signal at byte 2000000$" "$tmp/err" ||
  { echo "FAIL(follow, cut): no warning at byte 2000000:"; cat "$tmp/err"; fail=1; }
[ $fail = 0 ] && echo "PASS: a signal during run on a complete file"
exit $fail
