#!/usr/bin/env bash
# The appendix of docs/lua-api.md ("handler arguments per event type")
# against the decoder's type table as a script sees it (el.type_info):
# every type a row names has exactly the fields listed, in that order,
# and every type with fields has a row ("types not listed have no
# fields"). Before, 25 types with fields (RUN_SPARK, VERSION, PERF_*,
# Eden's and Mercury's) were missing, so the page said they had none.
set -uo pipefail
: "${EL_BIN:?}" "${EL_SOURCE_DIR:?}" "${EL_EVENTLOGS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
doc=$EL_SOURCE_DIR/docs/lua-api.md
# "NAME<TAB>f1,f2,..." per type named in the appendix's tables, from the
# document alone ("args (array)" is the field args).
sed -n '/^## Appendix/,$p' "$doc" | awk -F' [|] ' '
  /^\| [A-Z]/ && $1 != "| type" {
    sub(/^\| /, "", $1); f = $2; sub(/ \|$/, "", f)
    gsub(/ \([^)]*\)/, "", f); gsub(/, /, ",", f)
    n = split($1, t, ", ")
    for (i = 1; i <= n; i++) print t[i] "\t" f
  }' | sort > "$tmp/doc.txt"
# The same from the host, for every type id with fields.
cat > "$tmp/types.lua" <<'LUA'
local el = require("eventlog_live")
for id = 0, 65535 do
  local ti = el.type_info(id)
  if ti and #ti.fields > 0 then
    print(ti.name .. "\t" .. table.concat(ti.fields, ","))
  end
end
LUA
"$EL_BIN" run "$tmp/types.lua" --output none \
  "$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog" | sort > "$tmp/host.txt"
fail=0
if [ "$(wc -l < "$tmp/doc.txt")" -lt 50 ]; then
  echo "FAIL the appendix's tables were not found in $doc"; fail=1
elif ! diff "$tmp/doc.txt" "$tmp/host.txt"; then
  echo "FAIL docs/lua-api.md appendix (<) differs from el.type_info (>)"
  fail=1
else
  echo "ok   appendix: $(wc -l < "$tmp/doc.txt") types, fields in order"
fi
exit $fail
