"""Guest kernels given by path (-c vmm:kernel=PATH[,modules=DIR] and
--scenario kernels): what a kernel file is (its format, the release
string it carries, its sha256) and the initrd that brings its modules.

A bzImage says its release in its setup header (the boot protocol's
kernel_version field: an offset, from 0x200, of a string that begins
with the release); a vmlinux (ELF) carries it in linux_banner, "Linux
version RELEASE (...)".  Modules come from `make modules_install
INSTALL_MOD_PATH=DIR`, so they are in DIR/lib/modules/RELEASE; the
initrd for such a kernel is guest/build.sh's, with one more cpio archive
after it (the kernel unpacks each in turn, later files replacing earlier
ones) that holds those of the modules the guest needs and the order to
load them in (guest/kernel-initrd.sh).
"""
import hashlib
import os
import re
import struct
import subprocess

from . import paths


class KernelError(ValueError):
    pass


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _banner_release(f):
    """The release after "Linux version " in the open file F, read in
    chunks (a vmlinux with debug info is hundreds of MB); b"" if none."""
    pat = re.compile(rb"Linux version ([0-9][^ \0]*)")
    tail = b""
    while True:
        block = f.read(1 << 20)
        if not block:
            m = pat.search(tail)
            return m.group(1) if m else b""
        data = tail + block
        m = pat.search(data)
        # A match that reaches the chunk's end may go on in the next one.
        if m and m.end() < len(data):
            return m.group(1)
        tail = data[-256:]


def describe(path):
    """(format, release) of the kernel file at PATH: "bzImage" or
    "vmlinux"; KernelError when it is neither or says no release."""
    try:
        with open(path, "rb") as f:
            head = f.read(0x10000)
            if head[0x202:0x206] == b"HdrS" and len(head) >= 0x210:
                fmt = "bzImage"
                off = struct.unpack_from("<H", head, 0x20e)[0]
                f.seek(0x200 + off)
                text = f.read(256) if off else b""
            elif head[:4] == b"\x7fELF":
                fmt = "vmlinux"
                f.seek(0)
                text = _banner_release(f)
            else:
                raise KernelError("kernel %s: neither a bzImage nor a vmlinux (ELF)" % path)
    except OSError as e:
        raise KernelError("kernel %s: %s" % (path, e.strerror))
    words = text.split(b"\0")[0].split()
    rel = words[0].decode("ascii", "replace") if words else ""
    if not re.fullmatch(r"[0-9][0-9A-Za-z._+~-]*", rel):
        raise KernelError("kernel %s: a %s that says no release string" % (path, fmt))
    return fmt, rel


def modules_dir(modules, rel):
    """DIR/lib/modules/REL, checked (KernelError with what to do)."""
    d = os.path.join(modules, "lib", "modules", rel)
    if not os.path.isdir(d):
        raise KernelError("modules=%s: no lib/modules/%s there (make modules_install "
                          "INSTALL_MOD_PATH=%s, for this kernel)" % (modules, rel, modules))
    return d


def make_initrd(modules, rel, out, base=None):
    """OUT: the guest's initrd (BASE, default guest/build.sh's) followed by
    an archive of the modules of kernel REL that the guest loads, from
    MODULES (an INSTALL_MOD_PATH).  KernelError if virtio_blk is neither
    built in nor there."""
    modules_dir(modules, rel)
    r = subprocess.run([os.path.join(paths.REPO, "guest", "kernel-initrd.sh"),
                        base or paths.INITRD, modules, rel, out],
                       capture_output=True, text=True)
    if r.returncode:
        raise KernelError("modules=%s: %s" % (modules, (r.stderr.strip().splitlines()
                                                        or ["guest/kernel-initrd.sh failed"])[-1]))
    return out
