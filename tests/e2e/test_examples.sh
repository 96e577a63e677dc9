#!/usr/bin/env bash
# ctest-labels: asan
# Every example script run on a shared eventlog, its numbers checked
# against an independent computation with awk over the ghc-events
# `.reference` text of the same file (time-sorted by ghc-events).
set -euo pipefail
: "${EL_BIN:?}" "${EL_SOURCE_DIR:?}" "${EL_EVENTLOGS:?}"
X=$EL_SOURCE_DIR/examples
D=$EL_EVENTLOGS/ghc-9.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { # script eventlog [extra args] -> tsv output on stdout
  local s=$1 f=$2; shift 2
  "$EL_BIN" run "$X/$s.lua" --output none --set format=tsv "$@" "$f"
}
check() { # name expected actual
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"; diff <(echo "$2") <(echo "$3") | head -20 || true; fail=1
  else
    echo "ok   $1"
  fi
}
# Events section of a reference: "t<TAB>cap<TAB>text" (cap -1 if none).
events() {
  awk '/^Events:/{e=1;next} e && /^[0-9]+: /{
    t=$1; sub(":","",t); rest=substr($0, index($0,": ")+2); cap=-1
    if (rest ~ /^cap [0-9]+: /) { split(rest, a, ":"); cap=substr(a[1],5)+0
      rest=substr(rest, index(rest,": ")+2) }
    print t "\t" cap "\t" rest }' "$1"
}
events "$D/threads.eventlog.reference" > "$tmp/threads.ev"
events "$D/oddball-hT.eventlog.reference" > "$tmp/oddball.ev"
events "$D/heapy-hT.eventlog.reference" > "$tmp/heapy.ev"

