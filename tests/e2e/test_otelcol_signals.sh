#!/usr/bin/env bash
# Signals sent to the daemon mid-stream (issue 13, docs/config.md "Exit
# status"): a writer feeds a FIFO with a real eventlog slowly; the daemon
# (console exporter, --eventlog-log-file tee) gets
#   SIGHUP   -> it reopens the tee (the file moved away meanwhile, as log
#               rotation does) at the end of the block in progress: both
#               files read alone, their events together are the input's;
#               it goes on to the end, exports every record of the clean
#               run, exits 0;
#   SIGTERM, SIGINT -> it stops reading, exports everything it decoded
#               (every USER_MARKER and USER_MSG in the bytes it received, as
#               decoded from its own tee by `show`), exits 0.
# And a Lua handler that loops forever does not keep SIGTERM from ending
# `run` or the daemon's input.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT
fail=0
src=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
export OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none

# feed FIFO: write the eventlog in 8 KiB pieces, 50 ms apart (~4 s).
feed() {
  python3 - "$src" "$1" <<'PY'
import sys, time
data = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb") as f:
    for i in range(0, len(data), 8192):
        try:
            f.write(data[i:i + 8192]); f.flush()
        except BrokenPipeError:
            break
        time.sleep(0.05)
PY
}

# bodies OUT: the log record bodies of the console output, one per line.
bodies() {
  python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line: continue
    for rl in json.loads(line).get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for r in sl.get("logRecords", []):
                kind = [a["value"].get("stringValue") for a in r.get("attributes", []) if a["key"] == "kind"]
                if kind and kind[0] in ("UserMarker", "UserMessage"):
                    print(r["body"].get("stringValue", ""))
PY
}

# markers FILE: USER_MARKER and USER_MSG texts in an eventlog (or a prefix
# of one), decoded by show.
markers() {
  "$EL_BIN" show --json "$1" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e.get("name") in ("USER_MARKER", "USER_MSG"):
        f = e["fields"]
        print(f.get("marker", f.get("text", "")))'
}

# events FILE: every event as show --json gives it, without its byte
# offset and Unix time (a file's own: a rotated tee's second part starts
# at another offset, before any WALL_CLOCK_TIME).
events() {
  "$EL_BIN" show --json "$1" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    e.pop("offset", None); e.pop("unix_ns", None)
    print(json.dumps(e, sort_keys=True))'
}

markers "$src" | sort >"$tmp/all.markers"
[ "$(wc -l <"$tmp/all.markers")" -gt 10 ] || { echo "FAIL: no markers in $src"; exit 1; }

for sig in HUP TERM INT; do
  rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
  "$D" --eventlog-file "$tmp/fifo" --service-name sig -hT \
    --eventlog-log-file "$tmp/tee-$sig" >"$tmp/out-$sig" 2>"$tmp/err-$sig" &
  dpid=$!
  feed "$tmp/fifo" &
  fpid=$!
  # mid-stream: once the tee holds the first markers (~200 KB of ~600 KB)
  for _ in $(seq 200); do
    [ "$(stat -c %s "$tmp/tee-$sig" 2>/dev/null || echo 0)" -ge 200000 ] && break
    sleep 0.1
  done
  [ "$sig" = HUP ] && mv "$tmp/tee-$sig" "$tmp/tee-$sig.1"
  kill -"$sig" "$dpid"
  t0=$(date +%s)
  wait "$dpid"; rc=$?
  t1=$(date +%s)
  kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
  bodies "$tmp/out-$sig" | sort >"$tmp/got-$sig"
  if [ "$sig" = HUP ]; then
    # Each file is an eventlog of its own (show: status 0, no warning);
    # the old file's events then the new one's are the input's.
    events "$src" >"$tmp/events.want"
    for f in "$tmp/tee-$sig.1" "$tmp/tee-$sig"; do
      if ! "$EL_BIN" show "$f" >/dev/null 2>"$tmp/show.err" || [ -s "$tmp/show.err" ]; then
        echo "FAIL: SIGHUP: $(basename "$f") does not read alone:"; sed 's/^/  /' "$tmp/show.err" | head -3; fail=1
      fi
    done
    { events "$tmp/tee-$sig.1"; events "$tmp/tee-$sig"; } >"$tmp/events.got"
    if [ ! -s "$tmp/tee-$sig" ]; then
      echo "FAIL: SIGHUP: nothing was written to the reopened tee"; fail=1
    elif ! cmp -s "$tmp/events.got" "$tmp/events.want"; then
      echo "FAIL: SIGHUP: the events of the rotated and the reopened tee are not the input's"; fail=1
    else
      echo "ok: SIGHUP: rotated tee $(stat -c %s "$tmp/tee-$sig.1") bytes + reopened $(stat -c %s "$tmp/tee-$sig") bytes, $(wc -l <"$tmp/events.want") events, each file readable"
    fi
    want="$tmp/all.markers"
  else
    markers "$tmp/tee-$sig" | sort >"$tmp/want-$sig"
    want="$tmp/want-$sig"
    [ -s "$want" ] || { echo "FAIL: SIG$sig: nothing was received before the signal"; fail=1; }
  fi
  missing=$(comm -23 "$want" "$tmp/got-$sig" | wc -l)
  if [ "$rc" != 0 ]; then
    echo "FAIL: SIG$sig: exit status $rc, want 0"; sed 's/^/  /' "$tmp/err-$sig" | head; fail=1
  elif [ "$missing" != 0 ]; then
    echo "FAIL: SIG$sig: $missing of $(wc -l <"$want") markers/messages received were not exported"; fail=1
  else
    echo "ok: SIG$sig: exit 0 after $((t1 - t0)) s, all $(wc -l <"$want") markers and messages received exported"
  fi
done

# A looping handler: SIGTERM ends `run` within seconds.
cat >"$tmp/loop.lua" <<'LUA'
local el = require("eventlog_live")
el.on("RUN_THREAD", function() while true do end end)
LUA
"$EL_BIN" run --log-level info "$tmp/loop.lua" "$EL_EVENTLOGS/ghc-9.0/threads.eventlog" \
  >/dev/null 2>"$tmp/loop.err" &
rpid=$!
sleep 1
kill -TERM "$rpid"
t0=$(date +%s)
for _ in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$rpid" 2>/dev/null; then
  echo "FAIL: run with a looping handler still runs 10 s after SIGTERM"
  kill -9 "$rpid"; fail=1
else
  wait "$rpid"; rc=$?
  # The interrupt is a stop, said once at info, not a handler error.
  if [ "$rc" = 0 ] &&
     grep -q "info: handler ([^)]*loop.lua:2): stopped by signal 15 (interrupted, not an error)" "$tmp/loop.err" &&
     ! grep -q "error: \|error(s) in" "$tmp/loop.err"; then
    echo "ok: a looping handler was interrupted by SIGTERM (a stop, not an error); run exited 0"
  else
    echo "FAIL: run after SIGTERM: exit $rc"; head -5 "$tmp/loop.err"; fail=1
  fi
fi
[ "$fail" = 0 ] && echo PASS
exit "$fail"
