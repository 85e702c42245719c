"""The command lines of the VMMs under test, built in one place.

A disk is a dict: path (a file, or ram:SIZE for ours), queues, serial,
readonly, direct (O_DIRECT / cache=none), and per-VMM extras (opts: our
VMM's disk options such as poll=, batch=; QEMU's iothread=off and aio=
(default io_uring)).
"""
import base64
import json
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
        if d.get("queues", 1) is not None:  # None: the VMM's default (one per vCPU)
            spec.append("queues=%d" % d.get("queues", 1))
        if d.get("serial"):
            spec.append("serial=" + d["serial"])
        spec += list(d.get("opts", ()))
        argv += ["-d", ",".join(spec)]
    return argv + list(extra)


def qemu_argv(kernel, initrd, cmdline, mem_mb, cpus, disks,
              qemu_bin="qemu-system-x86_64", machine=None):
    """QEMU as the project compares itself with: KVM, -cpu host, one
    iothread per disk (a disk's vqmap: one per queue, QEMU 9.0 and
    later), aio=io_uring, the same queue count.  MACHINE
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
        if d.get("vqmap"):
            # QEMU 9.0 and later: one IOThread per virtqueue (JSON -device,
            # the only syntax that takes iothread-vq-mapping's list).
            n = d.get("queues", 1)
            for q in range(n):
                argv += ["-object", "iothread,id=io%dq%d" % (i, q)]
            dev = {"driver": "virtio-blk-device" if mmio else "virtio-blk-pci",
                   "drive": "d%d" % i, "num-queues": n,
                   "iothread-vq-mapping": [{"iothread": "io%dq%d" % (i, q)} for q in range(n)]}
            if d.get("serial"):
                dev["serial"] = d["serial"]
            argv += ["-drive", drive, "-device", json.dumps(dev, separators=(",", ":"))]
            continue
        dev = "%s,drive=d%d,num-queues=%d" % (
            "virtio-blk-device" if mmio else "virtio-blk-pci", i, d.get("queues", 1))
        if d.get("iothread", True):
            argv += ["-object", "iothread,id=io%d" % i]
            dev += ",iothread=io%d" % i
        if d.get("serial"):
            dev += ",serial=" + d["serial"]
        argv += ["-drive", drive, "-device", dev]
    return argv


# What kvmtool (x86) puts before the kernel command line it is given
# (x86/kvm.c kvm__arch_set_cmdline and builtin-run.c, kvmtool b48735e):
# ours follows, and where both set a parameter the later word, ours, wins
# (panic=-1 over panic=1).  Its bzImage loader copies at most
# cmdline_size - 1 bytes of the whole (2046 for Debian's kernel, whose
# setup header says 2047) and silently drops the rest.
KVMTOOL_X86_CMDLINE = ("noapic noacpi pci=conf1 reboot=k panic=1 i8042.direct=1 "
                       "i8042.dumbkbd=1 i8042.nopnp=1 earlyprintk=serial i8042.noaux=1 "
                       "console=ttyS0 root=/dev/vda rw  ")
KVMTOOL_CMDLINE_MAX = 2046

# kvmtool's control socket goes into $HOME/.lkvm; in the test host HOME
# is on the host's root, shared read-only, and kvmtool stops when it
# cannot bind the socket.  /tmp is writable wherever guests run.
KVMTOOL_HOME = "/tmp"


def kvmtool_argv(kernel, initrd, cmdline, mem_mb, cpus, disks, lkvm_bin,
                 home=KVMTOOL_HOME):
    """kvmtool (lkvm run, x86) as the project's model runs: modern
    virtio-pci, the 8250 console on ttyS0, no network device (its default
    is a user-mode virtio-net; --network mode=none) and no 9p root (it
    makes one only when it has neither a disk nor an initrd).  A disk is
    a virtio-blk device with one queue (kvmtool's has no multi-queue) and
    no serial of ours (kvmtool answers GET_ID with the file's device and
    inode numbers): the guest finds it by order, the first disk /dev/vda.
    KERNEL must be a bzImage (kvmtool loads no ELF vmlinux)."""
    if len(KVMTOOL_X86_CMDLINE) + len(cmdline) > KVMTOOL_CMDLINE_MAX:
        raise ValueError("kernel command line of %d bytes: kvmtool would cut it "
                         "at %d with its own words" % (len(cmdline), KVMTOOL_CMDLINE_MAX))
    argv = ["env", "HOME=" + home] if home else []
    argv += [lkvm_bin, "run", "-k", kernel, "-i", initrd, "-p", cmdline,
             "-m", str(mem_mb), "-c", str(cpus), "--console", "serial",
             "--virtio-transport", "pci", "--network", "mode=none"]
    for d in disks:
        if d["path"].startswith("ram:"):
            raise ValueError("kvmtool has no ram: disks")
        if d.get("queues", 1) != 1:
            raise ValueError("kvmtool's virtio-blk has one queue, not %d" % d["queues"])
        spec = [d["path"]]
        if d.get("readonly"):
            spec.append("ro")
        if d.get("direct"):
            spec.append("direct")
        argv += ["-d", ",".join(spec)]
    return argv
