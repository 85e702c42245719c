"""fio in the guest on virtio-blk disks, under our VMM and, as the
reference, under QEMU: verify (96 MiB written with crc32c checksums and
read back) and randread-4k (4 KiB random reads, QD32, 5 s: IOPS).  Every
test runs on each guest kernel (the kernel fixture: stock, small).

The guest's vda is a small read-only disk (serial sys), its vdb the data
disk (serial data) that fio runs on; /init must list vdb with its size
and queue count."""
import pytest

import guestlib as gl
from vmharness import cmdlines

VERIFY_MIB = 96  # guest/jobs/verify.fio writes this much, then reads it back


def check_verify(g, note, queues, data_mib=1024):
    doc = gl.fio_doc(g, "verify")
    gl.check_disk(g, "data", data_mib, 0, queues)
    w = sum(j["write"]["io_kbytes"] for j in doc["jobs"])
    r = sum(j["read"]["io_kbytes"] for j in doc["jobs"])
    note("wrote %d MiB, read back and verified %d MiB" % (w // 1024, r // 1024))
    if gl.vmm_counters(g):
        note(gl.vmm_counters(g))
    assert w >= VERIFY_MIB * 1024 and r >= w, (
        "verify did not read back all it wrote (%d MiB): wrote %d KiB, read %d KiB\n%s"
        % (VERIFY_MIB, w, r, g.tail()))


def check_randread(g, note, what):
    doc = gl.fio_doc(g, "randread-4k")
    gl.check_disk(g, "data", 1024, 0, gl.QUEUES)
    iops = doc["jobs"][0]["read"]["iops"]
    note("IOPS %.0f (4k random read, QD32, %s, %d vCPUs, %d queues)"
         % (iops, what, gl.CPUS, gl.QUEUES))
    if gl.vmm_counters(g):
        note(gl.vmm_counters(g))
    assert iops > 0, "no read IOPS in the JSON\n" + g.tail()


def fio_guest(tmp_path, kernel_path, job, data, queues, cpus, qemu=False):
    sys_disk = gl.disk(gl.new_disk(tmp_path / "sys.img", 64), "sys", queues, readonly=True)
    cmdline = cmdlines.guest_cmdline(fio=job, disk_serial="data")
    if qemu:
        argv = gl.qemu_argv(kernel_path, cmdline, [sys_disk, data], cpus)
    else:
        argv = gl.vmm_argv(kernel_path, cmdline, [sys_disk, data], cpus)
    return gl.run(argv, tmp_path, job)


# verify-file-q1/-q2, verify-ram-q1/-q2: 1 GiB as /dev/vdb, a file or
# our ram: backend, with 1 queue on 1 vCPU or 2 queues on 2 vCPUs.
@pytest.mark.parametrize("backend,queues", [("file", 1), ("file", 2), ("ram", 1), ("ram", 2)],
                         ids=["file-q1", "file-q2", "ram-q1", "ram-q2"])
def test_verify(tmp_path, kernel, note, backend, queues):
    path = gl.new_disk(tmp_path / "data.img", 1024) if backend == "file" else "ram:1G"
    g = fio_guest(tmp_path, kernel.path("bzImage"), "verify",
                  gl.disk(path, "data", queues), queues, queues)
    check_verify(g, note, queues)


# The kernel booted from its uncompressed ELF (guest/build.sh extracts
# it; no decompressor runs), verify-ram-q1's job.  1 vCPU: the -q2 tests
# cover SMP, and 2-vCPU guests are the test host's weak spot.
def test_verify_vmlinux(tmp_path, kernel, note):
    g = fio_guest(tmp_path, kernel.path("vmlinux"), "verify", gl.disk("ram:1G", "data", 1), 1, 1)
    check_verify(g, note, 1)


def test_randread_4k(tmp_path, kernel, note):
    data = gl.disk(gl.new_disk(tmp_path / "data.img", 1024), "data", gl.QUEUES)
    g = fio_guest(tmp_path, kernel.path("bzImage"), "randread-4k", data, gl.QUEUES, gl.CPUS)
    check_randread(g, note, "vmm")


# QEMU (7.2, -enable-kvm, an iothread per disk, aio=io_uring): the
# reference the project compares itself with runs the same jobs on the
# same guest, so a failure of ours can be told from one of the guest.
def test_qemu_verify(tmp_path, kernel, note):
    data = gl.disk(gl.new_disk(tmp_path / "data.img", 1024), "data", gl.QUEUES)
    g = fio_guest(tmp_path, kernel.path("bzImage"), "verify", data, gl.QUEUES, gl.CPUS, qemu=True)
    check_verify(g, note, gl.QUEUES)


def test_qemu_randread_4k(tmp_path, kernel, note):
    data = gl.disk(gl.new_disk(tmp_path / "data.img", 1024), "data", gl.QUEUES)
    g = fio_guest(tmp_path, kernel.path("bzImage"), "randread-4k", data, gl.QUEUES, gl.CPUS,
                  qemu=True)
    check_randread(g, note, "qemu")
