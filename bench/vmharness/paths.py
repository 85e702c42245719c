"""Where things are in the checkout and its build directory."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, "build")
VMM_BIN = os.environ.get("VMM_BIN", os.path.join(BUILD, "vmm"))
GUEST = os.path.join(BUILD, "guest")
BZIMAGE = os.path.join(GUEST, "bzImage")
VMLINUX = os.path.join(GUEST, "vmlinux")
INITRD = os.path.join(GUEST, "initrd.img")
TESTHOST_RUN = os.path.join(REPO, "tests", "testhost", "run.sh")
# The fio that runs without a VM (the physical-limit rows), on the host
# or in the test host (whose root is the host's).
HOST_FIO = os.environ.get("VMBENCH_HOST_FIO", "/usr/bin/fio")
# kvmtool, the x86 peer (bench/peers-x86.sh builds it).
KVMTOOL_BIN = os.path.join(BUILD, "peers", "x86", "lkvm-static")
# The arm64 VMM (make ARCH=arm64) and guest (ARCH=arm64 guest/build.sh).
ARM64_VMM = os.path.join(BUILD, "arm64", "vmm")
ARM64_KERNEL = os.path.join(GUEST, "arm64", "Image")
ARM64_INITRD = os.path.join(GUEST, "arm64", "initrd.img")

# The guest kernels guest/build.sh makes (one initrd serves both):
# "stock" is Debian's linux-image, "small" the same source built with
# guest/small.config.  Each as a bzImage and as the uncompressed vmlinux.
KERNELS = {
    "stock": {"bzImage": BZIMAGE, "vmlinux": VMLINUX},
    "small": {"bzImage": os.path.join(GUEST, "small", "bzImage"),
              "vmlinux": os.path.join(GUEST, "small", "vmlinux")},
}
