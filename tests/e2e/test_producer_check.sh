#!/usr/bin/env bash
# The checks of the real-producer tests (tests/e2e/producer_check.py) can
# pass and can fail: on made-up program output, receiver requests and raw
# streams, each passes when the telemetry is right and fails with its own
# message when one thing is wrong (late, misdated, zero time, doubled,
# lost, a heap point of another program, a sample after stop-profiling).
# Needs python3 only; runs in a second.
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
exec python3 "$(dirname "$0")/producer_check_selftest.py"
