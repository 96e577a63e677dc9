#!/usr/bin/env bash
# An option given twice with different values (h50, as h45 did for the
# daemon and watch in test_otelcol_cli.sh): run, report, show, stats and
# repl use the last one, as before, and say so in one warning naming the
# option and its values; the same value twice, and the options whose
# values add up (report --script), say nothing. --set is followed per key.
# ctest-labels: e2e
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
E=$EL_BIN
EV=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
W=$(mktemp -d /tmp/el-repeated-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
printf 'local el = require("eventlog_live")\nprint("a=" .. tostring(el.config.a))\n' >"$W/a.lua"
printf 'local el = require("eventlog_live")\n' >"$W/b.lua"
printf 'local el = require("eventlog_live")\nel.on("HEAP_SIZE", function(ev) el.log{body = "hs", t = ev.t} end)\n' >"$W/c.lua"

# warns WARNING ARGS...: eventlog-live ARGS (stdin closed) exits 0 and
# its stderr has exactly one warning, WARNING (the whole line).
warns() {
  local want=$1 st=0
  shift
  "$E" "$@" </dev/null >"$W/out" 2>"$W/err" || st=$?
  local n
  n=$(grep -c "warning:" "$W/err")
  if [ "$st" = 0 ] && [ "$n" = 1 ] && grep -qxF -- "$want" "$W/err"; then
    ok "$1 ${*:2:4}: warned"
  else
    bad "$*: status $st, $n warnings, stderr: $(head -c 400 "$W/err")"
  fi
}

# quiet ARGS...: exits 0 and says nothing given twice.
quiet() {
  local st=0
  "$E" "$@" </dev/null >"$W/out" 2>"$W/err" || st=$?
  if [ "$st" = 0 ] && ! grep -q "given" "$W/err"; then
    ok "$*: nothing said"
  else
    bad "$*: status $st, stderr: $(head -c 400 "$W/err")"
  fi
}

# run: --set per key (the last value reaches the script), --output, -v
# under its long name --log-level, a source option.
warns "eventlog-live: warning: run: --set a given twice ('1', then '2'): the last one is used" \
  run "$W/a.lua" --set a=1 --set=a=2 --set b=1 "$EV"
grep -qx "a=2" "$W/out" && ok "run: --set a: the last value used" ||
  bad "run: --set a=1 --set a=2: script saw $(cat "$W/out")"
warns "eventlog-live: warning: run: --output given 3 times (first 'console', last 'none'): the last one is used" \
  run "$W/c.lua" --output console --output none --output none "$EV"
[ -s "$W/out" ] && bad "run: --output none was not used" || ok "run: --output: the last one used"
"$E" run "$W/c.lua" --output none --output console "$EV" 2>/dev/null | grep -q '"hs"' &&
  ok "run: --output console last: the logs printed" || bad "run: --output console last: nothing printed"
warns "eventlog-live: warning: run: --log-level given twice ('debug', then 'warn'): the last one is used" \
  run "$W/b.lua" -v debug --log-level warn "$EV"
warns "eventlog-live: warning: run: --eventlog-socket-timeout given twice ('1', then '2'): the last one is used" \
  run "$W/b.lua" --eventlog-socket-timeout 1 --eventlog-socket-timeout 2 "$EV"
quiet run "$W/a.lua" --set a=1 --set a=1 --set b=2 --output none --output none "$EV"
# Sizes and numbers are compared by what they mean (h60: 1G then 1024M
# was said to differ, the values compared as text).
quiet run "$W/b.lua" --lua-memory 1G --lua-memory 1024M --lua-memory 1GiB "$EV"
quiet run "$W/b.lua" --handler-budget-ms 100 --handler-budget-ms 0100 "$EV"
warns "eventlog-live: warning: run: --lua-memory given twice ('1G', then '512M'): the last one is used" \
  run "$W/b.lua" --lua-memory 1G --lua-memory 512M "$EV"

# report: -o under its long name --output (the last file is written),
# -h<X> as -h; --script adds up.
warns "eventlog-live: warning: report: --output given twice ('$W/r1.html', then '$W/r2.html'): the last one is used" \
  report -o "$W/r1.html" --output "$W/r2.html" "$EV"
[ -s "$W/r2.html" ] && [ ! -e "$W/r1.html" ] && ok "report: -o: the last one written" ||
  bad "report -o r1 --output r2: $(ls "$W")"
# (the last one is the program's own -hT: a different one is warned
# about on its own, heap_prof.lua)
warns "eventlog-live: warning: report: -h given twice ('-hc', then '-hT'): the last one is used" \
  report -hc -hT -o "$W/r.html" "$EV"
quiet report --script "$W/b.lua" --script "$W/a.lua" --top 5 --top 5 -o "$W/r.html" "$EV"

# show and stats: their own option, and a source option.
warns "eventlog-live: warning: show: --sort-memory given twice ('1M', then '2M'): the last one is used" \
  show --sort-memory 1M --sort-memory=2M "$EV"
cmp -s "$W/out" <("$E" show "$EV") && ok "show: the same bytes out" ||
  bad "show: output changed by the warning"
warns "eventlog-live: warning: stats: --eventlog-socket-timeout given twice ('1', then '3'): the last one is used" \
  stats --eventlog-socket-timeout 1 --eventlog-socket-timeout 3 "$EV"
quiet stats --eventlog-socket-timeout 1 --eventlog-socket-timeout=1 "$EV"
quiet stats --eventlog-socket-timeout 1 --eventlog-socket-timeout=1.0 "$EV"
quiet show --sort-memory 1M --sort-memory 1024k "$EV"

# Two sources are refused, not replaced: the usage error alone, with no
# warning that the last one is used (h57: show, stats and the daemon said
# both).
EV2=$EL_EVENTLOGS/ghc-9.0/threads.eventlog
for cmd in show stats; do
  st=0
  "$E" $cmd --eventlog-file "$EV" --eventlog-file "$EV2" </dev/null \
    >"$W/out" 2>"$W/err" || st=$?
  if [ "$st" = 2 ] && grep -q "give exactly one eventlog source" "$W/err" &&
     ! grep -q "given twice" "$W/err"; then
    ok "$cmd: two --eventlog-file: refused, no warning"
  else
    bad "$cmd: two --eventlog-file: status $st, stderr: $(head -c 400 "$W/err")"
  fi
done

# repl (stdin closed: it loads the file and ends).
warns "eventlog-live: warning: repl: --store-mb given twice ('8', then '16'): the last one is used" \
  repl --store-mb 8 --store-mb=16 --no-history "$EV"
quiet repl --store-mb 8 --store-mb=8.0 --no-history "$EV"
exit $fail
