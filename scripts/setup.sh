#!/usr/bin/env bash
# Set up a fresh Debian 12 machine and build eventlog-live into build/.
# Installs every Debian package the project and its tests need, the npm
# packages of the test OTLP receiver (pinned by tests/receiver/package-lock.json),
# then configures and builds with CMake.
#   scripts/setup.sh            packages + build
#   EL_SKIP_APT=1 scripts/setup.sh   build only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config git
  liblua5.4-dev lua5.4 lua-busted
  libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
  libgrpc-dev libcurl4-openssl-dev zlib1g-dev libjansson-dev
  libyaml-dev libuv1-dev libedit-dev libmicrohttpd-dev libseccomp-dev
  libcmocka-dev clang libclang-rt-14-dev clang-format
  tmux expect jq python3 python3-yaml python3-jsonschema openssl curl
  help2man man-db dpkg-dev
  nodejs npm
  ghc ghc-prof libghc-ghc-events-dev
  prometheus
  chromium
)

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ -z "${EL_SKIP_APT:-}" ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  # node/npm may come from outside Debian on some machines: keep those.
  if command -v node >/dev/null && command -v npm >/dev/null; then
    missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
  fi
  read -r -a missing <<< "${missing[*]}"
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo_ apt-get update -qq
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends "${missing[@]}"
  fi
fi

if [ -f tests/receiver/package-lock.json ]; then
  (cd tests/receiver && npm ci --no-audit --no-fund --loglevel=error)
fi
# playwright-core, for the browser test of the web view (tests/e2e/test_web.sh).
if [ -f tests/web/package-lock.json ]; then
  (cd tests/web && npm ci --no-audit --no-fund --loglevel=error)
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
echo "setup: built build/eventlog-live and build/eventlog-live-otelcol"
