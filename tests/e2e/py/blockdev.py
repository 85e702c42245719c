"""Loop devices and device-mapper targets for the fault and crash tests.
They need root, dmsetup and the loop and dm modules, which the test host
has (tests/testhost/mkinitramfs.sh); elsewhere those tests are skipped
with needs_dm's reason."""
import os
import shutil
import subprocess

import pytest

MIB = 1 << 20
DM_ENV = dict(os.environ, DM_DISABLE_UDEV="1")  # no udev in the test host

needs_dm = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("dmsetup") or not os.path.exists("/dev/mapper/control"),
    reason="needs root and device-mapper (run by `bench/vmbench pytest` in the test host)")


def sh(*cmd):
    """Run CMD; its stdout, stripped; an exception if it fails."""
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=DM_ENV).stdout.strip()


def loop_attach(path, size_mib=64):
    """A loop device over a new sparse file of SIZE_MIB at PATH."""
    sh("truncate", "-s", str(size_mib * MIB), str(path))
    return sh("losetup", "--find", "--show", str(path))


def loop_detach(dev):
    subprocess.run(["losetup", "-d", dev])


def dm_remove(name, force=False):
    subprocess.run(["dmsetup", "remove"] + (["--force"] if force else []) + [name],
                   env=DM_ENV, capture_output=True)
