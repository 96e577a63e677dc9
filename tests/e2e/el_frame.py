"""el_frame.py: a framing of GHC eventlogs for the e2e tests, written from
the format (spec/eventlog-format, docs/eventlog.md), sharing no code with
the decoder: the header's declared event sizes, then each event's offset,
type and length, block markers included.

    size, p = header(b)             # b: the whole log (bytes)
    for off, t, hl, n in events(b, size, p):
        ...                         # t == 0xFFFF: DATA_END, the last one
"""
import struct

BLOCK_MARKER = 18
DATA_END = 0xFFFF


def header(b):
    """The declared payload size of each event type (0xFFFF: variable) and
    the offset of the first data byte, after 'datb'."""
    assert b[:8] == b'hdrbhetb'
    p, size = 8, {}
    while b[p:p + 4] == b'etb\0':
        i, sz, dl = struct.unpack('>HHI', b[p + 4:p + 12])
        p += 12 + dl
        xl = struct.unpack('>I', b[p:p + 4])[0]
        p += 4 + xl
        assert b[p:p + 4] == b'ete\0'
        p += 4
        size[i] = sz
    assert b[p:p + 12] == b'hetehdredatb'
    return size, p + 12


def events(b, size, p):
    """(offset, type, header length, payload length) of each event from p
    up to the end of b, or up to DATA_END, given last as (offset, 0xFFFF,
    2, 0)."""
    while p + 2 <= len(b):
        t = struct.unpack('>H', b[p:p + 2])[0]
        if t == DATA_END:
            yield p, t, 2, 0
            return
        n, hl = size[t], 10
        if n == 0xFFFF:
            n, hl = struct.unpack('>H', b[p + 10:p + 12])[0], 12
        yield p, t, hl, n
        p += hl + n


def marker(b, off):
    """The block size and capability of the block marker at off."""
    sz, = struct.unpack('>I', b[off + 10:off + 14])
    cap, = struct.unpack('>H', b[off + 22:off + 24])
    return sz, cap
