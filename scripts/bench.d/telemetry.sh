#!/usr/bin/env bash
# Telemetry store and OTLP encoder figures (tests/tools/el_tm_bench.c), in
# process CPU time:
# ns and allocations per emitted data point / log record, flush cost, peak
# memory per record held, encode ns per record and protobuf bytes per
# record (4 MiB requests). Figures only, no asserts.
# Env: EL_BUILD_DIR (set by scripts/bench.sh); EL_BENCH_TM_RECORDS
# (default 1000000) records per signal.
set -euo pipefail
: "${EL_BUILD_DIR:?}"
n=${EL_BENCH_TM_RECORDS:-1000000}
echo "telemetry: $n data points + $n log records (el_tm_bench)"
"$EL_BUILD_DIR/tests/el_tm_bench" "$n"
