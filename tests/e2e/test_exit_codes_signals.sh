#!/usr/bin/env bash
# The signal rows of docs/exit-codes.md (SIGINT while reading a FIFO, for
# every command; SIGINT during the daemon's final flush), checked by
# test_exit_codes.sh (which checks the other rows).
# ctest-labels: e2e
EL_EXIT_ROWS="signal flush" exec bash "$(dirname "$0")/test_exit_codes.sh"
