#!/usr/bin/env bash
# `eventlog-live watch -- PROGRAM` gives a GHC program its RTS options as
# arguments (PROGRAM +RTS -l -ol<fifo> -RTS ARGS) when its RTS takes them
# there, so that its children do not inherit them through GHCRTS; with
# real GHC 9.0 programs built from tests/haskell/watch_child:
#  - children: a program (-eventlog -rtsopts) that starts two GHC children,
#    one built without -eventlog (as ghc, ghc-pkg and runghc are) and one
#    with it: both see no GHCRTS (none was set) and exit 0 (before: the
#    first stopped with "the flag -l requires the program to be built with
#    -eventlog", the second wrote its own eventlog into the FIFO, a second
#    header mid-stream); the eventlog read is the parent's alone: one
#    header ("hdrb", the format's header tag, once in the tee) and
#    ghc-events (the reference decoder) lists exactly the markers the
#    parent printed;
#  - some: a program linked without -rtsopts takes -l -ol on its command
#    line too (they are "safe" RTS options): arguments, its main sees only
#    its own, its eventlog is read;
#  - own -ol: the program's own "+RTS -ol<file> -RTS" comes after watch's
#    options and wins, as it did over GHCRTS: the eventlog goes to that
#    file, watch warns that nothing was read and names the -ol;
#  - some -hT: without -rtsopts the RTS refuses -hT on its command line
#    and in GHCRTS alike (GHC 9.0): watch falls back to GHCRTS and the
#    program stops with "Most RTS options are disabled", as it would
#    without watch (its status, 1); watch says its RTS refused its
#    options, quoting that line (not "never opened the FIFO");
#  - hy: a program built with -eventlog -rtsopts but not -prof, given its
#    own "+RTS -hy -RTS": its RTS refuses -hy with its usage text, status
#    1; watch says the RTS refused its options, quoting "the flag -hy
#    requires the program to be built with -prof", not "never opened the
#    FIFO"; main never ran (watch's second look at its RTS neither);
#  - watch -hy: the same -hy given to watch: the probe's RTS complains,
#    then prints --info and exits 0; watch says the RTS refuses it, quoting
#    its words, and starts nothing: status 1, no web view URL, main never
#    ran;
#  - ignore: -rtsopts=ignore leaves its command line to main: watch falls
#    back to GHCRTS (-v info says so), main sees only its own arguments,
#    the eventlog is read;
#  - none: -rtsopts=none refuses +RTS on its command line: GHCRTS (which
#    it ignores, with a warning), main sees only its own arguments;
#  - ignoreAll (also with -with-rtsopts=-V0, no ticker, and -threaded):
#    the RTS reads neither: main sees only its own arguments (the probe did
#    not choose arguments; -v info says its seccomp filter stopped it
#    before main) and watch warns that nothing was read.
#  - late: the same, the FIFO opened 400 ms after the program started
#    (a test hook), when it has exited: its eventlog is read all the same;
#  - dyn: linked with -dynamic, its RTS's texts in libHSrts*.so: a GHC
#    program all the same (arguments); plain: built without -eventlog,
#    not started (one message, exit 1); wrap: a script whose text names
#    the GHC RTS is no GHC executable (GHCRTS, no probe);
#  - twice: a wrapper script running two GHC programs in turn: both
#    eventlogs are read, two sessions (also with the FIFO opened late);
#  - no seccomp (no_seccomp.py refuses seccomp filters, as some
#    containers do): watch does not probe (-v info says why), GHCRTS; an
#    ignoreAll program's main runs once, a -rtsopts=some one takes GHCRTS.
# Every program appends its arguments to $WATCH_CHILD_MARK as the first
# thing its main does: each run leaves exactly one line there, its own
# (children's lines apart): watch's probe never reached main (before,
# ignoreAll's main ran a second time, for the probe, and left two).
# Every wait is bounded.
set -u
source "$(dirname "$0")/watch_lib.sh"
command -v ghc-events >/dev/null || skip "ghc-events missing (apt-get install ghc-events)"

# The programs, cached in the build folder until the source or ghc change:
# one source, linked nine ways.
dir=$BUILD/tests/haskell/watch_child
HS=$SRC/tests/haskell/watch_child/Main.hs
mkdir -p "$dir"
variants=("parent:-eventlog -rtsopts" "plain:" "ev:-eventlog -rtsopts"
          "some:-eventlog" "none:-eventlog -rtsopts=none"
          "ignore:-eventlog -rtsopts=ignore"
          "ignoreall:-eventlog -rtsopts=ignoreAll"
          "ignoreallv0:-eventlog -rtsopts=ignoreAll -with-rtsopts=-V0"
          "ignoreallthr:-eventlog -threaded -rtsopts=ignoreAll"
          "dyn:-dynamic -eventlog -rtsopts")
