#!/usr/bin/env bash
# End-to-end: where the daemon's HTTP servers listen (issue 13 item 6;
# docs/security.md). By default the control server, /metrics and the web
# view listen on 127.0.0.1 only, as `ss -ltn` shows; --control-host,
# --prometheus-host, --web-host and the configuration's web.*_host move
# them; bad values are errors that name the option (a port in use names
# the port option). The web view's own
# origin may call the control server; another origin may not.
# Exit 0 pass, 1 fail, 77 skip.
set -u
BIN_DIR=${EL_BUILD_DIR:?}
DAEMON=$BIN_DIR/eventlog-live-otelcol
command -v ss >/dev/null || { echo "skip: no ss (iproute2)"; exit 77; }
command -v curl >/dev/null || { echo "skip: no curl"; exit 77; }

tmp=$(mktemp -d)
daemon_pid=
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

# start ARGS...: run the daemon (no eventlog yet: it keeps retrying) until
# its three servers are up; sets daemon_pid, cport, pport, wport.
start() {
  "$DAEMON" --eventlog-socket "$tmp/none.sock" --service-name app -hT \
    --control-port 0 --prometheus-port 0 --web-port 0 -v info "$@" \
    2>"$tmp/daemon.err" &
  daemon_pid=$!
  cport= pport= wport=
  for _ in $(seq 200); do
    cport=$(sed -n 's/.*Starting control server on \([0-9]*\).*/\1/p' "$tmp/daemon.err")
    pport=$(sed -n 's/.*Starting Prometheus endpoint on \([0-9]*\).*/\1/p' "$tmp/daemon.err")
    wport=$(sed -n 's/.*Starting web view on \([0-9]*\).*/\1/p' "$tmp/daemon.err")
    [ -n "$cport" ] && [ -n "$pport" ] && [ -n "$wport" ] && return 0
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$tmp/daemon.err"
  return 1
}
stop() { kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null; daemon_pid=; }
# The daemon's listening addresses, "ADDR:PORT" one per line (ss -ltnp).
listening() {
  ss -Hltnp 2>/dev/null | awk -v pid="pid=$daemon_pid," \
    'index($0, pid) { print $4 }' | sort
}
# expect_listen PORT ADDR: the daemon listens on PORT at ADDR only.
expect_listen() {
  local got; got=$(listening | grep -E ":$1\$")
  [ "$got" = "$2:$1" ] || fail "port $1: listening on '${got//$'\n'/ }', want $2:$1"
}

# 1. Defaults: loopback only.
start || { echo "FAIL: daemon did not start"; exit 1; }
echo "default: $(listening | tr '\n' ' ')"
[ "$(listening | wc -l)" = 3 ] || fail "want 3 listening sockets: $(listening)"
for p in "$cport" "$pport" "$wport"; do expect_listen "$p" 127.0.0.1; done
listening | grep -v '^127\.0\.0\.1:' && fail "a socket not on 127.0.0.1"
# Not reachable through this host's other addresses.
other=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' \
  | grep -v '^127\.' | head -1)
if [ -n "$other" ]; then
  s=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "http://$other:$cport/health")
  [ "$s" = 000 ] || fail "control server answered $s on $other"
else
  echo "note: no non-loopback IPv4 address to try"
