#!/usr/bin/env bash
# End-to-end: call_stack_profile. No recorded eventlog carries
# ghc-stack-profiler messages, so this test writes one (spec
# eventlog-format.md §1: header, a capability block of USER_BINARY_MSG
# events, IPE events in the global block) holding call stacks that it
# chose itself, encoded per reference-behaviour.md §5.4.3 (string and
# source-location definitions, stacks split in reversed chunks). The
# daemon exports to the test receiver; the profile samples decoded there
# (protoc) must give back exactly those stacks: frame names (IPE
# <module>:<label>, unresolved 0x<hex>, annotations), line and column
# (not swapped), capability, thread, time and __name__.
# ctest-labels: e2e
source "$(dirname "$0")/otelcol_lib.sh"

python3 - "$WORK/cs.eventlog" "$WORK/expected.json" <<'PY'
import json, random, struct, sys
random.seed(7)
out, exp_path = sys.argv[1], sys.argv[2]
WALL_SEC, WALL_NSEC, T_WALL = 1700000000, 500, 1000

def decl(i, size, desc):
    d = desc.encode()
    return (b"etb\0" + struct.pack(">HHI", i, size, len(d)) + d +
            struct.pack(">I", 0) + b"ete\0")

hdr = (b"hdrbhetb" + decl(18, 14, "Block marker") + decl(43, 16, "Wall clock time")
       + decl(169, 0xFFFF, "IPE") + decl(181, 0xFFFF, "User binary message")
       + b"hetehdredatb")

def ev(t, typ, payload, var):
    if var:
        return struct.pack(">HQH", typ, t, len(payload)) + payload
    return struct.pack(">HQ", typ, t) + payload

def block(cap, t0, t1, events):
    body = b"".join(events)
    return struct.pack(">HQIQH", 18, t0, 24 + len(body), t1, cap) + body

# IPE table: two known info tables.
ipes = {0x4010: ("f_info", "1", "T", "f", "Main", "src/Main.hs:12:3-9"),
        0x4020: ("g_info", "1", "T", "", "Lib", "src/Lib.hs:(4,1)-(6,2)")}
glob = [ev(T_WALL, 43, struct.pack(">IQI", 1, WALL_SEC, WALL_NSEC), False)]
for ptr, f in ipes.items():
    glob.append(ev(T_WALL + 1, 169, struct.pack(">Q", ptr) +
                   b"".join(x.encode() + b"\0" for x in f), True))

def msg_string(sid, s):
    return struct.pack(">HQH", 0xFFCC, sid, len(s)) + s.encode()
def msg_srcloc(lid, line, col, file_sid):
    return struct.pack(">HQIIQ", 0xFFCD, lid, line, col, file_sid)
def item(it):
    if it[0] == "ipe": return struct.pack(">BQ", 1, it[1])
    if it[0] == "str": return struct.pack(">BQ", 2, it[1])
    return struct.pack(">BQQ", 3, it[1], it[2])

strings = {1: "loop", 2: "handler ✓", 3: "src/Work.hs"}
srclocs = {9: (40, 7, 3)}   # id -> line, column, file string id
capev = [ev(2000 + i, 181, msg_string(k, v), True)
         for i, (k, v) in enumerate(strings.items())]
capev.append(ev(2100, 181, msg_srcloc(9, *srclocs[9]), True))

def frame(it):
    if it[0] == "ipe":
        f = ipes.get(it[1])
        if not f:
            return ["0x%x" % it[1], "", 0, 0]
        name = f[4] + ":" + (f[3] or f[0])
        fl = {"src/Main.hs:12:3-9": ("src/Main.hs", 12, 3),
              "src/Lib.hs:(4,1)-(6,2)": ("src/Lib.hs", 4, 1)}[f[5]]
        return [name, fl[0], fl[1], fl[2]]
    if it[0] == "str":
        return [strings[it[1]], "", 0, 0]
    line, col, fsid = srclocs[it[2]]
    return [strings[it[1]], strings[fsid], line, col]

expected = []
t = 10000
choices = [("ipe", 0x4010), ("ipe", 0x4020), ("ipe", 0x9999), ("str", 1),
           ("loc", 2, 9)]