key=$({ "$GHC" --numeric-version; cat "$HS"; echo "${variants[*]}"; } |
  sha256sum | cut -c1-32)
(
  flock 9
  [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ] && exit 0
  rm -f "$dir/key"
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2086 # the flags are words
    "$GHC" -O0 ${v#*:} -outputdir "$dir/obj" -o "$dir/${v%%:*}" "$HS" \
      >> "$dir/build.log" 2>&1 || { cat "$dir/build.log"; exit 1; }
  done
  echo "$key" > "$dir/key"
) 9> "$dir/lock" || die "building watch_child failed"

# run NAME PROGRAM ARGS...: watch -v info --no-linger, its tee in
# $T/NAME.tee, stdout $T/NAME.out, stderr $T/NAME.err, the programs' runs
# of main in $T/NAME.mark; GHCRTS unset. Must exit 0 within 60 s.
run() {
  local name=$1; shift
  (cd "$T" && env -u GHCRTS WATCH_CHILD_MARK="$T/$name.mark" \
    timeout 60 "$EL" watch -v info --no-linger \
    --web-port 0 --eventlog-log-file "$T/$name.tee" -- "$@") \
    < /dev/null > "$T/$name.out" 2> "$T/$name.err"
  local st=$?
  [ $st = 0 ] && pass "$name: watch exited 0" ||
    { tail -n 20 "$T/$name.err"; fail "$name: watch exited $st"; }
}

# markers NAME: the tee's user markers as ghc-events shows them must be
# exactly the texts the program printed ("marker K TEXT" lines).
markers() {
  local name=$1 want got
  want=$(sed -n 's/^marker [0-9]* //p' "$T/$name.out" | grep -v '^child')
  got=$(ghc-events show "$T/$name.tee" 2>&1 | sed -n 's/.*: marker: //p')
  if [ -n "$want" ] && [ "$got" = "$want" ]; then
    pass "$name: ghc-events lists the $(echo "$want" | wc -l) markers printed"
  else
    fail "$name: markers read '$(echo $got)', printed '$(echo $want)'"
  fi
}

# args NAME WANT: the program's main saw exactly WANT (its "args" line).
args_seen() {
  local got
  got=$(grep -m1 '^args ' "$T/$1.out")
  [ "$got" = "args $2" ] && pass "$1: main saw $2" ||
    fail "$1: main saw '${got#args }', want $2"
}

# ran_once NAME WANT: main ran exactly once (children's runs, '["child"]',
# apart), with the arguments WANT: $T/NAME.mark is that one line.
ran_once() {
  local got
  got=$(grep -vx '\["child"\]' "$T/$1.mark" 2>/dev/null)
  [ "$got" = "$2" ] && pass "$1: main ran once, not for the probe" ||
    fail "$1: main's runs: '$(echo $got)', want once: $2"
}

# refused NAME REASON: watch said once that the program's RTS refused its
# options, quoting REASON (what the RTS printed, without its "PROG: "),
# and not that the program never opened the FIFO.
refused() {
  local want="'s RTS refused its options (see its message above): $2; it exited before it opened its eventlog"
  if [ "$(grep -c "RTS refused its options" "$T/$1.err")" = 1 ] &&
     grep -qF -- "$want" "$T/$1.err" &&
     ! grep -q 'never opened the eventlog FIFO' "$T/$1.err"; then
    pass "$1: $(grep -o "RTS refused.*" "$T/$1.err")"
  else
    grep 'watch: ' "$T/$1.err" | tail -n 3
    fail "$1: watch did not say the RTS refused its options ($2)"
  fi
}

echo "== children"
run children "$dir/parent" parent 3 "$dir/plain" "$dir/ev"
args_seen children "[\"parent\",\"3\",\"$dir/plain\",\"$dir/ev\"]"
ran_once children "[\"parent\",\"3\",\"$dir/plain\",\"$dir/ev\"]"
for c in plain ev; do
  grep -qx "child $dir/$c exit 0" "$T/children.out" &&
    pass "children: the child $c exited 0" ||
    { grep -A3 "^$c:" "$T/children.err" | head -5
      fail "children: the child $c did not exit 0"; }
done
n=$(grep -cx 'child GHCRTS=none' "$T/children.out")
[ "$n" = 2 ] && pass "children: both children saw no GHCRTS" ||
  fail "children: $(grep '^child GHCRTS' "$T/children.out" | head -1)"
grep -q 'RTS options as arguments: .*/parent +RTS -l -ol[^ ]*/eventlog\.fifo -RTS' \
  "$T/children.err" && pass "children: -v info says: arguments" ||
  fail "children: no 'RTS options as arguments' line"
h=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().count(b"hdrb"))' \
  "$T/children.tee")
