"""Faults of the backing store, injected for real: device-mapper targets
(error, flakey) over a block device (a loop device over a file, and in
`make e2e` a memory-backed null_blk too), a full tmpfs, a file truncated
and a device removed under a running guest.  Each time the guest gets an I/O
error for the failed request only, the VM goes on and ends cleanly, the
VMM says what failed in a line and counts it (--stats io_errors).  On
each guest kernel (the kernel fixture).

Needs root, dmsetup and the dm-mod, dm-flakey and loop modules, and for
the null_blk variants configfs and null_blk: the test host has them
(tests/testhost/mkinitramfs.sh)."""
import json
import os
import subprocess

import pytest

from blockdev import MIB, DM_ENV, dm_remove, loop_attach, loop_detach, needs_dm, sh
from vmharness import cmdlines, guestrun, nullblk, paths

pytestmark = needs_dm


@pytest.fixture(params=["loop", pytest.param("nullb", marks=pytest.mark.long)])
def lower(request, tmp_path):
    """The 64 MiB block device under the device-mapper targets (sectors
    0..131071): a loop device over a file, or a memory-backed null_blk
    (512-byte blocks, multi-queue, timer completions: a device that
    answers through the block layer's interrupt path, as a drive does)
    with a write cache, as a drive has: without one the block layer
    would complete a flush at once, before it reached dm-flakey."""
    if request.param == "loop":
        dev = loop_attach(tmp_path / "backing.img")
        yield dev
        loop_detach(dev)
        return
    why = nullblk.unavailable()
    if why:
        pytest.fail(why)
    dev = nullblk.create("nullbfault", size_mib=64, cache_mib=16)
    yield dev
    nullblk.remove("nullbfault")


@pytest.fixture
def dm():
    """dm(table) -> NAME of a new device-mapper device; removed at the end."""
    names = []

    def create(table):
        name = "vmmtest%d" % len(names)
        sh("dmsetup", "create", name, "--table", table)
        names.append(name)
        return name
    yield create
    for n in names:
        dm_remove(n, force=True)


def boot(tmp_path, kernel, disk_path, script, on_line=None, direct=False):
    """One guest running SCRIPT (sh, with $DISK the disk) on DISK_PATH;
    returns (GuestRun, the disk's --stats)."""
    stats = tmp_path / "stats.json"
    cmdline = cmdlines.guest_cmdline(script=script, disk_serial="data")
    d = {"path": disk_path, "serial": "data", "queues": 1, "direct": direct}
    argv = cmdlines.vmm_argv(kernel.path("vmlinux"), paths.INITRD, cmdline, 512, 1,
                             [d], paths.VMM_BIN) + ["--stats", str(stats)]
    g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"), on_line=on_line,
                                  stdin=guestrun.ANSWER)
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    assert "NO-ANSWER" not in g.lines, "the host never answered\n" + g.tail()
    assert any(l.startswith("=== RUN END") for l in g.lines), "\n".join(g.lines[-30:])
    return g, json.loads(stats.read_text())["disks"][0]


def results(g):
    """{"NAME": rc} from the guest's "NAME rc=N" lines."""
    out = {}
    for l in g.lines:
        w = l.split()
        if len(w) == 2 and w[1].startswith("rc="):
            out[w[0]] = int(w[1][3:])
    return out


def failure_lines(g, what):
    return [l for l in g.stderr.splitlines() if "virtio-blk " in l and (" %s of " % what) in l]


def test_read_error_fails_that_request_only(tmp_path, kernel, lower, dm):
    # 1 MiB of errors at 16 MiB, the rest a plain mapping of the loop device
    name = dm("0 32768 linear %s 0\n32768 2048 error\n34816 96256 linear %s 34816"
              % (lower, lower))
    script = (
        "dd if=$DISK of=/dev/null bs=4k count=1 skip=4096 iflag=direct; echo BAD rc=$?\n"
        "dd if=$DISK of=/dev/null bs=4k count=1 skip=0 iflag=direct; echo GOOD rc=$?\n"
        "dd if=/dev/zero of=$DISK bs=4k count=1 seek=8192 oflag=direct; echo WRITE rc=$?\n")
    g, st = boot(tmp_path, kernel, "/dev/mapper/" + name, script)
    r = results(g)
    assert r["BAD"] != 0 and r["GOOD"] == 0 and r["WRITE"] == 0, r
    lines = failure_lines(g, "read")
    assert lines and "at sector 32768 failed: Input/output error" in lines[0], g.stderr
    assert st["io_errors"] >= 1


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "cached"])
def test_write_and_flush_errors(tmp_path, kernel, lower, dm, direct):
    # flakey, always down, error_writes: reads pass, writes and flushes fail
    name = dm("0 131072 flakey %s 0 0 1 1 error_writes" % lower)
    script = (
        "dd if=$DISK of=/dev/null bs=4k count=1 iflag=direct; echo READ rc=$?\n"
        "dd if=/dev/zero of=$DISK bs=4k count=1 seek=100 oflag=direct; echo WRITE rc=$?\n"
        "sync $DISK; echo FLUSH rc=$?\n")
    g, st = boot(tmp_path, kernel, "/dev/mapper/" + name, script, direct=direct)
    r = results(g)
    # A failed flush is an error to the guest, never OK.
    assert r["READ"] == 0 and r["FLUSH"] != 0, r
    assert failure_lines(g, "flush"), g.stderr
    if direct:
        # The write reaches the device and fails there.
        assert r["WRITE"] != 0 and failure_lines(g, "write"), (r, g.stderr)
        assert st["io_errors"] >= 2
    else:
        # The write lands in the host's page cache (a volatile cache, as
        # the device says with VIRTIO_BLK_F_FLUSH); its loss is what the
        # flush reports.
        assert r["WRITE"] == 0, r
        assert st["io_errors"] >= 1


