#!/usr/bin/env bash
# `eventlog-live report` on a large eventlog, beside `eventlog-live stats`
# (the bare decoder) on the same file: wall time, CPU time, peak RSS, and
# the report's size. The input is a real eventlog stretched to
# EL_BENCH_REPORT_SIZE (default 1G) by tests/tools/el_stretch (repeated
# with shifted times and thread ids, as if the program had kept running):
#   threads-big  scheduler-heavy (2 capabilities, 64 threads): ~18 M
#                capability spans per GB for the timeline
#   oddball-hT   heap-profile-heavy: ~19 k censuses, ~4 M metric points
# each read as a file (scanned ahead) and once from a pipe (no scan: the
# columns grow with the range seen).
#   scripts/bench.sh report
#   EL_BENCH_REPORT_SIZE=256M EL_BENCH_REPORT_SOURCES=threads-big scripts/bench.sh report
set -u
B=${EL_BUILD_DIR:?}
S=${EL_SOURCE_DIR:?}
E=${EL_EVENTLOGS:-$S/tests/data/eventlogs}
SIZE=${EL_BENCH_REPORT_SIZE:-1G}
SOURCES=${EL_BENCH_REPORT_SOURCES:-threads-big oddball-hT}
BIN=$B/eventlog-live
STRETCH=$B/tests/el_stretch
[ -x "$STRETCH" ] || { echo "report: $STRETCH not built"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/el-bench-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$S/scripts/bench_lib.sh"  # measure, counting_receiver

line() {  # line LABEL FILE BYTES [HTML]
  read -r wall user sys rss st < "$2"
  local html=""
  [ -n "${4:-}" ] && html=$(printf "  html %7.2f MB" "$(awk -v b="$(stat -c %s "$4")" 'BEGIN{print b/1e6}')")
  awk -v l="$1" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="$3" -v st="$st" -v h="$html" 'BEGIN {
    cpu = u + s; if (cpu <= 0) cpu = 0.001; if (w <= 0) w = 0.001
    printf "%-28s %6.2f s wall %6.2f s cpu (%7.1f MB/cpu-s)  peak RSS %6.1f MB%s%s\n",
           l, w, cpu, b / 1e6 / cpu, r / 1024, h, (st == 0 ? "" : "  EXIT " st)
  }'
}

for name in $SOURCES; do
  src=$(ls "$E"/*/"$name".eventlog 2>/dev/null | head -1)
  [ -n "$src" ] || { echo "report: no $name.eventlog"; continue; }
  big=$tmp/$name.eventlog
  "$STRETCH" -n "$SIZE" -o "$big" "$src" 2> "$tmp/stretch.err" ||
    { cat "$tmp/stretch.err"; continue; }
  bytes=$(stat -c %s "$big")
  echo "$name stretched to $bytes bytes ($(sed -n 's/^el_stretch: \([0-9]*\) repetitions.*/\1/p' "$tmp/stretch.err") repetitions)"
  measure "$tmp/m" "$BIN" stats "$big"
  line "  stats" "$tmp/m" "$bytes"
  measure "$tmp/m" "$BIN" report "$big" -o "$tmp/$name.html"
  line "  report (file)" "$tmp/m" "$bytes" "$tmp/$name.html"
  IN=$big measure "$tmp/m" "$BIN" report - -o "$tmp/$name-pipe.html"
  line "  report (stdin, no scan)" "$tmp/m" "$bytes" "$tmp/$name-pipe.html"
  rm -f "$big"
done
exit 0
