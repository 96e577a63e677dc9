#!/usr/bin/env bash
# Plugins (src/plugin/plugin.h, docs/architecture.md "Plugins"):
# 1. commands that do not export or serve (--version, --help, show, stats,
#    run, report, the daemon with --no-otlp) load none of gRPC, libcurl,
#    libmicrohttpd, libedit, nor any plugin: the dynamic loader's own
#    trace (LD_DEBUG=files) lists every object it opens;
# 2. the check can fail: exporting over OTLP/HTTP does load libcurl
#    through eventlog-live-otlp-http.so, and the Prometheus endpoint
#    libmicrohttpd through eventlog-live-httpd.so;
# 3. a missing or broken plugin is a clear error naming the file and the
#    reason (dlerror), and the command fails;
# 4. an installed tree (cmake --install) finds its plugins under
#    lib/eventlog-live beside bin/, with no EL_PLUGIN_DIR.
set -u
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}" "${EL_BUILD_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { local what=$1; shift; if ! "$@"; then echo "FAIL: $what"; fail=1; fi; }
unset EL_PLUGIN_DIR
log=$EL_EVENTLOGS/ghc-events/trace-binary-event.eventlog
heavy='lib(grpc|gpr|curl|microhttpd|edit)\.so|eventlog-live-[a-z-]*\.so'

# loaded NAME CMD...: run CMD under LD_DEBUG=files; the objects it opened
# (one "file=" line each) go to $tmp/NAME.files.
loaded() {
  local name=$1; shift
  LD_DEBUG=files LD_DEBUG_OUTPUT=$tmp/$name.ld "$@" >"$tmp/$name.out" \
    2>"$tmp/$name.err" </dev/null
  local rc=$?
  cat "$tmp/$name".ld.* 2>/dev/null | grep -o 'file=[^ ]*' | sort -u \
    >"$tmp/$name.files"
  return $rc
}
none_heavy() { ! grep -Eq "$heavy" "$tmp/$1.files"; }
has() { grep -Eq "$2" "$tmp/$1.files"; }

# 1. Nothing heavy at start.
cat >"$tmp/count.lua" <<'LUA'
local el = require("eventlog_live")
local n = 0
el.on("RUN_THREAD", function() n = n + 1 end)
el.on_end(function() print("runs " .. n) end)
LUA
check "--version runs" loaded version "$EL_BIN" --version
check "--help runs" loaded help "$EL_BIN" --help
check "show runs" loaded show "$EL_BIN" show "$log"
check "stats runs" loaded stats "$EL_BIN" stats "$log"
check "run runs" loaded run "$EL_BIN" run "$tmp/count.lua" "$log"
check "report runs" loaded report "$EL_BIN" report "$log" -o "$tmp/r.html"
loaded daemon "$EL_BIN" otelcol --eventlog-file "$log" --no-otlp -v error
check "daemon --no-otlp exits 0" test $? -eq 0
for c in version help show stats run report daemon; do
  check "$c: the loader trace lists libc" has $c 'libc\.so'
  check "$c: no gRPC, libcurl, libmicrohttpd, libedit nor plugin" none_heavy $c
done
check "show printed the events" grep -q '^Events:' "$tmp/show.out"
check "run's script ran" grep -q '^runs [0-9]' "$tmp/run.out"
check "report wrote its page" grep -q '<html' "$tmp/r.html"

# 2. The same check sees the libraries when they are used.
loaded otlp "$EL_BIN" otelcol --eventlog-file "$log" -v error \
  --otlp-endpoint http://127.0.0.1:1 --otlp-shutdown-timeout 100
check "OTLP/HTTP loads its plugin" has otlp 'eventlog-live-otlp-http\.so'
check "OTLP/HTTP loads libcurl" has otlp 'libcurl\.so'
check "OTLP/HTTP does not load gRPC" test -z "$(grep -E 'libgrpc' "$tmp/otlp.files")"
loaded grpc "$EL_BIN" otelcol --eventlog-file "$log" -v error \
  --otelcol-host 127.0.0.1 --otelcol-port 1 --otlp-shutdown-timeout 100
check "OTLP/gRPC loads its plugin" has grpc 'eventlog-live-otlp-grpc\.so'
check "OTLP/gRPC loads libgrpc" has grpc 'libgrpc\.so'
# (An empty stdin: the daemon starts its servers, finds no eventlog and
# exits 1 instead of serving on after the replay.)
loaded prom "$EL_BIN" otelcol --eventlog-stdin -v error --no-otlp \
  --prometheus-port 0
check "/metrics loads the httpd plugin" has prom 'eventlog-live-httpd\.so'
check "/metrics loads libmicrohttpd" has prom 'libmicrohttpd\.so'

# 3. A missing plugin: the error names the file and the folder searched.
mkdir "$tmp/empty"
EL_PLUGIN_DIR=$tmp/empty "$EL_BIN" otelcol --eventlog-file "$log" \
  --otlp-endpoint http://127.0.0.1:1 >/dev/null 2>"$tmp/missing.err"
check "missing plugin: exit status 1" test $? -eq 1
check "missing plugin: names the file and folder" grep -q \
  "cannot load the OTLP/HTTP exporter: plugin eventlog-live-otlp-http.so not found in $tmp/empty" \
  "$tmp/missing.err"
EL_PLUGIN_DIR=$tmp/empty "$EL_BIN" show "$log" >/dev/null 2>&1
check "show needs no plugin" test $? -eq 0
# A file that is no shared object, and one without the plugin's table.
mkdir "$tmp/bad"
echo "not a plugin" >"$tmp/bad/eventlog-live-httpd.so"
cp "$EL_BUILD_DIR/eventlog-live-edit.so" "$tmp/bad/eventlog-live-otlp-http.so"
EL_PLUGIN_DIR=$tmp/bad "$EL_BIN" otelcol --eventlog-stdin --no-otlp \
  --prometheus-port 0 </dev/null >/dev/null 2>"$tmp/bad1.err"
check "broken plugin: exit status 1" test $? -eq 1
check "broken plugin: dlerror with the file" grep -q \
  "cannot load the HTTP servers.*: $tmp/bad/eventlog-live-httpd.so: " \
  "$tmp/bad1.err"
EL_PLUGIN_DIR=$tmp/bad "$EL_BIN" otelcol --eventlog-file "$log" \
  --otlp-endpoint http://127.0.0.1:1 >/dev/null 2>"$tmp/bad2.err"
check "wrong plugin: exit status 1" test $? -eq 1
check "wrong plugin: names the missing table" grep -q \
  "plugin $tmp/bad/eventlog-live-otlp-http.so has no symbol el_plugin_otlp_http" \
  "$tmp/bad2.err"

# 4. The installed layout.
if cmake --install "$EL_BUILD_DIR" --prefix "$tmp/inst" >"$tmp/inst.log" 2>&1; then
  for p in otlp-grpc otlp-http httpd edit; do
    check "installed: lib/eventlog-live/eventlog-live-$p.so" \
      test -f "$tmp/inst/lib/eventlog-live/eventlog-live-$p.so"
  done
  check "installed: bin/eventlog-live-otelcol" test -L "$tmp/inst/bin/eventlog-live-otelcol"
  loaded inst "$tmp/inst/bin/eventlog-live-otelcol" --eventlog-file "$log" \
    -v error --otlp-endpoint http://127.0.0.1:1 --otlp-shutdown-timeout 100
  check "installed binary loads the installed plugin" \
    has inst "file=$tmp/inst/bin/\.\./lib/eventlog-live/eventlog-live-otlp-http\.so"
else
  echo "FAIL: cmake --install"; cat "$tmp/inst.log"; fail=1
fi
exit $fail
