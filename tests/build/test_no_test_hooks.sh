#!/usr/bin/env bash
# The test-only hooks (EL_TESTING: el_mem_fail_after) are in the test
# programs and nowhere in the shipped executable.
# Usage: test_no_test_hooks.sh SHIPPED_BINARY TEST_BINARY
set -euo pipefail
shipped=$1 test_prog=$2
hook=el_mem_fail_after
# nm's output is read whole (grep -q would stop early and nm's SIGPIPE
# fail the pipeline under pipefail).
if nm "$shipped" | grep -w "$hook" >/dev/null; then
  echo "FAIL: $shipped contains the test hook $hook (EL_TESTING)"
  exit 1
fi
if ! nm "$test_prog" | grep -w "$hook" >/dev/null; then
  echo "FAIL: $test_prog lacks $hook: the tests no longer get the hooks"
  exit 1
fi
echo "ok: $hook in $(basename "$test_prog"), not in $(basename "$shipped")"
