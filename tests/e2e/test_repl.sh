#!/usr/bin/env bash
# `eventlog-live repl` driven through a pseudo-terminal (expect,
# test_repl_drive.exp) on oddball-hT.eventlog: summary() and filters are
# checked against figures computed independently with awk from the
# ghc-events `.reference` text of the same file; tab completion, an error
# that does not end the REPL, :load of an example, Ctrl-D exiting 0; piped:
# os.exit in a :load-ed script stops its run, not the REPL.
# ctest-labels: asan
set -uo pipefail
: "${EL_BIN:?}" "${EL_SOURCE_DIR:?}" "${EL_EVENTLOGS:?}"
command -v expect >/dev/null || { echo "expect not installed"; exit 77; }
timeout 20 expect -c 'spawn -noecho true; expect eof' >/dev/null 2>&1 ||
  { echo "expect cannot open a pseudo-terminal here"; exit 77; }
D=$EL_EVENTLOGS/ghc-9.0
LOG=$D/oddball-hT.eventlog
REF=$LOG.reference
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"; diff <(echo "$2") <(echo "$3") | head -20; fail=1
  else
    echo "ok   $1"
  fi
}

# Events section of the reference: "t<TAB>cap<TAB>text" (cap -1 if none).
awk '/^Events:/{e=1;next} e && /^[0-9]+: /{
  t=$1; sub(":","",t); rest=substr($0, index($0,": ")+2); cap=-1
  if (rest ~ /^cap [0-9]+: /) { split(rest, a, ":"); cap=substr(a[1],5)+0
    rest=substr(rest, index(rest,": ")+2) }
  print t "\t" cap "\t" rest }' "$REF" > "$tmp/ev"
[ -s "$tmp/ev" ] || { echo "FAIL no events in $REF"; exit 1; }

# The session, through a pty. HOME and the history file are private.
export HOME=$tmp EVENTLOG_LIVE_HISTORY=$tmp/history TERM=xterm
timeout 180 expect -f "$EL_SOURCE_DIR/tests/e2e/test_repl_drive.exp" \
  "$EL_BIN" "$LOG" "$EL_SOURCE_DIR/examples/markers.lua" \
  > "$tmp/raw" 2>"$tmp/err"
rc=$?
tr -d '\r' < "$tmp/raw" > "$tmp/out"
check "driver finished, repl exited 0 after Ctrl-D (status)" 0 "$rc"
if [ "$rc" != 0 ]; then
  cat "$tmp/err"; tail -30 "$tmp/out"; exit 1
fi

# Output of one command: the lines after the prompt line that echoes it,
# up to the next prompt.
section() {
  awk -v cmd="el> $1" 'index($0, cmd) == 1 { on = 1; next }
                       on && /^el> / { exit } on { print }' "$tmp/out"
}
section 'summary()' > "$tmp/summary"

# 1. summary(): total events, duration, capabilities, counts per type.
exp=$(wc -l < "$tmp/ev")
act=$(awk '$1 == "events" { print $2 }' "$tmp/summary")
check "summary: events = event lines of the reference" "$exp" "$act"

exp=$(awk -F'\t' 'NR == 1 { a = $1 } { b = $1 } END { print b - a }' "$tmp/ev")
act=$(sed -n 's/^duration .*(\([0-9]*\) ns, from.*/\1/p' "$tmp/summary")
check "summary: duration = last timestamp - first" "$exp" "$act"

caps=$(awk -F'\t' '$3 ~ /^created cap [0-9]+$/ { split($3, w, " "); print w[3] }' \
  "$tmp/ev" | sort -nu)
exp="$(echo "$caps" | wc -l): $(echo "$caps" | paste -sd, | sed 's/,/, /g')"
act=$(sed -n 's/^capabilities *//p' "$tmp/summary")
check "summary: capabilities" "$exp" "$act"

