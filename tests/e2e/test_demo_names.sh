#!/usr/bin/env bash
# The demo dashboards use only names our telemetry produces.
# ctest-labels: asan
#
# 1. Run build/eventlog-live-otelcol with every processor on
#    (tests/demo/names-config.yaml) over the recorded eventlogs in
#    tests/data/eventlogs, exporting over OTLP gRPC to the test receiver
#    (tests/receiver: decodes with OpenTelemetry's own message definitions).
# 2. Translate what arrived into backend names with the collector's
#    Prometheus naming rules (tests/demo/otlp_prom_names.py): metric names
#    with unit suffixes and _total, label names, Loki labels, span names,
#    Pyroscope profile types.
# 3. Check every PromQL expression (also parsed by a real Prometheus),
#    legend, LogQL label, TraceQL span name and default profile type of the
#    dashboards against that list (tests/demo/check_dashboards.py).
# 4. Load the series Prometheus would scrape from the demo's collector for
#    that telemetry (tests/demo/otlp_openmetrics.py, promtool tsdb
#    create-blocks-from openmetrics) into a second Prometheus and check that
#    every dashboard query returns data for at least one recorded program,
#    the telemetry made with the demo's own configuration
#    (examples/haskell/eventlog-live-otelcol.yaml).
# 5. Press every dashboard button against the daemon's control server.
# Skips (77) when the daemon cannot produce telemetry yet.
set -u
source "$(dirname "$0")/../demo/lib.sh"

DAEMON=$BUILD/eventlog-live-otelcol
[ -x "$DAEMON" ] || skip "$DAEMON not built"
command -v node >/dev/null || skip "node missing (test receiver)"
[ -d "$SRC/tests/receiver/node_modules" ] || skip "tests/receiver: run npm ci"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"

# The options the demo and the run scripts pass to the daemon exist.
"$DAEMON" --help > "$TMP/help.txt" 2>&1
python3 "$SRC/tests/demo/daemon_flags.py" "$SRC" > "$TMP/flags.txt" ||
  fail "could not extract the daemon command lines"
while read -r flag; do
  case $flag in
    -h?) grep -q -- '-h<' "$TMP/help.txt" || fail "daemon has no $flag" ;;
    *) grep -q -- "$flag\b" "$TMP/help.txt" ||
         fail "the demo or a run script passes $flag, unknown to $DAEMON --help" ;;
  esac
done < "$TMP/flags.txt"
echo "ok: daemon options used by the demo: $(tr '\n' ' ' < "$TMP/flags.txt")"

# start_receiver OUT: the test receiver (tests/receiver), appending what it
# decodes to OUT (a .jsonl path; its ready file and log go beside it as
# OUT-without-.jsonl plus -ready.json and -receiver.log), in the background
# until the test ends. Sets RCV_PORT to its gRPC port; fails the test if
# it is not ready within 10 s.
start_receiver() {
  local out=$1 base=${1%.jsonl} i
  node "$SRC/tests/receiver/server.js" --out "$out" \
    --ready-file "$base-ready.json" --profiles-proto "$SRC/proto" --quiet \
    > "$base-receiver.log" 2>&1 &
  BG_PIDS+=($!)
  for i in $(seq 100); do [ -s "$base-ready.json" ] && break; sleep 0.1; done
  [ -s "$base-ready.json" ] || { cat "$base-receiver.log"; fail "receiver did not start"; }
  RCV_PORT=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["grpc"])' "$base-ready.json")
}

start_receiver "$TMP/received.jsonl"
port=$RCV_PORT

