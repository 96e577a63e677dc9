#!/usr/bin/env bash
# ctest-labels: asan
# `eventlog-live run` and the Lua API as a tester of it met them:
#  1. resource: OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES give the
#     starting resource, as an OpenTelemetry SDK's (service.name from
#     OTEL_SERVICE_NAME wins over the one in OTEL_RESOURCE_ATTRIBUTES), and
#     the script's el.set_resource wins over both (docs/lua-api.md §5);
#  2. two el.metric declarations of one name with different kinds are an
#     error naming both kinds and the first one's line; the same kind twice
#     is one metric;
#  3. a missing input fails before the script runs (its on_end hook does
#     not run), in one line naming the file, status 1 (docs/exit-codes.md
#     "missing");
#  4. el.status_name(8) without an owner names no owner ("owned by 0").
# Expected values are written out by hand from the OpenTelemetry SDK
# environment specification and GHC's / ghc-events' definitions.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
F=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# A console line of resourceMetrics -> "key=value" per resource attribute,
# sorted, comma-separated ("" for an empty resource).
resource_of() {
  python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    for rm in d.get("resourceMetrics", []):
        attrs = rm.get("resource", {}).get("attributes", [])
        print(",".join(sorted("%s=%s" % (a["key"], a["value"]["stringValue"])
                              for a in attrs)))
'
}

echo "== 1. resource from the OpenTelemetry environment"
cat > "$tmp/res.lua" <<'LUA'
local el = require("eventlog_live")
local m = el.metric{name = "markers"}
local n = 0
el.on("USER_MARKER", function() n = n + 1 end)
el.on_end(function() m:point(n) end)
LUA
got=$(OTEL_SERVICE_NAME=svc-a \
      OTEL_RESOURCE_ATTRIBUTES='deployment.environment=test,team=a%20b,service.name=ignored' \
      "$EL_BIN" run "$tmp/res.lua" "$F" 2>"$tmp/err" | resource_of)
want='deployment.environment=test,service.name=svc-a,team=a b'
[ "$got" = "$want" ] && ok "environment resource: $got" ||
  { bad "environment resource: got '$got', want '$want'"; cat "$tmp/err"; }
got=$(OTEL_SERVICE_NAME=svc-b "$EL_BIN" run "$tmp/res.lua" "$F" 2>/dev/null | resource_of)
[ "$got" = "service.name=svc-b" ] && ok "OTEL_SERVICE_NAME alone: $got" ||
  bad "OTEL_SERVICE_NAME alone: got '$got'"
{ echo 'require("eventlog_live").set_resource("team", "mine")'
  echo 'require("eventlog_live").set_resource("service.name", "own")'
  cat "$tmp/res.lua"; } > "$tmp/res_own.lua"
got=$(OTEL_SERVICE_NAME=svc-a OTEL_RESOURCE_ATTRIBUTES='team=a,x=1' \
      "$EL_BIN" run "$tmp/res_own.lua" "$F" 2>/dev/null | resource_of)
[ "$got" = "service.name=own,team=mine,x=1" ] && ok "the script's attributes win: $got" ||
  bad "the script's attributes win: got '$got'"
got=$(env -u OTEL_SERVICE_NAME -u OTEL_RESOURCE_ATTRIBUTES \
      "$EL_BIN" run "$tmp/res.lua" "$F" 2>/dev/null | resource_of)
[ -z "$got" ] && ok "no variable: an empty resource, as documented" ||
  bad "no variable: got '$got'"
# run exports to the console only: the exporter variables are not its
# business, and a bad one must not stop it.
got=$(OTEL_SERVICE_NAME=svc-c OTEL_EXPORTER_OTLP_PROTOCOL=bogus \
      "$EL_BIN" run "$tmp/res.lua" "$F" 2>"$tmp/err" | resource_of)
[ "$got" = "service.name=svc-c" ] && ok "an exporter variable run does not use is ignored" ||
  { bad "OTEL_EXPORTER_OTLP_PROTOCOL=bogus: got '$got'"; cat "$tmp/err"; }
OTEL_RESOURCE_ATTRIBUTES='novalue' "$EL_BIN" run "$tmp/res.lua" "$F" \
  >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 1 ] && [ ! -s "$tmp/out" ] &&
  grep -q '^eventlog-live: run: Environment variable OTEL_RESOURCE_ATTRIBUTES specifies malformed baggage' "$tmp/err" &&
  ok "malformed OTEL_RESOURCE_ATTRIBUTES: a setup error (1) naming it" ||
  { bad "malformed OTEL_RESOURCE_ATTRIBUTES: status $st"; cat "$tmp/err"; }

