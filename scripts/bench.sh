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
for s in scripts/bench.d/*.sh; do
  name=$(basename "$s" .sh)
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  echo "== $name"
  bash "$s"
done