for n in range(40):
    stack = [random.choice(choices) for _ in range(random.randint(1, 12))]
    cap, thread = n % 2, 100 + n % 5
    wire = list(reversed(stack))          # concatenation in arrival order
    chunks = []
    while wire:
        k = random.randint(1, 4)
        chunks.append(wire[:k]); wire = wire[k:]
    t0 = t
    for i, ch in enumerate(chunks):
        tag = 0xFFCA if i == len(chunks) - 1 else 0xFFCB
        body = struct.pack(">HIIH", tag, cap, thread, len(ch)) + \
            b"".join(item(x) for x in ch)
        capev.append(ev(t, 181, body, True))
        t += 10
    t += 1000
    expected.append({"time": WALL_SEC * 10**9 + WALL_NSEC + t0 - T_WALL,
                     "cap": cap, "thread": thread,
                     "frames": [frame(x) for x in stack]})
# A foreign binary message: ignored with one warning.
capev.append(ev(t, 181, b"\x00\x01not a stack", True))
data = (block(0xFFFF, 0, 3000, glob) + block(0, 1500, t + 1, capev) +
        struct.pack(">H", 0xFFFF))
open(out, "wb").write(hdr + data)
json.dump(expected, open(exp_path, "w"))
PY

start_receiver "$WORK/rcv.jsonl"
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$HTTP_PORT
printf 'processors:\n  profiles:\n    call_stack_profile: {}\n' >"$WORK/cfg.yaml"
"$DAEMON" --service-name cs --config "$WORK/cfg.yaml" \
  --eventlog-file "$WORK/cs.eventlog" 2>"$WORK/err" ||
  { echo "FAIL daemon exit status"; cat "$WORK/err"; exit 1; }
fail=0
grep -q "Could not parse UserBinaryMessage as ghc-stack-profiler message" "$WORK/err" &&
  echo "ok   foreign binary message: one warning" || { echo "FAIL no parse warning"; fail=1; }
grep -q "Could not resolve IPE ID 0x9999" "$WORK/err" &&
  echo "ok   unresolved IPE warning" || { echo "FAIL no IPE warning"; fail=1; }

python3 - "$WORK/rcv.jsonl" "$WORK/expected.json" <<'PY' || fail=1
import json, sys
sys.path.insert(0, __import__("os").environ["EL_SOURCE_DIR"] + "/tests/e2e")
from otelcol_check import parse_textproto
exp = json.load(open(sys.argv[2]))
want = sorted((e["time"], e["cap"], e["thread"], "ghc_eventlog_CallStackProfile",
               tuple(tuple(f) for f in e["frames"])) for e in exp)
got = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("signal") != "profiles":
        continue
    req = parse_textproto(r["decoded_text"])
    d = req["dictionary"][0]
    S, F, L, ST, A = (d["string_table"], d["function_table"],
                      d["location_table"], d["stack_table"], d["attribute_table"])
    one = lambda m, k: m.get(k, [0])[0]
    for rp in req["resource_profiles"]:
        for sp in rp["scope_profiles"]:
            for prof in sp["profiles"]:
                st = prof["sample_type"][0]
                assert (S[one(st, "type_strindex")], S[one(st, "unit_strindex")]) \
                    == ("cpu", "samples")
                for smp in prof["samples"]:
                    frames = []
                    for li in ST[one(smp, "stack_index")].get("location_indices", []):
                        ln = L[li]["lines"][0]
                        f = F[one(ln, "function_index")]
                        frames.append((S[one(f, "name_strindex")],
                                       S[one(f, "filename_strindex")],
                                       one(ln, "line"), one(ln, "column")))
                    a = {}
                    for ai in smp.get("attribute_indices", []):
                        kv = A[ai]; v = kv["value"][0]
                        a[S[one(kv, "key_strindex")]] = \
                            (v.get("int_value") or v.get("string_value") or [0])[0]
                    got.append((smp["timestamps_unix_nano"][0], a.get("capability"),
                                a.get("thread"), a.get("__name__"), tuple(frames)))
got.sort()
if got == want:
    print(f"ok   call-stack samples: {len(got)} stacks, frames as written")
    sys.exit(0)
print(f"FAIL call-stack samples: expected {len(want)}, got {len(got)}")
for w, g in list(zip(want, got))[:3]:
    if w != g:
        print("  want", w); print("  got ", g)
sys.exit(1)
PY
exit $fail
