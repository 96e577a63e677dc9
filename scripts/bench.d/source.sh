#!/usr/bin/env bash
# Byte sources (src/source): throughput of each source into a consumer that
# only counts bytes (tests/tools/el_src_cat --discard), and `stats` through
# the source pump versus `stats` reading the file itself with read(2).
# Input: threads-big.eventlog repeated to about 190 MB (each copy is a new
# session after DATA_END, so the stream stays valid).
set -euo pipefail
: "${EL_BIN:?}" "${EL_BUILD_DIR:?}" "${EL_EVENTLOGS:?}"
CAT=$EL_BUILD_DIR/tests/el_src_cat
PEER=$EL_BUILD_DIR/tests/el_peer
T=$(mktemp -d /tmp/el_bench_source.XXXXXX)
trap 'rm -rf "$T"' EXIT
src=$EL_EVENTLOGS/ghc-9.0/threads-big.eventlog
for _ in $(seq 16); do cat "$src"; done > "$T/big.eventlog"
bytes=$(stat -c %s "$T/big.eventlog")
cat "$T/big.eventlog" > /dev/null  # warm the page cache

now() { date +%s%N; }
report() {  # name start_ns
  local ns=$(( $(now) - $2 ))
  awk -v n="$1" -v b="$bytes" -v ns="$ns" \
    'BEGIN { printf "%-34s %8.1f MB/s  (%.1f MB in %.3f s)\n", n, b / ns * 1e3, b / 1e6, ns / 1e9 }'
}
export EL_SRC_CAT_QUIET=1

t=$(now); "$CAT" --eventlog-file "$T/big.eventlog" --discard > /dev/null
report "source: regular file" "$t"
t=$(now); cat "$T/big.eventlog" | "$CAT" --eventlog-stdin --discard > /dev/null
report "source: stdin pipe" "$t"
mkfifo "$T/fifo"
t=$(now); cat "$T/big.eventlog" > "$T/fifo" &
"$CAT" --eventlog-file "$T/fifo" --discard > /dev/null; wait
report "source: named FIFO" "$t"
"$PEER" --unix "$T/s.sock" --file "$T/big.eventlog" --ready-file "$T/ready" \
  --timeout 120 2>/dev/null &
while [ ! -e "$T/ready" ]; do sleep 0.05; done
t=$(now); "$CAT" --eventlog-socket "$T/s.sock" --eventlog-socket-retries 0 \
  --discard > /dev/null 2>&1; wait
report "source: Unix socket (el_peer)" "$t"
rm -f "$T/ready"
"$PEER" --tcp 127.0.0.1 --port 0 --port-file "$T/port" --file "$T/big.eventlog" \
  --ready-file "$T/ready" --timeout 120 2>/dev/null &
while [ ! -e "$T/ready" ]; do sleep 0.05; done
t=$(now); "$CAT" --eventlog-socket-host 127.0.0.1 \
  --eventlog-socket-port "$(cat "$T/port")" --eventlog-socket-retries 0 \
  --discard > /dev/null 2>&1; wait
report "source: TCP 127.0.0.1 (el_peer)" "$t"

t=$(now); "$EL_BIN" stats "$T/big.eventlog" > /dev/null
report "stats FILE (read(2))" "$t"
t=$(now); "$EL_BIN" stats --eventlog-file "$T/big.eventlog" \
  --eventlog-log-file /dev/null > "$T/pump.stats"
report "stats via source pump (+tee)" "$t"
grep 'peak RSS' "$T/pump.stats" | sed 's/^/  pump /'
