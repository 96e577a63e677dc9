#!/usr/bin/env bash
# `eventlog-live watch -- PROGRAM` when PROGRAM cannot run: watch checks it
# before anything starts (no web view URL, no GHC note) and exits as a
# shell would (docs/exit-codes.md). The expected status is the one sh
# itself gives for the same command (the independent source):
#  - noexec: a file without the x bit: 126, "Permission denied";
#  - folder: a folder (/tmp style): 126, no "not a GHC executable" note;
#  - missing: a name found nowhere in PATH: 127, "cannot find";
#  - no #!: a script without a #! line runs under /bin/sh, as sh runs it.
# Also -v with a misspelt level gets a did-you-mean (status 2),
#  - never opened: a program that never opens the FIFO exits with its
#    status, after a warning that nothing was read (naming its -ol);
#  - held: a program that exits while its child holds the FIFO: watch
#    ends the input soon after (a warning), with every byte read;
#  - space: a TMPDIR with a space (GHCRTS cannot carry it): the FIFO goes
#    in /tmp, with a note, and the program finds it;
#  - hint: a program that opens its eventlog (the -ol FIFO in its GHCRTS)
#    and writes nothing gets "No input after 10 ticks" with a hint that
#    fits watch (it passed -l itself; the 2 MiB buffer), not "Did you pass
#    -l to the GHC RTS?". Waits up to 60 s for the line, then SIGTERM.
set -u
SRC=${EL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
EL=${EL_BUILD_DIR:-$SRC/build}/eventlog-live
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
[ -x "$EL" ] || { echo "SKIP: $EL not built"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/el-watch-exec.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
printf '#!/bin/sh\nexit 0\n' > noexec
chmod 644 noexec
mkdir folder

# check NAME WANT_TEXT -- PROGRAM: watch's status must be sh's for PROGRAM.
check() {
  local name=$1 want=$2; shift 3
  sh -c "$*" < /dev/null > /dev/null 2>&1
  local sh_st=$?
  timeout 30 "$EL" watch -- "$@" < /dev/null > "$name.out" 2> "$name.err"
  local st=$?
  [ "$st" = "$sh_st" ] && pass "$name: status $st, as sh" ||
    { cat "$name.err"; fail "$name: status $st, sh gives $sh_st"; }
  grep -q "$want" "$name.err" && pass "$name: says '$want'" ||
    { cat "$name.err"; fail "$name: no '$want'"; }
  grep -q 'web view' "$name.err" &&
    fail "$name: the web view was started before the check" ||
    pass "$name: no web view started"
  grep -q 'not a GHC executable' "$name.err" &&
    fail "$name: a misleading 'not a GHC executable' note" ||
    pass "$name: no GHC note"
}
check noexec 'Permission denied' -- ./noexec
check folder 'Is a directory' -- ./folder
check missing 'cannot find el-no-such-program-x in PATH' -- el-no-such-program-x

timeout 30 "$EL" watch -v infoo -- true < /dev/null 2> v.err
st=$?
[ $st = 2 ] && grep -q "did you mean info" v.err &&
  pass "-v infoo: status 2, $(cat v.err)" ||
  { cat v.err; fail "-v infoo: status $st"; }
echo "== no #! line"
# A script without a #! line: the kernel will not run it (ENOEXEC); sh
# and execvp run it with /bin/sh, and so does watch (h76: before, 126
# "Exec format error"). Its status and arguments as sh gives them.
printf 'echo "args: $*"\nexit 3\n' > bare.sh
chmod 755 bare.sh
sh -c './bare.sh a "b c"' < /dev/null > bare.want 2>&1
sh_st=$?
timeout 30 "$EL" watch --no-linger --web-port 0 -- ./bare.sh a 'b c' \
  < /dev/null > bare.out 2> bare.err
st=$?
[ "$st" = "$sh_st" ] && [ "$sh_st" = 3 ] && diff -q bare.want bare.out >/dev/null &&
  pass "no #!: run by /bin/sh, status $st and output as sh's" ||
  { cat bare.err; fail "no #!: status $st (sh: $sh_st), output '$(cat bare.out)'"; }

# A binary the kernel will not run (an ELF for another machine: /bin/true
# with its e_machine set to AArch64, 183) is no script: 126 as sh gives,
# not run under /bin/sh (h77: "Syntax error", status 2).
python3 - "$(type -P true)" foreign.elf <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
assert b[:4] == b'\x7fELF'
b[18:20] = (183).to_bytes(2, 'little' if b[5] == 1 else 'big')
open(sys.argv[2], 'wb').write(b)
PY
chmod 755 foreign.elf
sh -c ./foreign.elf < /dev/null > /dev/null 2>&1
sh_st=$?
timeout 30 "$EL" watch --no-linger --web-port 0 -- ./foreign.elf \
  < /dev/null > foreign.out 2> foreign.err
st=$?
[ "$st" = "$sh_st" ] && [ "$st" = 126 ] && grep -q 'Exec format error' foreign.err &&
  ! grep -q 'Syntax error' foreign.err &&
  pass "foreign ELF: 126, 'Exec format error', as sh" ||
  { cat foreign.err; fail "foreign ELF: status $st (sh: $sh_st)"; }

echo "== never opened"
# A program that never opens the FIFO (not a GHC program, or its own
# +RTS -ol<file> wins over GHCRTS): its status, and a warning saying that
# nothing was read (before: silence, an empty page and status 0).
timeout 30 "$EL" watch --no-linger -- sh -c 'exit 3' sh -olmine.eventlog \
  < /dev/null > never.out 2> never.err
st=$?
[ $st = 3 ] && pass "never opened: status 3, the program's" ||
  { cat never.err; fail "never opened: status $st, want 3"; }
grep -q 'warning: sh never opened the eventlog FIFO' never.err &&
  grep -q "sh's arguments give -olmine.eventlog" never.err &&
  pass "never opened: $(grep -o 'never opened.*read\.' never.err)" ||
  { cat never.err; fail "never opened: no warning naming the FIFO and -ol"; }
echo "== held"
# A program that writes its eventlog and exits while a child it started
# still holds the FIFO (inherited descriptor; a GHC program's children
# inherit GHCRTS too): watch must end the input once the program has gone
# and the pipe is read empty, not wait for the child (before: it waited
# for the child's exit, for ever for a server); then it reads and
# discards the FIFO for at most 5 s more, so that a child that writes is
# not blocked, and warns that the child still holds it. The whole
# eventlog is still read (its tee has every byte).
ODD=${EL_EVENTLOGS:-$SRC/tests/data/eventlogs}/ghc-9.0/oddball-hT.eventlog
if [ -f "$ODD" ]; then
  t0=$SECONDS
  timeout 25 "$EL" watch --no-linger --eventlog-log-file held.tee -- sh -c \
    'f=${GHCRTS##*-ol}; f=${f%% *}; exec 3>"$f"; cat "$1" >&3; sleep 60 &
     echo $! > held.pid; exit 5' sh "$ODD" < /dev/null > held.out 2> held.err
  st=$? took=$((SECONDS - t0))
  [ $st = 5 ] && [ $took -le 15 ] &&
    pass "held: status 5 after ${took} s, the child still running" ||
    { cat held.err; fail "held: status $st after ${took} s (want 5, soon)"; }
  grep -q 'another process still holds its eventlog open' held.err &&
    grep -q 'another process still holds its eventlog FIFO open for writing' held.err &&
    pass "held: says so, and after the drain again" || { cat held.err; fail "held: no warning"; }
  cmp -s "$ODD" held.tee && pass "held: every byte was read" ||
    fail "held: the tee differs from the eventlog written"
  kill "$(cat held.pid)" 2>/dev/null
else
  echo "skip held: no $ODD"
fi
echo "== space"
# TMPDIR with a space: the RTS splits GHCRTS at white space (no quoting),
# so an -ol<fifo> under it reached the program as two RTS arguments ("hello:
# unexpected RTS argument: ace/eventlog-live-watch.X/eventlog.fifo"). The
# FIFO must go where GHCRTS can name it: the program finds it and writes
# the whole eventlog through it.
if [ -f "$ODD" ]; then
  mkdir -p "$T/sp ace"
  TMPDIR="$T/sp ace" timeout 25 "$EL" watch --no-linger \
    --eventlog-log-file space.tee -- sh -c \
    'f=${GHCRTS##*-ol}; f=${f%% *}; [ -p "$f" ] || exit 9; cat "$1" > "$f"' \
    sh "$ODD" < /dev/null > space.out 2> space.err
  st=$?
  [ $st = 0 ] && cmp -s "$ODD" space.tee &&
    pass "space: the program found the FIFO, every byte read" ||
    { cat space.err; fail "space: status $st (9: no FIFO at the -ol path)"; }
  grep -q 'TMPDIR .* contains white space' space.err &&
    pass "space: says where the FIFO went" || fail "space: no note"
fi
echo "== env"
# The program's environment is its caller's and watch's own additions
# (GHCRTS): not the daemon's UV_THREADPOOL_SIZE=1, which a file source
# sets for itself (h76: watch's FIFO is one).
if [ -f "$ODD" ]; then
  env -u UV_THREADPOOL_SIZE timeout 25 "$EL" watch --no-linger -- sh -c \
    'echo "uv=[${UV_THREADPOOL_SIZE-unset}]"; f=${GHCRTS##*-ol}; f=${f%% *}; cat "$1" > "$f"' \
    sh "$ODD" < /dev/null > env.out 2> env.err
  grep -qx 'uv=\[unset\]' env.out && pass "env: no UV_THREADPOOL_SIZE given to the program" ||
    { cat env.out env.err; fail "env: the program got $(grep uv= env.out)"; }
fi
echo "== hint"
"$EL" watch --no-linger -- sh -c \
  'f=${GHCRTS##*-ol}; f=${f%% *}; exec 3>"$f"; exec sleep 120' \
  < /dev/null > hint.out 2> hint.err &
wpid=$!
end=$((SECONDS + 60))
until grep -q 'No input after 10 ticks' hint.err; do
  [ $SECONDS -lt $end ] && kill -0 "$wpid" 2>/dev/null || break
  sleep 0.2
done
kill -TERM "$wpid" 2>/dev/null
wait "$wpid"
if grep -q 'No input after 10 ticks. watch passed -l' hint.err &&
   grep -q '2 MiB buffer' hint.err && ! grep -q 'Did you pass -l' hint.err
then pass "hint: $(grep -o 'No input after.*' hint.err)"
else cat hint.err; fail "hint: the no-input warning does not fit watch"; fi
[ "$FAILS" = 0 ] && { echo PASS; exit 0; }
echo "FAIL: $FAILS failing step(s)"; exit 1
