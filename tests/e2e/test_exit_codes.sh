#!/usr/bin/env bash
# The exit status of every command, as docs/exit-codes.md's table says
# (issue 14 item 7): the table is read from the docs (rows with an id; the
# header gives the commands) and every cell holding a number is checked by
# one run of that command on that row's input, so the docs and the
# programs cannot drift apart. Inputs: a recorded GHC 9.0 eventlog, the
# same cut inside its last event and inside its header, the same followed
# by a second header cut short, with bytes inserted or one that cannot be
# read, /bin/ls, an empty
# file, a missing file, an unknown option (which must also get "did you
# mean"), SIGINT while reading a FIFO,
# SIGINT during the daemon's final flush.
# ctest-labels: e2e
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}" "${EL_SOURCE_DIR:?}"
E=$EL_BIN
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
EV=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
TABLE=$EL_SOURCE_DIR/docs/exit-codes.md
W=$(mktemp -d /tmp/el-exit-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
echo 'function on_event(e) end' > "$W/s.lua"

# Inputs.
sz=$(stat -c %s "$EV")
head -c $((sz - 37)) "$EV" > "$W/cut"     # inside the last event
head -c 1000 "$EV" > "$W/header"           # inside the header
: > "$W/empty"
# A later header: cut short, 8 bytes inserted after its "hete", its
# "datb" overwritten (after the whole log).
python3 - "$EV" "$W" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
h = b.find(b'hetehdredatb') + 4
w = sys.argv[2]
open(f'{w}/latercut', 'wb').write(b + b[:1000])
open(f'{w}/latergap', 'wb').write(b + b[:h] + bytes(8) + b[h:])
open(f'{w}/laterbad', 'wb').write(b + b[:h + 4] + b'XXXX' + b[h + 8:])
PY
declare -A INPUT=([clean]=$EV [cut]=$W/cut [header]=$W/header
                  [notlog]=/bin/ls [empty]=$W/empty [missing]=$W/missing
                  [latercut]=$W/latercut [latergap]=$W/latergap
                  [laterbad]=$W/laterbad)

# cmdline CMD FILE: the command reading FILE.
cmdline() {
  case $1 in
    show|stats) echo "$E $1 --eventlog-file $2" ;;
    run) echo "$E run $W/s.lua --eventlog-file $2" ;;
    report) echo "$E report --eventlog-file $2 -o $W/r.html" ;;
    otelcol) echo "$D --eventlog-file $2" ;;
    watch) echo "$E watch" ;;
  esac
}

# wait_pid PID SECONDS: its status, 124 if still running then (killed).
wait_pid() {
  local i
  for i in $(seq $(($2 * 10))); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; return; }
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null
  return 124
}

# run_row ID CMD: run CMD on row ID's input; prints its status.
run_row() {
  local id=$1 cmd=$2 st=0
  case $id in
    usage)
      if [ "$cmd" = watch ]; then
        "$E" watch --eventlog-fil x -- true > /dev/null 2> "$W/err" || st=$?
      else
        $(cmdline "$cmd" "$EV") --eventlog-fil x > /dev/null 2> "$W/err" || st=$?
      fi
      grep -q 'did you mean --eventlog-file?' "$W/err" || st="$st-no-did-you-mean" ;;
    signal)
      # The writer sends the whole log, then keeps the FIFO open 2 s: the
      # command is stopped while its writer is there (and drains it).
      rm -f "$W/fifo"; mkfifo "$W/fifo"
      { cat "$EV"; sleep 2; } > "$W/fifo" &
      local wr=$!
      $(cmdline "$cmd" "$W/fifo") > /dev/null 2> "$W/err" &
      local pid=$! i
      # SIGINT once it has the FIFO open (its handlers are in place).
      for i in $(seq 300); do
        ls -l /proc/$pid/fd 2>/dev/null | grep -q "$W/fifo" && break
        sleep 0.1
      done
      kill -INT $pid
      wait_pid $pid 60; st=$?
      wait $wr 2>/dev/null ;;
    noprog)
      "$E" watch -- "$W/no-such-program" > /dev/null 2> "$W/err" || st=$?
      grep -q 'cannot find' "$W/err" || st="$st-no-message" ;;
    flush)
      OTEL_LOGS_EXPORTER=otlp OTEL_METRICS_EXPORTER=otlp \
      OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \
      OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 \
        "$D" --eventlog-file "$EV" --otlp-shutdown-timeout 3000 -v info -s \
        > /dev/null 2> "$W/err" &
      local pid=$! i
      for i in $(seq 300); do
        grep -q 'Input ended: flushing' "$W/err" && break
        sleep 0.1
      done
      kill -INT $pid
      wait_pid $pid 60; st=$?
      grep -q ': warning: signal during the final flush' "$W/err" &&
        grep -q 'some telemetry could not be delivered' "$W/err" &&
        grep -q '^Script errors' "$W/err" || st="$st-no-summary" ;;
    *)
      $(cmdline "$cmd" "${INPUT[$id]}") > /dev/null 2> "$W/err" || st=$? ;;
  esac
  echo "$st"
}

header=$(grep -m1 '^| id |' "$TABLE") || { bad "no table in $TABLE"; exit 1; }
IFS='|' read -r -a cols <<< "$header"
# EL_EXIT_ROWS: the row ids to check; by default every row but the
# signal ones, which test_exit_codes_signals.sh checks (each under ~40 s).
ALL=$(grep -o '^| [a-z]* |' "$TABLE" | tr -d '| ' | grep -vx id | tr '\n' ' ')
ROWS=${EL_EXIT_ROWS:-$(echo " $ALL " | sed 's/ signal / /; s/ flush / /')}
rows=0 checked=0
while IFS='|' read -r -a f; do
  id=$(echo "${f[1]}" | tr -d ' ')
  [[ "$id" =~ ^[a-z]+$ ]] && [ "$id" != id ] || continue
  rows=$((rows + 1))
  [[ " $ROWS " == *" $id "* ]] || continue
  checked=$((checked + 1))
  for k in $(seq 3 $((${#cols[@]} - 1))); do
    cmd=$(echo "${cols[$k]}" | tr -d ' ')
    want=$(echo "${f[$k]:-}" | tr -d ' ')
    [[ "$want" =~ ^[0-9]+$ ]] || continue
    got=$(run_row "$id" "$cmd")
    if [ "$got" = "$want" ]; then ok "$id: $cmd -> $got"
    else bad "$id: $cmd -> $got, the table says $want; stderr: $(head -c 300 "$W/err")"; fi
  done
done < <(grep '^| [a-z]* |' "$TABLE")
[ $rows -ge 10 ] || bad "only $rows rows read from $TABLE"
[ $checked -gt 0 ] || bad "no row of '$ROWS' in $TABLE"
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
