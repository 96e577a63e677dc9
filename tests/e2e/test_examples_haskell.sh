#!/usr/bin/env bash
# The example Haskell programs (examples/haskell) build with plain Debian
# GHC (no eventlog-socket, no Hackage) and write the events their run
# scripts and the dashboards rely on.
#
# Each program runs briefly with +RTS -l; its eventlog is decoded with
# build/eventlog-live show (falling back to the raw strings of the file if
# that does not work) and compared with what the program printed on stdout,
# an independent channel: every "Summing <n> numbers" marker of oddball
# matches a "Generating <n> random numbers" line and every "Sum: <s>" user
# message a "Sum: <s>" line; threads labels its threads and marks rounds;
# jumpy (also built with -prof -fprof-auto when ghc-prof is installed)
# marks rounds and, profiled, writes cost-centre definitions and samples.
set -u
source "$(dirname "$0")/../demo/lib.sh"

GHC=${GHC:-ghc}
command -v "$GHC" >/dev/null || skip "ghc not installed (apt-get install ghc ghc-prof)"
EX=$SRC/examples/haskell
SHOW=$BUILD/eventlog-live
rc=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; rc=1; fi; }

build() {  # build NAME OUTDIR [ghc flags]
  local prog=$1 out=$2; shift 2
  mkdir -p "$out"
  "$GHC" -O1 -threaded -rtsopts -eventlog "$@" -outputdir "$out" \
    -o "$out/$prog" "$EX/$prog/Main.hs" > "$out/ghc.log" 2>&1 || {
    cat "$out/ghc.log"; return 1; }
}

decode() {  # decode EVENTLOG > TEXT: eventlog-live show, else strings
  if [ -x "$SHOW" ] && "$SHOW" show "$1" > "$1.txt" 2> "$1.err" &&
     [ -s "$1.txt" ]; then
    echo "  (decoded with $SHOW show)"
  else
    echo "  (eventlog-live show unavailable: raw strings of the file)"
    strings -n 3 "$1" > "$1.txt"
  fi
}

# ---- cabal files and the eventlog-socket code path -------------------------
# The .cabal files parse with the Cabal library (a GHC boot package), and
# every program also compiles with -DUSE_EVENTLOG_SOCKET against a stub of
# eventlog-socket's API (startFromEnv :: IO (), as in eventlog-socket
# 0.1.3): the cabal build's CPP branch, without Hackage.
if "$GHC" --print-libdir >/dev/null && ghc-pkg list Cabal 2>/dev/null | grep -q Cabal; then
  check "cabal files parse" "runghc --ghc-arg=-package --ghc-arg=Cabal \
    '$SRC/tests/demo/CheckCabal.hs' '$EX'/*/*.cabal"
  printf 'name: broken\nversion 1\n' > "$TMP/broken.cabal"
  check "a broken cabal file is rejected" "! runghc --ghc-arg=-package \
    --ghc-arg=Cabal '$SRC/tests/demo/CheckCabal.hs' '$TMP/broken.cabal' \
    > /dev/null 2>&1"
fi
mkdir -p "$TMP/stub/GHC/Eventlog"
cat > "$TMP/stub/GHC/Eventlog/Socket.hs" <<'HS'
module GHC.Eventlog.Socket (startFromEnv) where
startFromEnv :: IO ()
startFromEnv = putStrLn "eventlog-socket stub: startFromEnv"
HS
for p in oddball threads jumpy; do
  if build "$p" "$TMP/stub-$p" -DUSE_EVENTLOG_SOCKET -i"$TMP/stub"; then
    out=$("$TMP/stub-$p/$p" 1 0 2>&1)
    check "$p: the eventlog-socket build calls startFromEnv" \
      "echo '$out' | grep -q 'stub: startFromEnv'"
  else
    check "$p compiles with -DUSE_EVENTLOG_SOCKET" false
  fi
done

