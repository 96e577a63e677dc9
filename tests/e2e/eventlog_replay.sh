#!/bin/sh
# eventlog_replay.sh EVENTLOG [STATUS]: a stand-in for a GHC program under
# `eventlog-live watch` (tests/e2e/install_lib.sh): writes a recorded
# eventlog to the -ol<file> that watch put in GHCRTS, as the RTS would,
# then exits with STATUS (default 0).
for w in $GHCRTS; do
  case $w in -ol*) out=${w#-ol} ;; esac
done
[ -n "${out:-}" ] || { echo "eventlog_replay.sh: no -ol in GHCRTS='$GHCRTS'" >&2; exit 99; }
cat "$1" >"$out" || exit 98
exit "${2:-0}"