fi
# The web view's page may use the control server (its origin is allowed);
# another origin may not; no Origin (curl) may.
code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$@"; }
# post [ORIGIN]: the status of a command POST (with that Origin header).
post() {
  code ${1:+-H "Origin: $1"} -X POST -d service-name=app \
    "http://127.0.0.1:$cport/control/x/1"
}
[ "$(post "http://127.0.0.1:$wport")" = 503 ] \
  || fail "the web view's origin is refused"
[ "$(post "http://localhost:$wport")" = 503 ] \
  || fail "the web view's origin (localhost) is refused"
[ "$(post http://evil.example)" = 400 ] || fail "another origin is let through"
[ "$(post "http://127.0.0.1:$((wport + 1))")" = 400 ] \
  || fail "another port's origin is let through"
[ "$(post)" = 503 ] || fail "a request without Origin is refused"
# (503: no eventlog connection; what matters is that CORS let it through.)
for p in "$cport" "$pport" "$wport"; do
  [ "$(code "http://127.0.0.1:$p/health")" = 200 ] || fail "port $p: /health"
done
stop

# 2. Chosen addresses: every interface (IPv4), every interface (IPv6 and
# IPv4: ss shows "*" or "[::]"), and ::1 when the host has IPv6.
v6=1
python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0))' \
  2>/dev/null || v6=
if [ -n "$v6" ]; then
  start --control-host 0.0.0.0 --prometheus-host :: --web-host ::1 \
    || { echo "FAIL: daemon did not start"; exit 1; }
  echo "chosen: $(listening | tr '\n' ' ')"
  expect_listen "$cport" 0.0.0.0
  got=$(listening | grep -E ":$pport\$")
  case "$got" in "*:$pport"|"[::]:$pport") ;; *) fail "port $pport: '$got', want every interface";; esac
  expect_listen "$wport" "[::1]"
  [ "$(code "http://[::1]:$wport/health" -g)" = 200 ] || fail "::1 /health"
  # The page at [::1] may use the control server.
  [ "$(post "http://[::1]:$wport")" = 503 ] \
    || fail "the web view's origin on ::1 is refused"
  stop
else
  echo "note: no IPv6 here; skipping the IPv6 cases"
fi

# 3. The configuration file's web: key; the command line wins.
cat > "$tmp/c.yaml" <<'EOF'
web:
  prometheus_host: 0.0.0.0
  web_host: 0.0.0.0
EOF
start --config "$tmp/c.yaml" --web-host 127.0.0.1 \
  || { echo "FAIL: daemon did not start"; exit 1; }
echo "config: $(listening | tr '\n' ' ')"
expect_listen "$pport" 0.0.0.0
expect_listen "$wport" 127.0.0.1
expect_listen "$cport" 127.0.0.1
stop

# 4. Errors name the option and the value.
"$DAEMON" --eventlog-socket "$tmp/none.sock" --web-port 0 --web-host 'a b' \
  2>"$tmp/e1" </dev/null
rc=$?
[ "$rc" = 2 ] || fail "--web-host 'a b': exit $rc, want 2"
grep -q -- "--web-host.*'a b'" "$tmp/e1" || fail "message: $(cat "$tmp/e1")"
"$DAEMON" --eventlog-socket "$tmp/none.sock" --prometheus-port 0 \
  --prometheus-host 192.0.2.1 2>"$tmp/e2" </dev/null
rc=$?
[ "$rc" = 1 ] || fail "--prometheus-host 192.0.2.1: exit $rc, want 1"
grep -q -- "192.0.2.1.*--prometheus-host" "$tmp/e2" \
  || fail "message: $(cat "$tmp/e2")"
"$DAEMON" --eventlog-socket "$tmp/none.sock" --control-host= 2>"$tmp/e3" </dev/null
rc=$?
[ "$rc" = 2 ] || fail "--control-host '': exit $rc, want 2"
grep -q -- "--control-host" "$tmp/e3" || fail "message: $(cat "$tmp/e3")"
# A port in use is the port option's problem, not the host option's.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(60)' > "$tmp/busy" &
busy_pid=$!
for _ in $(seq 100); do [ -s "$tmp/busy" ] && break; sleep 0.1; done
busy=$(cat "$tmp/busy")
"$DAEMON" --eventlog-socket "$tmp/none.sock" --web-port "$busy" \
  2>"$tmp/e4" </dev/null
rc=$?
kill "$busy_pid" 2>/dev/null
[ "$rc" = 1 ] || fail "--web-port $busy (in use): exit $rc, want 1"
grep -q -- "port $busy (--web-port): Address already in use" "$tmp/e4" \
  || fail "port in use, message: $(cat "$tmp/e4")"
grep -q -- "--web-host" "$tmp/e4" \
  && fail "a port in use blamed on --web-host: $(cat "$tmp/e4")"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
