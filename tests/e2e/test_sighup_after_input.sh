#!/usr/bin/env bash
# SIGHUP after the input ended (h59): the pump owns SIGHUP while it reads
# (the tee's rotation, else ignored); once it has returned, the default
# action used to end the process (status 129), cutting short the final
# flush and its summary, run's on_end, the web view's linger. Now it is
# ignored and said once at -v info ("info: SIGHUP after the input ended:
# ignored"):
# 1. the daemon lingering with --web-port after a recorded file: still
#    serving after SIGHUP, then SIGINT ends it with status 0;
# 2. `run` with an on_end that waits for a file the test makes after the
#    SIGHUP: on_end finishes, its output is there, status 0.
source "$(dirname "$0")/serve_lib.sh" sighup
sv_option --web-port
RUN=$BUILD/eventlog-live
LOG=$EVENTLOGS/ghc-9.0/oddball-hT.eventlog
said="SIGHUP after the input ended: ignored"

"$DAEMON" --eventlog-file "$LOG" --service-name hup -hT --web-port 0 \
  -v info > "$TMP/d.out" 2> "$TMP/d.err" &
pid=$!
PIDS+=("$pid")
for _ in $(seq 600); do
  grep -q "input ended: still serving" "$TMP/d.err" && break
  kill -0 "$pid" 2>/dev/null || { cat "$TMP/d.err"; fail "the daemon exited"; }
  sleep 0.1
done
grep -q "input ended: still serving" "$TMP/d.err" ||
  fail "the daemon did not reach its linger in 60 s"
kill -HUP "$pid"
sleep 1
kill -0 "$pid" 2>/dev/null || { wait "$pid"; fail "SIGHUP ended the lingering daemon (status $?)"; }
grep -q "$said" "$TMP/d.err" || fail "the daemon did not say: $said"
port=$(sed -n 's/.*Starting web view on \([0-9]*\).*/\1/p' "$TMP/d.err" | head -1)
curl -sf -m 10 -o /dev/null "http://127.0.0.1:$port/health" ||
  fail "the web view stopped answering after SIGHUP"
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" = 0 ] || fail "the daemon exited $rc after SIGINT (want 0)"
echo "ok: the lingering daemon ignored SIGHUP, said so, and ended on SIGINT"

cat > "$TMP/slow_end.lua" <<LUA
local el = require("eventlog_live")
el.on_end(function()
  io.open("$TMP/in_end", "w"):close()
  local give_up = os.time() + 60
  while not io.open("$TMP/release") and os.time() < give_up do end
  print("on_end finished")
end)
LUA
"$RUN" run "$TMP/slow_end.lua" --eventlog-file "$LOG" -v info \
  > "$TMP/r.out" 2> "$TMP/r.err" &
rpid=$!
PIDS+=("$rpid")
for _ in $(seq 600); do
  [ -e "$TMP/in_end" ] && break
  kill -0 "$rpid" 2>/dev/null || { cat "$TMP/r.err"; fail "run exited before on_end"; }
  sleep 0.1
done
[ -e "$TMP/in_end" ] || fail "run did not reach on_end in 60 s"
kill -HUP "$rpid"
sleep 0.5
kill -HUP "$rpid" # said once (h62: it was said at every SIGHUP, at any -v)
sleep 0.5
touch "$TMP/release"
rc=0; wait "$rpid" || rc=$?
[ "$rc" = 0 ] || { cat "$TMP/r.err"; fail "run exited $rc after SIGHUP in on_end (want 0)"; }
grep -qx "on_end finished" "$TMP/r.out" || fail "on_end's output is missing"
[ "$(grep -c "$said" "$TMP/r.err")" = 1 ] || fail "run did not say once: $said"
echo "ok: run's on_end finished through a SIGHUP"
