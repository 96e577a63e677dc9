# wait_lib.sh: bounded waits shared by the end-to-end tests and their
# libraries (producer_lib.sh, serve_lib.sh, test_drain_*.sh,
# test_live_ghc.sh; sourced).
# Functions only: no variables of their own, no trap, no exit.

# mono_ms: milliseconds on a clock that never steps (the kernel's uptime,
# /proc/uptime, 10 ms resolution), for durations a test checks. `date` and
# $SECONDS follow the wall clock, which a fresh CI machine's time sync can
# step by seconds mid-test (it once made a 1 s shutdown read 10.6 s).
mono_ms() {
  local up
  read -r up _ </proc/uptime
  echo $((${up%.*} * 1000 + 10#${up#*.} * 10))
}

# wait_line FILE REGEX SECONDS: 0 as soon as FILE has a line matching the
# extended REGEX (grep -E), 1 once SECONDS have passed without one. FILE
# need not exist yet.
wait_line() {
  local end=$((SECONDS + $3))
  until grep -q -E "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.1
  done
}

# alive PID: PID has not exited (kill -0 also succeeds on a zombie, so
# its state in /proc is read too).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

# wait_exit PID SECONDS: wait up to SECONDS for PID (a child of this shell)
# to exit and reap it; returns its status, or 124 after SECONDS (PID is
# left running).
wait_exit() {
  local pid=$1 end=$((SECONDS + $2))
  while alive "$pid"; do
    [ $SECONDS -lt $end ] || return 124
    sleep 0.2
  done
  wait "$pid"
}

# stop_pid PID [SIGNAL]: send SIGNAL (default TERM) to PID, a child of
# this shell, give it up to 15 s to exit, then SIGKILL it; returns its exit
# status (137 when it had to be killed; that of `wait` when it had already
# exited).
stop_pid() {
  local i
  kill -"${2:-TERM}" "$1" 2>/dev/null || { wait "$1" 2>/dev/null; return; }
  for i in $(seq 150); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# stop_pids: stop_pid every pid of the array PIDS that still runs (for a
# test's EXIT trap).
stop_pids() {
  local p
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill -0 "$p" 2>/dev/null && stop_pid "$p"
  done
  return 0
}
