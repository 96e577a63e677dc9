#!/usr/bin/env bash
# os.exit(code) in a `run` script stops the run cleanly (docs/lua-api.md
# §9): the handler that called it ends there, no later event is
# dispatched, on_end runs, the input is drained so that its writer is not
# left blocked, and run exits with the code. Before, os.exit ended the
# process at once: no on_end, and a GHC program writing the FIFO was left
# hanging (a tester's finding: the RTS of GHC 9.0 does not survive its
# reader vanishing). The independent expectations: oddball-hT's markers as
# the ghc-events reference lists them (the 2nd is "Summing 1655385
# numbers"), and the writer (cat) exiting 0, which it does only if every
# byte was read (a reader gone gives it EPIPE/SIGPIPE).
# ctest-labels: e2e
set -u
source "$(dirname "$0")/oddball_lib.sh"
oddball_start os-exit

first=$(grep -m2 -o 'marker: .*' "$ODD.reference" | sed -n 1p |
  sed 's/^marker: //')
second=$(grep -m2 -o 'marker: .*' "$ODD.reference" | sed -n 2p |
  sed 's/^marker: //')
[ -n "$second" ] || { echo "FAIL: no 2 markers in $ODD.reference"; exit 1; }

cat >"$TMP/exit.lua" <<'EOF'
local el = require("eventlog_live")
local n = 0
el.on("USER_MARKER", function(ev, m)
  n = n + 1
  print("marker", m)
  if n == 2 then os.exit(3) end
  print("after", n)
end)
el.on_end(function() print("on_end", n) end)
EOF
printf 'marker\t%s\nafter\t1\nmarker\t%s\non_end\t2\n' "$first" "$second" \
  >"$TMP/want"

# A recorded file.
"$BIN" run "$TMP/exit.lua" --eventlog-file "$ODD" >"$TMP/file.out" \
  2>"$TMP/file.err"
st=$?
[ $st -eq 3 ] && ok "file: exit status 3" || bad "file: exit status $st, want 3"
if diff "$TMP/want" "$TMP/file.out" >"$TMP/file.diff"; then
  ok "file: stopped in the 2nd marker's handler, on_end ran"
else
  bad "file: output (want, got)"; cat "$TMP/file.diff"
fi

# A FIFO written by cat: drained, so cat writes every byte and exits 0.
mkfifo "$TMP/fifo"
(cat "$ODD" >"$TMP/fifo"; echo $? >"$TMP/cat.rc") &
writer=$!
timeout 60 "$BIN" run "$TMP/exit.lua" --eventlog-file "$TMP/fifo" \
  >"$TMP/fifo.out" 2>"$TMP/fifo.err"
st=$?
wait $writer
[ $st -eq 3 ] && ok "fifo: exit status 3" || bad "fifo: exit status $st, want 3"
diff -q "$TMP/want" "$TMP/fifo.out" >/dev/null &&
  ok "fifo: same output" || bad "fifo: output: $(cat "$TMP/fifo.out")"
crc=$(cat "$TMP/cat.rc" 2>/dev/null)
[ "$crc" = 0 ] && ok "fifo: the writer was drained (cat exit 0)" ||
  bad "fifo: the writer's exit status $crc (its reader left it)"

# While loading: exit at once with the code, nothing read.
printf 'os.exit(false)\n' >"$TMP/load.lua"
"$BIN" run "$TMP/load.lua" --eventlog-file "$ODD" >/dev/null 2>"$TMP/load.err"
st=$?
[ $st -eq 1 ] && ok "load: os.exit(false) exits 1" ||
  bad "load: exit status $st, want 1: $(head -3 "$TMP/load.err")"
printf 'os.exit(true)\n' >"$TMP/load0.lua"
"$BIN" run "$TMP/load0.lua" --eventlog-file "$ODD" >/dev/null 2>&1
st=$?
[ $st -eq 0 ] && ok "load: os.exit(true) exits 0" ||
  bad "load: exit status $st, want 0"
exit $rc
