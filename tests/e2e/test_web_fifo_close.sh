#!/usr/bin/env bash
# End-to-end: the web view when the writer of a FIFO read with --follow
# exits or is killed and the daemon waits for the next writer
# (docs/web.md "Sessions"): test_web_socket_close.sh's runs through a FIFO.
exec bash "$(dirname "$0")/test_web_socket_close.sh" fifo
