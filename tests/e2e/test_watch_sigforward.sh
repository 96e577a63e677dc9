#!/usr/bin/env bash
# Signals to `eventlog-live watch` (docs/exit-codes.md "watch and
# signals") with a real GHC 9.0 program, tests/haskell/slow_cleanup: it
# catches SIGINT (UserInterrupt), cleans up for about 2 s while writing
# events, prints "cleanup done" and exits 0; a second SIGINT meanwhile
# makes GHC's RTS exit at once (no "cleanup done"). stdin is /dev/null, so
# watch runs the program in a process group of its own.
#  - group: SIGINT to watch's whole process group (setsid, kill -INT
#    -PGID) reaches the program once: its cleanup runs, watch exits 0;
#  - timeout: what timeout(1) does, SIGINT to watch and then to its group:
#    still once (the repeat within 1 s is not forwarded); and the real
#    `timeout -s INT` (10 s) the same way;
#  - hup: SIGHUP to watch is forwarded (the program dies of it: 129), no
#    program left running (it would block on the FIFO), no folder left;
#  - ignored: SIGPIPE, SIGALRM, SIGXFSZ and SIGRTMIN+1 leave watch and the
#    program running; then SIGUSR1 is forwarded (the program dies: 138);
#  - linger: with an explicit --linger, the SIGINT forwarded during the
#    run does not cancel it (a terminal's default linger it would:
#    test_watch_linger.sh "tty ^C"); after the program's end SIGHUP ends
#    watch (0).
# Every wait is bounded.
set -u
source "$(dirname "$0")/watch_lib.sh"
command -v setsid >/dev/null || skip "setsid missing (util-linux)"
command -v timeout >/dev/null || skip "timeout missing (coreutils)"

# The program, cached in the build folder until its source or ghc change.
dir=$BUILD/tests/haskell/slow_cleanup
SLOW=$dir/slow_cleanup
mkdir -p "$dir"
key=$({ "$GHC" --numeric-version; cat "$SRC/tests/haskell/slow_cleanup/Main.hs"; } |
  sha256sum | cut -c1-32)
(
  flock 9
  [ -x "$SLOW" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ] && exit 0
  "$GHC" -O1 -threaded -eventlog -rtsopts -outputdir "$dir/obj" \
    -o "$SLOW.tmp" "$SRC/tests/haskell/slow_cleanup/Main.hs" \
    > "$dir/build.log" 2>&1 || { cat "$dir/build.log"; exit 1; }
  mv "$SLOW.tmp" "$SLOW" && echo "$key" > "$dir/key"
) 9> "$dir/lock" || die "building slow_cleanup failed"

# start NAME [WATCH_OPTIONS...]: watch in a session (and process group)
# of its own; sets WPID, PGID and PPID_ (the program's pid) once the
# program started.
start() {
  local name=$1
  shift
  setsid "$EL" watch -v info --web-port 0 "$@" -- "$SLOW" < /dev/null \
    > "$T/$name.out" 2> "$T/$name.err" &
  WPID=$!
  PIDS+=("$WPID")
  wait_line "$T/$name.out" '^start ' 60 ||
    { cat "$T/$name.err"; die "$name: the program did not start"; }
  PPID_=$(awk '/^start /{print $2; exit}' "$T/$name.out")
  PGID=$(ps -o pgid= -p "$WPID" | tr -d ' ')
  [ -n "$PGID" ] || die "$name: no process group for $WPID"
}

# cleaned NAME: watch exited 0 after the program's whole cleanup.
cleaned() {
  wl_exits "$1" 0 60 "watch exited 0, the program's status"
  grep -q '^cleanup done' "$T/$1.out" &&
    pass "$1: the program got one SIGINT and finished its cleanup" ||
    fail "$1: the program's cleanup was cut (a second SIGINT?)"
}

# gone NAME: no program left running, no private folder left.
gone() {
  alive "$PPID_" && fail "$1: the program $PPID_ still runs" ||
    pass "$1: the program is gone"
  ls -d "$T"/eventlog-live-watch.* >/dev/null 2>&1 &&
    fail "$1: a private folder is left" || pass "$1: no folder left"
}

echo "== group: SIGINT to watch's process group"
start group
[ "$(ps -o pgid= -p "$PPID_" | tr -d ' ')" != "$PGID" ] &&
  pass "group: the program has a process group of its own" ||
  fail "group: the program is in watch's process group"
kill -INT -- "-$PGID"
cleaned group
gone group

echo "== timeout: SIGINT to watch, then to its group (as timeout(1))"
start timeout
kill -INT "$WPID"
kill -INT -- "-$PGID"
cleaned timeout
gone timeout

echo "== timeout(1) itself"
timeout --preserve-status -s INT 10 "$EL" watch --web-port 0 -- "$SLOW" \
  < /dev/null > "$T/real.out" 2> "$T/real.err"
st=$?
if grep -q '^start ' "$T/real.out"; then
  [ $st = 0 ] && pass "timeout(1): watch exited 0" ||
    { tail -n 5 "$T/real.err"; fail "timeout(1): watch exited $st"; }
  grep -q '^cleanup done' "$T/real.out" &&
    pass "timeout(1): the program finished its cleanup" ||
    fail "timeout(1): the program's cleanup was cut"
else
  echo "note: the program did not start within 10 s; case not checked"
fi

echo "== hup: SIGHUP to watch"
start hup
kill -HUP "$WPID"
wl_exits hup 129 60 "watch exited 129 (the program died of SIGHUP)"
gone hup

echo "== ignored signals, then SIGUSR1 (forwarded)"
start ign
rt=$(($(kill -l RTMIN) + 1))
for s in PIPE ALRM XFSZ "$rt"; do kill "-$s" "$WPID"; done
sleep 1 # no event to wait for: nothing should happen
alive "$WPID" && pass "ign: watch runs on after PIPE ALRM XFSZ RTMIN+1" ||
  fail "ign: watch died of an ignored signal"
alive "$PPID_" && pass "ign: the program runs on" ||
  fail "ign: the program died"
kill -USR1 "$WPID"
wl_exits ign 138 60 "SIGUSR1 forwarded, watch exited 138"
gone ign
echo "== linger: SIGHUP ends --linger after the program's end"
start linger --linger
kill -INT "$WPID"
wait_line "$T/linger.err" 'exited with status 0; the web view stays' 60 ||
  { tail -n 5 "$T/linger.err"; die "linger: watch does not linger"; }
kill -HUP "$WPID"
wl_exits linger 0 30 "SIGHUP ended the linger, status 0"
pl_finish
