#!/usr/bin/env python3
"""Write the hand-made seed inputs (seed-*) of the fuzz corpora.

    tests/fuzz/mkseeds.py            (from the repository root)

Each seed is a small valid input for one target, so that replaying the
corpus in `make check` walks the main paths even before any fuzzing.
The formats are described at the top of each tests/fuzz/fuzz_NAME.c.
"""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')

F_NEXT, F_WRITE, F_INDIRECT = 1, 2, 4
IN, OUT, FLUSH, GET_ID, DISCARD, WZ = 0, 1, 4, 8, 11, 13


def put(name, sub, data):
    d = os.path.join(ROOT, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + name), 'wb') as f:
        f.write(data)


def desc(addr, length, flags=0, nxt=0):
    return struct.pack('<QIHH', addr, length, flags, nxt)


# ---- virtq ---------------------------------------------------------------

class Mem:
    def __init__(self, size=8192):
        self.b = bytearray(size)

    def w(self, off, data):
        self.b[off:off + len(data)] = data

    def trimmed(self):
        return bytes(self.b).rstrip(b'\0')


def virtq_seed(log2, flags, start, more, chains, avail_heads, extra=()):
    """chains: {head: [(index, addr, len, flags, next)]}; extra: (off, bytes)."""
    size = 1 << log2
    mem = Mem()
    avail = 16 * size
    for descs in chains.values():
        for i, a, ln, fl, nx in descs:
            mem.w(16 * i, desc(a, ln, fl, nx))
    idx = (start + len(avail_heads)) & 0xffff
    mem.w(avail + 2, struct.pack('<H', idx))
    for k, h in enumerate(avail_heads):
        mem.w(avail + 4 + 2 * ((start + k) % size), struct.pack('<H', h))
    for off, data in extra:
        mem.w(off, data)
    hdr = bytes([log2, flags]) + struct.pack('<H', start) + bytes([more])
    return hdr + mem.trimmed()


def virtq_seeds():
    table = desc(0x100, 16) + desc(0x200, 512, F_WRITE | F_NEXT, 2) + \
        desc(0x401, 1, F_WRITE)
    chains = {
        0: [(0, 0x100, 16, F_NEXT, 1), (1, 0x200, 512, F_WRITE | F_NEXT, 2),
            (2, 0x400, 1, F_WRITE, 0)],
        3: [(3, 0x410, 48, F_INDIRECT, 0)],
        4: [(4, 0x440, 100, F_WRITE, 0)],
    }
    tbl = [(0x410, table)]
    # size 8, EVENT_IDX + INDIRECT, 64 iovecs
    put('virtq-direct-indirect', 'virtq',
        virtq_seed(3, 0x0f, 0, 0, chains, [0, 3, 4], tbl))
    # the same across the 16-bit wrap, two-step pops and unpop
    put('virtq-wrap', 'virtq',
        virtq_seed(3, 0x3f, 65534, 2, chains, [0, 3, 4], tbl))
    # a loop, then a good chain
    loop = {5: [(5, 0x100, 16, F_NEXT, 6), (6, 0x200, 16, F_NEXT, 5)],
            4: chains[4]}
    put('virtq-loop', 'virtq', virtq_seed(3, 0x0f, 0, 0, loop, [5, 4]))
    # indirect not negotiated; a head out of range breaks the ring
    put('virtq-no-indirect', 'virtq',
        virtq_seed(3, 0x0c, 7, 0, chains, [3, 0, 9], tbl))
    # size 1, two rounds
    put('virtq-size1', 'virtq',
        virtq_seed(0, 0x0d, 65535, 1, {0: [(0, 0x100, 64, F_WRITE, 0)]},
                   [0]))
    # a buffer that runs off the end of RAM, one iovec per pop
    put('virtq-edge', 'virtq',
        virtq_seed(4, 0x00, 100, 0,
                   {0: [(0, 0x1ff0, 32, 0, 0)], 1: [(1, 0x10, 8, 0, 0)]},
                   [0, 1]))
    # Linux's one-segment requests, a read and a write: tables linked
    # 0 -> 1 -> 2 (the short way, virtq_read_chain3), two-step pops,
    # with 64 iovecs and with 1
    rd = desc(0x100, 16, F_NEXT, 1) + desc(0x200, 512, F_WRITE | F_NEXT, 2) + \
        desc(0x401, 1, F_WRITE, 0x7777)
    wr = desc(0x110, 16, F_NEXT, 1) + desc(0x200, 512, F_NEXT, 2) + \
        desc(0x402, 1, F_WRITE)
    lnx = {3: [(3, 0x410, 48, F_INDIRECT, 0)], 5: [(5, 0x470, 48, F_INDIRECT, 0)]}
    for name, flags in (('virtq-linux', 0x1f), ('virtq-linux-1iov', 0x13)):
        put(name, 'virtq', virtq_seed(3, flags, 0, 0, lnx, [3, 5],
                                      [(0x410, rd), (0x470, wr)]))
    # size 64, a full ring of one-descriptor chains, reused in round two
    full = {h: [(h, 0x800 + 8 * h, 8, F_WRITE, 0)] for h in range(64)}
    put('virtq-full', 'virtq',
        virtq_seed(6, 0x07, 65500, 64, full, list(range(64))))