# ---- oddball -------------------------------------------------------------
if build oddball "$TMP/oddball"; then
  (cd "$TMP/oddball" && ./oddball 3 10 20000 7 \
     +RTS -N2 -l -hT -i0 -ol"$TMP/oddball.eventlog" -RTS > stdout.txt)
  check "oddball exits 0" "[ $? = 0 ]"
  decode "$TMP/oddball.eventlog"
  grep -o 'Generating [0-9]* random' "$TMP/oddball/stdout.txt" |
    awk '{print "Summing " $2 " numbers"}' > "$TMP/odd.want.markers"
  grep -o 'Summing [0-9]* numbers' "$TMP/oddball.eventlog.txt" \
    > "$TMP/odd.got.markers"
  check "oddball: 3 rounds printed" \
    "[ \$(wc -l < '$TMP/odd.want.markers') = 3 ]"
  check "oddball: one 'Summing <n> numbers' marker per round, same n as stdout" \
    "cmp -s '$TMP/odd.want.markers' '$TMP/odd.got.markers'"
  grep -o 'Sum: -\?[0-9]*' "$TMP/oddball/stdout.txt" > "$TMP/odd.want.sums"
  grep -o 'Sum: -\?[0-9]*' "$TMP/oddball.eventlog.txt" > "$TMP/odd.got.sums"
  check "oddball: one 'Sum: <s>' user message per round, same s as stdout" \
    "[ -s '$TMP/odd.want.sums' ] && cmp -s '$TMP/odd.want.sums' '$TMP/odd.got.sums'"
  if grep -q 'marker: Summing' "$TMP/oddball.eventlog.txt"; then
    check "oddball: markers are user markers (marker: ...)" \
      "[ \$(grep -c 'marker: Summing' '$TMP/oddball.eventlog.txt') = 3 ]"
    # -i0: a census at every major GC, and oddball forces one per round.
    check "oddball: heap profile samples (-hT), at least one census per round" \
      "[ \$(grep -c 'start heap prof sample' '$TMP/oddball.eventlog.txt') -ge 3 ]"
  fi
else
  check "oddball builds with $GHC" false
fi

# ---- threads -------------------------------------------------------------
if build threads "$TMP/threads"; then
  (cd "$TMP/threads" && ./threads 3 10 4 8 \
     +RTS -N2 -l -ol"$TMP/threads.eventlog" -RTS > stdout.txt)
  check "threads exits 0" "[ $? = 0 ]"
  decode "$TMP/threads.eventlog"
  T=$TMP/threads.eventlog.txt
  for r in 1 2 3; do
    check "threads: marker 'Round $r'" "grep -q 'Round $r\$' '$T'"
  done
  for l in main ticker producer worker-1 worker-4; do
    check "threads: thread label $l" "grep -q '$l' '$T'"
  done
  total=$(sed -n 's/^Round 1: total //p' "$TMP/threads/stdout.txt")
  check "threads: user message 'Round 1: 8 jobs, total $total' (stdout's total)" \
    "[ -n '$total' ] && grep -q 'Round 1: 8 jobs, total $total' '$T'"
  if grep -q 'has label' "$T"; then
    check "threads: labels are thread labels" \
      "grep -q 'has label \"worker-1\"' '$T'"
  fi
else
  check "threads builds with $GHC" false
fi

# ---- jumpy ---------------------------------------------------------------
if build jumpy "$TMP/jumpy"; then
  (cd "$TMP/jumpy" && ./jumpy 3 10 \
     +RTS -N2 -l -ol"$TMP/jumpy.eventlog" -RTS > stdout.txt)
  check "jumpy exits 0" "[ $? = 0 ]"
  decode "$TMP/jumpy.eventlog"
  for r in 1 2 3; do
    check "jumpy: marker 'Jumping round $r'" \
      "grep -q 'Jumping round $r\$' '$TMP/jumpy.eventlog.txt'"
    m=$(grep "^Round $r: " "$TMP/jumpy/stdout.txt")
    check "jumpy: user message '$m' (as on stdout)" \
      "[ -n '$m' ] && grep -q '$m\$' '$TMP/jumpy.eventlog.txt'"
  done
else
  check "jumpy builds with $GHC" false
fi

if build jumpy "$TMP/jumpy-prof" -prof -fprof-auto; then
  (cd "$TMP/jumpy-prof" && ./jumpy 20 5 \
     +RTS -N2 -l -p -hy -i0.05 -ol"$TMP/jumpy-prof.eventlog" -RTS > stdout.txt)
  check "profiled jumpy exits 0" "[ $? = 0 ]"
  check "profiled jumpy writes jumpy.prof" "[ -s '$TMP/jumpy-prof/jumpy.prof' ]"
  decode "$TMP/jumpy-prof.eventlog"
  P=$TMP/jumpy-prof.eventlog.txt
  for f in jump0 jump4 hop work; do
    check "profiled jumpy: cost centre $f defined in the eventlog" \
      "grep -q '$f' '$P'"
  done
  if grep -q 'cost centre [0-9]* ' "$P"; then
    check "profiled jumpy: cost-centre stack samples (+RTS -p -l)" \
      "grep -q 'prof sample [0-9]*, cost centre stack [0-9]' '$P'"
  fi
elif grep -q -i 'prof\|p_hi' "$TMP/jumpy-prof/ghc.log"; then
  echo "note: no profiling libraries (apt-get install ghc-prof): profiled build not checked"
else
  check "jumpy builds with -prof -fprof-auto" false
fi

[ $rc = 0 ] && echo "PASS: example programs"
exit $rc
