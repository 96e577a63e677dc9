# install_lib.sh: checks of an installed tree of eventlog-live (sourced by
# tests/e2e/test_install.sh and test_package_deb.sh). Needs W (a scratch
# folder), EV (the GHC 9.0 eventlog, with EV.reference from ghc-events),
# ok and bad.

# check_tree ROOT WHAT: the installed commands under ROOT (…/usr) work.
check_tree() {
  local r=$1 what=$2
  export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
    OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
  unset EVENTLOG_LIVE_LUA_DIR EVENTLOG_LIVE_LUA_PATH
  [ "$("$r/bin/eventlog-live-otelcol" --version)" = "$("$r/bin/eventlog-live" --version | awk '{print $2}')" ] &&
    ok "$what: both commands report one version" || bad "$what: --version"
  "$r/bin/eventlog-live" show "$EV" >"$W/show" 2>"$W/err" && cmp -s "$W/show" "$EV.reference" &&
    ok "$what: show equals the ghc-events reference" ||
    bad "$what: show differs from the reference: $(head -3 "$W/err")"
  # The Lua library the host loads: the installed one.
  printf 'print(package.searchpath("eventlog_live.processors.main", package.path))\n' >"$W/where.lua"
  local got
  got=$("$r/bin/eventlog-live" run "$W/where.lua" "$EV" 2>"$W/err")
  [ "$got" = "$r/share/eventlog-live/lua/eventlog_live/processors/main.lua" ] ||
    [ "$(realpath -m "$got")" = "$(realpath -m "$r/share/eventlog-live/lua/eventlog_live/processors/main.lua")" ] &&
    ok "$what: the Lua library is the installed one" ||
    bad "$what: Lua library from '$got' (wanted under $r/share): $(head -3 "$W/err")"
  # The daemon under its installed name: the default processors (Lua,
  # from the installed library) export the heap size ghc-events shows
  # last.
  local want
  want=$(sed -n 's/.*size of heap capset 0: \([0-9]*\) bytes$/\1/p' "$EV.reference" | tail -1)
  OTEL_METRICS_EXPORTER=console "$r/bin/eventlog-live-otelcol" \
    --eventlog-file "$EV" >"$W/console" 2>"$W/err"
  local st=$?
  jq -r '.resourceMetrics[]?.scopeMetrics[]?.metrics[]? |
         select(.name == "ghc_eventlog_HeapSize") |
         .gauge.dataPoints[].asInt' "$W/console" 2>/dev/null | tail -1 >"$W/heap"
  [ $st = 0 ] && [ -n "$want" ] && [ "$(cat "$W/heap")" = "$want" ] &&
    ok "$what: eventlog-live-otelcol exports HeapSize $want (the reference's last)" ||
    bad "$what: daemon status $st, last HeapSize '$(cat "$W/heap")', wanted '$want': $(grep -v ': info:' "$W/err" | head -3)"
  grep -q '^eventlog-live-otelcol: ' "$W/err" && ! grep -q '^eventlog-live: ' "$W/err" &&
    ok "$what: the daemon's messages carry its own name" ||
    bad "$what: daemon message prefix: $(head -2 "$W/err")"
  # watch on a replay of the same eventlog (a script standing in for the
  # program): it exits with the program's status and exports the same
  # last heap size.
  OTEL_METRICS_EXPORTER=console "$r/bin/eventlog-live" watch -- \
    sh "$(dirname "${BASH_SOURCE[0]}")/eventlog_replay.sh" "$EV" 3 \
    >"$W/watch.out" 2>"$W/watch.err"
  st=$?
  jq -r '.resourceMetrics[]?.scopeMetrics[]?.metrics[]? |
         select(.name == "ghc_eventlog_HeapSize") |
         .gauge.dataPoints[].asInt' "$W/watch.out" 2>/dev/null | tail -1 >"$W/heap"
  [ $st = 3 ] && [ "$(cat "$W/heap")" = "$want" ] &&
    grep -q '^eventlog-live: watch: web view http://' "$W/watch.err" &&
    ok "$what: watch on a replay: the program's status 3, web view URL, HeapSize $want" ||
    bad "$what: watch status $st (wanted 3), last HeapSize '$(cat "$W/heap")': $(head -5 "$W/watch.err")"
}
