#!/usr/bin/env bash
# `eventlog-live run` exits 1 when telemetry was dropped (h45: a point the
# console exporter dropped as larger than its 4 MiB request bound,
# "console: 1 data points larger than 4194304 bytes dropped", left status
# 0 while docs/exit-codes.md said an export failure gives 1). What a closed
# stdout loses (`run ... | head`) is not a failure: its reader chose to
# stop, as for `cat`: 0 (docs/exit-codes.md "export losses").
# Expected: the bound is EL_OTLP_DEFAULT_MAX_BYTES (4194304, docs/otlp.md);
# a 5 MiB attribute cannot fit in it, a 1-byte one can.
# ctest-labels: e2e
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
small=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
big=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog

for size in 5242880 1; do
  cat >"$tmp/p$size.lua" <<LUA
local el = require("eventlog_live")
local g = el.metric{name = "big"}
el.on_end(function() g:point(1, {s = string.rep("x", $size)}) end)
LUA
done

# A point too large for one request: said, and status 1.
st=0
"$EL_BIN" run "$tmp/p5242880.lua" --eventlog-file "$small" >"$tmp/out" \
  2>"$tmp/err" || st=$?
if [ $st = 1 ] &&
  grep -qF "console: 1 data points larger than 4194304 bytes dropped" \
    "$tmp/err" &&
  grep -qF "run: 1 telemetry record was dropped (see the warnings): exit status 1" \
    "$tmp/err"; then
  ok "a point too large: dropped, said, status 1"
else
  bad "a point too large: status $st, $(cat "$tmp/err")"
fi

# The same point, small: written, nothing said, 0.
st=0
"$EL_BIN" run "$tmp/p1.lua" --eventlog-file "$small" >"$tmp/out" \
  2>"$tmp/err" || st=$?
if [ $st = 0 ] && [ ! -s "$tmp/err" ] && grep -q '"big"' "$tmp/out"; then
  ok "a small point: written, status 0"
else
  bad "a small point: status $st, $(cat "$tmp/err")"
fi

# --output none: nothing is exported, so nothing is dropped: 0.
st=0
"$EL_BIN" run "$tmp/p5242880.lua" --output none --eventlog-file "$small" \
  >/dev/null 2>"$tmp/err" || st=$?
[ $st = 0 ] && ok "--output none: status 0" ||
  bad "--output none: status $st, $(cat "$tmp/err")"

# A log record per RUN_THREAD (24 MB of console output) into `head`: the
# records after the reader went are dropped and counted, and status 0.
cat >"$tmp/many.lua" <<'LUA'
local el = require("eventlog_live")
el.on("RUN_THREAD", function(ev, th) el.log{body = "run " .. th} end)
LUA
"$EL_BIN" run "$tmp/many.lua" --eventlog-file "$big" 2>"$tmp/err" |
  head -c 100 >/dev/null
st=${PIPESTATUS[0]}
if [ "$st" = 0 ] && grep -qF "the output's reader had gone" "$tmp/err" &&
  ! grep -qF "run: " "$tmp/err"; then
  ok "stdout closed by its reader: status 0"
else
  bad "stdout closed by its reader: status $st, $(cat "$tmp/err")"
fi
exit $fail
