"""A read-only disk stays unchanged when the guest tries to clear its
read-only flag (blockdev --setrw) and writes.  Linux 6.1 keeps the flag
the device set (VIRTIO_BLK_F_RO: BLKROSET cannot clear it) and refuses
the write itself, so the guest's own kernel stops it here; the device's
refusal of a write to a read-only disk is tested without a guest
(test_req, test_malformed: test_req_read_only).  On each guest kernel."""
import hashlib
import subprocess

from vmharness import cmdlines, guestrun, paths

SCRIPT = r"""
blockdev --setrw $DISK
echo "ro-flag=$(cat /sys/block/${DISK#/dev/}/ro)"
dd if=/dev/urandom of=$DISK bs=4096 count=4 conv=fsync 2>/tmp/dd.err
echo "dd-rc=$?"
cat /tmp/dd.err
dd if=$DISK of=/dev/null bs=4096 count=4 iflag=direct 2>/dev/null
echo "read-rc=$?"
"""


def test_guest_cannot_write_a_readonly_disk(tmp_path, kernel):
    disk = tmp_path / "ro.img"
    subprocess.run(["dd", "if=/dev/urandom", "of=%s" % disk, "bs=1M", "count=8",
                    "status=none"], check=True)
    before = hashlib.sha256(disk.read_bytes()).hexdigest()
    cmdline = cmdlines.guest_cmdline(script=SCRIPT, disk_serial="ro")
    d = {"path": str(disk), "serial": "ro", "queues": 1, "readonly": True}
    argv = cmdlines.vmm_argv(kernel.path("vmlinux"), paths.INITRD, cmdline, 512, 1, [d],
                             paths.VMM_BIN)
    g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    assert "ro-flag=1" in g.lines        # Linux kept the device's flag
    assert "read-rc=0" in g.lines        # reads still work
    rc = [l for l in g.lines if l.startswith("dd-rc=")]
    assert rc and rc[0] != "dd-rc=0", g.lines  # the write failed
    assert hashlib.sha256(disk.read_bytes()).hexdigest() == before
