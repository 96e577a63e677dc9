#!/usr/bin/env bash
# Print the project's speed and memory figures. Each topic is a script in
# scripts/bench.d/ (decoder, lua, export, pipeline, ...); run one with
#   scripts/bench.sh decoder
# Figures are printed, never asserted: compare them with the targets in the
# issue tracker and the README.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/eventlog-live ] || { echo "bench: run scripts/setup.sh first" >&2; exit 1; }
export EL_BIN=$PWD/build/eventlog-live EL_BUILD_DIR=$PWD/build \
  EL_SOURCE_DIR=$PWD EL_EVENTLOGS=$PWD/tests/data/eventlogs
# Paired rounds (el_paired, pipeline's paired runs) run pinned to one CPU,
# EL_BENCH_CPU (default: the lowest this shell may use; "none": not
# pinned). On a VM the vCPUs can differ in speed: one of this project's
# 2-core VMs ran the daemon 1.4x slower on its second vCPU than on its
# first, and unpinned runs landed on either (docs/performance.md "Time
# order's price, measured apart").
if [ -z "${EL_BENCH_CPU+set}" ]; then
  EL_BENCH_CPU=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
fi
case $EL_BENCH_CPU in
  none | '') EL_BENCH_CPU= ;;
  *[!0-9]*)
    echo "bench: EL_BENCH_CPU='$EL_BENCH_CPU' is not a CPU number or none" >&2
    exit 2 ;;
  *)
    python3 -c 'import os, sys; sys.exit(int(sys.argv[1]) not in os.sched_getaffinity(0))' \
      "$EL_BENCH_CPU" || {
      echo "bench: EL_BENCH_CPU=$EL_BENCH_CPU is not a CPU this shell may use" >&2
      exit 2
    } ;;
esac
export EL_BENCH_CPU
if [ -n "$EL_BENCH_CPU" ]; then
  echo "(paired rounds pinned to CPU $EL_BENCH_CPU: EL_BENCH_CPU; none to not pin)"
else
  echo "(paired rounds not pinned: EL_BENCH_CPU is none or empty)"
fi
for s in scripts/bench.d/*.sh; do
  name=$(basename "$s" .sh)
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  echo "== $name"
  bash "$s"
done
