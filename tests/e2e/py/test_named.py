"""Tests run only when selected by marker (`-m only_named`), deselected
otherwise:

  bench/vmbench pytest -- -m only_named -k seed       seed 004's job (reduced)
  bench/vmbench pytest -- -m only_named -k testhost   the test host's re-boot
"""
import os
import subprocess
import time

import pytest

import guestlib as gl
from vmharness import cmdlines

pytestmark = pytest.mark.only_named


# Seed 004's fio job (guest/jobs/seed-virtio-blk.fio: 256 threads at
# QD64, 512-byte I/O, four phases), on each guest kernel.  In the test
# host 256 threads on 2 guest vCPUs crashed (double fault) or hung the
# guest in 3 of 4 runs; with 1 vCPU it took 141 s and 285 s.
def test_seed_virtio_blk(tmp_path, kernel, note):
    disks = gl.std_disks(tmp_path, 1024, gl.QUEUES)
    cmdline = cmdlines.guest_cmdline(fio="seed-virtio-blk", disk_serial="data")
    g = gl.run(gl.vmm_argv(kernel.path(), cmdline, disks, gl.CPUS), tmp_path,
               "seed-virtio-blk", timeout=480)
    doc = gl.fio_doc(g, "seed-virtio-blk")
    gl.check_disk(g, "data", 1024, 0, gl.QUEUES)
    moved = 0
    for job in doc["jobs"]:
        for side in ("read", "write"):
            if job[side]["iops"] > 0:
                note("%s %s IOPS %d" % (job["jobname"], side, job[side]["iops"]))
                moved += 1
    assert moved == 4, "want IOPS in each of the four phases\n" + g.tail()


# Panics the test host the first time it runs (a file in TESTHOST_OUT
# says it did): `bench/vmbench pytest` (vmharness.pytestrun) must boot it
# again and run this test, which had no outcome, in the new boot.  No
# guest.
def test_testhost_panic():
    out = os.environ.get("TESTHOST_OUT")
    assert os.environ.get("TESTHOST") and out, "not in the test host (run it by bench/vmbench pytest)"
    done = os.path.join(out, "testhost-panic.done")
    if not os.path.exists(done):
        with open(done, "w"):
            pass
        subprocess.run(["sync"])
        with open("/proc/sysrq-trigger", "w") as f:
            f.write("c")
        time.sleep(60)
        pytest.fail("the test host did not panic")
    os.unlink(done)
