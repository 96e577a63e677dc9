#!/usr/bin/env bash
# SIGINT and SIGTERM stop a recorded file's replay whose console output
# nobody reads (h59, high). The replay goes at the reader's pace
# (docs/otlp.md §5 "Who waits for stdout"): it used to write on its loop
# thread, blocked in fflush(stdout) once the pipe was full, and no signal
# could stop it (only SIGKILL). Now the writer thread writes and the loop
# waits for room until a signal comes. threads-big with the trace
# processors on makes far more OTLP/JSON than the pipe (64 KiB) and the
# console queue (8 MiB) hold. Checked, for a named FIFO held open by a
# reader that never reads and for an anonymous pipe (`| sleep`):
#   - SIGTERM ends the daemon with status 0 within its shutdown budget
#     (--otlp-shutdown-timeout 2000) and a margin;
#   - what was not written is said and counted ("not written"), not lost
#     silently, and put down to the shutdown budget (also when a second
#     SIGTERM came during the final flush);
#   - with a reader that reads everything (`| wc -c`), nothing is dropped
#     (the replay waits for the reader, as before).
source "$(dirname "$0")/serve_lib.sh" stuck
LOG=$EVENTLOGS/ghc-9.0/threads-big.eventlog
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=console
args=(--eventlog-file "$LOG" --service-name stuck -hT --traces
      --otlp-shutdown-timeout 2000)

# stuck_check NAME: the daemon (pid $daemon, stderr $TMP/NAME.err; its
# exit status written to $TMP/NAME.st by whoever waits for it) is writing
# into a reader that does not read; SIGTERM must end it.
stuck_check() {
  local name=$1 t0
  sleep 3 # the pipe and the queue fill (the daemon then waits for room)
  alive "$daemon" || { cat "$TMP/$name.err"; fail "$name: the daemon ended before the signal"; }
  kill -TERM "$daemon"
  t0=$SECONDS
  if [ "${2:-}" = twice ]; then # a second one during the final flush
    sleep 1
    kill -TERM "$daemon" 2>/dev/null
  fi
  while [ ! -s "$TMP/$name.st" ]; do
    [ $((SECONDS - t0)) -lt 40 ] ||
      fail "$name: SIGTERM did not end the daemon in 40 s (stuck writing stdout)"
    sleep 0.2
  done
  [ "$(cat "$TMP/$name.st")" = 0 ] ||
    { tail -5 "$TMP/$name.err"; fail "$name: status $(cat "$TMP/$name.st") after SIGTERM (want 0)"; }
  grep -q "not written" "$TMP/$name.err" ||
    { tail -5 "$TMP/$name.err"; fail "$name: the records left unwritten were not said"; }
  # the budget ended the wait, not the second signal (h62)
  if grep -q "a signal ended the final flush" "$TMP/$name.err" ||
     ! grep -q "the shutdown budget of 2000 ms (--otlp-shutdown-timeout) ran out" "$TMP/$name.err"; then
    grep "not written" "$TMP/$name.err" | head -3
    fail "$name: the records not written are not put down to the shutdown budget"
  fi
  echo "ok: $name: SIGTERM ended the replay into a reader that does not read in $((SECONDS - t0)) s, status 0"
}

# 1. A named FIFO whose reader holds it open and never reads.
mkfifo "$TMP/out"
(exec 3<"$TMP/out"; sleep 120) &
hold=$!
PIDS+=("$hold")
{ "$DAEMON" "${args[@]}" > "$TMP/out" 2> "$TMP/fifo.err" & echo $! > "$TMP/fifo.pid"
  wait $!; echo $? > "$TMP/fifo.st"; } &
PIDS+=("$!")
for _ in $(seq 100); do [ -s "$TMP/fifo.pid" ] && break; sleep 0.1; done
daemon=$(cat "$TMP/fifo.pid")
PIDS+=("$daemon")
stuck_check fifo twice
stop_pid "$hold"

# 2. An anonymous pipe into a process that never reads (`| sleep`).
{ "$DAEMON" "${args[@]}" 2> "$TMP/pipe.err" & echo $! > "$TMP/pipe.pid"
  wait $!; echo $? > "$TMP/pipe.st"; } | sleep 120 &
PIDS+=("$!")
for _ in $(seq 100); do [ -s "$TMP/pipe.pid" ] && break; sleep 0.1; done
daemon=$(cat "$TMP/pipe.pid")
PIDS+=("$daemon")
stuck_check pipe

# 3. A reader that reads everything: nothing dropped.
"$DAEMON" "${args[@]}" 2> "$TMP/all.err" | wc -c > "$TMP/all.n"
st=${PIPESTATUS[0]}
[ "$st" = 0 ] || { tail -5 "$TMP/all.err"; fail "a reading reader: status $st"; }
grep -q -E "dropped|not written" "$TMP/all.err" &&
  { grep -E "dropped|not written" "$TMP/all.err" | head -3; fail "a reading reader: records dropped"; }
echo "ok: a reader that reads everything got $(cat "$TMP/all.n") bytes, nothing dropped"
