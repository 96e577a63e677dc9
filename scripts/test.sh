#!/usr/bin/env bash
# Run every test: the CTest suite of the normal build (unit, end-to-end,
# busted, and the build checks of tests/build/: module graph, test hooks,
# .clang-format drift, function length), then the decoder's corruption tests
# and a short fuzz run under AddressSanitizer + UBSan in build-asan/.
# Both builds treat warnings as errors (EL_WERROR), as CI does.
# Needs scripts/setup.sh to have run once.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEL_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
status=0
(cd build && ctest --output-on-failure -j"$jobs") || status=1

if [ -z "${EL_SKIP_ASAN:-}" ]; then
  CC=clang cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEL_SANITIZE=ON \
    -DEL_FUZZ=ON -DEL_WERROR=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  (cd build-asan && ctest --output-on-failure -j"$jobs" -L asan) || status=1
fi
exit $status
