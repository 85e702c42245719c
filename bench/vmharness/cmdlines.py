"""The command lines of the VMMs under test, built in one place.

A disk is a dict: path (a file, or ram:SIZE for ours), queues, serial,
readonly, direct (O_DIRECT / cache=none), and per-VMM extras (opts: our
VMM's disk options such as poll=, batch=; QEMU's iothread=off and aio=
(default io_uring)).
"""
import base64
import os

CMDLINE_BASE = "console=ttyS0 quiet reboot=k panic=-1"


def guest_cmdline(script=None, fio=None, disk_serial=None, extra=""):
    """The kernel command line for guest/init: run SCRIPT (sh, any
    characters, sent base64-encoded) or fio job NAME, on the disk with
    that serial."""
    words = [CMDLINE_BASE]
    if extra:
        words.append(extra)
    if disk_serial:
        words.append("disk=" + disk_serial)
    if fio:
        words.append("fio=" + fio)
    if script is not None:
        words.append("run64=" + base64.b64encode(script.encode()).decode())
    return " ".join(words)


def direct_ok(path):
    """O_DIRECT works on PATH's filesystem (not on tmpfs in Linux 6.1)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return False
    os.close(fd)
    return True


def vmm_argv(kernel, initrd, cmdline, mem_mb, cpus, disks, vmm_bin,
             verbose=True, extra=()):
    argv = [vmm_bin, "run"] + (["-v"] if verbose else [])
    argv += ["-k", kernel, "-i", initrd, "-p", cmdline,
             "-m", str(mem_mb), "-c", str(cpus)]
    for d in disks:
        spec = [d["path"]]
        if d.get("readonly"):
            spec.append("ro")
        if d.get("direct"):
            spec.append("direct")
        spec.append("queues=%d" % d.get("queues", 1))
        if d.get("serial"):
            spec.append("serial=" + d["serial"])
        spec += list(d.get("opts", ()))
        argv += ["-d", ",".join(spec)]
    return argv + list(extra)


def qemu_argv(kernel, initrd, cmdline, mem_mb, cpus, disks,
              qemu_bin="qemu-system-x86_64", machine=None):
    """QEMU as the project compares itself with: KVM, -cpu host, one
    iothread per disk, aio=io_uring, the same queue count.  MACHINE
    "microvm[,OPTS]" is QEMU's minimal machine (qboot, no PCI): the disks
    are virtio-mmio devices, described in ACPI, or with acpi=off on the
    kernel's command line (QEMU adds virtio_mmio.device= itself)."""
    mmio = bool(machine and machine.startswith("microvm"))
    argv = [qemu_bin] + (["-M", machine] if machine else [])
    argv += ["-enable-kvm", "-cpu", "host", "-smp", str(cpus),
            "-m", str(mem_mb), "-nodefaults", "-display", "none",
            "-no-reboot", "-name", "guest,debug-threads=on",
            "-device", "pvpanic",
            "-action", "panic=exit-failure",
            "-kernel", kernel, "-initrd", initrd, "-append", cmdline,
            "-chardev", "stdio,id=con,signal=off", "-serial", "chardev:con"]
    for i, d in enumerate(disks):
        if d["path"].startswith("ram:"):
            raise ValueError("QEMU has no ram: disks")
        cache = "none" if d.get("direct") else "writeback"
        drive = "file=%s,if=none,id=d%d,format=raw,aio=%s,cache=%s" % (
            d["path"], i, d.get("aio", "io_uring"), cache)
        if d.get("readonly"):
            drive += ",readonly=on"
        dev = "%s,drive=d%d,num-queues=%d" % (
            "virtio-blk-device" if mmio else "virtio-blk-pci", i, d.get("queues", 1))
        if d.get("iothread", True):
            argv += ["-object", "iothread,id=io%d" % i]
            dev += ",iothread=io%d" % i
        if d.get("serial"):
            dev += ",serial=" + d["serial"]
        argv += ["-drive", drive, "-device", dev]
    return argv