act=$(sed -n 's/^rts version *//p' "$tmp/summary")
exp=$(sed -n 's/.*RTS version "\(.*\)"$/\1/p' "$tmp/ev" | head -1)
check "summary: RTS version" "$exp" "$act"
act=$(sed -n 's/^pid *\([0-9]*\) .*/\1/p' "$tmp/summary")
exp=$(sed -n 's/.*: pid \([0-9]*\)$/\1/p' "$tmp/ev" | head -1)
check "summary: pid" "$exp" "$act"

count_ref() { # awk regex over the event text -> count
  awk -F'\t' -v re="$1" '$3 ~ re { n++ } END { print n + 0 }' "$tmp/ev"
}
count_sum() { # type name -> count in the summary table
  awk -v t="$1" '$1 == t { print $2 }' "$tmp/summary"
}
for pair in "RUN_THREAD|^running thread " "STOP_THREAD|^stopping thread " \
            "CREATE_THREAD|^creating thread " "GC_START|^starting GC$" \
            "GC_END|^finished GC$" "USER_MARKER|^marker: " \
            "BLOCK_MARKER|^event block: " "THREAD_LABEL|^thread [0-9]+ has label" \
            "HEAP_PROF_SAMPLE_STRING|^heap prof sample " \
            "WALL_CLOCK_TIME|wall clock time"; do
  t=${pair%%|*}; re=${pair#*|}
  check "summary: $t count" "$(count_ref "$re")" "$(count_sum "$t")"
done

# 2. events{type="USER_MARKER"}: the marker times, and the count.
section 'events{type="USER_MARKER"}' > "$tmp/markers"
exp=$(awk -F'\t' '$3 ~ /^marker: / { print $1 }' "$tmp/ev" | sort -n)
act=$(awk '$4 == "USER_MARKER" { print $2 }' "$tmp/markers" | sort -n)
check "events{USER_MARKER}: times" "$exp" "$act"
exp="$(count_ref '^marker: ') events"
act=$(grep -E '^[0-9]+ events' "$tmp/markers")
check "events{USER_MARKER}: count line" "$exp" "$act"

# 3. a capability filter, a time window, a thread filter.
exp="$(awk -F'\t' '$2 == 0 && $3 ~ /^running thread / { n++ } END { print n+0 }' "$tmp/ev") events"
act=$(section 'events{type="RUN_THREAD", cap=0}' | grep -E '^[0-9]+ events')
check "events{RUN_THREAD, cap=0}: count" "$exp" "$act"

exp=$(awk -F'\t' '$1 >= 500000000 && $1 <= 600000000 &&
  $3 ~ /^stopping thread / { n++ } END { print n+0 }' "$tmp/ev")
act=$(section 'events{type="STOP_THREAD", from=5e8, to="0.6s"}' |
      sed -n 's/^\([0-9]*\) events.*/\1/p')
check "events{STOP_THREAD, 0.5s..0.6s}: count" "$exp" "$act"

exp="$(awk -F'\t' '$3 ~ /^(creating|running|migrating|waking up) thread 3( |$)/ ||
  $3 ~ /^stopping thread 3 / || $3 ~ /^thread 3 (has label|is runnable)/ { n++ }
  END { print n+0 }' "$tmp/ev") events"
act=$(section 'events{thread=3}' | grep -E '^[0-9]+ events')
check "events{thread=3}: count" "$exp" "$act"

# 4. completion, errors, :load, gc(), threads().
check "completion: el.type_in<TAB> -> el.type_info(...).id" 1 \
  "$(grep -c '^58$' "$tmp/out")"
check "error: message and traceback, REPL continued" 1 \
  "$(grep -c '^stdin:1: boom 42$' "$tmp/out")"
check "completion: #events{type=\"USER_MA<TAB> -> 10" 1 \
  "$(grep -c '^10$' "$tmp/out")"
check "multi-line input: 1 + / 2 -> 3" 1 "$(grep -c '^3$' "$tmp/out")"
exp="$(count_ref '^marker: ') markers"
check ":load examples/markers.lua printed its report" "$exp" \
  "$(section ':load' | grep -E '^[0-9]+ markers$' | head -1)"
exp=$(awk -F'\t' '$3 == "starting GC" { n++ } END { print n }' "$tmp/ev")
act=$(section 'gc()' | awk '$1 == "all" { print $2 }')
check "gc(): pauses = GC_START count (each GC_START has its GC_END)" "$exp" "$act"
exp="$(awk -F'\t' '$3 ~ /^creating thread / { n++ } END { print n }' "$tmp/ev") threads"
act=$(section 'threads()' | grep -E '^[0-9]+ threads$')
check "threads(): one row per created thread" "$exp" "$act"
check "Ctrl-C interrupts an evaluation" 1 \
  "$(grep -cE '(^|\^C)interrupted$' "$tmp/out")"
check "Ctrl-C drops a partial input (40 + 2 alone -> 42)" 1 \
  "$(grep -c '^42$' "$tmp/out")"
check "history file written" 1 "$(grep -c '^summary()$' "$tmp/history")"

# 5. Lines piped in (docs/repl.md: exit status 1 when a line failed): an
# unfinished statement ended by :quit, or by the end of the input, is a
# failed line (the second used to be dropped without a word).
rc=0
printf 'x = (\n:quit\n' | "$EL_BIN" repl "$LOG" --no-history >/dev/null 2>"$tmp/p1" || rc=$?
check "piped: unfinished input ended by :quit exits 1" 1 "$rc"
rc=0
printf 'y = 1\nx = (\n' | "$EL_BIN" repl "$LOG" --no-history >/dev/null 2>"$tmp/p2" || rc=$?
check "piped: input ending inside a statement exits 1" 1 "$rc"
check "piped: ... and says so" 1 \
  "$(grep -c 'repl: the input ended inside an unfinished statement (not run): x = ($' "$tmp/p2")"
rc=0
printf 'y = 1\n:quit\n' | "$EL_BIN" repl "$LOG" --no-history >/dev/null 2>&1 || rc=$?
check "piped: good lines exit 0" 0 "$rc"

# 5b. Two sessions (threads.eventlog, then this file: two runs, as a
# socket reconnection or `cat a b` gives): threads() lists each session's
# threads with the runs and running ns of its own file (RUN_THREAD paired
# with the next STOP_THREAD of the thread on the same capability, counted
# in `eventlog-live show` of each file), a session column and each
# session's count. The tracker starts afresh with each session: only the
# second session's were listed, without a word.
cat "$D/threads.eventlog" "$LOG" > "$tmp/two.eventlog"
for i in 1 2; do
  f=$D/threads.eventlog; [ "$i" = 2 ] && f=$LOG
  "$EL_BIN" show "$f" | awk -v s="$i" '
    / cap [0-9]+: running thread [0-9]+$/ {
      t = $1; sub(":", "", t); c = $3; sub(":", "", c)
      start[$6, c] = t; open[$6, c] = 1; seen[$6] = 1; next }
    / cap [0-9]+: stopping thread [0-9]+ / {
      t = $1; sub(":", "", t); c = $3; sub(":", "", c); seen[$6] = 1
      if (open[$6, c]) { runs[$6]++; ns[$6] += t - start[$6, c]; open[$6, c] = 0 } }
    / creating thread [0-9]+$/ { seen[$NF] = 1 }
    END { for (th in seen) printf "%d %d %d %d\n", s, th, runs[th], ns[th] }'
done | sort -k1,1n -k2,2n > "$tmp/two.want"
printf '%s\n' 'for _, t in ipairs(threads()) do print("T", t.session, t.thread, t.runs, t.running_ns) end' \
  'threads()' | "$EL_BIN" repl "$tmp/two.eventlog" --no-history \
  > "$tmp/two.out" 2> "$tmp/two.err"
check "two sessions: threads() per session = each file's runs and running ns" \
  "$(cat "$tmp/two.want")" \
  "$(awk '$1 == "T" { print $2, $3, $4, $5 }' "$tmp/two.out" | sort -k1,1n -k2,2n)"
n1=$(awk '$1 == 1' "$tmp/two.want" | wc -l); n2=$(awk '$1 == 2' "$tmp/two.want" | wc -l)
check "two sessions: threads() count line gives each session's" \
  "$((n1 + n2)) threads (session 1: $n1, session 2: $n2)" \
  "$(grep -E '^[0-9]+ threads' "$tmp/two.out")"
check "two sessions: threads() has a session column" 1 \
  "$(grep -cE '^ *session +thread ' "$tmp/two.out")"

# 6. An input file that cannot be opened: status 1, as every command
# (docs/exit-codes.md; it was 2, a usage error's), in one line naming it.
rc=0
echo 'summary()' | "$EL_BIN" repl "$tmp/missing.eventlog" --no-history \
  >/dev/null 2>"$tmp/m1" || rc=$?
check "missing input file exits 1" 1 "$rc"
check "... in one line naming it" \
  "eventlog-live: repl: cannot open $tmp/missing.eventlog: No such file or directory" \
  "$(cat "$tmp/m1")"

# 7. /dev/null (a character device that is not a terminal) is read to its
# end like a regular file, not followed as a live source ("following
# /dev/null", then "[/dev/null: input ended ...]" while the prompt
# waited): an empty input, with the messages and status of an empty
# regular file. A file that holds no eventlog (empty, cut inside its
# header, not an eventlog) is no source to explore: status 1, as every
# other command (docs/exit-codes.md "empty", "header", "notlog"; h66: the
# REPL gave a prompt over 0 events and exited 0). The lines come from a
# FIFO the test holds open: the REPL must end without reading them.
: >"$tmp/empty.eventlog"
head -c 200 "$LOG" >"$tmp/cut.eventlog"
mkfifo "$tmp/lines"
for f in "$tmp/empty.eventlog" /dev/null "$tmp/cut.eventlog"; do
  n=$(basename "$f")
  exec 3<>"$tmp/lines"
  timeout 10 "$EL_BIN" repl "$f" --no-history <"$tmp/lines" \
    >"$tmp/$n.out" 2>"$tmp/$n.err"
  echo $? >"$tmp/$n.rc"
  exec 3>&-
  sed -i "s|$f|INPUT|g" "$tmp/$n.out" "$tmp/$n.err"
done
check "empty regular file: status 1, no prompt read" 1 \
  "$(cat "$tmp/empty.eventlog.rc")"
check "empty regular file: said, nothing on stdout" \
  "eventlog-live: error: INPUT: no eventlog header: the input is empty
eventlog-live: repl: INPUT holds no eventlog to explore" \
  "$(cat "$tmp/empty.eventlog.err" "$tmp/empty.eventlog.out")"
check "/dev/null: the status of an empty regular file" 1 "$(cat "$tmp/null.rc")"
check "/dev/null: the same messages as an empty regular file" \
  "$(cat "$tmp/empty.eventlog.err")" "$(cat "$tmp/null.err")"
check "cut inside the header: status 1" 1 "$(cat "$tmp/cut.eventlog.rc")"
check "cut inside the header: said with its byte" 1 \
  "$(grep -c 'truncated inside the header at byte 200' "$tmp/cut.eventlog.err")"

# 8. os.exit in a script :load runs over a file stops that script's run as
# in `run` (its on_end runs, after the 100th RUN_THREAD by the script's own
# count), and the REPL goes on (h66: the whole REPL exited with 3).
cat >"$tmp/exit.lua" <<'LUA'
local el = require("eventlog_live")
local c = 0
el.on("RUN_THREAD", function() c = c + 1; if c == 100 then os.exit(3) end end)
el.on_end(function() print("end after " .. c) end)
LUA
printf ':load %s\nprint(40 + 2)\n' "$tmp/exit.lua" |
  timeout 20 "$EL_BIN" repl "$LOG" --no-history \
    >"$tmp/exit.out" 2>"$tmp/exit.err"
check ":load os.exit(3): the REPL went on and exited 0" 0 "$?"
check ":load os.exit(3): the script's on_end ran at its 100th RUN_THREAD" \
  "end after 100" "$(grep '^end after' "$tmp/exit.out")"
check ":load os.exit(3): the next line ran" 1 "$(grep -c '^42$' "$tmp/exit.out")"
check ":load os.exit(3): said with its code" 1 \
  "$(grep -c 'os.exit(3) stopped the script' "$tmp/exit.err")"

# 9. A history file that cannot be written (its folder is missing) is said
# once, with the reason; the lines still run (h66: silently not kept).
printf 'print(1)\nprint(2)\n' |
  timeout 20 "$EL_BIN" repl "$LOG" --history "$tmp/no/such/dir/h" \
    >"$tmp/hist.out" 2>"$tmp/hist.err"
check "unwritable --history: status 0, the lines ran" "0 2" \
  "$? $(grep -c '^[12]$' "$tmp/hist.out")"
check "unwritable --history: said once, with its path and reason" 1 \
  "$(grep -c "cannot write the history file $tmp/no/such/dir/h: No such file or directory" "$tmp/hist.err")"
# A history file keeps its permissions (libedit's write makes it 0600:
# h67 found /dev/null made 0600 for every user by a root REPL), and one
# that is not a regular file keeps no history: a FIFO nobody writes is
# neither read (that never ended) nor written, and is said once; -v quiet
# silences the warnings.
: >"$tmp/h644"
chmod 644 "$tmp/h644"
echo 'print(3)' | timeout 20 "$EL_BIN" repl "$LOG" --history "$tmp/h644" \
  >/dev/null 2>&1
check "history file: its permissions kept, the line saved" "644 1" \
  "$(stat -c %a "$tmp/h644") $(grep -c '^print(3)$' "$tmp/h644")"
mkfifo "$tmp/hfifo"
echo 'print(4)' | timeout 20 "$EL_BIN" repl "$LOG" --history "$tmp/hfifo" \
  >"$tmp/hfifo.out" 2>"$tmp/hfifo.err"
check "FIFO as history file: no wait, the line ran" "0 1" \
  "$? $(grep -c '^4$' "$tmp/hfifo.out")"
check "FIFO as history file: said once" 1 \
  "$(grep -c "history file $tmp/hfifo is not a regular file" "$tmp/hfifo.err")"
echo 'print(5)' | timeout 20 "$EL_BIN" repl -v quiet "$LOG" \
  --history "$tmp/no/such/dir/h" >/dev/null 2>"$tmp/hq.err"
check "-v quiet: no history warning" 0 "$(grep -c history "$tmp/hq.err")"
# 10. A terminal named as the source (/dev/tty, under a pseudo-terminal)
# is refused as stdin is: a usage error, status 2 (h67: it was followed
# as a live source reading the prompt's own keys, and nothing ended it).
out=$(timeout -k 5 30 expect -c "spawn -noecho $EL_BIN repl --no-history /dev/tty
  set timeout 10
  expect eof {} timeout { exec kill -9 [exp_pid]; puts HUNG }
  puts \"STATUS [lindex [wait] 3]\"" 2>&1 | tr -d '\r')
check "repl /dev/tty: refused with status 2" "STATUS 2" \
  "$(echo "$out" | grep '^STATUS')"
check "repl /dev/tty: said" 1 "$(echo "$out" | grep -c '/dev/tty is a terminal')"

# 11. A live source that ends with no eventlog (an empty FIFO writer): the
# end line does not call it "truncated" (h67), it points at the decoder's
# line above it.
mkfifo "$tmp/efifo" "$tmp/elines"
exec 3<>"$tmp/elines"
timeout 20 "$EL_BIN" repl "$tmp/efifo" --no-history <"$tmp/elines" \
  >"$tmp/efifo.out" 2>"$tmp/efifo.err" &
pid=$!
: >"$tmp/efifo"
for _ in $(seq 100); do
  grep -q 'input ended' "$tmp/efifo.err" && break
  sleep 0.1
done
echo ':quit' >&3
exec 3>&-
wait "$pid"
check "empty live source: the end line names no header" 1 \
  "$(grep -c "^\[$tmp/efifo: input ended: no eventlog header read (said above)\]$" "$tmp/efifo.err")"

exit $fail
