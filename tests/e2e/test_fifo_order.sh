#!/usr/bin/env bash
# A named FIFO source (through the libuv source: the tee forces it) gets every byte whichever side opens it first: the
# reader before the writer (the daemon started before the program) and the
# writer before the reader (the program started first and blocked in its
# open). A stop while no writer ever came must not hang.
# Expected counts come from the ghc-events reference text.
# ctest-labels: asan
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
log=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
ref=$log.reference
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT
fail=0
# Events in the reference (lines after "Events:") = events decoded minus
# block markers, which show does not print; stats counts block markers too,
# so compare the USER_MARKER count, printed by both.
want=$(grep -c ': marker: ' "$ref")


for order in reader-first writer-first; do
  for i in 1 2 3 4 5; do
    f=$tmp/fifo-$order-$i; mkfifo "$f"
    if [ $order = reader-first ]; then
      timeout 20 "$EL_BIN" stats --eventlog-file "$f" \
        --eventlog-log-file "$tmp/tee" > "$tmp/out" 2>&1 &
      r=$!; sleep 0.2; cat "$log" > "$f"
    else
      (cat "$log" > "$f") & sleep 0.2
      timeout 20 "$EL_BIN" stats --eventlog-file "$f" \
        --eventlog-log-file "$tmp/tee" > "$tmp/out" 2>&1 &
      r=$!
    fi
    wait $r; rc=$?
    got=$(awk '/^ *USER_MARKER/{print $3}' "$tmp/out")
    if [ $rc -ne 0 ] || [ "$got" != "$want" ] || ! cmp -s "$tmp/tee" "$log"; then
      echo "FAIL: $order run $i: rc=$rc markers=$got want=$want"; cat "$tmp/out"; fail=1
    fi
  done
  echo "ok: $order: 5 runs, $want markers each"
done

# --follow on a FIFO nobody writes to stops promptly on SIGTERM.
f=$tmp/idle; mkfifo "$f"
"$EL_BIN" stats --follow --eventlog-file "$f" > "$tmp/out" 2>&1 & r=$!
sleep 0.3; kill -TERM $r
for _ in $(seq 50); do kill -0 $r 2>/dev/null || break; sleep 0.1; done
if kill -0 $r 2>/dev/null; then echo "FAIL: stop while waiting for a writer hangs"; kill -9 $r; fail=1
else echo "ok: stop while waiting for a writer"; fi
exit $fail
