#!/usr/bin/env bash
# Decoder figures: throughput (MB/s, events/s) and peak RSS of
# `eventlog-live stats` and `eventlog-live show` on threads-big.eventlog
# and on a >= 1 GB synthesised stream (tests/tools/el_synth.c), plus the
# speed ratio against `ghc-events show` when ghc-events is on PATH, and the
# time of the session scan (tests/tools/el_scan.c) on the synthesised file.
# Targets (issue 2): stats >= 1 GB/s on one core, stats peak RSS <= 16 MB
# for 1 GB, show >= 15x faster than ghc-events; (issue 16) stats >= 2.2
# GB/s and >= 20x the ghc-events decoder, show on 1 GB in <= 128 MiB with
# the output of the in-memory sort. Also printed: the yardstick framer
# (tests/tools/el_framer.c) and two-core decoding (el_par_decode) on the
# synthesised stream. Figures only, no asserts.
# Env: EL_BIN, EL_BUILD_DIR, EL_EVENTLOGS (set by scripts/bench.sh);
# EL_BENCH_SYNTH_BYTES (default 1G) sizes the synthesised stream;
# EL_BENCH_DECODER_BASE: another eventlog-live binary (e.g. a build of
# main) whose `stats` runs paired with this one's on the synthesised
# stream (tests/tools/el_paired.c, EL_BENCH_DECODER_RUNS rounds, default
# 7): CPU-time medians and GB/s per CPU second of both.
set -euo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
EL_SOURCE_DIR=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
synth_bin=$EL_BUILD_DIR/tests/el_synth
big=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog
size=${EL_BENCH_SYNTH_BYTES:-1G}

now() { date +%s.%N; }
# run_timed OUT CMD...: runs CMD with stdout to OUT; sets secs and rss_kib.
run_timed() {
  local out=$1
  shift
  local t0 t1 tf
  tf=$(mktemp)
  t0=$(now)
  /usr/bin/time -f "%M %U %S" -o "$tf" "$@" >"$out"
  t1=$(now)
  secs=$(echo "$t1 - $t0" | bc -l)
  read -r rss_kib usr sys < <(tail -1 "$tf")
  cpu=$(echo "$usr + $sys" | bc -l)
  rm -f "$tf"
}

report() { # label file events secs rss [cpu-secs]
  local bytes mbs evs extra=""
  bytes=$(stat -c %s "$2")
  mbs=$(echo "$bytes / $4 / 1000000" | bc -l)
  evs=$(echo "$3 / $4" | bc -l)
  if [ -n "${6:-}" ] && (($(echo "$6 > 0" | bc -l))); then
    extra=$(printf "  cpu %.3f s = %.1f MB/s" "$6" \
      "$(echo "$bytes / $6 / 1000000" | bc -l)")
  fi
  printf "%-30s %8.1f MB/s %11.0f ev/s  peak RSS %7d KiB  (wall %.3f s)%s\n" \
    "$1" "$mbs" "$evs" "$5" "$4" "$extra"
}