def test_enospc_is_an_io_error(tmp_path, kernel):
    fs = tmp_path / "small"
    fs.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=8m", "small", str(fs))
    try:
        img = fs / "disk.img"
        sh("truncate", "-s", str(64 * MIB), str(img))
        script = (
            "dd if=/dev/zero of=$DISK bs=1M count=16 oflag=direct; echo FILL rc=$?\n"
            "dd if=$DISK of=/dev/null bs=1M count=16 iflag=direct; echo READ rc=$?\n")
        g, st = boot(tmp_path, kernel, str(img), script)
    finally:
        subprocess.run(["umount", "-l", str(fs)])
    r = results(g)
    assert r["FILL"] != 0 and r["READ"] == 0, r
    lines = failure_lines(g, "write")
    assert lines and "No space left on device" in lines[0], g.stderr
    assert st["io_errors"] >= 1


def test_file_shrunk_under_a_running_guest(tmp_path, kernel):
    img = tmp_path / "disk.img"
    sh("truncate", "-s", str(64 * MIB), str(img))
    script = (
        "dd if=$DISK of=/dev/null bs=4k count=1 skip=12288 iflag=direct; echo BEFORE rc=$?\n"
        "echo SHRINK-NOW; read -r -t 120 go || echo NO-ANSWER\n"
        "dd if=$DISK of=/dev/null bs=4k count=1 skip=12288 iflag=direct; echo BEYOND rc=$?\n"
        "dd if=$DISK of=/dev/null bs=4k count=1 skip=0 iflag=direct; echo WITHIN rc=$?\n")

    def on_line(line, proc):
        if line == "SHRINK-NOW":
            os.truncate(img, 32 * MIB)
            guestrun.answer(proc, "go")
    g, st = boot(tmp_path, kernel, str(img), script, on_line=on_line)
    r = results(g)
    assert r["BEFORE"] == 0 and r["BEYOND"] != 0 and r["WITHIN"] == 0, r
    lines = failure_lines(g, "read")
    assert lines and "beyond the end of the file" in lines[0], g.stderr
    assert st["io_errors"] >= 1


def test_device_removed_under_a_running_guest(tmp_path, kernel, lower, dm):
    name = dm("0 131072 linear %s 0" % lower)
    script = (
        "dd if=$DISK of=/dev/null bs=4k count=1 iflag=direct; echo BEFORE rc=$?\n"
        "echo REMOVE-NOW; read -r -t 120 go || echo NO-ANSWER\n"
        # far from block 0: not in the host's page cache by readahead
        "dd if=$DISK of=/dev/null bs=4k count=1 skip=12000 iflag=direct; echo AFTER rc=$?\n")

    def on_line(line, proc):
        if line == "REMOVE-NOW":
            # What `dmsetup remove --force` does to a device still open:
            # its table becomes one that fails all I/O; it goes when the
            # VMM closes it.
            sh("dmsetup", "wipe_table", name)
            sh("dmsetup", "remove", "--deferred", name)
            guestrun.answer(proc, "go")
    g, st = boot(tmp_path, kernel, "/dev/mapper/" + name, script, on_line=on_line)
    r = results(g)
    assert r["BEFORE"] == 0 and r["AFTER"] != 0, r
    assert failure_lines(g, "read"), g.stderr
    assert st["io_errors"] >= 1
    # The VMM closed it on its way out: the deferred removal happened.
    assert subprocess.run(["dmsetup", "info", name], env=DM_ENV,
                          capture_output=True).returncode != 0
