#!/usr/bin/env bash
# `cmake --install` (issue 14 item 8, cmake/install.cmake): into a DESTDIR
# with prefix /usr, the tree holds both commands, the Lua library, the
# manual pages, the completions and the copyright file; the installed
# binaries run on the shared GHC 9.0 eventlog and find their Lua library
# under the install prefix, also after the whole tree is moved elsewhere
# (the library is found from the binary's own place). Expected values
# come from the ghc-events reference text of the eventlog
# (tests/data/eventlogs).
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
         share/doc/eventlog-live/README.md \
         share/doc/eventlog-live/copyright; do
  [ -e "$R/$f" ] && ok "installed $f" || bad "not installed: $f"
done
[ "$(readlink "$R/bin/eventlog-live-otelcol")" = eventlog-live ] &&
  ok "eventlog-live-otelcol is a relative symlink to eventlog-live" ||
  bad "eventlog-live-otelcol: $(ls -l "$R/bin/eventlog-live-otelcol")"

source "$(dirname "$0")/install_lib.sh"
check_tree "$R" "installed"
# Moved elsewhere (a relocated or unpacked tree): still self-contained.
mv "$W/dest/usr" "$W/moved"
check_tree "$W/moved" "moved"
exit $fail
