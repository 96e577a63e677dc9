#!/usr/bin/env bash
# eventlog-live-otelcol's configuration from the command line:
#  - --print-defaults output is YAML that validates against the JSON Schema
#    printed by --print-config-json-schema (Draft-07, python3-jsonschema),
#    and the schema rejects what the reference grammar rejects;
#  - a config error names file, line, column and key and exits 1; an
#    unknown key warns with a suggestion;
#  - the command line of the README parses; -h letters, -v levels.
# ctest-labels: e2e
set -euo pipefail
: "${EL_BUILD_DIR:?}"
D=$EL_BUILD_DIR/eventlog-live-otelcol
python3 -c 'import jsonschema, yaml' 2>/dev/null ||
  { echo "skip: python3-jsonschema / python3-yaml missing"; exit 77; }
W=$(mktemp -d /tmp/el-otelcol-cfg-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

"$D" --print-defaults >"$W/defaults.yaml"
"$D" --print-config-json-schema >"$W/schema.json"
python3 - "$W/defaults.yaml" "$W/schema.json" <<'PY' && ok "defaults validate against the schema" || bad "schema validation"
import json, sys, yaml, jsonschema
doc = yaml.safe_load(open(sys.argv[1]))
schema = json.load(open(sys.argv[2]))
jsonschema.Draft7Validator.check_schema(schema)
v = jsonschema.Draft7Validator(schema)
v.validate(doc)
# Every processor of the reference (§3.1, HEAD keys) is there.
want = {
  "logs": {"thread_label", "user_marker", "user_message", "internal_log_message"},
  "metrics": {"blocks_size", "capability_usage", "heap_allocated", "heap_live",
              "heap_prof_sample", "heap_size", "mem_current", "mem_needed",
              "mem_returned", "gc_copied", "gc_slop", "gc_fragmentation",
              "productivity", "internal_event_count"} |
             {f"internal_{a}_{b}" for a in ("exported", "rejected")
              for b in ("logs", "metrics", "samples", "spans")},
  "traces": {"capability_usage", "thread_state"},
  "profiles": {"call_stack_profile", "cost_centre_stack_profile"},
}
for g, keys in want.items():
    assert set(doc["processors"][g]) == keys, (g, set(doc["processors"][g]))
# The schema accepts the documented forms and rejects bad values.
good = [{"processors": {"metrics": {"heap_size": None}}},
        {"processors": {"metrics": {"heap_size": {"export": "0.5s", "aggregate": "2x"}}}},
        {"processors": {"traces": {"thread_state": {"export": True}}}}]
badv = [{"processors": {"metrics": {"heap_size": {"export": "30m"}}}},
        {"processors": {"metrics": {"heap_size": {"export": 30}}}},
        {"processors": {"logs": {"user_marker": {"aggregate": "1s"}}}},
        {"processors": {"metrics": {"heap_size": {"export": "1.5x"}}}},
        {"processors": {"metrics": {"heap_sise": {}}}}]
for d in good:
    v.validate(d)
for d in badv:
    assert not v.is_valid(d), d
PY

# docs/config.md's key table is the one the program prints.
"$D" --print-config-markdown >"$W/keys.md"
python3 - "$W/keys.md" "${EL_SOURCE_DIR:-$(dirname "$0")/../..}/docs/config.md" <<'PY' && ok "docs/config.md key table is current" || bad "docs/config.md key table differs from --print-config-markdown"
import sys
assert open(sys.argv[1]).read() in open(sys.argv[2]).read()
PY
# The reference's names and descriptions of the GC statistics and
# productivity.
python3 - "$W/defaults.yaml" <<'PY' && ok "gc_* and productivity names" || bad "gc_* and productivity names"
import sys, yaml
m = yaml.safe_load(open(sys.argv[1]))["processors"]["metrics"]
want = {"gc_copied": "ghc_eventlog_GcCopied", "gc_slop": "ghc_eventlog_GcSlop",
        "gc_fragmentation": "ghc_eventlog_GcFragmentation",
        "productivity": "ghc_eventlog_Productivity"}
for k, n in want.items():
    assert m[k]["name"] == n and m[k]["aggregate"] == "1s" and m[k]["export"] == "30s", (k, m[k])
assert m["productivity"]["description"] == "The share of capability time spent in the mutator rather than GC, in percent."
assert m["gc_slop"]["description"] == "The number of slop bytes found in one garbage collection pass."
PY

# Config errors: file:line:column: key: message, exit status 1.
printf 'processors:\n  metrics:\n    heap_size:\n      export: 30m\n' >"$W/bad.yaml"
if "$D" --config "$W/bad.yaml" --eventlog-file /dev/null 2>"$W/err"; then
  bad "bad config accepted"
else
  st=$?
  grep -qF "$W/bad.yaml:4:15: processors.metrics.heap_size.export: expected true, false" "$W/err" &&
    [ $st = 1 ] && ok "type error names file:line:col and key" ||
    { bad "error message/status ($st)"; cat "$W/err"; }
fi
# A quoted boolean is a string: said so, not "expected true, ... found 'true'".
printf 'processors:\n  metrics:\n    heap_size:\n      export: "true"\n' >"$W/qbool.yaml"
st=0; "$D" --config "$W/qbool.yaml" --eventlog-file /dev/null 2>"$W/err" || st=$?
grep -qF "qbool.yaml:4:15: processors.metrics.heap_size.export: 'true' in quotes is a string, not a boolean: drop the quotes (export: true)" "$W/err" &&
  [ $st = 1 ] && ok "quoted boolean: drop the quotes" ||
  { bad "quoted boolean message/status ($st)"; cat "$W/err"; }
printf 'processors:\n  metrics: {heap_size: {}\n' >"$W/syntax.yaml"
"$D" --config "$W/syntax.yaml" --eventlog-file /dev/null 2>"$W/err" &&
  bad "syntax error accepted" ||
  { grep -qE "syntax.yaml:3:[0-9]+: YAML syntax error" "$W/err" &&
    ok "syntax error position" || { bad "syntax error message"; cat "$W/err"; }; }
printf 'processors:\n  metrics:\n    heap_sise: {}\n' >"$W/unknown.yaml"
"$D" --config "$W/unknown.yaml" --print-defaults-debug >/dev/null 2>"$W/err" &&
  grep -qF "unknown.yaml:3:5: unknown key 'heap_sise' in processors.metrics (ignored); did you mean 'heap_size'?" "$W/err" &&
  ok "unknown key warning with suggestion" || { bad "unknown key"; cat "$W/err"; }
"$D" --config "$W/missing.yaml" --eventlog-file /dev/null 2>"$W/err" &&
  bad "missing file accepted" ||
  { grep -qF "missing.yaml: cannot read configuration file" "$W/err" &&
    ok "missing file" || bad "missing file message"; }

# The README's command line parses (stops at --print-defaults-debug).
"$D" --service-name=my-app --eventlog-socket /tmp/nonexistent.sock -hT \
  --eventlog-flush-interval=1 --otelcol-host=localhost --control \
  --control-port 30719 --control-cors-ignore-failure --print-defaults-debug \
  >/dev/null && ok "README command line parses" || bad "README command line"
for v in trace debug info warn warning error fatal WARN Debug2; do
  "$D" -v "$v" --print-defaults-debug >/dev/null 2>&1 || bad "-v $v"
  "$D" --verbosity="$v" --print-defaults-debug >/dev/null 2>&1 || bad "--verbosity=$v"
done
ok "verbosity levels"
for h in T c m d y e r b i; do
  "$D" -h$h --print-defaults-debug >/dev/null || bad "-h$h"
done
"$D" -hx --print-defaults-debug 2>"$W/err" && bad "-hx accepted" ||
  { grep -qF "Unsupported heap profile breakdown -hx" "$W/err" && ok "-h letters"; }
st=0; "$D" --eventlog-file /dev/null --bogus 2>/dev/null || st=$?
[ $st = 2 ] && ok "unknown option: status 2" || bad "unknown option status $st"
"$D" --version >"$W/v" && grep -qE "^[0-9]+\.[0-9]+" "$W/v" && ok "--version" || bad "--version"
"$D" --help >"$W/help" && grep -q -- "--eventlog-flush-interval" "$W/help" && ok "--help" || bad "--help"
exit $fail
