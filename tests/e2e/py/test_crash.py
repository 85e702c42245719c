"""Crash consistency, proven as filesystems are: every write the guest
saw complete before a completed FLUSH is on the device after a power cut
right after that flush (dm-log-writes records what reaches the device
below the VMM; the log is replayed up to each flush the guest was
promised); and a `kill -9` of the VMM loses no write the guest saw
complete (the kernel has it).  Both with and without `direct`.

Needs root, dmsetup, loop, dm-log-writes and mkfs.ext4: the test host
has them (tests/testhost/mkinitramfs.sh).

Stock kernel only: this is about what the VMM makes durable on the host
below it (host page cache, O_DIRECT, fdatasync on FLUSH); the guest's
kernel only issues the writes and flushes, the same ones on both, and
the device tests run on each kernel."""
import signal
import subprocess

import pytest

from blockdev import MIB, dm_remove, loop_attach, loop_detach, needs_dm, sh
import guestlib
from vmharness import cmdlines, guestrun, logwrites, paths

pytestmark = needs_dm

BLOCK = 4096

# Block i of the disk holds "blk%08d\n" % i, zero-padded (busybox dd
# conv=sync pads the short input block).
WRITE_BLOCK = ('printf "blk%08d\\n" $i >/tmp/b; '
               'dd if=/tmp/b of=$DISK bs=4096 seek=$i conv=sync,notrunc oflag=direct 2>/dev/null '
               '|| echo "WRITE-FAILED $i"\n')


def expect_block(disk, i):
    want = b"blk%08d\n" % i
    got = bytes(disk[i * BLOCK:i * BLOCK + len(want)])
    return got == want, got


def run_guest(tmp_path, disk_path, direct, script, on_line):
    cmdline = cmdlines.guest_cmdline(script=script, disk_serial="data")
    d = {"path": disk_path, "serial": "data", "queues": 1, "direct": direct}
    argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD, cmdline, 512, 1, [d], paths.VMM_BIN)
    return guestrun.run_with_retries(argv, str(tmp_path / "guest.log"), on_line=on_line,
                                     stdin=guestrun.ANSWER)


@pytest.mark.parametrize("direct", [False, True], ids=["cached", "direct"])
def test_flushed_writes_survive_a_power_cut(tmp_path, direct):
    ddev = loop_attach(tmp_path / "data.img")
    ldev = loop_attach(tmp_path / "log.img")
    name = "vmmlogw"
    sh("dmsetup", "create", name, "--table", "0 %d log-writes %s %s" % (64 * MIB // 512, ddev, ldev))
    # Rounds of 4 block writes and a flush; after each flush the guest
    # says what it was promised and waits until the host has put a mark
    # into the log and answered.
    script = ("i=0\nfor j in 1 2 3 4 5 6; do\n"
              "  for k in 1 2 3 4; do i=$((i + 1)); " + WRITE_BLOCK +
              "  done\n"
              "  if sync $DISK; then echo \"PROMISE $j $i\"\n"
              "    read -r -t 120 go || echo NO-ANSWER\n"
              "  fi\n"
              "done\n")
    promises = []

    def on_line(line, proc):
        w = line.split()
        if len(w) == 3 and w[0] == "PROMISE":
            sh("dmsetup", "message", name, "0", "mark", "p" + w[1])
            promises.append(("p" + w[1], int(w[2])))
            guestrun.answer(proc, "go")
    try:
        g = run_guest(tmp_path, "/dev/mapper/" + name, direct, script, on_line)
    finally:
        dm_remove(name)
        loop_detach(ddev)
    try:
        assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
        assert not any("WRITE-FAILED" in l for l in g.lines)
        assert "NO-ANSWER" not in g.lines, "the host never answered\n" + g.tail()
        # A run the test host killed was tried again: the last run's six
        # promises (the earlier run wrote the same blocks the same way).
        assert len(promises) >= 6, promises
        promises = promises[-6:]
        with open(ldev, "rb") as f:
            bs, entries = logwrites.read_log(f)
    finally:
        loop_detach(ldev)
    marks = {e.label: n for n, e in enumerate(entries) if e.label}  # the last of each
    for label, upto in promises:
        # The device as the last flush before the promise left it.
        flushes = [n for n in range(marks[label]) if entries[n].flags & logwrites.FLUSH]
        assert flushes, "no flush reached the device before %s" % label
        disk = logwrites.replay(bs, entries, 64 * MIB, flushes[-1] + 1)
        for i in range(1, upto + 1):
            ok, got = expect_block(disk, i)
            assert ok, "%s: block %d promised, the replay has %r" % (label, i, got)


@pytest.mark.parametrize("direct", [False, True], ids=["cached", "direct"])
def test_kill_9_loses_no_acknowledged_write(tmp_path, direct):
    # ext4 on a loop device: O_DIRECT needs a filesystem that has it
    # (the test host's /tmp is tmpfs).
    fsimg, mnt = tmp_path / "fs.img", tmp_path / "mnt"
    sh("truncate", "-s", str(128 * MIB), str(fsimg))
    sh("mkfs.ext4", "-q", str(fsimg))
    mnt.mkdir()
    sh("mount", "-o", "loop", str(fsimg), str(mnt))
    try:
        img = mnt / "disk.img"
        sh("truncate", "-s", str(64 * MIB), str(img))
        script = ("i=0\nwhile [ $i -lt 2000 ]; do i=$((i + 1)); " + WRITE_BLOCK +
                  "echo \"ACK $i\"; done\n")
        acked = []

        def on_line(line, proc):
            w = line.split()
            if len(w) == 2 and w[0] == "ACK":
                acked.append(int(w[1]))
                if acked[-1] == 200:
                    proc.send_signal(signal.SIGKILL)
        g = run_guest(tmp_path, str(img), direct, script, on_line)
        assert g.rc == -signal.SIGKILL, "\n".join(g.lines[-30:]) + g.stderr
        assert len(acked) >= 200 and not any("WRITE-FAILED" in l for l in g.lines)
        disk = img.read_bytes()
    finally:
        subprocess.run(["umount", str(mnt)])
    for i in acked:
        ok, got = expect_block(disk, i)
        assert ok, "block %d acknowledged, the file has %r" % (i, got)
