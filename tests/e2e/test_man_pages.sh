#!/usr/bin/env bash
# The manual pages (cmake/gen_man.sh, from --help by help2man) render with
# `man -l` and say what the programs say: every page has NAME, SYNOPSIS,
# DESCRIPTION and OPTIONS; SYNOPSIS is the whole usage of --help (also a
# usage wrapped onto continuation lines); every option word of a
# command's --help is in its rendered page, every command of
# `eventlog-live --help` has a page and is in eventlog-live(1). They are regenerated whenever the
# binary is rebuilt; this checks that nothing is lost on the way.
# ctest-labels: e2e
set -uo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
M=$EL_BUILD_DIR/share/man
command -v man >/dev/null || { echo "SKIP: man missing (apt-get install man-db)"; exit 77; }
[ -d "$M" ] || { echo "SKIP: no man pages built (help2man missing: apt-get install help2man)"; exit 77; }
W=$(mktemp -d /tmp/el-man-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# render PAGE: its text, one long line per paragraph (no hyphenation).
render() {
  MANWIDTH=1000 MAN_KEEP_FORMATTING= man --nh --nj -l "$1" 2>"$W/man.err" | col -b
}
# opts: the option words of a help text on stdin.
opts() { grep -oE '(^|[ ,(|`[])--[a-z0-9]([a-z0-9-]*[a-z0-9])?' | sed 's/^[ ,(|`[]//' | sort -u; }

# check PAGE NAME HELP-COMMAND...: PAGE renders, names NAME, holds the options.
check() {
  local page=$1 name=$2
  shift 2
  [ -f "$page" ] || { bad "$name: no page $page"; return; }
  render "$page" >"$W/page.txt"
  if [ ! -s "$W/page.txt" ] || [ -s "$W/man.err" ]; then
    bad "$name: man -l failed: $(head -3 "$W/man.err")"
    return
  fi
  grep -q "^NAME" "$W/page.txt" && grep -qF "$name - " "$W/page.txt" ||
    { bad "$name: no NAME section naming it"; return; }
  # The sections of every page (help2man makes them from --help's
  # "Usage:" and "Options:" lines), SYNOPSIS naming the command.
  local sec
  for sec in SYNOPSIS DESCRIPTION OPTIONS; do
    grep -qx "$sec" "$W/page.txt" || { bad "$name: no $sec section"; return; }
  done
  sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' "$W/page.txt" |
    grep -qE "^ +eventlog-live(-otelcol| ${name#eventlog-live-})? " ||
    { bad "$name: SYNOPSIS does not show the command line"; return; }
  # SYNOPSIS holds the whole usage of --help: every "Usage:" and "or:"
  # line with its indented continuation lines (help2man alone keeps only
  # the first line of a wrapped usage and puts the rest in DESCRIPTION).
  local want_syn got_syn
  want_syn=$("$@" --help 2>&1 | awk '/^Usage:/ { u = 1 } u && /^$/ { exit } u' |
    sed -E 's/^(Usage:| +or:)//' | tr -s ' \n' '  ' | sed 's/^ //; s/ $//')
  got_syn=$(sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' "$W/page.txt" | sed '1d;$d' |
    tr -s ' \n' '  ' | sed 's/^ //; s/ $//')
  [ "$got_syn" = "$want_syn" ] ||
    { bad "$name: SYNOPSIS is not the usage of --help: got '$got_syn', want '$want_syn'"; return; }
  "$@" --help 2>&1 | opts >"$W/want"
  local missing
  missing=$(while read -r o; do grep -qF -- "$o" "$W/page.txt" || echo "$o"; done <"$W/want")
  [ -z "$missing" ] && ok "$name: renders; all $(wc -l <"$W/want") options of --help in it" ||
    bad "$name: options of --help missing from the page: $missing"
}
check "$M/eventlog-live.1" eventlog-live "$EL_BIN"
check "$M/eventlog-live-otelcol.1" eventlog-live-otelcol "$D"
"$EL_BIN" --help | sed -n 's/^  \([a-z]*\)  .*/\1/p' >"$W/cmds"
[ "$(wc -l <"$W/cmds")" -ge 7 ] || bad "only $(wc -l <"$W/cmds") commands in --help"
render "$M/eventlog-live.1" >"$W/main.txt"
while read -r c; do
  check "$M/eventlog-live-$c.1" "eventlog-live-$c" "$EL_BIN" "$c"
  grep -qE "^ +$c( |$)" "$W/main.txt" || bad "eventlog-live(1) does not list $c"
done <"$W/cmds"
# A page for every command and no page for a command that is gone.
for p in "$M"/*.1; do
  b=$(basename "$p" .1)
  case $b in eventlog-live | eventlog-live-otelcol) continue ;; esac
  grep -qx "${b#eventlog-live-}" "$W/cmds" || bad "page $b has no command"
done
exit $fail
