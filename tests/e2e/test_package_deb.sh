#!/usr/bin/env bash
# The Debian package (issue 14 item 8): `cpack -G DEB` from the build tree
# gives eventlog-live_VERSION_ARCH.deb whose Depends names the package of
# every shared library the binary needs (checked against readelf + ldd +
# dpkg -S, not against what dpkg-shlibdeps said) or opens with dlopen
# (libseccomp, for watch); unpacked with dpkg -x,
# its binaries run on the shared GHC 9.0 eventlog with their own Lua
# library (tests/e2e/install_lib.sh) and its manual pages render.
# The static libraries the binary embeds (EL_STATIC_LIBS: their functions
# defined in it, per nm) are named by source package and version in
# Built-Using (from dpkg-query on the -dev package that owns each one's
# pkg-config file), and their Debian copyright notices are in the
# package's /usr/share/doc/eventlog-live/copyright (cmake/gen_copyright.sh).
# ctest-labels: e2e
set -uo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
EV=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
for t in cpack dpkg-deb dpkg-shlibdeps readelf nm pkg-config jq man; do
  command -v $t >/dev/null || { echo "SKIP: $t missing (scripts/setup.sh)"; exit 77; }
done
W=$(mktemp -d /tmp/el-deb-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

cpack -G DEB -B "$W/pkg" --config "$EL_BUILD_DIR/CPackConfig.cmake" >"$W/cpack.log" 2>&1 ||
  { tail -20 "$W/cpack.log"; echo "FAIL cpack -G DEB"; exit 1; }
deb=$(ls "$W"/pkg/eventlog-live_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "FAIL no .deb in $W/pkg"; ls "$W/pkg"; exit 1; }
ok "built $(basename "$deb")"
version=$("$EL_BIN" --version | awk '{print $2}')
[ "$(dpkg-deb -f "$deb" Package)" = eventlog-live ] &&
  [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] &&
  [ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] &&
  ok "Package, Version $version, Architecture" ||
  bad "control: $(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ')"

# Description: a synopsis, then an extended description whose lines start
# with exactly one space (deb-control(5): two spaces mean a verbatim line).
desc=$(dpkg-deb -f "$deb" Description)
[ -n "$(printf '%s\n' "$desc" | head -1)" ] &&
  [ "$(printf '%s\n' "$desc" | tail -n +2 | grep -c '^ [^ ]')" -ge 2 ] &&
  ! printf '%s\n' "$desc" | tail -n +2 | grep -q '^  \|^[^ ]' &&
  ok "Description: synopsis and one-space continuation lines" ||
  bad "Description lines: $(printf '%s\n' "$desc" | cat -A | head -4)"

# Depends: the package of every NEEDED library of the binary, and of each
# library it opens with dlopen rather than links: libseccomp, watch's probe
# filter (src/common/el_rtsguard.c).
depends=$(dpkg-deb -f "$deb" Depends)
# depends_names LIB PATH WHY: Depends names the package that owns PATH.
depends_names() {
  local pkg
  pkg=$(dpkg -S "$(realpath "$2")" 2>/dev/null | head -1 | cut -d: -f1)
  [ -n "$pkg" ] || pkg=$(dpkg -S "$2" 2>/dev/null | head -1 | cut -d: -f1)
  if [ -z "$pkg" ]; then
    bad "$1 ($2): no Debian package owns it"
  elif [[ ", $depends," == *", $pkg "* || ", $depends," == *", $pkg,"* ]]; then
    ok "Depends names $pkg (for $1$3)"
  else
    bad "Depends lacks $pkg (for $1$3): $depends"
  fi
}
readelf -d "$EL_BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$W/needed"
[ -s "$W/needed" ] || bad "readelf found no NEEDED libraries"
while read -r lib; do
  depends_names "$lib" "$(ldd "$EL_BIN" | awk -v l="$lib" '$1 == l {print $3}')" ""
done <"$W/needed"
for lib in libseccomp.so.2; do
  grep -q "$lib" "$EL_BIN" || { bad "the binary no longer names $lib"; continue; }
  depends_names "$lib" "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" \
    ", opened by watch"
done

# Built-Using: the source package and version of each embedded library,
# and nothing else; no field when none is embedded (EL_STATIC_LIBS=OFF).
# Each library: its pkg-config name and a function of its API.
nm --defined-only "$EL_BIN" | awk '{print $3}' | sort -u >"$W/defined"
: >"$W/embedded"
for lib in lua5.4:lua_newstate libuv:uv_loop_init jansson:json_loads \
           yaml-0.1:yaml_parser_initialize \
           libprotobuf-c:protobuf_c_message_pack libseccomp:seccomp_init; do
  grep -qx "${lib#*:}" "$W/defined" || continue
  pc=$(pkg-config --variable=pcfiledir "${lib%%:*}")/${lib%%:*}.pc
  dev=$(dpkg-query -S "$pc" 2>/dev/null | head -1 | cut -d: -f1)
  [ -n "$dev" ] || { bad "${lib%%:*} is embedded but no package owns $pc"; continue; }
  echo "$dev" >>"$W/embedded"
done
want=$(xargs -r dpkg-query -W -f='${source:Package} (= ${source:Version})\n' <"$W/embedded" |
  sort -u | paste -sd, | sed 's/,/, /g')
got=$(dpkg-deb -f "$deb" Built-Using)
if [ -s "$W/embedded" ]; then
  [ "$got" = "$want" ] && ok "Built-Using: $got" ||
    bad "Built-Using '$got', wanted '$want'"
else
  [ -z "$got" ] && ok "no library embedded, no Built-Using" ||
    bad "no library embedded, yet Built-Using '$got'"
fi
# The copyright file: listed in the package; holds the project's LICENSE
# and, verbatim, each embedded library's Debian copyright notice.
dpkg-deb -c "$deb" >"$W/contents"
grep -q ' \./usr/share/doc/eventlog-live/copyright$' "$W/contents" &&
  ok "package lists /usr/share/doc/eventlog-live/copyright" ||
  bad "package lacks /usr/share/doc/eventlog-live/copyright"
dpkg-deb --fsys-tarfile "$deb" |
  tar -xOf - ./usr/share/doc/eventlog-live/copyright >"$W/copyright" 2>/dev/null
copyright=$(cat "$W/copyright")
[[ "$copyright" == *"$(cat "$(dirname "$0")/../../LICENSE")"* ]] &&
  ok "copyright holds the project's LICENSE" || bad "copyright lacks LICENSE"
while read -r dev; do
  [[ "$copyright" == *"$(cat "/usr/share/doc/$dev/copyright")"* ]] &&
    ok "copyright holds /usr/share/doc/$dev/copyright" ||
    bad "copyright lacks /usr/share/doc/$dev/copyright"
done <"$W/embedded"

# Unpacked: the files, the commands, the manual pages.
dpkg-deb -x "$deb" "$W/x" || { echo "FAIL dpkg-deb -x"; exit 1; }
for f in bin/eventlog-live bin/eventlog-live-otelcol \
         share/eventlog-live/lua/eventlog_live/processors/main.lua \
         share/man/man1/eventlog-live-otelcol.1 \
         share/bash-completion/completions/eventlog-live; do
  [ -e "$W/x/usr/$f" ] && ok "package holds /usr/$f" || bad "package lacks /usr/$f"
done
source "$(dirname "$0")/install_lib.sh"
check_tree "$W/x/usr" "unpacked .deb"
MANWIDTH=100 man -l "$W/x/usr/share/man/man1/eventlog-live-otelcol.1" 2>&1 |
  grep -q -- "--eventlog-file" && ok "its eventlog-live-otelcol(1) renders" ||
  bad "eventlog-live-otelcol(1) does not render"
exit $fail
