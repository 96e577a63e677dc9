#!/usr/bin/env bash
# eventlog-live-otelcol's command line against hostile and mistaken input:
#  - every option --help lists is accepted by the parser (help is true);
#  - bad values exit 2 with a message naming the option: -h letters other
#    than T c m d y e r b i (spec §1.1: "Unsupported heap profile breakdown
#    -h<str>"), -h without a letter, --eventlog-flush-interval 0, -1, nan,
#    inf (the reference divides by zero: we refuse);
#  - the reference's options this program does not implement are named as
#    such (not "unknown"), exit 2;
#  - a missing --eventlog-file fails at once with status 1;
#  - an option given twice with different values is warned about, naming
#    the one used (the last).
# ctest-labels: e2e
set -uo pipefail
: "${EL_BUILD_DIR:?}"
D=$EL_BUILD_DIR/eventlog-live-otelcol
W=$(mktemp -d /tmp/el-otelcol-cli-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# expect STATUS PATTERN ARGS...: run with ARGS (then --print-defaults-debug,
# which exits before any work), want STATUS and PATTERN on stderr.
expect() {
  local want=$1 pat=$2; shift 2
  local st=0
  "$D" "$@" --print-defaults-debug >/dev/null 2>"$W/err" || st=$?
  if [ "$st" = "$want" ] && grep -qF -- "$pat" "$W/err"; then
    ok "$* -> $st"
  else
    bad "$*: status $st (want $want), stderr: $(head -c 300 "$W/err")"
  fi
}

"$D" --help >"$W/help" || bad "--help status"
for opt in $(grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' "$W/help" | sort -u); do
  st=0
  # With a value, then without (flags): neither may be "unknown".
  "$D" "$opt" 1 --print-defaults-debug >/dev/null 2>"$W/err" || st=$?
  if grep -q "unknown option '$opt'" "$W/err"; then
    bad "--help lists $opt but the parser does not know it"
  fi
done
ok "every option in --help is parsed"

for x in x Z 1 TT hT é; do
  expect 2 "Unsupported heap profile breakdown -h$x" -h"$x"
done
expect 2 "-h needs a letter" -h
for v in 0 -1 nan inf 0.0001 abc; do
  expect 2 "--eventlog-flush-interval" --eventlog-flush-interval "$v"
done
for o in --otelcol-ssl-key-log=k.log --otelcol-ssl-key-log-from-env \
         --my-eventlog-socket-unix=/tmp/s --my-ghc-debug-socket \
         --my-ghc-debug-socket-unix=/tmp/s --my-ghc-debug-socket-tcp=h:1; do
  expect 2 "not supported" "$o"
done
# A missing eventlog file is an error at once (status 1), before any
# exporter starts: not after the exporters' shutdown wait for an
# unreachable collector (10 s by default).
st=0
timeout 5 "$D" --eventlog-file "$W/missing.eventlog" 2>"$W/err" || st=$?
[ "$st" = 1 ] && grep -qF "$W/missing.eventlog" "$W/err" &&
  ok "missing eventlog file: status 1 at once" ||
  bad "missing eventlog file: status $st: $(head -c 300 "$W/err")"
# A bad value of an OTLP option is a usage error (status 2, as
# --export-interval 0), before any work; the same value from the
# environment is a setup error (status 1). An out-of-range number says
# so, not "malformed".
small=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
# otlp_flag STATUS PATTERN ARGS...: as expect, with an eventlog to read.
otlp_flag() {
  local want=$1 pat=$2; shift 2
  local st=0
  timeout 20 "$D" --eventlog-file "$small" "$@" >/dev/null 2>"$W/err" || st=$?
  if [ "$st" = "$want" ] && grep -qF -- "$pat" "$W/err"; then
    ok "$* ($pat) -> $st"
  else
    bad "$*: status $st (want $want), stderr: $(head -c 300 "$W/err")"
  fi
}
otlp_flag 2 "unknown compression 'zstd'" --otlp-compression zstd
otlp_flag 2 "malformed URI 'notaurl'" --otlp-endpoint notaurl
otlp_flag 2 "--otlp-queue-items specifies 0: it must be at least 1" \
  --otlp-queue-items 0
otlp_flag 2 "malformed number 'abc'" --otlp-shutdown-timeout abc
otlp_flag 2 "specifies 10: it must be at least 1024" --otlp-max-message-bytes 10
OTEL_EXPORTER_OTLP_COMPRESSION=zstd otlp_flag 1 \
  "OTEL_EXPORTER_OTLP_COMPRESSION specifies unknown compression"

# An option given twice with different values (h45: resolved silently):
# one warning naming it, its values and the one used (the last), status 0.
printf 'processors:\n  metrics:\n    heap_size: {}\n' >"$W/a.yaml"
printf 'processors:\n  metrics:\n    heap_live: {}\n' >"$W/b.yaml"
expect 0 "warning: --config given twice ('$W/a.yaml', then '$W/b.yaml'): the last one is used (configuration files are not merged)" \
  --config "$W/a.yaml" --config "$W/b.yaml"
"$D" --config "$W/a.yaml" --config "$W/b.yaml" --print-defaults-debug \
  2>/dev/null | grep -q '^    heap_live:' && ok "--config: the last one is read" ||
  bad "--config twice: not the last one read"
expect 0 "warning: -h given twice ('-hT', then '-hc'): the last one is used" -hT -hc
expect 0 "warning: --service-name given twice ('a', then 'b'): the last one is used" \
  --service-name a --service-name=b
expect 0 "warning: --export-interval given twice ('1s', then '1.5s'): the last one is used" \
  --export-interval 1s --export-interval 1.5s
expect 0 "warning: --web-port given twice ('8080', then '8081'): the last one is used" \
  --web-port 8080 --web-port 8081
expect 0 "warning: --verbosity given 3 times (first 'info', last 'warn'): the last one is used" \
  -v info --verbosity debug -v warn
# The same value twice, and --control-cors-allow-origin (its values add
# up), are no mistake: nothing said.
# Values with units or numbers are compared by what they mean (h60: as
# text, 1s then 1.000s was said to differ).
for args in "--service-name a --service-name a" "-hT -h T" \
  "--control-cors-allow-origin http://a --control-cors-allow-origin http://b" \
  "--export-interval 1s --export-interval=1.000s" \
  "--export-interval 2x --export-interval 02x" \
  "--web-port 8080 --web-port 08080" \
  "--eventlog-flush-interval 1 --eventlog-flush-interval 1.0"; do
  # shellcheck disable=SC2086
  "$D" $args --print-defaults-debug >/dev/null 2>"$W/err"
  grep -q "given" "$W/err" && bad "$args: $(cat "$W/err")" || ok "$args: nothing said"
done
exit $fail
