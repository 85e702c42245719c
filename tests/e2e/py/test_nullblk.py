"""Block devices as first-class disks: fio verify in the guest on a
null_blk device of the test host (memory-backed, requests completed by a
10 us timer, 512-byte and 4 KiB logical blocks), opened with O_DIRECT and
served through io_uring.  The guest's I/O must reach the device: its
reads and writes are counted in the device's own statistics, the VMM
holds it with O_DIRECT while the guest runs, and the VMM never says it serves
the disk synchronously.

Stock kernel only: this is about the VMM's backend on the host side; the
guest's driver is the same on both kernels (test_fio covers those)."""
import glob
import os

import pytest

import guestlib
from vmharness import cmdlines, fiojson, guestrun, nullblk, paths

needs_nullblk = pytest.mark.skipif(
    nullblk.unavailable() is not None,
    reason="%s (run by `bench/vmbench pytest` in the test host)" % nullblk.unavailable())


def o_direct_fds(pid, dev):
    """How many of PID's descriptors of DEV are open with O_DIRECT."""
    n = 0
    for fd in glob.glob("/proc/%d/fd/*" % pid):
        try:
            if os.readlink(fd) != dev:
                continue
            with open(fd.replace("/fd/", "/fdinfo/")) as f:
                flags = next(int(l.split()[1], 8) for l in f if l.startswith("flags:"))
        except (OSError, StopIteration):
            continue
        if flags & os.O_DIRECT:
            n += 1
    return n


@needs_nullblk
@pytest.mark.parametrize("bs", [512, 4096])
def test_verify_on_nullblk_direct(tmp_path, bs):
    name = "nullbe2e%d" % bs
    dev = nullblk.create(name, size_mib=256, bs=bs, submit_queues=2)
    try:
        before = nullblk.io_counts(dev)
        cmdline = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
        d = {"path": dev, "serial": "data", "queues": 2, "direct": True,
             "opts": ["engine=uring"]}
        argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD, cmdline,
                                 512, 2, [d], paths.VMM_BIN)
        seen = []

        def on_line(line, proc):
            # The VMM opens its disks before the guest's first line: how
            # it holds the device, seen while the guest runs.
            if len(seen) < 20:
                seen.append(o_direct_fds(proc.pid, dev))

        g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"), on_line=on_line,
                                      before_try=seen.clear)
        after = nullblk.io_counts(dev)
    finally:
        nullblk.remove(name)
    assert g.rc == 0, g.tail()
    assert "synchronous" not in g.stderr and "sandbox" not in g.stderr, g.stderr
    rc, doc = fiojson.extract(g.lines)["verify"]
    assert rc == 0 and doc, g.stderr
    ios = fiojson.summary(doc)["ios"]
    reads, writes = after[0] - before[0], after[1] - before[1]
    print("null_blk bs=%d: guest fio %d I/Os; device %d reads, %d writes; "
          "O_DIRECT descriptors while fio ran: %s" % (bs, ios, reads, writes, seen))
    assert ios > 0
    # verify writes the area, then reads it back: both reach the device
    # (requests may be split or merged on the way, never skipped).
    assert reads > 0 and writes > 0
    assert seen and max(seen) >= 1, seen
