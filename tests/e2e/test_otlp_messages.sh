#!/usr/bin/env bash
# test_otlp_messages.sh: what eventlog-live-otelcol says about OTLP
# delivery problems (docs/otlp.md §8.2), on oddball-hT (78 metric points
# in one request, 25 log records in two or three):
#  - partial success: the receiver rejects 2 records of each of its first
#    5 requests (`--fault reject:5:2`). The receiver's message is said for
#    each signal (the rate limit of 1 message in 5 s is per signal: one
#    signal's message must not hide another's), and a message held back by
#    the limit is said at the end with the count suppressed;
#  - gRPC that cannot connect, in a run shorter than the 10 s call
#    deadline (so no call fails before the shutdown): the records dropped
#    at shutdown come with the last failure and its cause, told apart: a
#    host that does not resolve, a port nothing listens on (connection
#    refused), a port that speaks HTTP/1.x (the receiver's OTLP/HTTP port);
#    over HTTP, libcurl's cause likewise.
# ctest-labels: e2e
. "$(dirname "$0")/otlp_lib.sh"

D=$BUILD/eventlog-live-otelcol
LOG=$SRC/tests/data/eventlogs/ghc-9.0/oddball-hT.eventlog
export OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

for t in http grpc; do
  rcv_start "reject-$t" --fault reject:5:2
  if [ "$t" = grpc ]; then ep=http://127.0.0.1:$RCV_GRPC p=grpc
  else ep=http://127.0.0.1:$RCV_HTTP p=http/protobuf; fi
  err=$TMP/reject-$t.err
  st=0
  timeout 60 "$D" --eventlog-file "$LOG" --otlp-protocol $p \
    --otlp-endpoint "$ep" >/dev/null 2>"$err" || st=$?
  for s in metrics logs; do
    if grep -q "OTLP $s export: the receiver rejected [12] of [0-9]* records: rejected by test receiver" "$err"
    then pass "$t: the receiver's message for $s"
    else fail "$t: no receiver's message for $s"; cat "$err"; fi
  done
  if grep -Eq "OTLP logs export: the receiver rejected [12] of [0-9]+ records: rejected by test receiver \(the last of [0-9]+ similar messages suppressed\)$" "$err"
  then pass "$t: the second logs message, held back, said at the end with its count"
  else fail "$t: no suppressed count at the end"; cat "$err"; fi
  [ "$st" = 0 ] || fail "$t: status $st"
done

# gRPC (and HTTP) that cannot connect: the cause at shutdown.
rcv_start causes
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# cause_case LABEL PROTOCOL ENDPOINT ERE
cause_case() {
  local label=$1 p=$2 ep=$3 want=$4 st=0
  local err=$TMP/cause-$label.err
  OTEL_METRICS_EXPORTER=none timeout 60 "$D" --eventlog-file "$LOG" \
    --otlp-protocol "$p" --otlp-endpoint "$ep" --otlp-shutdown-timeout 2500 \
    >/dev/null 2>"$err" || st=$?
  if [ "$st" = 0 ] &&
     grep -Eq "OTLP logs export: [0-9]+ log records dropped at shutdown: the shutdown budget of 2500 ms \(--otlp-shutdown-timeout\) ran out; the last failure: .*$want" "$err"
  then pass "$label: $(grep -o 'the last failure: .*' "$err" | cut -c1-160)"
  else fail "$label: status $st, no cause '$want' at shutdown"; cat "$err"; fi
}
cause_case grpc-dns grpc http://nosuchhost.invalid:4317 \
  "nosuchhost.invalid:4317, cannot connect: (cannot resolve host 'nosuchhost.invalid'|resolving host 'nosuchhost.invalid' takes more than)"
cause_case grpc-refused grpc "http://127.0.0.1:$closed" \
  "cannot connect: connection refused: nothing listens on port $closed of 127.0.0.1"
cause_case grpc-http1 grpc "http://127.0.0.1:$RCV_HTTP" \
  "cannot connect: 127.0.0.1 answers in HTTP/1.x, not HTTP/2 \(gRPC\): an OTLP/HTTP port\?"
cause_case http-refused http/protobuf "http://127.0.0.1:$closed" \
  "Couldn't connect to server"
# A collector that never answers in time: the last failure is the
# timeout (2 s, then a retry cut by the 2.5 s budget), not the shutdown's
# own cut of the attempt in flight (h70: HTTP said "Callback aborted").
rcv_start silent --delay-ms 60000
export OTEL_EXPORTER_OTLP_TIMEOUT=2000
cause_case http-silent http/protobuf "http://127.0.0.1:$RCV_HTTP" \
  "(Timeout was reached|timed out)"
unset OTEL_EXPORTER_OTLP_TIMEOUT
finish
