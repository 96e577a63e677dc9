#!/usr/bin/env bash
# The bash completion (cmake/gen_completion.py, generated from --help)
# driven as bash would: commands, every option of every command's --help,
# file names after options that take a file, the daemon under its own name.
# The zsh file is syntax-checked when zsh is installed.
# ctest-labels: e2e
set -uo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
C=$EL_BUILD_DIR/share/completion
[ -f "$C/bash/eventlog-live" ] || { echo "SKIP: no completion built (python3 missing)"; exit 77; }
W=$(mktemp -d /tmp/el-comp-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
# shellcheck source=/dev/null
. "$C/bash/eventlog-live-otelcol" # sources the eventlog-live one

# comp FUNCTION WORDS...: the completions of the last word, sorted.
comp() {
  local f=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  "$f"
  printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
opts() { grep -oE '(^|[ ,(|`[])--[a-z0-9]([a-z0-9-]*[a-z0-9])?' | sed 's/^[ ,(|`[]//' | sort -u; }

[ "$(comp _eventlog_live eventlog-live sh)" = show ] && ok "eventlog-live sh<TAB> -> show" ||
  bad "eventlog-live sh<TAB>: $(comp _eventlog_live eventlog-live sh)"
"$EL_BIN" --help | sed -n 's/^  \([a-z]*\)  .*/\1/p' | sort >"$W/cmds"
comp _eventlog_live eventlog-live '' | grep -v '^--' >"$W/got"
cmp -s "$W/cmds" "$W/got" && ok "the commands of --help: $(tr '\n' ' ' <"$W/cmds")" ||
  bad "commands: $(diff "$W/cmds" "$W/got" | tr '\n' ' ')"

# Every option of a command's --help completes after "--".
while read -r c; do
  "$EL_BIN" "$c" --help 2>&1 | opts >"$W/want"
  comp _eventlog_live eventlog-live "$c" -- >"$W/got"
  missing=$(comm -23 "$W/want" "$W/got" | tr '\n' ' ')
  [ -z "$missing" ] && ok "$c: all $(wc -l <"$W/want") options of --help complete" ||
    bad "$c: options not completed: $missing"
done <"$W/cmds"
"$D" --help | opts >"$W/want"
comp _eventlog_live_otelcol eventlog-live-otelcol -- >"$W/got"
missing=$(comm -23 "$W/want" "$W/got" | tr '\n' ' ')
[ -z "$missing" ] && ok "eventlog-live-otelcol: all $(wc -l <"$W/want") options complete" ||
  bad "eventlog-live-otelcol: options not completed: $missing"
[ "$(comp _eventlog_live_otelcol eventlog-live-otelcol --otlp-pro)" = --otlp-protocol ] &&
  ok "eventlog-live-otelcol --otlp-pro<TAB> -> --otlp-protocol" || bad "--otlp-pro<TAB>"

# File names after an option that takes one, nothing after one that
# takes another value.
mkdir "$W/d" && : >"$W/d/app.eventlog" && : >"$W/d/other.txt"
[ "$(comp _eventlog_live eventlog-live show --eventlog-file "$W/d/ap")" = "$W/d/app.eventlog" ] &&
  ok "show --eventlog-file <TAB> completes file names" ||
  bad "show --eventlog-file: $(comp _eventlog_live eventlog-live show --eventlog-file "$W/d/ap")"
[ "$(comp _eventlog_live_otelcol eventlog-live-otelcol --config "$W/d/ot")" = "$W/d/other.txt" ] &&
  ok "eventlog-live-otelcol --config <TAB> completes file names" || bad "--config <TAB>"
[ -z "$(comp _eventlog_live eventlog-live watch --web-port "$W/d/ap")" ] &&
  ok "watch --web-port <TAB>: no file names for a port" || bad "--web-port <TAB> offered files"

if command -v zsh >/dev/null; then
  zsh -n "$C/zsh/_eventlog-live" && ok "zsh completion parses" || bad "zsh -n failed"
else
  echo "note: zsh not installed: its completion file not checked"
fi
exit $fail
