#!/usr/bin/env bash
# The log path: a GHC program writing user messages as fast as it can
# (tests/tools/trace_messages.hs: traceEventIO in a loop, one
# traceMarkerIO per 1,000; about 42 bytes per USER_MSG event), recorded to
# a file, then read by the daemon with the default configuration, whose
# user_message processor makes each message an OpenTelemetry log record
# (spec/reference-behaviour.md §5.1). Prints:
#   producer   the program's CPU and its messages per second (the densest
#              log stream a Haskell program writes, to a file)
#   paired     in N paired rounds (EL_BENCH_LOGS_N, default 5) bare
#              `stats` and the daemon with exporters none: least and median
#              CPU, the ratio to stats and ns of CPU per message
#   otlp       the daemon exporting over OTLP/HTTP to a sink that answers
#              at once (tests/tools/otlp_http_sink.py: the exporter's own
#              cost), then to the test receiver (--no-request: it only
#              counts; when node and the receiver are installed, the
#              slower side): CPU, wall, and how long reading waited for
#              the collector
# Needs ghc (Debian's 9.0 will do); skipped without it. EL_BENCH_LOGS_MSGS
# sets the message count (default 1,000,000). Figures only, nothing
# asserted.
set -u
B=${EL_BUILD_DIR:?}
S=${EL_SOURCE_DIR:?}
N=${EL_BENCH_LOGS_N:-5}
M=${EL_BENCH_LOGS_MSGS:-1000000}
D=$B/eventlog-live-otelcol
command -v ghc >/dev/null 2>&1 || { echo "logs: no ghc, skipped"; exit 0; }
tmp=$(mktemp -d)
rcv=
trap '[ -n "$rcv" ] && kill $rcv 2>/dev/null; rm -rf "$tmp"' EXIT

prog=$B/trace-messages
src=$S/tests/tools/trace_messages.hs
if [ ! -x "$prog" ] || [ "$src" -nt "$prog" ]; then
  mkdir -p "$B/trace-messages.d"
  ghc -O -v0 -eventlog -rtsopts -outputdir "$B/trace-messages.d" -o "$prog" \
    "$src" || { echo "logs: ghc failed, skipped"; exit 0; }
fi

. "$S/scripts/bench_lib.sh"  # measure, counting_receiver

G=$tmp/messages.eventlog
measure "$tmp/p" "$prog" "$M" +RTS -l "-ol$G" -RTS
read -r pw pu ps _ <"$tmp/p"
msgs=$("$B/eventlog-live" stats "$G" 2>/dev/null |
  awk '$1 == "USER_MSG" || $1 == "USER_MARKER" { n += $3 } END { print n + 0 }')
awk -v w="$pw" -v c="$pu $ps" -v m="$msgs" -v b="$(stat -c %s "$G")" 'BEGIN {
  split(c, x, " "); cpu = x[1] + x[2]; if (w <= 0) w = 0.001
  printf "producer: %d messages, %.1f MB eventlog, %.3f s wall, cpu %.3f s:" \
         " %.0f messages/s\n", m, b / 1e6, w, cpu, m / w
}'
[ "$msgs" -gt 0 ] || { echo "logs: no USER_MSG in the eventlog"; exit 0; }

: >"$tmp/c.stats"
: >"$tmp/c.daemon"
for _ in $(seq "$N"); do
  measure "$tmp/r" "$B/eventlog-live" stats "$G"
  awk '{ print $2 + $3 }' "$tmp/r" >>"$tmp/c.stats"
  OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
    OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none \
    measure "$tmp/r" "$D" --eventlog-file "$G" -hT
  awk '{ print $2 + $3 }' "$tmp/r" >>"$tmp/c.daemon"
done
# least and median of a file of numbers
lm() {
  sort -g "$1" | awk '{ c[NR] = $1 } END {
    printf "%.4f %.4f\n", c[1],
           NR % 2 ? c[(NR + 1) / 2] : (c[NR / 2] + c[NR / 2 + 1]) / 2 }'
}
read -r sb sm <<<"$(lm "$tmp/c.stats")"
read -r db dm <<<"$(lm "$tmp/c.daemon")"
awk -v sb="$sb" -v sm="$sm" -v db="$db" -v dm="$dm" -v m="$msgs" -v n="$N" 'BEGIN {
  if (sb <= 0) sb = 0.001; if (sm <= 0) sm = 0.001
  printf "  bare stats      cpu best %7.3f s median %7.3f s (of %d)\n", sb, sm, n
  printf "  daemon default  cpu best %7.3f s median %7.3f s (of %d)  vs bare" \
         " stats: best %5.2fx median %5.2fx  %.0f ns cpu per message" \
         " (exporters none)\n", db, dm, n, db / sb, dm / sm, dm * 1e9 / m
}'

# otlp NAME URL: the daemon exporting the log to URL over OTLP/HTTP.
otlp() {
  OTEL_EXPORTER_OTLP_ENDPOINT="$2" OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \
    measure "$tmp/o" "$D" --eventlog-file "$G" -hT -s
  read -r ow ou os _ <"$tmp/o"
  sent=$(sed -n 's/.*OTLP logs export: \([0-9]*\) records.*/\1/p' "$tmp/o.err")
  paused=$(sed -n 's/^Reading paused for the collector: \([0-9.]*\) s.*/\1/p' \
    "$tmp/o.err")
  awk -v n="$1" -v w="$ow" -v c="$ou $os" -v m="$msgs" -v s="${sent:-0}" \
      -v p="${paused:-0}" 'BEGIN {
    split(c, x, " "); cpu = x[1] + x[2]
    printf "  daemon default  OTLP/HTTP to %s: cpu %.3f s (%.0f ns per" \
           " message), wall %.3f s, of which reading waited %.1f s for the" \
           " collector; %d log records exported\n",
           n, cpu, cpu * 1e9 / m, w, p, s
  }'
}
python3 "$S/tests/tools/otlp_http_sink.py" --ready-file "$tmp/sink" &
sink=$!
for _ in $(seq 100); do [ -s "$tmp/sink" ] && break; sleep 0.1; done
[ -s "$tmp/sink" ] && otlp "a sink answering at once" "http://127.0.0.1:$(cat "$tmp/sink")"
kill $sink 2>/dev/null
counting_receiver "$tmp/ready" &&
  otlp "the counting test receiver" "$endpoint"
exit 0