bench_file() { # label file
  local label=$1 f=$2 best=999999 bestcpu=999999 out ev rss_best=0
  out=$(mktemp)
  for _ in 1 2 3; do
    run_timed "$out" "$EL_BIN" stats "$f"
    # The decoder's own time (read + decode), as stats reports it: wall
    # and CPU (the machine may be shared; CPU time is the one-core figure).
    local s c
    s=$(sed -n 's/^elapsed: *\([0-9.]*\) s/\1/p' "$out")
    c=$(sed -n 's/^cpu time: *\([0-9.]*\) s.*/\1/p' "$out")
    if (($(echo "$s < $best" | bc -l))); then best=$s; fi
    if [ -n "$c" ] && (($(echo "$c < $bestcpu && $c > 0" | bc -l))); then
      bestcpu=$c
    fi
    rss_best=$rss_kib
  done
  [ "$bestcpu" = 999999 ] && bestcpu=""
  last_stats_cpu=$bestcpu
  ev=$(sed -n 's/^events: *//p' "$out")
  report "stats $label" "$f" "$ev" "$best" "$rss_best" "$bestcpu"
  run_timed /dev/null "$EL_BIN" show "$f"
  local show_secs=$secs
  report "show $label" "$f" "$ev" "$show_secs" "$rss_kib" "$cpu"
  local show_cpu=$cpu
  if [ -n "$ghc_show" ] && [ "$(stat -c %s "$f")" -lt 100000000 ]; then
    run_timed /dev/null $ghc_show "$f"
    printf "%-30s %6.1fx faster than %s (cpu %.2f s vs %.2f s; wall %.2f s vs %.2f s)\n" \
      "show $label" "$(echo "$cpu / $show_cpu" | bc -l)" "$ghc_name show" \
      "$show_cpu" "$cpu" "$show_secs" "$secs"
    if [ -n "$ghc_count" ]; then
      run_timed /dev/null $ghc_count "$f"
      printf "%-30s %6.1fx the events/s of the ghc-events decoder (cpu %.3f s vs %.2f s)\n" \
        "stats $label" "$(echo "$cpu / $bestcpu" | bc -l)" "$bestcpu" "$cpu"
      ghc_count_evs=$(echo "$ev / $cpu" | bc -l) # for the large stream
    fi
  fi
  rm -f "$out"
}

[ -x "$synth_bin" ] || { echo "decoder bench: $synth_bin not built" >&2; exit 1; }

# The baseline: a ghc-events binary on PATH, or else a helper built from
# the ghc-events library when GHC and libghc-ghc-events-dev are installed
# (tests/tools/ghc_events_bench.hs); skipped when neither is there.
ghc_show="" ghc_count="" ghc_name=""
if command -v ghc >/dev/null 2>&1 && ghc-pkg list ghc-events 2>/dev/null | grep -q ghc-events; then
  helper=$EL_BUILD_DIR/ghc-events-bench
  src=$EL_SOURCE_DIR/tests/tools/ghc_events_bench.hs
  if [ ! -x "$helper" ] || [ "$src" -nt "$helper" ]; then
    mkdir -p "$EL_BUILD_DIR/ghc-events-bench.d"
    ghc -O2 -v0 -outputdir "$EL_BUILD_DIR/ghc-events-bench.d" -o "$helper" "$src" || helper=""
  fi
  if [ -n "$helper" ]; then
    ghc_show="$helper show" ghc_count="$helper count"
    ghc_name="ghc-events $(ghc-pkg field ghc-events version --simple-output 2>/dev/null | head -1) library"
  fi
fi
if command -v ghc-events >/dev/null 2>&1; then
  ghc_show="ghc-events show" ghc_name="ghc-events"
fi
[ -n "$ghc_show" ] || echo "(no ghc-events binary or library: ratio lines skipped)"
run_timed /dev/null "$EL_BIN" --version
echo "baseline peak RSS of the executable (shared libraries): $rss_kib KiB"
bench_file "threads-big (12 MB)" "$big"

dir=$EL_BUILD_DIR
[ -w "$dir" ] || dir=/tmp
synth=$(mktemp "$dir/bench-synth-XXXXXX.eventlog")
trap 'rm -f "$synth" "$synth.sum" "$synth.sum2" "$synth.framer"' EXIT
"$synth_bin" -n "$size" -o "$synth" "$big"
bench_file "synthesised ($(($(stat -c %s "$synth") / 1000000)) MB)" "$synth"
bytes_synth=$(stat -c %s "$synth")
stats_cpu_synth=$last_stats_cpu
# The ghc-events decoder is run on threads-big only (too slow for GBs):
# stats' events per CPU second on the large stream against its.
if [ -n "${ghc_count_evs:-}" ] && [ -n "$stats_cpu_synth" ]; then
  ev_synth=$("$EL_BIN" stats "$synth" | sed -n 's/^events: *//p')
  printf "%-30s %6.1fx the events/s of the ghc-events decoder on threads-big (%.0f vs %.0f events/s cpu)\n" \
    "stats synthesised" "$(echo "$ev_synth / $stats_cpu_synth / $ghc_count_evs" | bc -l)" \
    "$(echo "$ev_synth / $stats_cpu_synth" | bc -l)" "$ghc_count_evs"
