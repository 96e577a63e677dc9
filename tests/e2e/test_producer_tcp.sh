#!/usr/bin/env bash
# Issue 11 over TCP: as test_producer_socket.sh (the real eventlog-socket
# on GHC 9.0, the daemon started first), but the program listens with
# startWith (EventlogSocketInetAddr "127.0.0.1" PORT) and the daemon
# connects with --eventlog-socket-host 127.0.0.1 --eventlog-socket-port
# PORT. The program runs 20 s. Checked: a HeapSize or HeapLive point and at
# least half of the markers reach the receiver before the program exits,
# the markers' times are within 1 s (median) of the printed ones, /metrics
# serves HeapSize during the run.
set -u
source "$(dirname "$0")/producer_lib.sh"
pl_require socket
pl_build socket
SECS=20
port=$(free_port)
pl_live_run tcp daemon tcp:127.0.0.1:"$port" : \
  --eventlog-socket-host 127.0.0.1 --eventlog-socket-port "$port"
pl_finish
