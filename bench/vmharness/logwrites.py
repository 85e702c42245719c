"""Read a dm-log-writes log and replay it, as filesystems' crash tests do.

The log device holds, in order (Documentation/admin-guide/device-mapper/
log-writes.rst; the layout is the kernel's, read here with struct):
  block 0          the super: magic, version, nr_entries, sectorsize
  then per entry   one block: sector, nr_sectors, flags, data_len (and a
                   mark's label after them), then nr_sectors blocks of
                   data for a write (none for a flush, discard or mark).
A block is the data device's logical block size (sectorsize); sector and
nr_sectors count in it.  dm-log-writes logs a write only once a FLUSH
has covered it, so replaying up to a flush entry gives the device as a
power cut right after that flush would leave it.
"""
import struct

MAGIC = 0x6a736677736872
FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8
SUPER = struct.Struct("<QQQI")
ENTRY = struct.Struct("<QQQQ")


class Entry:
    def __init__(self, sector, nr_sectors, flags, data, label):
        self.sector, self.nr_sectors, self.flags = sector, nr_sectors, flags
        self.data, self.label = data, label

    def __repr__(self):
        return "Entry(%d+%d flags=%d%s)" % (self.sector, self.nr_sectors, self.flags,
                                           " " + self.label if self.label else "")


def read_log(f):
    """(sectorsize, [Entry]) from the log device's file object."""
    f.seek(0)
    magic, version, n, bs = SUPER.unpack(f.read(SUPER.size))
    if magic != MAGIC or version != 1:
        raise ValueError("not a dm-log-writes log (magic %#x, version %d)" % (magic, version))
    entries = []
    pos = bs
    for _ in range(n):
        f.seek(pos)
        head = f.read(bs)
        sector, nr, flags, dlen = ENTRY.unpack(head[:ENTRY.size])
        pos += bs
        label = None
        data = b""
        if flags & MARK:
            label = head[ENTRY.size:ENTRY.size + dlen].decode()
        elif not flags & DISCARD and nr:
            f.seek(pos)
            data = f.read(nr * bs)
            pos += nr * bs
        entries.append(Entry(sector, nr, flags, data, label))
    return bs, entries


def replay(bs, entries, size, stop):
    """The device's contents (bytearray of SIZE bytes, zero at start)
    after the entries before index STOP."""
    disk = bytearray(size)
    for e in entries[:stop]:
        off, length = e.sector * bs, e.nr_sectors * bs
        if e.flags & DISCARD:
            disk[off:off + length] = bytes(length)
        elif e.data:
            disk[off:off + len(e.data)] = e.data
    return disk