echo "== 2. one name, two kinds"
cat > "$tmp/kinds.lua" <<'LUA'
local el = require("eventlog_live")
local g = el.metric{name = "x", kind = "gauge"}
local s = el.metric{name = "x", kind = "sum"}
LUA
"$EL_BIN" run "$tmp/kinds.lua" --output none "$F" >/dev/null 2>"$tmp/err"
st=$?
[ "$st" = 2 ] && ok "gauge then sum of one name: a load error (2)" ||
  bad "gauge then sum of one name: status $st, want 2"
grep -q "kinds.lua:3: el.metric: metric 'x' declared as a sum (cumulative, not monotonic), but it was declared as a gauge at [^ ]*kinds.lua:2" "$tmp/err" &&
  ok "the error names both kinds and the first declaration's line" ||
  { bad "the kind clash message"; head -3 "$tmp/err"; }
cat > "$tmp/sums.lua" <<'LUA'
local el = require("eventlog_live")
local a = el.metric{name = "n", kind = "sum", monotonic = true}
local b = el.metric{name = "n", kind = "sum", monotonic = false}
LUA
"$EL_BIN" run "$tmp/sums.lua" --output none "$F" >/dev/null 2>"$tmp/err"
st=$?
[ "$st" = 2 ] && grep -q "declared as a sum (cumulative, not monotonic), but it was declared as a sum (cumulative, monotonic)" "$tmp/err" &&
  ok "a monotonic and a non-monotonic sum of one name: an error" ||
  { bad "monotonic clash: status $st"; head -3 "$tmp/err"; }
cat > "$tmp/same.lua" <<'LUA'
local el = require("eventlog_live")
local a = el.metric{name = "y", kind = "sum", monotonic = true}
local b = el.metric{name = "y", kind = "sum", monotonic = true, unit = "1"}
el.on_end(function() a:point(1); b:point(2) end)
LUA
"$EL_BIN" run "$tmp/same.lua" --output none "$F" >/dev/null 2>"$tmp/err" &&
  ok "the same kind declared twice is one metric (0)" ||
  { bad "the same kind declared twice"; head -3 "$tmp/err"; }

echo "== 3. a missing input"
cat > "$tmp/end.lua" <<'LUA'
local el = require("eventlog_live")
local m = el.metric{name = "z"}
el.on_end(function() print("on_end ran"); m:point(1) end)
LUA
"$EL_BIN" run "$tmp/end.lua" "$tmp/missing.eventlog" >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 1 ] && ok "missing input: status 1 (docs/exit-codes.md)" ||
  bad "missing input: status $st, want 1"
[ ! -s "$tmp/out" ] && ok "missing input: no hook ran, nothing exported" ||
  { bad "missing input: stdout: $(head -c 200 "$tmp/out")"; }
want="eventlog-live: run: cannot open $tmp/missing.eventlog: No such file or directory"
[ "$(cat "$tmp/err")" = "$want" ] && ok "missing input: one line naming the file" ||
  { bad "missing input: stderr is not the one line '$want'"; cat "$tmp/err"; }
"$EL_BIN" run "$tmp/end.lua" --eventlog-file "$tmp" >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 1 ] && [ ! -s "$tmp/out" ] &&
  [ "$(cat "$tmp/err")" = "eventlog-live: run: cannot open $tmp: Is a directory" ] &&
  ok "a folder as input: the same, before the script" ||
  { bad "a folder as input: status $st"; cat "$tmp/out" "$tmp/err"; }

echo "== 4. el.status_name without an owner"
# ghc-events: status 8 is BlockedOnBlackHoleOwnedBy <owner> when the
# event carries its owner, BlockedOnBlackHole without one; GHC writes
# info 0 when it knows no owner (thread ids start at 1).
cat > "$tmp/st.lua" <<'LUA'
local el = require("eventlog_live")
local st = require("eventlog_live.status")
print(el.status_name(8))
print(el.status_name(8, 0))
print(el.status_name(8, 42))
print(st.name(8))
print(el.status_name(7))
LUA
got=$("$EL_BIN" run "$tmp/st.lua" --output none "$F" 2>"$tmp/err" | tr '\n' '|')
want='BlockedOnBlackHole|BlockedOnBlackHole|BlockedOnBlackHoleOwnedBy 42|BlockedOnBlackHole|BlockedOnMVar|'
[ "$got" = "$want" ] && ok "status names: $got" ||
  { bad "status names: got '$got', want '$want'"; cat "$tmp/err"; }
exit $fail