ran=0
for f in "$EVENTLOGS"/ghc-9.0/*.eventlog "$EVENTLOGS"/ghc-events/*.eventlog; do
  case $(basename "$f") in threads-big.eventlog) continue ;; esac
  name=$(basename "$f" .eventlog)
  timeout 120 "$DAEMON" --service-name="names-$name" --eventlog-file="$f" \
    --config="$SRC/tests/demo/names-config.yaml" \
    --otelcol-host=127.0.0.1 --otelcol-port="$port" \
    > "$TMP/daemon-$name.log" 2>&1
  st=$?
  echo "daemon over $name: exit $st"
  if [ $st -ge 124 ] || grep -q "Sanitizer\|runtime error" "$TMP/daemon-$name.log"; then
    cat "$TMP/daemon-$name.log"
    fail "the daemon crashed or hung on $name (exit $st)"
  fi
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no eventlogs under $EVENTLOGS"
# The example/demo configuration loads without warnings (every key known).
"$DAEMON" --service-name=config-check --config="$SRC/examples/haskell/eventlog-live-otelcol.yaml" \
  --eventlog-file="$EVENTLOGS/ghc-9.0/heapy-hT.eventlog" \
  --otelcol-host=127.0.0.1 --otelcol-port="$port" > "$TMP/daemon-config-check.log" 2>&1 ||
  { cat "$TMP/daemon-config-check.log"; fail "the daemon rejects examples/haskell/eventlog-live-otelcol.yaml"; }
if grep -i "unknown key" "$TMP"/daemon-*.log; then
  fail "configuration warnings (above)"
fi
sleep 0.5   # the receiver appends after answering

"$DAEMON" --print-defaults > "$TMP/defaults.yaml" 2>/dev/null ||
  fail "$DAEMON --print-defaults failed"
python3 "$SRC/tests/demo/otlp_prom_names.py" --defaults "$TMP/defaults.yaml" \
  "$TMP/names.json" "$TMP/received.jsonl" || fail "otlp_prom_names.py failed"
nmetrics=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["metrics"]))' "$TMP/names.json")
if [ "$nmetrics" = 0 ]; then
  tail -n 5 "$TMP"/daemon-*.log
  skip "the daemon produced no metrics yet: cannot check the dashboards' names"
fi
echo "names produced by our telemetry:"
cat "$TMP/names.json"

start_prometheus
python3 "$SRC/tests/demo/check_dashboards.py" \
  "$SRC/demo/config/grafana-dashboards" --prometheus "$PROM_URL" \
  --names "$TMP/names.json" || fail "dashboards use names our telemetry does not produce"

# The check can fail: a dashboard asking for the reference's exported_job
# label (which honor_labels removes) must be rejected.
mkdir -p "$TMP/bad"
sed 's/service_name=\\"\${service_name}\\"/exported_job=\\"${service_name}\\"/' \
  "$SRC/demo/config/grafana-dashboards/heap.json" > "$TMP/bad/heap.json"
cmp -s "$TMP/bad/heap.json" "$SRC/demo/config/grafana-dashboards/heap.json" &&
  fail "could not make a broken copy of heap.json"
python3 "$SRC/tests/demo/check_dashboards.py" "$TMP/bad" \
  --names "$TMP/names.json" > "$TMP/bad.out" 2>&1 &&
  { cat "$TMP/bad.out"; fail "a dashboard using exported_job passed"; }
grep -q "no label exported_job" "$TMP/bad.out" ||
  { cat "$TMP/bad.out"; fail "exported_job was not reported"; }
# Step 4 with what the demo itself runs: the daemon with the demo's
# configuration (examples/haskell/eventlog-live-otelcol.yaml, mounted by
# demo/docker-compose.yml), over the same eventlogs, into a receiver of its
# own, so that a panel whose metric the demo leaves off has no data (h44:
# the GC statistics and productivity panels were empty in the demo).
start_receiver "$TMP/demo.jsonl"
dport=$RCV_PORT
for f in "$EVENTLOGS"/ghc-9.0/*.eventlog "$EVENTLOGS"/ghc-events/*.eventlog; do
  case $(basename "$f") in threads-big.eventlog) continue ;; esac
  name=$(basename "$f" .eventlog)
  timeout 120 "$DAEMON" --service-name="demo-$name" --eventlog-file="$f" \
    --config="$SRC/examples/haskell/eventlog-live-otelcol.yaml" \
    --otelcol-host=127.0.0.1 --otelcol-port="$dport" \
    > "$TMP/demo-$name.log" 2>&1 || fail "the daemon with the demo's configuration failed on $name"
done
sleep 0.5   # the receiver appends after answering
python3 "$SRC/tests/demo/otlp_openmetrics.py" "$TMP/data.om" \
  "$TMP/demo.jsonl" > "$TMP/services.json" || fail "otlp_openmetrics.py failed"
promtool tsdb create-blocks-from openmetrics "$TMP/data.om" "$TMP/tsdb" \
  > "$TMP/promtool.log" 2>&1 || { cat "$TMP/promtool.log"; fail "promtool could not load the series"; }
start_prometheus "$TMP/tsdb"
python3 "$SRC/tests/demo/check_dashboards.py" \
  "$SRC/demo/config/grafana-dashboards" --prometheus "$PROM_URL" \
  --data "$TMP/services.json" || fail "a dashboard query returns no data"
# 5. The dashboards' buttons, pressed against the daemon's control server
#    while it reads a program's eventlog-socket (tests/tools/el_peer plays
#    the program and records what the daemon writes back): every button is
#    accepted and the program receives exactly the control messages of
#    reference-behaviour.md §8.3, computed here by hand.
PEER=$BUILD/tests/el_peer
[ -x "$PEER" ] || PEER=$BUILD/el_peer
if [ -x "$PEER" ]; then
  "$PEER" --unix "$TMP/ctl.sock" --file "$EVENTLOGS/ghc-9.0/oddball-hT.eventlog" \
    --hold-ms 8000 --record "$TMP/ctl.bin" --ready-file "$TMP/peer.ready" \
    --timeout 60 > "$TMP/peer.log" 2>&1 &
  peer=$!
  BG_PIDS+=($peer)
  for i in $(seq 100); do [ -e "$TMP/peer.ready" ] && break; sleep 0.1; done
  cport=$(free_port)
  "$DAEMON" --service-name=oddball --eventlog-socket="$TMP/ctl.sock" \
    --control --control-port="$cport" --control-cors-ignore-failure \
    --control-cors-allow-origin=http://localhost:3000 \
    --otelcol-host=127.0.0.1 --otelcol-port="$port" \
    > "$TMP/daemon-control.log" 2>&1 &
  BG_PIDS+=($!)
  python3 "$SRC/tests/demo/check_buttons.py" "$SRC/demo/config/grafana-dashboards" \
    "http://127.0.0.1:$cport" oddball --accepted > "$TMP/buttons.out" 2>&1
  st=$?
  cat "$TMP/buttons.out"
  [ $st = 0 ] || fail "a dashboard button was not accepted by the control server"
  wait "$peer"
  python3 - "$TMP/buttons.out" "$TMP/ctl.bin" <<'PY' || fail "the program did not receive the buttons' control messages"
import json, sys
pressed = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
builtin = {"start-profiling": 1, "stop-profiling": 2,
           "start-heap-profiling": 3, "stop-heap-profiling": 4,
           "request-heap-census": 5}
want = b""
for ep in pressed:
    ns, cmd = ep[len("/control/"):].split("/")
    cid = builtin[cmd] if ns == "eventlog-socket" else int(cmd)
    want += bytes([0xF0, 0x9E, 0x97, 0x8C, 0, len(ns)]) + ns.encode() + bytes([cid])
got = open(sys.argv[2], "rb").read()
print(f"control bytes: want {want.hex()}\n               got  {got.hex()}")
sys.exit(0 if got == want else 1)
PY
  echo "ok: every button reaches the program as its control message"
else
  echo "note: $BUILD/tests/el_peer not built: buttons not pressed"
fi

echo "PASS: dashboards use only names of our telemetry, their queries return data, their buttons work"
