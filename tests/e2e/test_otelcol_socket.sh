#!/usr/bin/env bash
# End-to-end: a recorded eventlog replayed over a Unix socket (el_peer plays
# the program's side of eventlog-socket) into eventlog-live-otelcol, which
# exports over gRPC to the test receiver. Checks:
#  - telemetry arrives while the daemon still runs: after the stream goes
#    quiet, the wall-clock timer closes the eventlog-time windows;
#  - SIGTERM flushes what is left and exits 0;
#  - the received values equal those computed from the .reference text, as
#    for a file (test_otelcol_file.sh): replay gives the telemetry of a file;
#  - a reconnection (the peer serves oddball twice, like a restarted
#    program whose clock starts again) gives the same telemetry again.
# ctest-labels: e2e
source "$(dirname "$0")/otelcol_lib.sh"

PEER=$EL_BUILD_DIR/tests/el_peer
[ -x "$PEER" ] || { echo "skip: el_peer not built"; exit 77; }

start_receiver "$WORK/rcv.jsonl"
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$GRPC_PORT
export OTEL_EXPORTER_OTLP_PROTOCOL=grpc

cat >"$WORK/cfg.yaml" <<'YAML'
processors:
  logs:
    thread_label: {export: 1s}
    user_marker: {export: 1s}
    user_message: {export: 1s}
  metrics:
    heap_size: {aggregate: 0.1s, export: 1s}
    heap_live: {aggregate: 0.1s, export: 1s}
    heap_allocated: {aggregate: 0.1s, export: 1s}
    heap_prof_sample: {aggregate: 0.1s, export: 1s}
    capability_usage: {aggregate: 0.1s, export: 1s}
YAML

fail=0
for name in ghc-9.0/oddball-hT ghc-9.0/threads; do
  svc=$(basename "$name")
  conns=1; [ "$svc" = oddball-hT ] && conns=2
  sock=$WORK/$svc.sock
  "$PEER" --unix "$sock" --file "$EL_EVENTLOGS/$name.eventlog" \
    --connections $conns --ready-file "$WORK/$svc.ready" --timeout 60 \
    >"$WORK/peer.log" 2>&1 &
  peer=$!
  for _ in $(seq 100); do [ -e "$WORK/$svc.ready" ] && break; sleep 0.1; done
  "$DAEMON" --service-name "$svc" --config "$WORK/cfg.yaml" -hT \
    --eventlog-socket "$sock" --eventlog-flush-interval=1 \
    2>"$WORK/daemon.err" &
  daemon=$!
  # Markers and heap points must arrive before the daemon is stopped.
  ok=
  for _ in $(seq 150); do
    if grep -q "\"$svc\"" "$WORK/rcv.jsonl" 2>/dev/null &&
       python3 - "$WORK/rcv.jsonl" "$svc" <<'PY'
import json, sys
sigs = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    req = r.get("request") or {}
    for k in ("resourceMetrics", "resourceLogs"):
        for x in req.get(k, []):
            for a in x["resource"].get("attributes", []):
                if a["value"].get("stringValue") == sys.argv[2]:
                    sigs.add(k)
sys.exit(0 if len(sigs) == 2 else 1)
PY
    then ok=1; break; fi
    sleep 0.2
  done
  if [ -z "$ok" ]; then
    echo "FAIL $name: no metrics and logs while the daemon was running"
    fail=1
  else
    echo "ok   $name: metrics and logs arrived while the daemon was running"
  fi
  # Let the peer serve every connection, and the quiet stream's windows
  # close by the wall clock.
  # The peer exits once it has served every connection (or after its own
  # --timeout 60): wait for that, not a fixed 20 s, on a loaded machine.
  for _ in $(seq 350); do kill -0 "$peer" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$peer" 2>/dev/null && { echo "FAIL $name: el_peer still serving"; fail=1; }
  sleep 3
  kill -TERM "$daemon"
  if wait "$daemon"; then echo "ok   $name: SIGTERM -> exit 0"
  else echo "FAIL $name: exit status $?"; cat "$WORK/daemon.err"; fail=1; fi
  kill "$peer" 2>/dev/null || true; wait "$peer" 2>/dev/null || true
  CHECK_REPEAT=$conns $CHECK "$EL_EVENTLOGS/$name.eventlog.reference" \
    "$WORK/rcv.jsonl" "$svc" 100000000 heap,census,markers,messages,labels \
    -hT || fail=1
done
exit $fail
