#!/usr/bin/env bash
# The console exporter writing into a pipe whose reader has gone:
#  1. a recorded file's replay (`| head -c 100`): the daemon must not die
#     of SIGPIPE (status 141) but finish the input, report the records it
#     could not write, and exit 0.
#  2. a live input (a FIFO fed by a writer: the console writes on its
#     writer thread, a line starting only when the pipe has room for it)
#     and a reader that reads the first 100 bytes and exits while the
#     input is still flowing (the rest is fed once it has gone): one
#     warning names the broken pipe, what was not written is counted under
#     that cause ("the output's reader had gone"), and the daemon exits 0
#     at the end of its input without waiting out the shutdown budget (no
#     "shutdown budget ... ran out"). Before, the writer thread waited for
#     room that the bytes the reader left unread would never free
#     (docs/otlp.md §5): no broken pipe was said, the whole 10 s budget
#     was spent at the end, and every record left was counted under "the
#     shutdown budget of 10000 ms ... ran out; the output was not read
#     fast enough".
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
otelcol=$(dirname "$EL_BIN")/eventlog-live-otelcol
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
# threads.eventlog yields many log records and metric points, more than
# fit in the 100 bytes head reads before it exits.
LOG=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
timeout 60 "$otelcol" --service-name=x --eventlog-file "$LOG" 2> "$tmp/err" \
  | head -c 100 > /dev/null
rc=${PIPESTATUS[0]}
fail=0
if [ "$rc" != 0 ]; then echo "FAIL: daemon exit status $rc (141 = SIGPIPE)"; fail=1
else echo "ok: exit status 0 with stdout closed"; fi
if grep -Eq "(records|data points|spans|samples) dropped" "$tmp/err"; then echo "ok: drops reported"
else echo "FAIL: no drop report on stderr"; cat "$tmp/err"; fail=1; fi

# 2. A live input; spans too (--traces: ~50 MB of OTLP/JSON, lines up to
# 4.4 MB, more than any pipe holds, so a line waits for room).
export OTEL_TRACES_EXPORTER=console
mkfifo "$tmp/in"
size=$(stat -c %s "$LOG")
half=$((size / 2))
(
  head -c "$half" "$LOG"
  # the rest once the reader has gone (at most 120 s)
  for _ in $(seq 2400); do [ -e "$tmp/gone" ] && break; sleep 0.05; done
  tail -c +$((half + 1)) "$LOG"
) > "$tmp/in" &
feeder=$!
# The reader closes its end (the pipe's only reader) before saying so.
timeout 120 "$otelcol" --service-name=x --traces --export-interval 1s \
  --eventlog-file "$tmp/in" 2> "$tmp/err2" | python3 -c '
import os, sys
got = b""
while len(got) < 100:
    d = os.read(0, 100 - len(got))
    if not d:
        break
    got += d
os.close(0)
open(sys.argv[1], "w").close()
' "$tmp/gone"
rc=${PIPESTATUS[0]}
wait "$feeder"
[ -e "$tmp/gone" ] || { echo "FAIL: the reader got no output"; fail=1; }
said=$(grep -c "console: writing the output failed: Broken pipe" "$tmp/err2")
gone=$(grep -E "console: [0-9]+ records dropped in all \(.*\): the output's reader had gone$" "$tmp/err2")
if [ "$rc" = 0 ] && [ "$said" = 1 ]; then
  echo "ok: live, reader gone: one warning names the broken pipe, status 0"
else
  echo "FAIL: live, reader gone: status $rc, $said broken-pipe warnings"; fail=1
fi
if grep -q "shutdown budget" "$tmp/err2"; then
  echo "FAIL: live, reader gone: the shutdown budget was waited out"; fail=1
else
  echo "ok: live, reader gone: the shutdown budget was not waited out"
fi
n=$(sed -nE 's/.*console: ([0-9]+) records dropped in all.*/\1/p' <<<"$gone")
if [ -n "$gone" ] && [ "$n" -gt 0 ]; then
  echo "ok: live, reader gone: $n records counted as not written, the reader gone"
else
  echo "FAIL: live, reader gone: no drops counted under the reader's going"; fail=1
fi
[ $fail = 0 ] || grep -v "^ \|^stats" "$tmp/err2" | sed 's/^/  daemon: /'
exit $fail
