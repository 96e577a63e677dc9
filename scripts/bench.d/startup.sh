#!/usr/bin/env bash
# Start-up (issue 16, item 1): wall time from exec to exit of
# `eventlog-live --version`, `--help`, `show` and `stats` on a small shared
# eventlog, and of the daemon (exporters none: --no-otlp) on an empty
# stdin (it builds its pipeline and Lua processors, finds no eventlog and
# exits) and on the same small file, against `ghc-events show` on that
# file as yardstick. Paired runs: the commands run in turn, 21 times each
# after 2 warm-up runs (tests/tools/el_paired.c); medians, and the fastest
# wall time. The CPU column (user + system) and the minimum are steadier
# than the median wall time on a busy machine; the minor page faults
# (median, from wait4) do not depend on the load at all, and on a VM each
# costs ~10 us (docs/performance.md "Start-up", 7 Dec).
# Targets: --version, show, stats <= 3 ms wall and <= 2x ghc-events show.
# /bin/true runs in the same rounds: the floor of process creation on this
# machine; the "over true" columns (median and minimum wall time minus
# /bin/true's) are what the program itself adds.
# Env: EL_BIN, EL_BUILD_DIR, EL_EVENTLOGS (scripts/bench.sh);
#   EL_BENCH_STARTUP_RUNS (default 21), EL_BENCH_STARTUP_LOG (the file),
#   EL_BENCH_STARTUP_BASE: another eventlog-live binary to compare with
#   (e.g. a build of main), run in the same rounds (version, show, stats
#   and both daemon runs, labelled base-*).
# Figures only, no asserts.
set -euo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
paired=$EL_BUILD_DIR/tests/el_paired
if [ ! -x "$paired" ]; then
  echo "startup: $paired not built (tests/tools/el_paired.c); skipped"
  exit 0
fi
log=${EL_BENCH_STARTUP_LOG:-$EL_EVENTLOGS/ghc-events/trace-binary-event.eventlog}
runs=${EL_BENCH_STARTUP_RUNS:-21}
cmds=(version "$EL_BIN" --version
  :: help "$EL_BIN" --help
  :: show "$EL_BIN" show "$log"
  :: stats "$EL_BIN" stats "$log"
  :: daemon-empty "$EL_BIN" otelcol --eventlog-stdin --no-otlp
  :: daemon-file "$EL_BIN" otelcol --eventlog-file "$log" --no-otlp)
# The floor: /bin/true, a process that does nothing. Process creation
# alone costs ~3.6 ms on a sandboxed VM (perf stat -r 50 /bin/true), more
# than the issue's 3 ms target; "over true" is the part our code controls.
cmds+=(:: true /bin/true)
ghc=$(command -v ghc-events || true)
[ -n "$ghc" ] && cmds+=(:: ghc-events-show "$ghc" show "$log")
base=${EL_BENCH_STARTUP_BASE:-}
if [ -n "$base" ]; then
  cmds+=(:: base-version "$base" --version :: base-show "$base" show "$log"
    :: base-stats "$base" stats "$log"
    :: base-daemon-empty "$base" otelcol --eventlog-stdin --no-otlp
    :: base-daemon-file "$base" otelcol --eventlog-file "$log" --no-otlp)
fi
out=$("$paired" -q -n "$runs" "${cmds[@]}")
printf 'input: %s (%d bytes); %d paired runs, medians\n' "$(basename "$log")" \
  "$(stat -c %s "$log")" "$runs"
printf '%-16s %9s %9s %9s %10s %9s %12s %11s %7s\n' command "wall ms" "min ms" \
  "cpu ms" "over true" "min over" "wall/ghc-ev" "cpu/ghc-ev" faults
awk -v have_ghc="${ghc:+1}" '
  { label[NR] = $1; wall[NR] = $2; min[NR] = $3; cpu[NR] = $5; st[NR] = $6
    flt[NR] = $7
    if ($1 == "ghc-events-show") { gw = $2; gc = $5 }
    if ($1 == "true") { tw = $2; tm = $3 } }
  END {
    for (i = 1; i <= NR; i++) {
      rw = have_ghc ? sprintf("%.2fx", wall[i] / gw) : "-"
      rc = have_ghc ? sprintf("%.2fx", cpu[i] / gc) : "-"
      printf "%-16s %9.2f %9.2f %9.2f %10.2f %9.2f %12s %11s %7d%s\n", label[i],
        wall[i], min[i], cpu[i], wall[i] - tw, min[i] - tm, rw, rc, flt[i],
        st[i] != 0 ? "  (exit " st[i] ")" : ""
    }
  }' <<<"$out"
[ -z "$ghc" ] && echo "(ghc-events not on PATH: no yardstick)"
echo "daemon-empty exits 1 by design (no eventlog on stdin)"
echo "over true: median (min) wall ms above /bin/true's, the process-creation floor"
echo "faults: median minor page faults (wait4's ru_minflt; ~10 us each on a VM)"
