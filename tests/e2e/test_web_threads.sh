#!/usr/bin/env bash
# End-to-end: the web view's threads table after a replay ended, with the
# traces processor thread_state off (the daemon's default) and on
# (--traces), read in Debian's Chromium (tests/web/threads_check.js).
# threads.eventlog (GHC 9.0: 22 threads, 20 of them labelled, all
# finished). Expected values come from its .reference, read here with
# python: each thread's label and running time (the sum of its
# "running thread" .. "stopping thread" intervals).
# Off: only ThreadLabel logs reach the table, so the page must not show
# states or running times it never saw: the hint that states need
# thread_state stays shown, and every labelled thread's row reads state
# "unknown", status "input ended", running "unknown" (h55: the old daemon
# ended those rows "Ended / input ended (was unknown) / 0.0", and the page
# hid the hint since every row then had a state).
# On: unchanged: hint hidden, every thread Finished with the reference's
# running time.
# Screenshots: $EL_BUILD_DIR/test_web_threads-{off,on}.png.
# Then the "other" row, off and on (below).
# Exit 0 pass, 1 fail, 77 skip.
set -u
source "$(dirname "$0")/serve_lib.sh" web-threads
LOG=$EVENTLOGS/ghc-9.0/threads.eventlog

[ -x /usr/bin/chromium ] || skip "chromium not installed (apt-get install chromium)"
command -v node >/dev/null || skip "node missing"
[ -d "$SRC/tests/web/node_modules/playwright-core" ] ||
  skip "tests/web: run npm ci (scripts/setup.sh)"
sv_option --web-port
[ -f "$LOG" ] && [ -f "$LOG.reference" ] || skip "$LOG(.reference) missing"

# expected: {"traced": T, "threads": {id: {label, running_ms}}}
expect() {
  python3 - "$LOG.reference" "$1" <<'PY'
import json, re, sys
run, total, label = {}, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'\s*(\d+): cap \d+: (running|stopping) thread (\d+)', line)
    if m:
        t, tid = int(m[1]), m[3]
        if m[2] == 'running':
            run[tid] = t
        else:
            total[tid] = total.get(tid, 0) + t - run.pop(tid)
        continue
    m = re.match(r'\s*\d+: cap \d+: thread (\d+) has label "(.*)"$', line.rstrip('\n'))
    if m:
        label[m[1]] = m[2]
threads = {tid: {'label': label.get(tid), 'running_ms': ns / 1e6}
           for tid, ns in total.items()}
print(json.dumps({'traced': sys.argv[2] == 'on', 'threads': threads}))
PY
}

for mode in off on; do
  traces=()
  [ $mode = on ] && traces=(--traces)
  expect $mode > "$TMP/expect-$mode.json" || fail "reading $LOG.reference"
  sv_daemon $mode --eventlog-file "$LOG" --service-name threads --web-port 0 \
    --no-otlp "${traces[@]}"
  sv_port $mode "web view"
  sv_ended $mode
  timeout 120 node "$SRC/tests/web/threads_check.js" --url "http://127.0.0.1:$PORT/" \
    --expect "$TMP/expect-$mode.json" --screenshot "$BUILD/test_web_threads-$mode.png" \
    --user-data-dir "$TMP/udd-$mode" > "$TMP/check-$mode.json" 2> "$TMP/check-$mode.err"
  rc=$?
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], "problems:", d["problems"])' \
    "$TMP/check-$mode.json" $mode 2>/dev/null || cat "$TMP/check-$mode.json"
  [ $rc = 0 ] || { cat "$TMP/check-$mode.err"; fail "thread_state $mode: the threads table"; }
  stop_pid "$DPID"
done

# More threads than the table keeps (tests/tools/ended_threads.lua: two
# sessions of 400 labelled threads; in session 1 half finish, the rest
# block and end with the session; session 2's end with the input): the
# "other" row says how many of the threads that left finished and how
# many merely ended with their session, from the eventlog's own `show`
# (threads created, "thread finished" stops) less what the rows show.
# Off, no finish is known: the row said "375 finished" (h61: the count
# held every thread ended with its session); on it said 375 where 200
# had finished.
# Screenshots: $EL_BUILD_DIR/test_web_threads-other-{off,on}.png.
command -v lua5.4 >/dev/null || skip "lua5.4 missing (the other row)"
lua5.4 "$SRC/tests/tools/ended_threads.lua" 400 "$TMP/ended.eventlog" ||
  fail "could not write the eventlog"
"$BUILD/eventlog-live" show "$TMP/ended.eventlog" > "$TMP/ended.show" ||
  fail "eventlog-live show"
total=$(grep -c ': creating thread ' "$TMP/ended.show")
fin=$(grep -c ': stopping thread [0-9]* (thread finished)' "$TMP/ended.show")
[ "$total" = 800 ] && [ "$fin" = 200 ] ||
  fail "ended_threads.lua: $total threads, $fin finished (800, 200)"
for mode in off on; do
  traces=()
  [ $mode = on ] && traces=(--traces)
  traced=false
  [ $mode = on ] && traced=true
  echo "{\"traced\": $traced, \"other\": {\"threads\": $total, \"finished\": $fin}}" \
    > "$TMP/expect-other-$mode.json"
  sv_daemon other-$mode --eventlog-file "$TMP/ended.eventlog" \
    --service-name ended --web-port 0 --no-otlp "${traces[@]}"
  sv_port other-$mode "web view"
  sv_ended other-$mode
  timeout 120 node "$SRC/tests/web/threads_check.js" --url "http://127.0.0.1:$PORT/" \
    --expect "$TMP/expect-other-$mode.json" \
    --screenshot "$BUILD/test_web_threads-other-$mode.png" \
    --user-data-dir "$TMP/udd-other-$mode" > "$TMP/check-other-$mode.json" \
    2> "$TMP/check-other-$mode.err"
  rc=$?
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], "other row:", d["look"].get("other"), "problems:", d["problems"])' \
    "$TMP/check-other-$mode.json" $mode 2>/dev/null || cat "$TMP/check-other-$mode.json"
  [ $rc = 0 ] || { cat "$TMP/check-other-$mode.err"; fail "thread_state $mode: the other row"; }
  stop_pid "$DPID"
done
echo "PASS: threads table: unknown without thread_state, the reference's with it; the other row's finished and ended"
