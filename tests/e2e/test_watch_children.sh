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
#    without watch (its status, 1);
#  - ignore: -rtsopts=ignore leaves its command line to main: watch falls
#    back to GHCRTS (-v info says so), main sees only its own arguments,
#    the eventlog is read;
#  - ignoreAll: the RTS reads neither: main sees only its own arguments
#    (the probe did not choose arguments) and watch warns that nothing was
#    read.
# Every wait is bounded.
set -u
source "$(dirname "$0")/watch_lib.sh"
command -v ghc-events >/dev/null || skip "ghc-events missing (apt-get install ghc-events)"

# The programs, cached in the build folder until the source or ghc change:
# one source, linked six ways.
dir=$BUILD/tests/haskell/watch_child
HS=$SRC/tests/haskell/watch_child/Main.hs
mkdir -p "$dir"
key=$({ "$GHC" --numeric-version; cat "$HS"; } | sha256sum | cut -c1-32)
(
  flock 9
  [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ] && exit 0
  rm -f "$dir/key"
  for v in "parent:-eventlog -rtsopts" "plain:" "ev:-eventlog -rtsopts" \
           "some:-eventlog" "ignore:-eventlog -rtsopts=ignore" \
           "ignoreall:-eventlog -rtsopts=ignoreAll"; do
    # shellcheck disable=SC2086 # the flags are words
    "$GHC" -O0 ${v#*:} -outputdir "$dir/obj" -o "$dir/${v%%:*}" "$HS" \
      >> "$dir/build.log" 2>&1 || { cat "$dir/build.log"; exit 1; }
  done
  echo "$key" > "$dir/key"
) 9> "$dir/lock" || die "building watch_child failed"

# run NAME PROGRAM ARGS...: watch -v info --no-linger, its tee in
# $T/NAME.tee, stdout $T/NAME.out, stderr $T/NAME.err; GHCRTS unset. Must
# exit 0 within 60 s.
run() {
  local name=$1; shift
  (cd "$T" && env -u GHCRTS timeout 60 "$EL" watch -v info --no-linger \
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

echo "== children"
run children "$dir/parent" parent 3 "$dir/plain" "$dir/ev"
args_seen children "[\"parent\",\"3\",\"$dir/plain\",\"$dir/ev\"]"
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
grep -q 'RTS options as arguments' "$T/some.err" &&
  pass "some: -v info says: arguments" || fail "some: not as arguments"
markers some

echo "== own -ol: the program's own +RTS -ol wins"
run ownol "$dir/some" +RTS -olmine.eventlog -RTS a
args_seen ownol '["a"]'
[ -s "$T/mine.eventlog" ] &&
  ghc-events show "$T/mine.eventlog" | grep -q 'marker: args marker' &&
  pass "ownol: the eventlog went to its own -olmine.eventlog" ||
  fail "ownol: no mine.eventlog with the program's marker"
grep -q "arguments give -olmine.eventlog" "$T/ownol.err" &&
  pass "ownol: watch names the -ol" || fail "ownol: no warning naming -ol"

echo "== some -hT: -hT without -rtsopts"
(cd "$T" && env -u GHCRTS timeout 60 "$EL" watch -v info --no-linger \
  --web-port 0 -hT -- "$dir/some" a) < /dev/null > "$T/somehT.out" \
  2> "$T/somehT.err"
st=$?
[ $st = 1 ] && grep -q 'Most RTS options are disabled' "$T/somehT.err" &&
  grep -q 'RTS options appended to GHCRTS: -l -ol[^ ]* -hT' "$T/somehT.err" &&
  pass "some -hT: GHCRTS, the RTS refused -hT, status 1" ||
  { tail -n 5 "$T/somehT.err"; fail "some -hT: status $st"; }

echo "== ignore: -rtsopts=ignore"
run ignore "$dir/ignore" a
args_seen ignore '["a"]'
grep -q 'RTS options appended to GHCRTS: -l -ol' "$T/ignore.err" &&
  pass "ignore: -v info says: GHCRTS" || fail "ignore: not in GHCRTS"
markers ignore

echo "== ignoreAll: -rtsopts=ignoreAll"
run ignoreall "$dir/ignoreall" a
args_seen ignoreall '["a"]'
grep -q 'warning: .*ignoreall never opened the eventlog FIFO' \
  "$T/ignoreall.err" && pass "ignoreAll: warned that nothing was read" ||
  fail "ignoreAll: no never-opened warning"
pl_finish
