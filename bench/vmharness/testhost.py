"""Where guests run: here when this host's KVM runs Linux at usable
speed, else inside the test host (tests/testhost/run.sh: QEMU TCG with an
emulated AMD-V, see guest/README.md), one boot at a time under a lock."""
import os
import subprocess
import sys

from . import paths

LOCK = "/tmp/testhost.lock"


def kvm_is_fast():
    """`vmm probe` exits 0 on a KVM that runs guests at hardware speed and
    6 on an emulated one (about 1 us per guest instruction)."""
    if os.environ.get("TESTHOST"):
        return True  # inside the test host: its KVM is the fast one here
    r = subprocess.run([paths.VMM_BIN, "probe"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return r.returncode == 0


def run_inside(argv, out_dir, timeout_s=1800, env=None):
    """Run ARGV (a command of this checkout) in one test-host boot; its
    output comes back on ours; OUT_DIR is writable there.  Returns its
    exit status (124: the test host timed out, 125: it died)."""
    e = dict(os.environ if env is None else env)
    e["TESTHOST_OUT"] = out_dir
    e["TESTHOST_TIMEOUT"] = str(timeout_s)
    cmd = ["flock", LOCK, paths.TESTHOST_RUN] + argv
    return subprocess.run(cmd, env=e, cwd=paths.REPO).returncode


def python_argv(module_args):
    """This interpreter running the harness's command line with ARGS."""
    return [sys.executable or "python3", os.path.join(paths.REPO, "bench", "vmh")] + module_args