# 1. gc_pauses: GC_START..GC_END per capability (reference §5.2.3 rules).
exp=$(awk -F'\t' '
  $3=="starting GC" { if (st[$2]!="s") { st[$2]="s"; t0[$2]=$1 } }
  $3=="finished GC" { if (st[$2]=="s") { n[$2]++; tot[$2]+=$1-t0[$2] }
                      st[$2]="e" }
  END { for (c in n) print c "\t" n[c] "\t" tot[c] }' "$tmp/threads.ev" | sort -n)
act=$(run gc_pauses "$D/threads.eventlog" | awk -F'\t' '
  $1 ~ /^[0-9]+$/ && NF>=3 { print $1 "\t" $2 "\t" $3 }' | sort -n)
check "gc_pauses: count and total per cap (threads)" "$exp" "$act"

# 2. thread_times: runs, running ns and blocked ns per thread (§5.2.3
# state machine: Run..Stop is Running, Stop..Run and Stop..Stop Blocked,
# nothing after ThreadFinished, a Run after a Run keeps the earlier one).
# thread_exp EVENTS [PREFIX]: "PREFIX thread runs running blocked" lines.
thread_exp() {
awk -F'\t' -v pre="${2:-}" '
  { split($3, w, " ") }
  w[1]=="running" && w[2]=="thread" { th=w[3]; seen[th]=1; if (fin[th]) next
    if (prev[th]=="s") blk[th]+=$1-ts[th]
    if (prev[th]!="r") { prev[th]="r"; t0[th]=$1 } }
  w[1]=="stopping" && w[2]=="thread" { th=w[3]; seen[th]=1; if (fin[th]) next
    if (prev[th]=="r") { runs[th]++; run[th]+=$1-t0[th] }
    else if (prev[th]=="s") blk[th]+=$1-ts[th]
    else next
    prev[th]="s"; ts[th]=$1
    if ($3 ~ /thread finished/) fin[th]=1 }
  END { for (th in seen) print pre th "\t" runs[th]+0 "\t" run[th]+0 "\t" blk[th]+0 }
  ' "$1" | sort -n
}
exp=$(thread_exp "$tmp/threads.ev")
act=$(run thread_times "$D/threads.eventlog" | awk -F'\t' '
  $1 ~ /^[0-9]+$/ && NF>=7 { print $1 "\t" $4 "\t" $5 "\t" $7 }' | sort -n)
check "thread_times: runs, running and blocked ns per thread (threads)" "$exp" "$act"
# Two sessions (two runs of programs one after the other, as a socket
# reconnection or `cat a b` gives): every session's threads, each with the
# numbers of its own file; `eventlog-live show` of each file is the
# source. The tracker starts afresh with each session: only the second
# session's were listed.
cat "$D/threads.eventlog" "$D/oddball-hT.eventlog" > "$tmp/two.eventlog"
"$EL_BIN" show "$D/threads.eventlog" > "$tmp/s1.show"
"$EL_BIN" show "$D/oddball-hT.eventlog" > "$tmp/s2.show"
events "$tmp/s1.show" > "$tmp/s1.ev"
events "$tmp/s2.show" > "$tmp/s2.ev"
exp=$( (thread_exp "$tmp/s1.ev" "1\t"; thread_exp "$tmp/s2.ev" "2\t") |
  sort -k1,1n -k2,2n)
act=$(run thread_times "$tmp/two.eventlog" | awk -F'\t' '
  $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF>=8 {
    print $1 "\t" $2 "\t" $5 "\t" $6 "\t" $8 }' | sort -k1,1n -k2,2n)
check "thread_times: each session's threads (threads, then oddball-hT)" "$exp" "$act"
n1=$(thread_exp "$tmp/s1.ev" | wc -l); n2=$(thread_exp "$tmp/s2.ev" | wc -l)
exp="$((n1 + n2)) threads in 2 sessions (session 1: $n1, session 2: $n2)"
act=$(run thread_times "$tmp/two.eventlog" | awk 'NR == 1')
check "thread_times: the count line names each session's" "$exp" "$act"

# 3. heap_top: total residency of each census, in order.
exp=$(awk -F'\t' '
  $3 ~ /^start heap prof sample/ { if (open) print tot; open=1; tot=0 }
  $3 ~ /^heap prof sample .*, residency / { r=$3; sub(/.*residency /,"",r)
    sub(/,.*/,"",r); tot+=r }
  END { if (open) print tot }' "$tmp/heapy.ev")
act=$(run heap_top "$D/heapy-hT.eventlog" | awk -F'\t' '
  /^era\t/ {h=1; next} h && NF==5 {print $3} NF!=5 {h=0}')
check "heap_top: total bytes per census (heapy-hT)" "$exp" "$act"
# -hc: the censuses hold cost-centre stacks (HEAP_PROF_SAMPLE_COST_CENTRE).
events "$D/heapy-prof-hc.eventlog.reference" > "$tmp/heapy-hc.ev"
exp=$(awk -F'\t' '
  $3 ~ /^start heap prof sample/ { if (open) print tot; open=1; tot=0 }
  $3 ~ /^heap prof sample .*, residency / { r=$3; sub(/.*residency /,"",r)
    sub(/,.*/,"",r); tot+=r }
  END { if (open) print tot }' "$tmp/heapy-hc.ev")
act=$(run heap_top "$D/heapy-prof-hc.eventlog" | awk -F'\t' '
  /^era\t/ {h=1; next} h && NF==5 {print $3} NF!=5 {h=0}')
[ -n "$exp" ] && [ "$exp" != 0 ] &&
  check "heap_top: total bytes per census (heapy-prof-hc, -hc)" "$exp" "$act" ||
  { echo "FAIL heap_top -hc: no census in the reference"; fail=1; }

# Three sessions (-hT, -hy, -hc runs one after the other): each census
# with its session, its time on its own session's clock and its total as
# in that file's own `show`; the count per session in the first line; the
# largest labels per session, sum and mean over that session's censuses
# (the string-labelled -hT and -hy; ties by label, byte order). Before,
# no session was named, the breakdown was the last session's and the
# largest labels added up all sessions' censuses.
cat "$D/heapy-hT.eventlog" "$D/heapy-prof-hy.eventlog" \
  "$D/heapy-prof-hc.eventlog" > "$tmp/three-heap.eventlog"
hs=1
for f in heapy-hT heapy-prof-hy heapy-prof-hc; do
  "$EL_BIN" show "$D/$f.eventlog" > "$tmp/h$hs.show"
  events "$tmp/h$hs.show" > "$tmp/h$hs.ev"; hs=$((hs + 1))
done
census_exp() {  # census_exp EVENTS SESSION: "session t total" per census
  awk -F'\t' -v s="$2" '
    $3 ~ /^start heap prof sample/ { if (open) print s "\t" t "\t" tot
      open=1; tot=0; t=$1 }
    $3 ~ /^heap prof sample .*, residency / { r=$3; sub(/.*residency /,"",r)
      sub(/,.*/,"",r); tot+=r }
    END { if (open) print s "\t" t "\t" tot }' "$1"
}
exp=$(census_exp "$tmp/h1.ev" 1; census_exp "$tmp/h2.ev" 2; census_exp "$tmp/h3.ev" 3)
run heap_top "$tmp/three-heap.eventlog" > "$tmp/three-heap.out"
act=$(awk -F'\t' '/^session\tera\t/ {h=1; next} h && NF==6 {print $1 "\t" $3 "\t" $4}
  NF!=6 {h=0}' "$tmp/three-heap.out")
check "heap_top: each session's censuses (-hT, -hy, -hc)" "$exp" "$act"
n1=$(census_exp "$tmp/h1.ev" 1 | wc -l); n2=$(census_exp "$tmp/h2.ev" 2 | wc -l)
n3=$(census_exp "$tmp/h3.ev" 3 | wc -l)
exp="$((n1 + n2 + n3)) censuses in 3 sessions (session 1: $n1, breakdown -hT;"
exp="$exp session 2: $n2, breakdown -hy; session 3: $n3, breakdown -hc)"
check "heap_top: the first line counts each session's censuses" \
  "$exp" "$(head -1 "$tmp/three-heap.out")"
largest_exp() {  # largest_exp EVENTS SESSION NCENSUSES: the top 5 labels
  awk -F'\t' '$3 ~ /^heap prof sample .*, residency .*, label / {
      r=$3; sub(/.*residency /,"",r); sub(/,.*/,"",r)
      l=$3; sub(/.*, label /,"",l); sum[l]+=r }
    END { for (l in sum) print l "\t" sum[l] }' "$1" |
    LC_ALL=C sort -t "$(printf '\t')" -k2,2nr -k1,1 | head -5 |
    awk -F'\t' -v s="$2" -v n="$3" '{ print s "\t" $1 "\t" $2 "\t" int($2 / n) }'
}
exp=$(largest_exp "$tmp/h1.ev" 1 "$n1"; largest_exp "$tmp/h2.ev" 2 "$n2")
act=$(awk -F'\t' '/^session\tlabel\t/ {h=1; next} h && NF==4 && ($1==1 || $1==2)' \
  "$tmp/three-heap.out")
check "heap_top: the largest labels of each session (-hT, -hy)" "$exp" "$act"

# 4. markers: marker times and the start/end span.
exp=$(awk -F'\t' '$3 ~ /^marker: / { print $1 }' "$tmp/heapy.ev")
act=$(run markers "$D/heapy-hT.eventlog" | awk -F'\t' '
  $1 ~ /^[0-9]+$/ && NF==5 {print $1}')
check "markers: times (heapy-hT)" "$exp" "$act"
exp=$(awk -F'\t' '$3=="marker: start"{s=$1} $3=="marker: end"{print $1-s}' \
  "$tmp/threads.ev")
act=$(run markers "$D/threads.eventlog" | awk -F'\t' '
  $1=="(unnamed)" {print $4}')
check "markers: start..end duration (threads)" "$exp" "$act"

# 5. event_rate: totals for some types and RUN_THREAD per second.
exp=$(awk -F'\t' '
  $3 ~ /^running thread / {r++; b=int($1/1e9); rb[b]++}
  $3 ~ /^stopping thread / {s++}
  $3=="starting GC" {g++}
  $3 ~ /^marker: / {m++}
  END { printf "RUN_THREAD\t%d", r; for (i=0;i<=1;i++) printf "\t%d", rb[i]
        printf "\nSTOP_THREAD\t%d\nGC_START\t%d\nUSER_MARKER\t%d\n", s, g, m }
  ' "$tmp/oddball.ev")
act=$(run event_rate "$D/oddball-hT.eventlog" | awk -F'\t' '
  $1=="RUN_THREAD" {print $1 "\t" $2 "\t" $3 "\t" $4}
  $1=="STOP_THREAD" || $1=="GC_START" || $1=="USER_MARKER" {print $1 "\t" $2}')
check "event_rate: totals and RUN_THREAD per second (oddball-hT)" \
  "$exp" "$(echo "$act" | awk 'NR==1' ; echo "$act" | awk 'NR>1' | sort -k1,1 -s | awk '$1=="STOP_THREAD"'; echo "$act" | awk '$1=="GC_START"'; echo "$act" | awk '$1=="USER_MARKER"')"

# Two sessions: each session's times are ns since its own RTS start, so
# each is bucketed in rows of its own (a session column first): RUN_THREAD
# per second and a few totals as in each session's own `show`, "-" in a
# bucket after the session's last event. Before, session 2's events at
# [0s,1s) of its own clock were added to session 1's.
rate_exp() {  # rate_exp EVENTS SESSION NBUCKETS
  awk -F'\t' -v s="$2" -v nb="$3" '
    { b=int($1/1e9); if (b > last) last=b }
    $3 ~ /^running thread / {r++; rb[b]++}
    $3 ~ /^stopping thread / {st++}
    $3=="starting GC" {g++}
    END { printf "%s\tRUN_THREAD\t%d", s, r
          for (i=0;i<nb;i++) printf "\t%s", (i <= last) ? rb[i]+0 : "-"
          printf "\n%s\tSTOP_THREAD\t%d\n%s\tGC_START\t%d\n", s, st, s, g }' "$1"
}
nb=$(awk -F'\t' '{b=int($1/1e9); if (b+1 > n) n=b+1} END {print n}' \
  "$tmp/s1.ev" "$tmp/s2.ev")
exp=$( (rate_exp "$tmp/s1.ev" 1 "$nb"; rate_exp "$tmp/s2.ev" 2 "$nb") | sort)
act=$(run event_rate "$tmp/two.eventlog" | awk -F'\t' -v nb="$nb" '
  $2=="RUN_THREAD" { l=$1 "\t" $2 "\t" $3; for (i=4;i<4+nb;i++) l=l "\t" $i
                     print l }
  $2=="STOP_THREAD" || $2=="GC_START" {print $1 "\t" $2 "\t" $3}' | sort)
[ "$nb" -ge 2 ] &&
  check "event_rate: each session's buckets (threads, then oddball-hT)" \
    "$exp" "$act" ||
  { echo "FAIL event_rate two sessions: oddball-hT should reach [1s,2s)"; fail=1; }

# 6. alloc_rate: samples and last running total per capability.
exp=$(awk -F'\t' '$3 ~ /^allocated on heap capset / { r=$3
    sub(/.*: /,"",r); sub(/ total.*/,"",r); n[$2]++; last[$2]=r }
  END { for (c in n) print c "\t" n[c] "\t" last[c] }' "$tmp/oddball.ev" | sort -n)
act=$(run alloc_rate "$D/oddball-hT.eventlog" | awk -F'\t' '
  $1 ~ /^[0-9]+$/ && NF==6 {print $1 "\t" $2 "\t" $3}' | sort -n)
check "alloc_rate: samples and total per cap (oddball-hT)" "$exp" "$act"
# Two sessions: each counts from 0 again (its own running totals), so each
# session's capabilities are rows of their own, with a session column:
# samples and last total as in each session's own `show`. Before, the
# rows merged both sessions under one capability (samples added up, the
# totals the second session's).
alloc_exp() {  # alloc_exp EVENTS SESSION
  awk -F'\t' -v s="$2" '$3 ~ /^allocated on heap capset / { r=$3
    sub(/.*: /,"",r); sub(/ total.*/,"",r); n[$2]++; last[$2]=r }
  END { for (c in n) print s "\t" c "\t" n[c] "\t" last[c] }' "$1"
}
exp=$( (alloc_exp "$tmp/s1.ev" 1; alloc_exp "$tmp/s2.ev" 2) | sort -k1,1n -k2,2n)
act=$(run alloc_rate "$tmp/two.eventlog" | awk -F'\t' '
  $1 ~ /^[0-9]+$/ && NF==7 {print $1 "\t" $2 "\t" $3 "\t" $4}' |
  sort -k1,1n -k2,2n)
check "alloc_rate: each session's capabilities (threads, then oddball-hT)" \
  "$exp" "$act"
# Per 200 ms: each capability's growth in each interval (b*I, (b+1)*I]
# of its own samples' times, from its first interval to its last (0 where
# it had no sample). Before, a timer fired as the stream time passed, and
# oddball-hT's capability 1 (its blocks come after capability 0's) had
# no row at all.
exp=$(awk -F'\t' -v I=200000000 '$3 ~ /^allocated on heap capset / { r=$3
    sub(/.*: /,"",r); sub(/ total.*/,"",r); c=$2; b=int(($1 - 1) / I)
    if ($1 == 0) b = 0
    if (!(c in first)) { first[c]=r; fb[c]=b }
    at[c, b]=r; lb[c]=b }
  END { for (c in first) { m=first[c]
      for (b=fb[c]; b<=lb[c]; b++) { v=((c, b) in at) ? at[c, b] : m
        print c "\t" (b + 1) * I "\t" v - m; m=v } } }' "$tmp/oddball.ev" |
  sort -k1,1n -k2,2n)
act=$(run alloc_rate "$D/oddball-hT.eventlog" --set interval_ms=200 |
  awk -F'\t' 'NF==4 && $1 ~ /^[0-9]+$/ {print $2 "\t" $1 "\t" $3}' |
  sort -k1,1n -k2,2n)
check "alloc_rate: growth per 200 ms per cap (oddball-hT)" "$exp" "$act"

# 7. heap_metrics: every HEAP_SIZE/HEAP_LIVE/HEAP_ALLOCATED as a data point
# whose Unix time is the reference's wall clock + (t - t_wallclock).
if command -v jq >/dev/null; then
  exp=$(awk -F'\t' '
    $3 ~ /wall clock time / { n = split($3, w, " ")
      for (i = 1; i <= n; i++) if (w[i] == "time") { sec=w[i+1]; ns=w[i+2] }
      sub("s","",sec); sub("ns","",ns); tw=$1 }
    $3 ~ /^size of heap capset / { v=$3; sub(/.*: /,"",v); sub(/ bytes/,"",v)
      print "ghc_eventlog_HeapSize\t" $1 "\t" v }
    $3 ~ /^live data in heap capset / { v=$3; sub(/.*: /,"",v); sub(/ bytes/,"",v)
      print "ghc_eventlog_HeapLive\t" $1 "\t" v }
    $3 ~ /^allocated on heap capset / { v=$3; sub(/.*: /,"",v); sub(/ total.*/,"",v)
      print "ghc_eventlog_HeapAllocated\t" $1 "\t" v }
    END { print "wall\t" sec "\t" ns "\t" tw > "/dev/stderr" }
    ' "$tmp/threads.ev" 2>"$tmp/wall" | sort)
  read -r _ sec ns tw < "$tmp/wall"
  act=$("$EL_BIN" run "$X/heap_metrics.lua" "$D/threads.eventlog" 2>/dev/null |
    jq -r '.resourceMetrics[].scopeMetrics[].metrics[] | .name as $n |
      (.gauge // .sum).dataPoints[] | [$n, .timeUnixNano, .asInt] | @tsv' |
    awk -F'\t' -v sec="$sec" -v ns="$ns" -v tw="$tw" '{
      # t = unix - wall + t_wallclock, in integer-safe pieces
      d = substr($2, 1, length($2) - 9) - sec; r = substr($2, length($2) - 8) - ns
      print $1 "\t" d * 1000000000 + r + tw "\t" $3 }' | sort)
  check "heap_metrics: points, values and Unix times (threads)" "$exp" "$act"
fi

# Every example also runs in text mode without error, and every column of
# dashes under a table's titles has a title above it (no untitled column).
for s in gc_pauses thread_times heap_top markers event_rate alloc_rate \
         alloc_markers; do
  if ! "$EL_BIN" run "$X/$s.lua" --output none "$D/oddball-hT.eventlog" \
       > "$tmp/out" 2> "$tmp/err" || [ -s "$tmp/err" ]; then
    echo "FAIL $s (text mode)"; cat "$tmp/err"; fail=1
  fi
  bad=$(awk '/^[- ]*-[- ]*$/ && NR > 1 {
      line = $0; pos = 1
      while (match(line, /-+/)) {
        a = pos + RSTART - 1; n = RLENGTH
        if (substr(title, a, n) ~ /^ *$/) print "untitled column at " a
        pos = a + n; line = substr(line, RSTART + RLENGTH)
      } }
    { title = $0 }' "$tmp/out")
  if [ -n "$bad" ]; then
    echo "FAIL $s (text mode): $bad"; sed -n 1,4p "$tmp/out"; fail=1
  fi
done
exit $fail
