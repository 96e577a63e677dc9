#!/usr/bin/env bash
# ctest-labels: asan
# Issue 13, "a malformed event never reaches a handler" and "an error in
# one processor never stops another's flush": for every variable-size event
# type declared in a real GHC 9.0 eventlog, a malformed event of that type
# (payload shorter than its fixed fields, spec eventlog-format.md §4.8) is
# put into the first capability block (the block's size grown to hold it).
# The daemon (default configuration: traces off, whose thousands of spans
# would only slow the test) with the console exporter must
#   - export at least 99% of the records the clean file gives (counted per
#     signal from the OTLP/JSON lines, independently of the daemon),
#   - report the problem naming the event type and the byte offset where
#     it was put,
#   - exit 0.
# Types whose payload is all text (USER_MSG, USER_MARKER, ...) cannot be
# too short; for them a one-byte payload is a valid event and the test
# only checks that nothing is lost.
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
src=$EL_EVENTLOGS/ghc-9.0/oddball-hT.eventlog

run() {  # run FILE OUT ERR
  OTEL_METRICS_EXPORTER=console OTEL_LOGS_EXPORTER=console \
    OTEL_TRACES_EXPORTER=console OTEL_PROFILES_EXPORTER=console \
    timeout 120 "$D" --eventlog-file "$1" --service-name m -hT \
    >"$2" 2>"$3"
}

count() {  # count OUT: "metrics logs spans profiles" records
  python3 - "$1" <<'PY'
import json, sys
n = {"m": 0, "l": 0, "s": 0, "p": 0}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line: continue
    d = json.loads(line)
    for rm in d.get("resourceMetrics", []):
        for sm in rm.get("scopeMetrics", []):
            for m in sm.get("metrics", []):
                body = m.get("gauge") or m.get("sum") or {}
                n["m"] += len(body.get("dataPoints", []))
    for rl in d.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            n["l"] += len(sl.get("logRecords", []))
    for rs in d.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            n["s"] += len(ss.get("spans", []))
    for rp in d.get("resourceProfiles", []):
        for sp in rp.get("scopeProfiles", []):
            for p in sp.get("profiles", []):
                n["p"] += max(1, len(p.get("sample", p.get("samples", []))))
print(n["m"], n["l"], n["s"], n["p"])
PY
}

run "$src" "$tmp/clean.out" "$tmp/clean.err" || {
  echo "FAIL: the clean run exited $?"; cat "$tmp/clean.err"; exit 1; }
read -r cm cl cs cp < <(count "$tmp/clean.out")
echo "clean run: $cm metric points, $cl log records, $cs spans, $cp profile samples"
[ "$((cm + cl))" -gt 50 ] || { echo "FAIL: too few records in the clean run"; exit 1; }

# The variable-size types declared in the header, and a copy of the file
# with one event of type T (payload of 1 byte) right after the first
# capability block's marker.
python3 - "$src" "$tmp" <<'PY'
import struct, sys
src, tmp = sys.argv[1], sys.argv[2]
b = open(src, "rb").read()
assert b[:8] == b"hdrbhetb"
pos, decls = 8, {}
while b[pos:pos + 4] == b"etb\0":
    tid, size, dlen = struct.unpack(">HHI", b[pos + 4:pos + 12])
    desc = b[pos + 12:pos + 12 + dlen].decode("utf-8", "replace")
    p = pos + 12 + dlen
    (elen,) = struct.unpack(">I", b[p:p + 4])
    p += 4 + elen
    assert b[p:p + 4] == b"ete\0"
    decls[tid] = (size, desc)
    pos = p + 4
assert b[pos:pos + 12] == b"hetehdredatb"
data = pos + 12
# first event: a capability block marker (type 18, size 14)
typ, t = struct.unpack(">HQ", b[data:data + 10])
assert typ == 18, typ
bsize, end, cap = struct.unpack(">IQH", b[data + 10:data + 24])
assert cap != 0xFFFF
out = open(tmp + "/types", "w")
for tid, (size, desc) in sorted(decls.items()):
    if size != 0xFFFF:
        continue
    ev = struct.pack(">HQH", tid, t, 1) + b"\x00"
    marker = struct.pack(">HQIQH", 18, t, bsize + len(ev), end, cap)
    at = data + 24
    blob = b[:data] + marker + ev + b[data + 24:]
    open("%s/bad-%d.eventlog" % (tmp, tid), "wb").write(blob)
    out.write("%d %d %s\n" % (tid, at, desc.replace(" ", "_")))
PY
[ -s "$tmp/types" ] || { echo "FAIL: no variable-size type declared"; exit 1; }

while read -r tid at desc; do
  run "$tmp/bad-$tid.eventlog" "$tmp/bad.out" "$tmp/bad.err"
  rc=$?
  read -r m l s p < <(count "$tmp/bad.out")
  ok=$(python3 -c "
c=($cm,$cl,$cs,$cp); b=($m,$l,$s,$p)
print(int(all(x >= 0.99*y for x,y in zip(b,c))))")
  if [ "$rc" != 0 ]; then
    echo "FAIL: type $tid ($desc): the daemon exited $rc"; sed 's/^/  /' "$tmp/bad.err" | head -5; fail=1
  elif [ "$ok" != 1 ]; then
    echo "FAIL: type $tid ($desc): $m/$cm metric points, $l/$cl logs, $s/$cs spans, $p/$cp samples (< 99%)"; fail=1
  elif grep -q "malformed" "$tmp/bad.err"; then
    if grep -q "malformed.*$at\|offset $at\|byte $at" "$tmp/bad.err"; then
      echo "ok: type $tid ($desc): malformed event reported at byte $at; $m/$cm metric points, $l/$cl logs, $s/$cs spans"
    else
      echo "FAIL: type $tid ($desc): reported without its byte offset $at:"; grep malformed "$tmp/bad.err" | head -2; fail=1
    fi
  else
    echo "ok: type $tid ($desc): a 1-byte payload is not malformed for this type (no report); nothing lost: $m/$cm, $l/$cl, $s/$cs"
  fi
done <"$tmp/types"
[ "$fail" = 0 ] && echo PASS
exit "$fail"