[ "$h" = 1 ] && pass "children: one eventlog header read" ||
  fail "children: $h eventlog headers read (a child wrote into the FIFO)"
markers children

echo "== some: linked without -rtsopts"
run some "$dir/some" a 'b c'
args_seen some '["a","b c"]'
ran_once some '["a","b c"]'
grep -q 'RTS options as arguments' "$T/some.err" &&
  pass "some: -v info says: arguments" || fail "some: not as arguments"
markers some

echo "== some, the FIFO opened late: the program has exited by then"
# EL_TEST_WATCH_OPEN_DELAY_MS: the pipeline opens the FIFO 400 ms after
# the program started, as on a loaded machine (a CI run lost 'some''s
# eventlog this way). The program writes its whole eventlog and exits
# long before: watch's hold on the FIFO keeps its bytes in the pipe
# (before, the kernel discarded them and watch said the program never
# opened the FIFO).
EL_TEST_WATCH_OPEN_DELAY_MS=400 run late "$dir/some" a
args_seen late '["a"]'
if grep -q 'never opened the eventlog FIFO' "$T/late.err"; then
  fail "late: watch says the program never opened the FIFO"
else
  pass "late: no 'never opened' warning"
fi
markers late

echo "== dyn: linked with -dynamic (the RTS's texts in libHSrts*.so)"
# Before, its file held no RTS text: "not a GHC executable", GHCRTS (which
# its children inherit).
run dyn "$dir/dyn" a
args_seen dyn '["a"]'
ran_once dyn '["a"]'
grep -q 'RTS options as arguments' "$T/dyn.err" &&
  grep -q "runtime is a shared library (-dynamic)" "$T/dyn.err" &&
  pass "dyn: -v info says: arguments; the shared runtime is named" ||
  { grep -i "ghcrts\|arguments\|runtime" "$T/dyn.err"; fail "dyn: not as arguments"; }
markers dyn

echo "== own -ol: the program's own +RTS -ol wins"
run ownol "$dir/some" +RTS -olmine.eventlog -RTS a
args_seen ownol '["a"]'
ran_once ownol '["a"]'
[ -s "$T/mine.eventlog" ] &&
  ghc-events show "$T/mine.eventlog" | grep -q 'marker: args marker' &&
  pass "ownol: the eventlog went to its own -olmine.eventlog" ||
  fail "ownol: no mine.eventlog with the program's marker"
grep -q "arguments give -olmine.eventlog" "$T/ownol.err" &&
  pass "ownol: watch names the -ol" || fail "ownol: no warning naming -ol"

echo "== some -hT: -hT without -rtsopts"
(cd "$T" && env -u GHCRTS WATCH_CHILD_MARK="$T/somehT.mark" timeout 60 \
  "$EL" watch -v info --no-linger --web-port 0 -hT -- "$dir/some" a) < /dev/null > "$T/somehT.out" \
  2> "$T/somehT.err"
st=$?
[ $st = 1 ] && grep -q 'Most RTS options are disabled' "$T/somehT.err" &&
  grep -q 'RTS options appended to GHCRTS: -l -ol[^ ]* -hT' "$T/somehT.err" &&
  pass "some -hT: GHCRTS, the RTS refused -hT, status 1" ||
  { tail -n 5 "$T/somehT.err"; fail "some -hT: status $st"; }
[ ! -e "$T/somehT.mark" ] && pass "some -hT: main never ran" ||
  fail "some -hT: main ran: $(cat "$T/somehT.mark")"
refused somehT 'Most RTS options are disabled. Link with -rtsopts to enable them'

echo "== hy: the program's own +RTS -hy -RTS, not built with -prof"
# Its RTS prints "the flag -hy requires the program to be built with
# -prof" and its usage text, and exits 1 before it opens the FIFO (GHC
# 9.0). Before, watch then asked whether it was built with -eventlog or
# linked with -rtsopts=none: both wrong.
(cd "$T" && env -u GHCRTS WATCH_CHILD_MARK="$T/hy.mark" timeout 60 \
  "$EL" watch -v info --no-linger --web-port 0 -- "$dir/ev" +RTS -hy -RTS a) \
  < /dev/null > "$T/hy.out" 2> "$T/hy.err"
