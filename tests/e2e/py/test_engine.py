"""A host without io_uring: the file backend falls back to synchronous
I/O, says so in one line at start, and fio verify passes end to end, on
each guest kernel (the kernel fixture)."""
import os
import subprocess

import guestlib
from vmharness import cmdlines, fiojson, guestrun, paths

NO_URING = os.path.join(paths.BUILD, "tests", "no-uring")


def test_verify_without_io_uring(tmp_path, kernel):
    disk = tmp_path / "disk.img"
    subprocess.run(["truncate", "-s", "256M", str(disk)], check=True)
    cmdline = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    d = {"path": str(disk), "serial": "data", "queues": 1}
    argv = [NO_URING] + cmdlines.vmm_argv(kernel.path("vmlinux"), paths.INITRD, cmdline,
                                          512, 1, [d], paths.VMM_BIN)
    g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    rc, doc = fiojson.extract(g.lines)["verify"]
    assert rc == 0 and doc
    assert fiojson.summary(doc)["ios"] > 0
    notes = [l for l in g.stderr.splitlines() if "io_uring unavailable" in l]
    assert len(notes) == 1, g.stderr
    assert "disk vda" in notes[0] and str(disk) in notes[0]


# No guest boots (the VMM refuses to start): the stock kernel only.
def test_engine_uring_refused_without_io_uring(tmp_path):
    disk = tmp_path / "disk.img"
    subprocess.run(["truncate", "-s", "16M", str(disk)], check=True)
    r = subprocess.run([NO_URING, paths.VMM_BIN, "run", "-k", guestlib.STOCK.path("vmlinux"),
                        "-d", "%s,engine=uring" % disk],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and "engine=uring" in r.stderr, r.stderr
