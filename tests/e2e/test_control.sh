#!/usr/bin/env bash
# End-to-end: eventlog-live-otelcol --control relays HTTP commands to the
# program over the eventlog socket. el_peer plays the program (serves a
# real eventlog on a Unix socket and records every byte it receives); curl
# plays Grafana. Expected bytes are written out by hand from
# spec/eventlog-format.md §5.7. Exit 0 pass, 1 fail, 77 skip.
# ctest-labels: asan
set -u
BIN_DIR=${EL_BUILD_DIR:?}
DAEMON=$BIN_DIR/eventlog-live-otelcol
PEER=$BIN_DIR/tests/el_peer
LOG=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
command -v curl >/dev/null || { echo "skip: no curl"; exit 77; }
[ -x "$PEER" ] || { echo "skip: no el_peer"; exit 77; }
"$DAEMON" --help 2>/dev/null | grep -q -- '--control-port' \
  || { echo "skip: the daemon has no control server yet"; exit 77; }

tmp=$(mktemp -d)
peer_pid= ; daemon_pid= ; slow_pid=
cleanup() {
  for p in $slow_pid $daemon_pid $peer_pid; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The program: serves the eventlog once, then keeps the connection open
# 20 s reading control messages.
"$PEER" --unix "$tmp/sock" --file "$LOG" --record "$tmp/rec" \
  --ready-file "$tmp/ready" --hold-ms 20000 --timeout 40 2>"$tmp/peer.err" &
peer_pid=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done

export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
"$DAEMON" --eventlog-socket "$tmp/sock" --service-name app -hT \
  --control-port 0 -v info 2>"$tmp/daemon.err" &
daemon_pid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*Starting control server on \([0-9][0-9]*\).*/\1/p' \
    "$tmp/daemon.err" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { cat "$tmp/daemon.err"; echo "FAIL: no control port"; exit 1; }
base=http://127.0.0.1:$port

# status ARGS...: print the HTTP status of one curl request.
status() { curl -s -o "$tmp/body" -w '%{http_code}' -m 10 "$@"; }
expect() {  # expect CODE ARGS...
  local want=$1; shift
  local got; got=$(status "$@")
  [ "$got" = "$want" ] || fail "curl $* -> $got, want $want: $(cat "$tmp/body")"
}

# Wait until the daemon is connected: 503 (nothing sent) until then; the
# first 200 sends one "probe"/1 message.
got=
for _ in $(seq 100); do
  got=$(status -X POST -d service-name=app "$base/control/probe/1")
  [ "$got" = 200 ] && break
  [ "$got" = 503 ] || fail "probe -> $got"
  sleep 0.05
done
[ "$got" = 200 ] || { cat "$tmp/daemon.err"; echo "FAIL: never connected"; exit 1; }

# A client that sends half a request and stalls must not block anything.
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /control/x/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nservice' >&3

# Each route, as the Grafana buttons call it.
F=(-X POST -H 'Content-Type: application/x-www-form-urlencoded' -d service-name=app)
for r in start-profiling stop-profiling start-heap-profiling \
         stop-heap-profiling request-heap-census; do
  expect 200 "${F[@]}" "$base/control/eventlog-socket/$r"
done
grep -q '"command":"request-heap-census"' "$tmp/body" \
  || fail "200 body does not name the command: $(cat "$tmp/body")"
expect 200 "${F[@]}" "$base/control/ghc-stack-profiler/1"
# CORS is closed by default (docs/security.md): a page on another origin
# cannot send commands; nothing is sent.
expect 400 "${F[@]}" -H 'Origin: http://localhost:3000' "$base/control/ghc-stack-profiler/2"
grep -q 'control-cors-allow-origin' "$tmp/body" \
  || fail "CORS refusal does not name the option: $(cat "$tmp/body")"
expect 200 "${F[@]}" "$base/control/ghc-stack-profiler/2"

# Bad input: documented codes, nothing sent.
expect 404 "${F[@]}" "$base/control/eventlog-socket/no-such-command"
expect 404 "${F[@]}" "$base/nothing"
expect 404 -X POST -d service-name=other "$base/control/eventlog-socket/request-heap-census"
expect 400 -X POST -d other=app "$base/control/eventlog-socket/request-heap-census"
ns256=$(printf 'n%.0s' $(seq 256))
expect 400 "${F[@]}" "$base/control/$ns256/1"
expect 400 "${F[@]}" "$base/control/x/0"
expect 400 "${F[@]}" "$base/control/x/256"
expect 400 -X POST -H 'Content-Type: multipart/form-data; boundary=zz' \
  --data-binary $'--zz\r\nbroken' "$base/control/x/1"
head -c 20000 /dev/zero | tr '\0' 'a' > "$tmp/big"
expect 413 -X POST --data-binary "@$tmp/big" "$base/control/x/1"
expect 405 "$base/control/eventlog-socket/request-heap-census"
# error bodies are JSON, a 405's too (docs/control.md; h43: it was empty)
[ "$(cat "$tmp/body")" = '{"error-message":"method not allowed: use POST"}' ] ||
  fail "405 body: '$(cat "$tmp/body")'"
expect 405 -X POST -d service-name=app "$base/health"
[ "$(cat "$tmp/body")" = '{"error-message":"method not allowed: use GET"}' ] ||
  fail "405 body (health): '$(cat "$tmp/body")'"
expect 200 "$base/health"

# CORS: closed by default, so a preflight from Grafana's origin fails.
expect 400 -D "$tmp/hdr" -X OPTIONS -H 'Origin: http://localhost:3000' \
  -H 'Access-Control-Request-Method: POST' \
  -H 'Access-Control-Request-Headers: content-type' \
  "$base/control/eventlog-socket/request-heap-census"
grep -qi '^Access-Control-Allow-Origin' "$tmp/hdr" \
  && fail "default policy answered with Access-Control-Allow-Origin"

# The stalled client is still open; the daemon still answers.
expect 200 "$base/health"
exec 3>&-

# All the bytes the program received, in order.
es="f09e978c000f6576656e746c6f672d736f636b6574"
gsp="f09e978c0012676863 2d737461636b2d70726f66696c6572"
gsp=${gsp// /}
want="f09e978c000570726f626501"     # probe / 1
for k in 01 02 03 04 05; do want+="$es$k"; done
want+="${gsp}01${gsp}02"

kill "$daemon_pid"; wait "$daemon_pid"; rc=$?
daemon_pid=
[ "$rc" = 0 ] || fail "daemon exit status $rc after SIGTERM"
kill "$peer_pid" 2>/dev/null; wait "$peer_pid" 2>/dev/null; peer_pid=
got=$(od -An -v -tx1 "$tmp/rec" | tr -d ' \n')
[ "$got" = "$want" ] || fail "recorded bytes
 got  $got
 want $want"

# No connection at all: 503.
"$DAEMON" --eventlog-socket "$tmp/none.sock" --service-name app -hT \
  --control-port 0 -v info 2>"$tmp/daemon2.err" &
daemon_pid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*Starting control server on \([0-9][0-9]*\).*/\1/p' \
    "$tmp/daemon2.err" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
expect 503 "${F[@]}" "http://127.0.0.1:$port/control/eventlog-socket/request-heap-census"

# An allow-list refuses a preflight from another origin.
kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null
"$DAEMON" --eventlog-socket "$tmp/none.sock" --service-name app -hT \
  --control-port 0 --control-cors-allow-origin 'http://localhost:3000, http://grafana:3000' \
  -v info 2>"$tmp/daemon3.err" &
daemon_pid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*Starting control server on \([0-9][0-9]*\).*/\1/p' \
    "$tmp/daemon3.err" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
P=(-X OPTIONS -H 'Access-Control-Request-Method: POST')
expect 200 -D "$tmp/hdr" "${P[@]}" -H 'Origin: http://grafana:3000' \
  "http://127.0.0.1:$port/control/eventlog-socket/request-heap-census"
grep -qi '^Access-Control-Allow-Origin: http://grafana:3000' "$tmp/hdr" \
  || fail "allowed preflight without its origin"
expect 400 -D "$tmp/hdr" "${P[@]}" -H 'Origin: http://evil.example' \
  "http://127.0.0.1:$port/control/eventlog-socket/request-heap-census"
grep -qi '^Access-Control-Allow-Origin' "$tmp/hdr" \
  && fail "refused preflight carries Access-Control-Allow-Origin"

# '*' opens it to every origin, as the reference's default.
kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null
"$DAEMON" --eventlog-socket "$tmp/none.sock" --service-name app -hT \
  --control-port 0 --control-cors-allow-origin '*' -v info 2>"$tmp/daemon4.err" &
daemon_pid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*Starting control server on \([0-9][0-9]*\).*/\1/p' \
    "$tmp/daemon4.err" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
expect 200 -D "$tmp/hdr" "${P[@]}" -H 'Origin: http://localhost:3000' \
  -H 'Access-Control-Request-Headers: content-type' \
  "http://127.0.0.1:$port/control/eventlog-socket/request-heap-census"
grep -qi '^Access-Control-Allow-Origin: \*' "$tmp/hdr" \
  || fail "wildcard preflight without Access-Control-Allow-Origin: *"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; tail -5 "$tmp/daemon.err"; exit 1; }
echo "ok"
