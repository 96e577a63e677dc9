#!/usr/bin/env bash
# Static checks of the demo (no Docker engine): compose files and every
# configuration parse and are consistent (tests/demo/check_configs.py),
# promtool accepts the Prometheus configuration, the dashboards are
# up to date with their generator, valid, and every PromQL expression in
# them parses in a real Prometheus (tests/demo/check_dashboards.py).
set -u
source "$(dirname "$0")/../demo/lib.sh"

python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"
command -v promtool >/dev/null || skip "promtool missing (apt-get install prometheus)"

rc=0
python3 "$SRC/tests/demo/check_configs.py" "$SRC" || rc=1
# ... and it fails on an unpinned image and on a collector pipeline that
# names an undefined exporter (copies of the demo with one change each).
for mut in 's|grafana/grafana:[0-9.]*|grafana/grafana:latest|' \
           's|exporters: \[prometheus\]|exporters: [prometheus, debug]|'; do
  rm -rf "$TMP/mirror"; mkdir -p "$TMP/mirror/examples"
  cp -r "$SRC/demo" "$TMP/mirror/demo"
  cp -r "$SRC/examples/haskell" "$TMP/mirror/examples/haskell"
  sed -i "$mut" "$TMP/mirror/demo/docker-compose.yml" \
    "$TMP/mirror/demo/config/otelcol.yaml"
  if python3 "$SRC/tests/demo/check_configs.py" "$TMP/mirror" \
       > "$TMP/mut.out" 2>&1; then
    cat "$TMP/mut.out"
    echo "FAIL: check_configs.py accepted a demo changed by $mut"
    rc=1
  fi
done
for f in "$SRC"/examples/haskell/common.sh "$SRC"/examples/haskell/*/*.sh; do
  bash -n "$f" || { echo "FAIL: $f has a syntax error"; rc=1; }
done
promtool check config "$SRC/demo/config/prometheus.yaml" || rc=1
python3 "$SRC/demo/tools/gen-dashboards.py" --check || rc=1

# The checkers must catch what they claim to: a broken copy must fail.
mkdir -p "$TMP/bad"
sed 's/avg(ghc_eventlog_HeapSize_bytes/avg((ghc_eventlog_HeapSize_bytes/' \
  "$SRC/demo/config/grafana-dashboards/heap.json" > "$TMP/bad/heap.json"
cmp -s "$TMP/bad/heap.json" "$SRC/demo/config/grafana-dashboards/heap.json" &&
  fail "could not make a broken copy of heap.json"
start_prometheus
python3 "$SRC/tests/demo/check_dashboards.py" \
  "$SRC/demo/config/grafana-dashboards" --prometheus "$PROM_URL" || rc=1
if python3 "$SRC/tests/demo/check_dashboards.py" "$TMP/bad" \
     --prometheus "$PROM_URL" > "$TMP/bad.out" 2>&1; then
  cat "$TMP/bad.out"
  echo "FAIL: a dashboard with a broken PromQL expression passed"
  rc=1
fi
grep -q "Prometheus rejects" "$TMP/bad.out" || {
  cat "$TMP/bad.out"; echo "FAIL: broken expression not reported"; rc=1; }

[ $rc = 0 ] && echo "PASS: demo static checks"
exit $rc
