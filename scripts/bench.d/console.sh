#!/usr/bin/env bash
# The console exporter's OTLP/JSON rendering (src/otlp/exp_console.c): the
# daemon on threads-big.eventlog with every processor on, traces to the
# console into a file (there the loop waits for the renderer: nothing is
# dropped, so the run's pace is the rendering's) and the other signals
# off. Prints spans/s (wall), CPU seconds and peak RSS; for comparison,
# the same run with traces off takes ~0.05 s. Figures only, no asserts.
# Env: EL_BUILD_DIR, EL_EVENTLOGS (set by scripts/bench.sh).
set -euo pipefail
: "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
D=$EL_BUILD_DIR/eventlog-live-otelcol
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$D" --print-defaults | sed 's/export: false/export: true/' >"$tmp/all.yaml"
OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
OTEL_PROFILES_EXPORTER=none OTEL_TRACES_EXPORTER=console \
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$D" --config "$tmp/all.yaml" \
  --eventlog-file "$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog" \
  >"$tmp/out.jsonl" 2>/dev/null
spans=$(grep -o '"spanId"' "$tmp/out.jsonl" | wc -l)
read -r wall user sys rss <"$tmp/time"
awk -v n="$spans" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
  printf "console traces rendering: %d spans/s (%d spans in %.2f s wall, " \
         "%.2f s CPU, peak RSS %d MB)\n", n / w, n, w, u + s, r / 1024 }'
