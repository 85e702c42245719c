"""What the guest does to a disk reaches its backing file, and only what
it may: a read-only disk is seen as such and stays byte for byte the
same; a pattern written and synced is in the file once the VMM has
exited, at its offset and nowhere before it.  On each guest kernel (the
kernel fixture: stock, small)."""
import hashlib
import random

import guestlib as gl
from vmharness import cmdlines

CANARY = b"ro-disk-canary"

RO_SCRIPT = """cat /sys/block/vda/ro
dd if=/dev/zero of=/dev/vda bs=4096 count=1 oflag=direct conv=fsync
echo "dd exit status $?"
head -c 14 /dev/vda; echo
"""


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_ro_disk(tmp_path, kernel, note):
    disks = gl.std_disks(tmp_path, 64, gl.QUEUES)
    sys_img = disks[0]["path"]
    with open(sys_img, "r+b") as f:
        f.write(CANARY)
    before = sha256(sys_img)
    g = gl.run(gl.vmm_argv(kernel.path(), cmdlines.guest_cmdline(script=RO_SCRIPT), disks, gl.CPUS),
               tmp_path, "ro-disk", timeout=gl.SHORT_TIMEOUT)
    out = gl.run_out(g)
    gl.check_disk(g, "sys", 64, 1, gl.QUEUES)
    assert "1" in out, "vda is not read-only in the guest\n" + g.tail()
    st = [l for l in out if l.startswith("dd exit status ")]
    assert st and st[0] != "dd exit status 0", (
        "the write to the read-only disk did not fail\n" + g.tail())
    assert CANARY.decode() in out, "the guest did not read the disk's contents\n" + g.tail()
    assert sha256(sys_img) == before, "the read-only disk's file changed"
    note("file unchanged (sha256 %s)" % before[:16])


def test_write_pattern(tmp_path, kernel):
    pat = "e2e-pattern-%d-0123456789abcdef" % random.randrange(32768)
    disks = gl.std_disks(tmp_path, 64, gl.QUEUES)
    script = ("yes %s | head -c 1048576 >/tmp/p &&\n"
              "dd if=/tmp/p of=$DISK bs=1M seek=5 count=1 oflag=direct conv=fsync status=none &&\n"
              "sync && echo written\n" % pat)
    g = gl.run(gl.vmm_argv(kernel.path(), cmdlines.guest_cmdline(script=script, disk_serial="data"),
                           disks, gl.CPUS),
               tmp_path, "write-pattern", timeout=gl.SHORT_TIMEOUT)
    out = gl.run_out(g)
    assert "written" in out, "the guest did not write the pattern\n" + g.tail()
    want = ((pat + "\n").encode() * (1048576 // len(pat) + 1))[:1048576]
    with open(disks[1]["path"], "rb") as f:
        before = f.read(5 * gl.MIB)
        at = f.read(gl.MIB)
    assert at == want, "the backing file does not hold the pattern at 5 MiB"
    assert before.count(0) == len(before), "the backing file has data before 5 MiB"
