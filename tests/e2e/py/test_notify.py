"""The guest kicks its queues through the I/O BAR's notify area: each
virtio-pci function offers that capability before BAR 0's, and Linux's
driver takes the first it can map, so it claims the function's I/O range
(/proc/ioports names it virtio-pci-modern) and not only its memory BAR.
Data written through the disk reads back the same, so the kicks arrive.
On each guest kernel."""
import re

import guestlib as gl
from vmharness import cmdlines

SCRIPT = r"""
dd if=/dev/urandom of=/tmp/a bs=4096 count=256 2>/dev/null
dd if=/tmp/a of=$DISK bs=4096 oflag=direct 2>/dev/null
echo "write-rc=$?"
dd if=$DISK of=/tmp/b bs=4096 count=256 iflag=direct 2>/dev/null
cmp /tmp/a /tmp/b && echo same
sed 's/^/ioports: /' /proc/ioports
"""

RANGE = re.compile(r"^ioports:\s*([0-9a-f]+)-([0-9a-f]+) : (.*)$")


def test_kicks_through_the_io_bar(tmp_path, kernel):
    disks = gl.std_disks(tmp_path, 64, gl.QUEUES)
    cmdline = cmdlines.guest_cmdline(script=SCRIPT, disk_serial="data")
    g = gl.run(gl.vmm_argv(kernel.path(), cmdline, disks, gl.CPUS), tmp_path,
               timeout=gl.SHORT_TIMEOUT)
    out = gl.run_out(g)
    assert "write-rc=0" in out and "same" in out, "\n".join(out)
    claimed = []
    for line in out:
        m = RANGE.match(line)
        if m and m.group(3) == "virtio-pci-modern":
            claimed.append((int(m.group(1), 16), int(m.group(2), 16)))
    io = [r for r in claimed if r[1] < 0x10000]
    # Two disks: two functions, each with its I/O BAR in the PCI window.
    assert len(io) == 2, "\n".join(l for l in out if l.startswith("ioports"))
    for lo, hi in io:
        assert lo >= 0xc000 and hi - lo + 1 == 64, (hex(lo), hex(hi))
