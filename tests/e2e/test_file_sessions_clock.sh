#!/usr/bin/env bash
# The session clock of a recorded file of several sessions (a tee of a
# program run more than once) whose sessions lack WALL_CLOCK_TIME, as
# eventlog-socket records them on GHC 9.0 (docs/lua-api.md §3 "The session
# clock"). The sessions ran one after another: the last one ends at the
# file's modification time, each earlier one when the next one's RTS
# started (exact from its WALL_CLOCK_TIME when it has one). Before, every
# such session ended at the modification time: their times lay over each
# other, and `report` merged the runs' GC pauses (a 4 s "pause").
# The independent expectations: the sessions' largest times from `stats`
# of the one-session file (its "timestamps A .. B ns"), the modification
# time set by the test, and the second session's exact start computed
# here from its WALL_CLOCK_TIME event as `show` prints it.
# ctest-labels: e2e
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${EL_BUILD_DIR:-$SRC/build}
EVENTLOGS=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}
BIN=$BUILD/eventlog-live
SYNTH=$BUILD/tests/el_synth
HEAPY=$EVENTLOGS/ghc-9.0/heapy-hT.eventlog
[ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 77; }
[ -x "$SYNTH" ] || { echo "SKIP: $SYNTH not built"; exit 77; }
[ -f "$HEAPY" ] || { echo "SKIP: no $HEAPY"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/el-file-clock.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
rc=0
bad() { echo "FAIL: $*"; rc=1; }
ok() { echo "ok: $*"; }
MTIME=1700000000

# heapy-hT's events without WALL_CLOCK_TIME (type 43), one repetition.
"$SYNTH" -n 3000 -x 43 -o "$TMP/nw.eventlog" "$HEAPY" 2>/dev/null ||
  { echo "FAIL: el_synth"; exit 1; }
"$BIN" stats "$TMP/nw.eventlog" >"$TMP/nw.stats" 2>&1
if grep -q WALL_CLOCK_TIME "$TMP/nw.stats"; then
  bad "el_synth -x 43 left WALL_CLOCK_TIME in"
fi
B=$(sed -n 's/.*timestamps [0-9]* \.\. \([0-9]*\) ns.*/\1/p' "$TMP/nw.stats")
[ -n "$B" ] || { echo "FAIL: no timestamps in stats"; exit 1; }

cat >"$TMP/clock.lua" <<'EOF'
local el = require("eventlog_live")
local last = 0
el.on("*", function(ev) if ev.t > last then last = ev.t end end)
el.on_session_end(function(s)
  print(s.number, el.session.clock_from, el.session.start_unix_ns,
        el.unix_ns(last))
  last = 0
end)
EOF

# check NAME FILE MTIME EXPECTED...: `run` of clock.lua on FILE modified
# at MTIME (Unix s) prints, per session, its number, clock_from, RTS
# start and last event's Unix ns.
check() {
  local name=$1 file=$2 mtime=$3; shift 3
  touch -d "@$mtime" "$file"
  "$BIN" run "$TMP/clock.lua" --eventlog-file "$file" >"$TMP/$name.out" \
    2>"$TMP/$name.err" || bad "$name: run failed: $(head -3 "$TMP/$name.err")"
  printf '%s\n' "$@" >"$TMP/$name.want"
  if diff "$TMP/$name.want" "$TMP/$name.out" >"$TMP/$name.diff"; then
    ok "$name: sessions one after another"
  else
    bad "$name: (want, got)"; cat "$TMP/$name.diff"
  fi
}

# Two sessions without WALL_CLOCK_TIME: the second ends at the mtime, the
# first where the second began.
E=$((MTIME * 1000000000))
S2=$((E - B))
S1=$((S2 - B))
cat "$TMP/nw.eventlog" "$TMP/nw.eventlog" >"$TMP/two.eventlog"
check two "$TMP/two.eventlog" $MTIME \
  "$(printf '1\tfile_mtime\t%s\t%s' $S1 $S2)" \
  "$(printf '2\tfile_mtime\t%s\t%s' $S2 $E)"

# Then one with WALL_CLOCK_TIME (heapy-hT itself), the file modified after
# it: the first ends where the second's exact clock puts its RTS start,
# the Unix time of the WALL_CLOCK_TIME event minus its eventlog time; its
# clock says so ("next_session": the modification time played no part;
# before, "file_mtime").
W=$("$BIN" show "$HEAPY" 2>/dev/null | python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"\s*(\d+): .*[Ww]all clock time (\d+)s (\d+)ns", line)
    if m:
        t, s, ns = map(int, m.groups())
        print(s * 10**9 + ns - t)
        break
')
[ -n "$W" ] || { echo "FAIL: no WALL_CLOCK_TIME in show $HEAPY"; exit 1; }
HB=$(sed -n 's/.*timestamps [0-9]* \.\. \([0-9]*\) ns.*/\1/p' \
  <("$BIN" stats "$HEAPY" 2>&1))
cat "$TMP/nw.eventlog" "$HEAPY" >"$TMP/mixed.eventlog"
check mixed "$TMP/mixed.eventlog" $((W / 1000000000 + 60)) \
  "$(printf '1\tnext_session\t%s\t%s' $((W - B)) $W)" \
  "$(printf '2\tWALL_CLOCK_TIME\t%s\t%s' $W $((W + HB)))"

# A file on stdin read from the middle (h80: the scan ahead read it from
# byte 0 and gave the session at the read position the first session's
# clock and pid): threads.eventlog then heapy-hT, stdin positioned at
# heapy's header, prints what heapy-hT alone prints.
THREADS=$EVENTLOGS/ghc-9.0/threads.eventlog
cat >"$TMP/hdr.lua" <<'EOF'
local el = require("eventlog_live")
local first = true
el.on_header(function(s)
  print(s.number, s.clock_from, s.start_unix_ns, s.pid)
  first = true
end)
el.on("*", function(ev)
  if first then print(ev.t, ev.unix_ns); first = false end
end)
EOF
cat "$THREADS" "$HEAPY" >"$TMP/cat2.eventlog"
"$BIN" run "$TMP/hdr.lua" --eventlog-file "$HEAPY" >"$TMP/alone.out" 2>&1
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.lseek(fd, int(sys.argv[2]), 0); os.dup2(fd, 0)
os.execvp(sys.argv[3], sys.argv[3:])' "$TMP/cat2.eventlog" \
  "$(stat -c %s "$THREADS")" "$BIN" run "$TMP/hdr.lua" --eventlog-stdin \
  >"$TMP/mid.out" 2>&1
if grep -q WALL_CLOCK_TIME "$TMP/alone.out" &&
   cmp -s "$TMP/alone.out" "$TMP/mid.out"; then
  ok "stdin read from the middle of a file: the session's own clock and pid"
else
  bad "stdin from the middle: got $(head -2 "$TMP/mid.out" | tr '\n' '|')" \
    "want $(head -2 "$TMP/alone.out" | tr '\n' '|')"
fi

# report: both sessions counted, laid end to end (range 2B), and no GC
# pause longer than the one-session file's longest.
"$BIN" report "$TMP/two.eventlog" -o "$TMP/two.html" 2>"$TMP/report.err" ||
  bad "report failed: $(head -3 "$TMP/report.err")"
"$BIN" report "$TMP/nw.eventlog" -o "$TMP/one.html" 2>/dev/null ||
  bad "report of one session failed"
PYTHONPATH=$SRC/tests/e2e python3 - "$TMP/two.html" "$TMP/one.html" "$B" <<'PY' || rc=1
import sys
from report_data import page_data as data
two, one, b = data(sys.argv[1]), data(sys.argv[2]), int(sys.argv[3])
fail = 0
if two["stats"]["sessions"] != 2:
    print("FAIL: report sessions %s, want 2" % two["stats"]["sessions"]); fail = 1
want = 2 * b / 1e9
if abs(two["range"][1] - want) > 1e-3:
    print("FAIL: report range %s, want end %.6f" % (two["range"], want)); fail = 1
p2, p1 = two["gc"]["pause_max_ns"], one["gc"]["pause_max_ns"]
if p2 != p1:
    print("FAIL: longest pause %d ns, one session's %d ns" % (p2, p1)); fail = 1
if not fail:
    print("ok: report: 2 sessions end to end, longest pause %d ns" % p2)
sys.exit(fail)
PY
exit $rc
