#!/usr/bin/env bash
# Issue 11, the core live test with the real producer: the real
# eventlog-socket library on Debian's GHC 9.0, over a Unix socket.
# tests/haskell/live_socket (built with $EL_SHARED_DIR/peers/eventlog-socket/
# build-ghc90.sh) runs 30 s with +RTS -l -hT -i0.2 -RTS and prints, once a
# second, the wall-clock time at which it emitted the user marker
# "<tag> tick <i>"; its MVar ping-pong fills GHC 9.0's 2 MiB capability
# buffer every ~1.5 s (the only way data moves on 9.0 before exit). The
# daemon
#   eventlog-live-otelcol --eventlog-socket SOCK --service-name app -hT
#     --otelcol-host 127.0.0.1 --otelcol-port <receiver> --prometheus-port P
#     --config <every processor exported every 2 s>
# exports to the test receiver, which records each request's arrival time.
# eventlog-socket on 9.0 never sends WALL_CLOCK_TIME (written before the
# client connected, not repeated), so a daemon that waits for it exports
# nothing while the program runs. Checked (tests/e2e/producer_check.py,
# against the program's stdout):
#   - a HeapSize or HeapLive point dated in the run reached the receiver
#     before the program printed "end" (just before its RTS writes its last
#     buffers);
#   - at least half of the 30 markers reached it before then, none twice,
#     none unknown, all with service.name app and a timeUnixNano;
#   - their timeUnixNano is within 1 s (median) of the printed time;
#   - every marker in the bytes the daemon received (--eventlog-log-file,
#     found by their bytes) was exported;
#   - /metrics served ghc_eventlog_HeapSize_bytes while the program ran;
#   - at the program's exit the library usually cuts its connection inside
#     an event, short of the end of the block it was sending (it frees
#     what the socket did not take at once; when its worker thread sent
#     everything first, the connection ends with the end-of-data marker):
#     the daemon warns that the connection closed before the program's
#     last events were sent, with the cut event's and its block's offsets
#     and the bytes the block still declared (or, when the library's last
#     write ended on an event's boundary, that the eventlog ends without
#     its end-of-data marker, short of that block), as
#     tests/e2e/socket_cut_expect.py computes them from the tee with its
#     own framing (stepping over the corrupt parts the daemon reported,
#     as GHC 9.0's restart of event logging damages a block when the
#     program came first); after a complete connection, no such warning.
# Both orders: the daemon first (it retries until the socket appears), and
# the program first (the daemon connects ~4 s into the run: the session's
# clock must not start at the connection).
set -u
source "$(dirname "$0")/producer_lib.sh"
pl_require socket
pl_build socket
SECS=30

sock=$T/app.sock
pl_live_run daemon-first daemon unix:"$sock" : --eventlog-socket "$sock"
pl_live_run program-first program unix:"$sock" "pl_socket_ready $sock 20" \
  --eventlog-socket "$sock"
# eventlog-socket's 24 stray bytes before the header, the normal start of
# its connection, are said at info, not warned about (h25's F3).
for name in daemon-first program-first; do
  grep -q "warning: .*stray bytes" "$T/$name.daemon.err" &&
    fail "$name: the daemon warned about eventlog-socket's stray marker" ||
    pass "$name: no warning for eventlog-socket's stray marker"
done
# The cut at exit, said in the user's terms with the bytes lost, checked
# against an independent reading of the bytes received.
for name in daemon-first program-first; do
  want=$(python3 "$SRC/tests/e2e/socket_cut_expect.py" "$T/$name.tee" \
    "$T/$name.daemon.err") ||
    { fail "$name: the connection was not cut inside a block (test premise)"; continue; }
  line="warning: Unix socket $sock: the connection closed before the program's last events were sent: eventlog truncated inside an event, "
  if [ "$want" = complete ]; then
    grep -qF "the connection closed" "$T/$name.daemon.err" &&
      fail "$name: a complete connection said to be cut" ||
      pass "$name: the library sent everything this time: no cut said"
  elif [ "${want#ends at byte}" != "$want" ]; then
    # The library's last write ended on an event's boundary: no event
    # cut, the decoder's "without its end-of-data marker" with the block
    # left short, in a connection's words (EL_EV_OPT_CONNECTION).
    grep -F "warning: Unix socket $sock: the connection closed before the program's last events were sent: eventlog $want;" \
      "$T/$name.daemon.err" >/dev/null &&
      pass "$name: the end between events said with its bytes ($want)" || {
      grep -n 'truncated\|connection closed\|end-of-data' "$T/$name.daemon.err"
      fail "$name: no warning saying the connection ended: $want"
    }
  elif grep -F "$line" "$T/$name.daemon.err" | grep -qF "$want;"; then
    # ("$want;": the clause ends there, no block clause the framer did
    # not expect after it)
    pass "$name: the cut at exit said with its bytes ($want)"
  else
    grep -n 'truncated\|connection closed' "$T/$name.daemon.err"
    fail "$name: no warning saying the connection closed at: $want"
  fi
done
pl_finish
