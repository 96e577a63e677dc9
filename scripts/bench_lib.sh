# scripts/bench_lib.sh: sourced by the scripts in scripts/bench.d/ (which
# set S, the source directory).
#
# measure OUT CMD...: run CMD (stdin from the file $IN when set, stdout to
# /dev/null, stderr to OUT.err) and write "wall user sys maxrss_kib
# status" into OUT: seconds of wall clock and of user and system CPU, from
# wait4() (microsecond CPU times; /usr/bin/time prints only 10 ms), its
# peak RSS in KiB and its exit status. With EL_BENCH_PIN set to a CPU
# number, CMD runs pinned to that CPU (the paired rounds set it to
# EL_BENCH_CPU: scripts/bench.sh).
measure() {
  local out=$1; shift
  python3 - "$out" "$@" <<'PY'
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
src = os.environ.get("IN")
pin = os.environ.get("EL_BENCH_PIN", "")
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        if pin not in ("", "none"):
            try:
                os.sched_setaffinity(0, {int(pin)})
            except (ValueError, OSError) as e:
                sys.stderr.write("measure: cannot pin to CPU %r: %s\n" % (pin, e))
                raise
        if src:
            os.dup2(os.open(src, os.O_RDONLY), 0)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.dup2(os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                        0o644), 2)
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
with open(out, "w") as f:
    f.write("%.4f %.4f %.4f %d %d\n" % (wall, ru.ru_utime, ru.ru_stime,
            ru.ru_maxrss, os.waitstatus_to_exitcode(status)))
PY
}

# counting_receiver READY: start the test OTLP receiver
# (tests/receiver/server.js --no-request: it decodes and counts, writes
# nothing), its ports written to the file READY; sets rcv (its pid, for
# the caller's trap to kill) and endpoint (its OTLP/HTTP URL). Returns 1,
# setting neither, when node or the receiver's packages are not installed.
counting_receiver() {
  command -v node >/dev/null && [ -d "$S/tests/receiver/node_modules" ] ||
    return 1
  node "$S/tests/receiver/server.js" --out /dev/null --no-request --quiet \
    --ready-file "$1" >/dev/null 2>&1 &
  rcv=$!
  for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done
  endpoint=http://127.0.0.1:$(sed 's/.*"http":\([0-9]*\).*/\1/' "$1")
}
