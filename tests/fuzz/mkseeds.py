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
    put('req-out', 'req', req_seed(rw, 1024, 64, 64,
                                   [(0, 16, hdr(OUT, 2)), (0, 512, b'z' * 512),
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


def dev_tr(t, rest=b''):
    return bytes([7, t]) + rest


def device_seeds():
    # kinds: 0 IN, 1 OUT, 2 FLUSH, 3 GET_ID, 4 DISCARD, 5 WRITE_ZEROES,
    # 6 unknown, 7 a transport operation (dev_tr)
    seg = struct.pack('<QII', 2, 4, 0)
    ops = (dev_op(1, 2, sector=4, lencode=2) + dev_op(0, 2, sector=4,
                                                      lencode=2) +
           dev_op(2, 0, sync=True) + dev_op(3, 1, lencode=20 << 2) +
           dev_op(4, 1, True, seg=seg) + dev_op(5, 1, seg=seg, sync=True) +
           dev_op(6, 1, indirect=True) + dev_op(0, 3, True, lencode=1))
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
    dma = dev_op(0, 3, True, sync=True, sector=1, lencode=6, mut=(0x1e, 1))
    put('device-dma-mutation', 'device', bytes([0x11]) + dma)
    # the transport: both queues and MSI-X, requests on each, a kick
    # through the I/O BAR, Bus Master Enable off and on, a reset in the
    # middle and the device set up again, registers read
    tr = (ops + dev_tr(1) + ops + dev_tr(2) + dev_tr(4) + dev_tr(3) +
          dev_op(1, 1, sync=True) + dev_tr(0) + ops +
          dev_tr(7, bytes([0x10]) + struct.pack('<I', 1)) +
          dev_op(0, 1, sync=True))
    put('device-transport', 'device', bytes([0xde]) + tr)
    put('device-transport-intx', 'device', bytes([0x5e]) + tr)
    # raw register writes: queue_enable off, status 0 from the BAR, the
    # command register, a notify of a queue that does not exist
    raw = (ops + dev_tr(5 | 1 << 3, struct.pack('<HQ', 0x1c, 0)) +
           dev_op(0, 1, sync=True) +
           dev_tr(5, struct.pack('<HQ', 0x14, 0)) +
           dev_tr(6, bytes([4]) + struct.pack('<I', 0)) +
           dev_tr(5 | 1 << 3, struct.pack('<HQ', 0x3000 + 4 * 9, 9)))
    put('device-raw', 'device', bytes([0xde]) + raw)


# ---- api ------------------------------------------------------------------

def api_seeds():
    def x(cmd, **args):
        import json
        o = {'execute': cmd}
        if args:
            o['arguments'] = args
        return json.dumps(o, separators=(',', ':')).encode()
    put('api-info-stats', 'api', b'\n'.join([
        x('info'), x('stats'), x('stats', disk='vdb', reset=True),
        x('latency', on=True), x('stats', disk=1), x('latency', on=False)]))
    put('api-resize', 'api', b'\n'.join([
        x('resize', disk='vda', size=2 << 20),
        x('resize', disk='vda', size=512 << 10, shrink=True),
        x('resize', disk='vdb', size=4096), x('info')]))
    put('api-limit', 'api', b'\n'.join([
        x('limit', disk='vda', iops=1000, bw=1 << 20, burst=20),
        x('limit', disk='vdb', bw=4096), x('info'),
        x('limit', disk='vda', off=True)]))
    put('api-pause', 'api', b'\n'.join([
        x('pause'), x('pause', disk='vda'), x('stats'), x('resume', disk=0),
        x('resume'), x('quit')]))
    put('api-attach', 'api', b'\n'.join([
        x('attach', spec='ram:2M,queues=2'), x('attach', spec='ram:1M'),
        x('attach', spec='ram:1M'), x('attach', spec='ram:'),
        x('stats', disk='vdc'), x('resize', disk='vdd', size=4 << 20),
        x('limit', disk='vdc', iops=10), x('pause', disk='vdd'),
        x('detach', disk='vdc', timeout_ms=1), x('detach', disk='vda'),
        x('detach', disk='vdc', force=True), x('info'),
        x('attach', spec='ram:1M'), x('detach', disk='vdc', timeout_ms=50),
        x('resume')]))
    put('api-bad', 'api', b'\n'.join([
        b'', b'{', b'[]', b'{"execute":1}', x('nothing'),
        x('resize', disk='vdz', size=1), x('limit', disk='vda'),
        b'{"execute":"info","x":1}']))


# ---- opts -----------------------------------------------------------------

def opts_seeds():
    for i, spec in enumerate([
            b'ram:64M', b'ram:1G,queues=4,serial=abc,batch=on,poll=0',
            b'/tmp/disk.img,ro,direct,engine=sync,iops=100,bw=1M,burst=5',
            b'disk,queues=16,engine=uring,poll=1000000']):
        put('opts-spec-%d' % i, 'opts', b'\0' + spec)
    put('opts-size', 'opts', b'\1' + b'512K')
    put('opts-rate', 'opts', b'\2' + b'10g')
    put('opts-limit', 'opts', b'\3' + b'burst=100')


# ---- boot -----------------------------------------------------------------

def boot_seeds():
    # a bzImage: setup header at 0x1f1, 1 setup sector, protocol 2.15
    bz = bytearray(1024 + 512)
    bz[0x1f1] = 1
    struct.pack_into('<H', bz, 0x1fe, 0xaa55)
    struct.pack_into('<I', bz, 0x202, 0x53726448)
    struct.pack_into('<H', bz, 0x206, 0x020f)
    struct.pack_into('<B', bz, 0x211, 1)           # loadflags: LOADED_HIGH
    struct.pack_into('<I', bz, 0x22c, 0x7fffffff)  # initrd_addr_max
    struct.pack_into('<I', bz, 0x230, 0x200000)    # kernel_alignment
    struct.pack_into('<B', bz, 0x234, 1)           # relocatable
    struct.pack_into('<H', bz, 0x236, 3)           # xloadflags: 64-bit
    struct.pack_into('<I', bz, 0x238, 2048)        # cmdline_size
    struct.pack_into('<Q', bz, 0x258, 0x1000000)   # pref_address
    struct.pack_into('<I', bz, 0x260, 0x100000)    # init_size
    put('boot-bzimage', 'boot', bytes([0x1a]) + bytes(bz))
    # an ELF vmlinux: one PT_LOAD at 2 MiB
    eh = struct.pack('<16sHHIQQQIHHHHHH', b'\x7fELF\x02\x01\x01' +
                     b'\0' * 9, 2, 62, 1, 0x200000, 64, 0, 0, 64, 56, 1,
                     64, 0, 0)
    ph = struct.pack('<IIQQQQQQ', 1, 5, 0x1000, 0xffffffff81000000,
                     0x200000, 256, 4096, 0x1000)
    elf = eh + ph + b'\0' * (0x1000 - 120) + b'\x90' * 256
    put('boot-elf', 'boot', bytes([0x08]) + elf)
    # an arm64 Image: text_offset 0, image_size 64 KiB, little endian
    im = bytearray(4096)
    struct.pack_into('<QQQ', im, 8, 0, 65536, 2)
    struct.pack_into('<I', im, 56, 0x644d5241)
    put('boot-arm64', 'boot', bytes([0x03]) + bytes(im))
    # an EFI-stub Image: MZ, a PE header with one section in the file
    pe = bytearray(im)
    pe[0:2] = b'MZ'
    struct.pack_into('<I', pe, 60, 128)
    struct.pack_into('<IHH', pe, 128, 0x4550, 0xaa64, 1)
    struct.pack_into('<H', pe, 128 + 20, 0)
    struct.pack_into('<II', pe, 128 + 24 + 16, 512, 1024)
    put('boot-arm64-efi', 'boot', bytes([0x01]) + bytes(pe))


# ---- ports ----------------------------------------------------------------

def ports_seeds():
    def a(kind, size, write, off, val, extra=0):
        return bytes([(kind << 3) | (4 if write else 0) | size, off,
                      extra]) + struct.pack('<I', val)
    # x86: UART (DLAB and divisor, THR, IER, IIR, LSR, MSR, SCR), i8042
    # commands (read and write the command byte, self test, output port,
    # reset), RTC index and data, 0xcf8 to slot 0 (the bridge) and slot 1
    # (pvpanic): IDs, a BAR sized and placed, the command register
    x = (a(7, 0, 1, 3, 0x80) + a(7, 0, 1, 0, 1) + a(7, 0, 1, 3, 3) +
         a(7, 0, 1, 0, 0x41) + a(7, 0, 1, 1, 0x0f) + a(7, 0, 0, 2, 0) +
         a(7, 0, 0, 5, 0) + a(7, 0, 0, 6, 0) + a(7, 0, 1, 7, 9) +
         a(2, 0, 1, 0, 0x20) + a(1, 0, 0, 0, 0) + a(2, 0, 1, 0, 0x60) +
         a(1, 0, 1, 0, 0x45) + a(2, 0, 1, 0, 0xaa) + a(1, 0, 0, 0, 0) +
         a(2, 0, 1, 0, 0xd1) + a(1, 0, 1, 0, 0xff) + a(2, 0, 1, 0, 0xfe) +
         a(3, 0, 1, 0, 0x0a) + a(3, 0, 0, 1, 0) + a(3, 0, 1, 0, 0x8b) +
         a(3, 0, 1, 1, 0x02))
    for slot in (0, 1):
        for reg, val, w in ((0, 0, 0), (0x10, 0xffffffff, 1),
                            (0x10, 0, 0), (0x10, 0xc0000000, 1),
                            (0x04, 0x07, 1), (0x3c, 0, 0)):
            x += a(4, 2, 1, 1, 0x80000000 | slot << 11 | reg)
            x += a(4, 2, w, 5, val)
    x += a(4, 1, 0, 7, 0) + a(4, 0, 0, 8, 0) + a(5, 0, 1, 0, 1)
    put('ports-x86', 'ports', bytes([0]) + x)
    # arm64: ECAM reads of slot 0 and 1's header, pvpanic's BAR placed and
    # decoding, written through the PCI window; the UART by MMIO
    m = b''
    for reg, val, w in ((0, 0, 0), (0x10, 0xffffffff, 1), (0x10, 0, 0),
                        (0x10, 0xc0000000, 1), (0x04, 0x07, 1)):
        m += a(1, 2, w, reg, val, 1)
    m += (a(0, 2, 0, 0, 0, 0) + a(0, 3, 0, 0, 0, 0) + a(3, 0, 0, 0, 0) +
          a(3, 0, 1, 0, 1) + a(2, 0, 1, 0, 0x41) + a(2, 0, 0, 5, 0))
    put('ports-arm64', 'ports', bytes([1]) + m)


# ---- fdt ------------------------------------------------------------------

def fdt_seeds():
    def cfg(ncpus, intx, base, size, rd, rd_end, buf16, pat, args):
        return (struct.pack('<BIQQQQHB', ncpus, intx, base, size, rd,
                            rd_end, buf16, pat) + args)
    put('fdt-one-cpu', 'fdt', cfg(1, 0x3, 0x40000000, 256 << 20, 0, 0,
                                  4096, 1, b'console=ttyS0'))
    put('fdt-initrd', 'fdt', cfg(4, 0xffffffff, 0x40000000, 1 << 30,
                                 0x7000000, 0x7100000, 4095, 3,
                                 b'console=ttyS0 root=/dev/vda rw'))
    put('fdt-64-cpus', 'fdt', cfg(64, 1, 0x40000000, 1 << 34, 0, 0, 4095,
                                  0x81, b''))
    put('fdt-small-buffer', 'fdt', cfg(2, 0, 0x40000000, 64 << 20, 0, 0,
                                       16, 0, b'x'))
    put('fdt-no-cpus', 'fdt', cfg(0, 0, 0, 0, 0, 0, 100, 0, b''))


# ---- pcieport ---------------------------------------------------------------

def pcieport_seeds():
    def acc(kind, size_log, off, val, hi=0):
        return bytes([(size_log & 3) | (kind << 2) | (hi << 7), off & 0xff,
                      (off >> 8) & 0xff]) + struct.pack('<I', val)
    exp, msi = 0x40, 0x80
    put('plug-power-button-unplug', 'pcieport', b''.join([
        acc(2, 1, 0x04, 0x6),                    # Command: memory, bus master
        acc(2, 1, msi + 2, 0x1),                 # MSI enable
        acc(2, 1, exp + 0x18, 0x103f),           # Slot Control: events, HPIE
        acc(6, 0, 0, 0),                         # plug
        acc(2, 1, exp + 0x1a, 0xffff),           # Slot Status cleared (RW1C)
        acc(2, 1, exp + 0x18, 0x1128),           # power on, indicator
        acc(4, 2, 0x0000, 0),                    # the device's config, read
        acc(5, 2, 0x0004, 0x6),                  # and written
        acc(6, 0, 2, 0),                         # attention button
        acc(2, 1, exp + 0x18, 0x0700),           # power off
        acc(6, 0, 1, 0),                         # unplug
        acc(0, 2, 0x00, 0), acc(0, 2, exp, 0), acc(0, 2, exp + 0x14, 0),
        acc(0, 2, msi, 0)]))
    put('read-all', 'pcieport', b''.join(acc(0, 2, o, 0) for o in range(0, 0x100, 4)))
    put('slot-regs', 'pcieport', b''.join(acc(7, n, r, 0xffffffff)
                                          for r in range(8) for n in range(3)))


virtq_seeds()
req_seeds()
device_seeds()
api_seeds()
opts_seeds()
boot_seeds()
ports_seeds()
fdt_seeds()
pcieport_seeds()