fi
# The yardstick of stats: the least work that frames every event
# (tests/tools/el_framer.c: a size table indexed by type, a timestamp sum,
# no fields or callbacks), reading with read(2) as stats does and mapping
# the file; CPU time, best of 3. stats' CPU throughput as a share of it.
framer_bin=$EL_BUILD_DIR/tests/el_framer
if [ -x "$framer_bin" ]; then
  "$framer_bin" "$synth" | tee "$synth.framer"
  fr=$(sed -n 's/^framer read *\([0-9.]*\) GB\/s.*/\1/p' "$synth.framer")
  st=$(echo "$bytes_synth / $stats_cpu_synth / 1000000000" | bc -l)
  printf "%-30s %6.2f GB/s cpu = %.2f of the read(2) framer (%.2f GB/s)\n" \
    "stats synthesised" "$st" "$(echo "$st / $fr" | bc -l)" "$fr"
  rm -f "$synth.framer"
fi
# Paired with another build: stats' CPU medians, each run in turn.
paired=$EL_BUILD_DIR/tests/el_paired
if [ -n "${EL_BENCH_DECODER_BASE:-}" ] && [ -x "$paired" ]; then
  "$paired" -q -w 1 -n "${EL_BENCH_DECODER_RUNS:-7}" \
    base "$EL_BENCH_DECODER_BASE" stats "$synth" :: this "$EL_BIN" stats "$synth" |
    awk -v b="$bytes_synth" '{ printf "%-30s cpu median %7.1f ms = %.2f GB/s (wall median %.1f ms)\n",
      "stats synthesised (" $1 ")", $5, b / ($5 / 1000) / 1e9, $2 }'
fi
# Two cores: two decoders on the halves split at the block marker nearest
# the middle (tests/tools/el_par_decode.c), wall time against one.
par_bin=$EL_BUILD_DIR/tests/el_par_decode
[ -x "$par_bin" ] && "$par_bin" "$synth"
# show in bounded memory (--sort-memory, default 64M): peak RSS against
# the input's size, and the output against the in-memory sort (a budget
# larger than the output: no spilling), compared by checksum. Set
# EL_BENCH_SHOW_COMPARE=0 to skip the in-memory run (it holds the whole
# output: about 4 GB for 1 GB of input).
run_timed "$synth.sum" bash -c '"$1" show "$2" | md5sum' _ "$EL_BIN" "$synth"
printf "%-30s peak RSS %d KiB = %.3f of the input (%d MB); wall %.1f s, cpu %.1f s\n" \
  "show synthesised (spilling)" "$rss_kib" \
  "$(echo "$rss_kib * 1024 / $bytes_synth" | bc -l)" \
  $((bytes_synth / 1000000)) "$secs" "$cpu"
if [ "${EL_BENCH_SHOW_COMPARE:-1}" != 0 ]; then
  run_timed "$synth.sum2" bash -c '"$1" show --sort-memory 64G "$2" | md5sum' _ "$EL_BIN" "$synth"
  printf "%-30s peak RSS %d KiB; wall %.1f s, cpu %.1f s; output %s\n" \
    "show synthesised (in memory)" "$rss_kib" "$secs" "$cpu" \
    "$(cmp -s "$synth.sum" "$synth.sum2" && echo identical || echo DIFFERENT)"
fi
rm -f "$synth.sum" "$synth.sum2"
# The session scan (el_ev_scan_sessions: clock anchor, capabilities, max
# time; capability block bodies skipped unread) on the same file, mapped
# afresh each time (the file is in the page cache by now).
scan_bin=$EL_BUILD_DIR/tests/el_scan
[ -x "$scan_bin" ] && "$scan_bin" -n 5 "$synth" | head -1
rm -f "$synth"
