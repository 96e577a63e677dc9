#!/usr/bin/env bash
# `cmake --install` (issue 14 item 8, cmake/install.cmake): into a DESTDIR
# with prefix /usr, the tree holds both commands, the Lua library, the
# manual pages and the completions; the installed binaries run on the
# shared GHC 9.0 eventlog and find their Lua library under the install
# prefix, also after the whole tree is moved elsewhere (the library is
# found from the binary's own place). Expected values come from the
# ghc-events reference text of the eventlog (tests/data/eventlogs).
# ctest-labels: e2e
set -uo pipefail
: "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
EV=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
W=$(mktemp -d /tmp/el-install-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }

DESTDIR=$W/dest cmake --install "$EL_BUILD_DIR" --prefix /usr >"$W/install.log" 2>&1 ||
  { cat "$W/install.log"; echo "FAIL cmake --install"; exit 1; }
R=$W/dest/usr
for f in bin/eventlog-live bin/eventlog-live-otelcol \
         share/eventlog-live/lua/eventlog_live/processors/main.lua \
         share/man/man1/eventlog-live.1 share/man/man1/eventlog-live-otelcol.1 \
         share/man/man1/eventlog-live-watch.1 \
         share/bash-completion/completions/eventlog-live \
         share/bash-completion/completions/eventlog-live-otelcol \
         share/zsh/vendor-completions/_eventlog-live \
         share/doc/eventlog-live/README.md; do
  [ -e "$R/$f" ] && ok "installed $f" || bad "not installed: $f"
done
[ "$(readlink "$R/bin/eventlog-live-otelcol")" = eventlog-live ] &&
  ok "eventlog-live-otelcol is a relative symlink to eventlog-live" ||
  bad "eventlog-live-otelcol: $(ls -l "$R/bin/eventlog-live-otelcol")"

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
}
check_tree "$R" "installed"
# Moved elsewhere (a relocated or unpacked tree): still self-contained.
mv "$W/dest/usr" "$W/moved"
check_tree "$W/moved" "moved"
exit $fail
