#!/usr/bin/env python3
"""Where the real eventlog-socket's first connection was cut, from the bytes
the daemon received (its --eventlog-log-file tee), read with this file's own
framing rules (the eventlog format's, spec §1: header declarations, event
sizes, block markers), never with the project's decoder.

    socket_cut_expect.py TEE [DAEMON_STDERR]

Prints one line, the clause the daemon's warning must hold:
  at byte C (H of N bytes present): the input ends at byte E, M bytes short
  of the end of capability K's block from byte B
("the global block" for capability 0xFFFF; N is H when the cut event's
size field did not come, 2 when its 2-byte type did not; without the
", M bytes short ..." clause when the cut event is the block marker, or
the type, that follows a whole block: no block is left short); or, when the
connection ended on an event's boundary (no event cut),
  ends at byte E without its end-of-data marker, M bytes short of the end
  of capability K's block from byte B
(the block clause only when a block was left short); or "complete" when
the connection ends with the end-of-data marker (the library's worker
thread sent everything before the program's exit freed its queue: it
happens).
(C: the cut event's offset, E: where the connection's bytes end, B: the
offset of the block marker the cut event lies in, M: what that marker's
size still declared). Offsets count from the tee's first byte, as the
daemon counts a socket's bytes over its connections. Exit 1, with a
reason, when the first connection was cut inside an event outside any
block, or its bytes do not frame.

When the program was started first, the real library restarts event
logging on GHC 9.0 as the daemon connects and damages the block in
flight: bytes no framing can read. The daemon reports each such part it
skipped ("skipped N bytes (A to B) ...", docs/eventlog.md,
Resynchronisation); given its stderr, this script steps over those
ranges and frames on from their ends, so a wrong range still fails here
(an undeclared event type, a cut outside any block).

A connection begins with eventlog-socket's 24-byte block marker of
capability 0xFFFF, then "hdrb" (peers/eventlog-socket/README.md); the
first connection runs to the next such start or to the end of the tee.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from producer_check import corrupt_parts  # noqa: E402


def conn_starts(d):
    """Offsets of every "hdrb" preceded by a 24-byte marker of 0xFFFF."""
    out, i = [], d.find(b"hdrb")
    while i >= 0:
        if i >= 24 and d[i - 24:i - 22] == b"\x00\x12" and \
                d[i - 2:i] == b"\xff\xff":
            out.append(i - 24)
        i = d.find(b"hdrb", i + 1)
    return out


def header(d, j):
    """(event sizes by id, offset of the first data byte) of the header
    at j ("hdrb")."""
    assert d[j:j + 8] == b"hdrbhetb", "no header at %d" % j
    j += 8
    sizes = {}
    while d[j:j + 4] == b"etb\x00":
        et, sz = struct.unpack(">Hh", d[j + 4:j + 8])
        dl = struct.unpack(">I", d[j + 8:j + 12])[0]
        j += 12 + dl
        el = struct.unpack(">I", d[j:j + 4])[0]
        j += 4 + el
        assert d[j:j + 4] == b"ete\x00", "bad declaration at %d" % j
        j += 4
        sizes[et] = sz
    assert d[j:j + 12] == b"hetehdredatb", "bad header end at %d" % j
    return sizes, j + 12


def who_of(block):
    """The decoder's name for the block (offset, size, capability)."""
    return "the global block" if block[2] == 0xFFFF else \
        "capability %d's block" % block[2]


def main():
    d = open(sys.argv[1], "rb").read()
    starts = conn_starts(d)
    if not starts:
        sys.exit("no connection start in the tee")
    end = starts[1] if len(starts) > 1 else len(d)
    sizes, j = header(d, starts[0] + 24)
    parts = corrupt_parts(sys.argv[2] if len(sys.argv) > 2 else None)
    block = None  # (offset, size, capability)
    while j < end:
        skip = [b for a, b in parts if a <= j < b]
        if skip:
            j, block = max(skip), None
            continue
        if end - j < 2:
            # Cut inside the event's 2-byte type: the type is unknown, the
            # event has at least those 2 bytes (seen in CI: 1 of 2).
            et, sz, n = None, None, 2
        else:
            et = struct.unpack(">H", d[j:j + 2])[0]
            if et == 0xFFFF:
                print("complete")
                return
            if et not in sizes:
                sys.exit("undeclared event type %d at byte %d" % (et, j))
            sz = sizes[et]
        if sz is None:
            pass
        elif sz < 0:
            n = 12 + struct.unpack(">H", d[j + 10:j + 12])[0] \
                if end - j >= 12 else None
        else:
            n = 10 + sz
        if n is None or j + n > end:
            if block is not None and j == block[0] + block[1] and \
                    et in (None, 18):
                # Cut inside the next block's marker (or its type), right
                # after a whole block: the cut event is in no block yet,
                # none is left short (the decoder's message has no block
                # clause then).
                print("at byte %d (%d of %d bytes present): the input ends "
                      "at byte %d" % (j, end - j, n, end))
                return
            if block is None or end >= block[0] + block[1]:
                sys.exit("the cut at %d is outside any block" % j)
            print("at byte %d (%d of %d bytes present): the input ends at "
                  "byte %d, %d bytes short of the end of %s from byte %d"
                  % (j, end - j, n or end - j, end,
                     block[0] + block[1] - end, who_of(block), block[0]))
            return
        if et == 18:
            bs, _, cap = struct.unpack(">IQH", d[j + 10:j + 24])
            block = (j, bs, cap)
        j += n
    # Between two events (the library's last write ended on an event's
    # boundary): the decoder's "ends without its end-of-data marker",
    # with the block the cut left short, if any.
    short = ""
    if block is not None and end < block[0] + block[1]:
        short = ", %d bytes short of the end of %s from byte %d" % (
            block[0] + block[1] - end, who_of(block), block[0])
    print("ends at byte %d without its end-of-data marker%s" % (end, short))


main()