st=$?
[ $st = 1 ] && grep -q 'ev: Usage: <prog> <args> \[+RTS' "$T/hy.err" &&
  pass "hy: the RTS printed its usage text, status 1" ||
  { tail -n 5 "$T/hy.err"; fail "hy: status $st"; }
[ ! -e "$T/hy.mark" ] && pass "hy: main never ran (nor for the diagnosis)" ||
  fail "hy: main ran: $(cat "$T/hy.mark")"
refused hy 'the flag -hy requires the program to be built with -prof'

echo "== watch -hy: watch's own -hy, the program not built with -prof"
# The probe's RTS prints "the flag -hy requires the program to be built
# with -prof", then its --info table, and exits 0: before, watch took
# that for a yes, printed its web view's URL, and the program stopped at
# once. Now watch says why and starts nothing (status 1, no URL).
(cd "$T" && env -u GHCRTS WATCH_CHILD_MARK="$T/whY.mark" timeout 60 \
  "$EL" watch -v info --no-linger --web-port 0 -hy -- "$dir/ev" a) \
  < /dev/null > "$T/whY.out" 2> "$T/whY.err"
st=$?
want="watch: $dir/ev's RTS refuses its options: the flag -hy requires the program to be built with -prof (-hT needs no profiling build; the other -h breakdowns need ghc -prof); not started"
if [ $st = 1 ] && grep -qxF -- "eventlog-live: $want" "$T/whY.err" &&
   ! grep -q 'web view http' "$T/whY.err" && [ ! -e "$T/whY.mark" ]; then
  pass "watch -hy: not started, said why, no URL, main never ran"
else
  tail -n 5 "$T/whY.err"
  fail "watch -hy: status $st (want 1, the RTS's words, no URL, no run)"
fi

echo "== none: -rtsopts=none"
run none "$dir/none" a
args_seen none '["a"]'
ran_once none '["a"]'
grep -q 'RTS options appended to GHCRTS: -l -ol' "$T/none.err" &&
  pass "none: -v info says: GHCRTS" || fail "none: not in GHCRTS"

echo "== ignore: -rtsopts=ignore"
run ignore "$dir/ignore" a
args_seen ignore '["a"]'
ran_once ignore '["a"]'
grep -q 'RTS options appended to GHCRTS: -l -ol' "$T/ignore.err" &&
  pass "ignore: -v info says: GHCRTS" || fail "ignore: not in GHCRTS"
markers ignore

for v in ignoreall ignoreallv0 ignoreallthr; do
  echo "== $v: -rtsopts=ignoreAll"
  run $v "$dir/$v" a
  args_seen $v '["a"]'
  ran_once $v '["a"]'
  grep -q "RTS options appended to GHCRTS: .*the probe stopped it before main" \
    "$T/$v.err" && pass "$v: -v info says: GHCRTS, the probe stopped" ||
    fail "$v: no 'the probe stopped it before main'"
  grep -q "warning: .*$v never opened the eventlog FIFO" "$T/$v.err" &&
    pass "$v: warned that nothing was read" ||
    fail "$v: no never-opened warning"
done
echo "== plain: built without -eventlog"
# Its RTS refuses -l (and prints its usage); watch says so plainly and
# does not start it (before: started with GHCRTS, ~100 lines of RTS usage,
# then a "never opened the FIFO" warning). The probe's own --info still
# exits 0 after the refusal: the RTS's message decides, main never runs.
(cd "$T" && env -u GHCRTS WATCH_CHILD_MARK="$T/plainw.mark" timeout 60 \
  "$EL" watch --no-linger --web-port 0 -- "$dir/plain" a) < /dev/null \
  > "$T/plainw.out" 2> "$T/plainw.err"
st=$?
[ $st = 1 ] && grep -q "plain was built without eventlog support.*rebuild it with ghc -eventlog; not started" "$T/plainw.err" &&
  [ ! -e "$T/plainw.mark" ] && [ "$(wc -l < "$T/plainw.err")" -le 2 ] &&
  pass "plain: not started, exit 1, one clear message" ||
  { head -n 5 "$T/plainw.err"; fail "plain: status $st, $(wc -l < "$T/plainw.err") lines on stderr, runs: $(cat "$T/plainw.mark" 2>/dev/null)"; }