# ---- req -----------------------------------------------------------------

def req_seed(flags, cap, maxd, maxwz, segs):
    """segs: [(writable, length, content-for-readable)]."""
    out = bytes([flags]) + struct.pack('<HBB', cap, maxd, maxwz)
    for w, ln, content in segs:
        out += struct.pack('>H', (0x8000 if w else 0) | ln)
        if not w:
            out += content.ljust(ln, b'\0')[:ln]
    return out


def hdr(t, sector=0):
    return struct.pack('<IIQ', t, 0, sector)


def req_seeds():
    rw = 0x06  # discard + write zeroes negotiated, writable disk
    put('req-in', 'req', req_seed(rw, 1024, 64, 64,
                                  [(0, 16, hdr(IN, 8)), (1, 4096, b''),
                                   (1, 1, b'')]))
    put('req-out-split', 'req',
        req_seed(rw, 1024, 64, 64, [(0, 8, hdr(OUT, 1)[:8]),
                                    (0, 520, hdr(OUT, 1)[8:] + b'x' * 512),
                                    (1, 1, b'')]))
    put('req-flush', 'req', req_seed(rw, 8, 1, 1, [(0, 16, hdr(FLUSH)),
                                                   (1, 1, b'')]))
    put('req-get-id', 'req', req_seed(rw, 8, 1, 1, [(0, 16, hdr(GET_ID)),
                                                    (1, 21, b'')]))
    seg = struct.pack('<QII', 4, 8, 0)
    put('req-discard', 'req', req_seed(rw, 1024, 64, 64,
                                       [(0, 32, hdr(DISCARD) + seg),
                                        (1, 1, b'')]))
    seg = struct.pack('<QII', 4, 8, 1)
    put('req-wz-unmap', 'req', req_seed(rw, 1024, 64, 64,
                                        [(0, 16, hdr(WZ)), (0, 16, seg),
                                         (1, 1, b'')]))
    put('req-ro-out', 'req', req_seed(0x01, 1024, 0, 0,
                                      [(0, 528, hdr(OUT) + b'y' * 512),
                                       (1, 1, b'')]))
    put('req-past-end', 'req', req_seed(rw, 16, 64, 64,
                                        [(0, 16, hdr(IN, 15)),
                                         (1, 1024, b''), (1, 1, b'')]))


# ---- device --------------------------------------------------------------

def dev_op(kind, nseg=1, indirect=False, sync=False, sector=0, lencode=1,
           mut=None, seg=b''):
    op = kind | (8 if indirect else 0) | (nseg << 4) | (0x40 if sync else 0)
    if mut is not None:
        op |= 0x80
    out = bytes([op, sector, lencode]) + seg
    if mut is not None:
        out += bytes([mut[0]]) + struct.pack('<I', mut[1])
    return out


def device_seeds():
    # kinds: 0 IN, 1 OUT, 2 FLUSH, 3 GET_ID, 4 DISCARD, 5 WRITE_ZEROES,
    # 6 unknown, 7 IN
    seg = struct.pack('<QII', 2, 4, 0)
    ops = (dev_op(1, 2, sector=4, lencode=2) + dev_op(0, 2, sector=4,
                                                      lencode=2) +
           dev_op(2, 0, sync=True) + dev_op(3, 1, lencode=20 << 2) +
           dev_op(4, 1, True, seg=seg) + dev_op(5, 1, seg=seg, sync=True) +
           dev_op(6, 1, indirect=True) + dev_op(7, 3, True, lencode=1))
    put('device-valid', 'device', bytes([0x1e]) + ops)
    put('device-batch', 'device', bytes([0x3d]) + ops)
    bad = (dev_op(1, 1, sector=1, lencode=1, mut=(0, 0xffffffff)) +
           dev_op(0, 1, sync=True, mut=(3, 0x7777)) +
           dev_op(0, 1, True, mut=(8, 0x1234)) +
           dev_op(1, 2, lencode=3, sync=True, mut=(2, 0x4)) +
           dev_op(0, 1, mut=(1, 3)) + dev_op(0, 1, sync=True))
    put('device-bad-chains', 'device', bytes([0x1e]) + bad)
    ring = dev_op(1, 1, lencode=1) + dev_op(0, 1, sync=True, mut=(9, 0)) + \
        dev_op(0, 1, sync=True)
    put('device-head-reused', 'device', bytes([0x1e]) + ring)
    jump = dev_op(0, 1) + dev_op(0, 1, sync=True, mut=(7, 100))
    put('device-avail-jump', 'device', bytes([0x02]) + jump)
    # a read whose buffer a mutation moved: the device writes wherever
    # the guest said (fuzzing found the harness had to keep it off the
    # rings); size 8, no EVENT_IDX
    dma = dev_op(7, 3, True, sync=True, sector=1, lencode=6, mut=(0x1e, 1))
    put('device-dma-mutation', 'device', bytes([0x11]) + dma)


virtq_seeds()
req_seeds()
device_seeds()