echo "== a wrapper script whose text names the GHC RTS"
# Only an ELF file is looked into: the script is no GHC executable, so no
# probe runs (it killed sh) and no "no --eventlog-flush-interval" is said.
printf '#!/bin/sh\n# passes GHC RTS options on\nexec "%s" "$@"\n' "$dir/some" \
  > "$T/wrap.sh"
chmod +x "$T/wrap.sh"
run wrap "$T/wrap.sh" a
args_seen wrap '["a"]'
ran_once wrap '["a"]'
grep -q "RTS options appended to GHCRTS: .*not a GHC executable" "$T/wrap.err" &&
  ! grep -q "probe stopped\|runtime has no --eventlog-flush-interval" "$T/wrap.err" &&
  pass "wrap: -v info says: GHCRTS, not a GHC executable" ||
  { grep -i "ghcrts\|probe\|flush" "$T/wrap.err"; fail "wrap: taken for a GHC executable"; }

echo "== twice: a wrapper that runs two GHC programs, one after the other"
# Each writes its eventlog into the FIFO (GHCRTS): watch opens the FIFO
# again after the first one's end, each a session (h77: the second was
# read or discarded as timing had it: "the processing ended before").
# Also with the FIFO opened 400 ms late, when the first has exited.
printf '#!/bin/sh\n"%s" args\n"%s" args\n' "$dir/ev" "$dir/ev" > "$T/twice.sh"
chmod +x "$T/twice.sh"
for d in 0 400; do
  EL_TEST_WATCH_OPEN_DELAY_MS=$d run "twice$d" "$T/twice.sh"
  got=$("$EL" stats "$T/twice$d.tee" 2>&1 |
    awk '/^sessions:/ { s = $2 } $1 == "USER_MARKER" { m = $3 } END { print s "/" m }')
  [ "$got" = 2/2 ] && ! grep -q 'discarded' "$T/twice$d.err" &&
    pass "twice (open delayed $d ms): 2 sessions, 2 markers read" ||
    { tail -n 5 "$T/twice$d.err"; fail "twice (open delayed $d ms): sessions/markers $got, want 2/2"; }
done

echo "== no seccomp: the probe is not run"
for v in ignoreall some; do
  (cd "$T" && env -u GHCRTS WATCH_CHILD_MARK="$T/nosc$v.mark" timeout 60 \
    python3 "$SRC/tests/e2e/no_seccomp.py" "$EL" watch -v info --no-linger \
    --web-port 0 -- "$dir/$v" a) < /dev/null > "$T/nosc$v.out" \
    2> "$T/nosc$v.err"
  st=$?
  if [ $st = 77 ]; then echo "skip: no seccomp to refuse here"; break; fi
  [ $st = 0 ] && pass "nosc$v: watch exited 0" ||
    { tail -n 5 "$T/nosc$v.err"; fail "nosc$v: watch exited $st"; }
  ran_once nosc$v '["a"]'
  grep -q "RTS options appended to GHCRTS: .*no probe: its seccomp filter" \
    "$T/nosc$v.err" && pass "nosc$v: -v info says: GHCRTS, no probe" ||
    fail "nosc$v: no 'no probe' line"
done

# libseccomp not loadable (watch opens it with dlopen, el_rtsguard.c): an
# empty libseccomp.so.2 found first. The same fallback, with a warning at
# the default verbosity that gives the loader's reason.
echo "== libseccomp not loadable: the probe is not run, and watch says why"
mkdir -p "$T/badlib" && : > "$T/badlib/libseccomp.so.2"
(cd "$T" && env -u GHCRTS WATCH_CHILD_MARK="$T/nolib.mark" \
  LD_LIBRARY_PATH="$T/badlib" timeout 60 "$EL" watch --no-linger \
  --web-port 0 -- "$dir/ignoreall" a) < /dev/null > "$T/nolib.out" \
  2> "$T/nolib.err"
st=$?
[ $st = 0 ] && pass "nolib: watch exited 0" ||
  { tail -n 5 "$T/nolib.err"; fail "nolib: watch exited $st"; }
ran_once nolib '["a"]'
grep -q "warning: watch's probe .* not run: libseccomp, .*cannot be loaded (.*libseccomp.so.2: file too short)" \
  "$T/nolib.err" && pass "nolib: the warning names libseccomp and the loader's reason" ||
  { cat "$T/nolib.err"; fail "nolib: no warning naming libseccomp.so.2's fault"; }
pl_finish
