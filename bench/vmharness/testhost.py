"""Where guests run: here when this host's KVM runs Linux at usable
speed, else inside the test host (tests/testhost/run.sh: QEMU TCG with an
emulated AMD-V, see guest/README.md), one boot at a time under a lock."""
import fcntl
import os
import signal
import subprocess
import sys
import time

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


def _last_sign_of_life(out_dir):
    """Newest mtime among the test host's console, the results and the
    heartbeat of a command that writes one."""
    newest = 0.0
    for p in (os.path.join(out_dir, ".testhost", "console.log"),
              os.path.join(out_dir, "runs.jsonl"),
              os.path.join(out_dir, "heartbeat")):
        try:
            newest = max(newest, os.path.getmtime(p))
        except OSError:
            pass
    return newest


def run_inside(argv, out_dir, timeout_s=1800, env=None, stall_s=420):
    """Run ARGV (a command of this checkout) in one test-host boot; its
    output comes back on ours; OUT_DIR is writable there.  A test host
    that has locked up (its console, OUT_DIR/runs.jsonl and
    OUT_DIR/heartbeat unchanged for stall_s seconds) is stopped.  Returns
    the exit status (124: timed out or locked up, 125: it died)."""
    e = dict(os.environ if env is None else env)
    e["TESTHOST_OUT"] = out_dir
    e["TESTHOST_TIMEOUT"] = str(timeout_s)
    # One test host at a time on this machine.  The lock is taken here,
    # before the clock of the stall detector starts (waiting for another
    # test host is not a lock-up), and handed to the test host's process
    # too, so that it is held as long as either lives.
    lock = open(LOCK, "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("vmh: waiting for the test host that runs now (%s)" % LOCK,
              file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    with lock:
        return _run_locked(argv, out_dir, e, stall_s, lock.fileno())


def _run_locked(argv, out_dir, env, stall_s, lock_fd):
    proc = subprocess.Popen([paths.TESTHOST_RUN] + argv, env=env, cwd=paths.REPO,
                            start_new_session=True, pass_fds=(lock_fd,))
    start = time.time()
    while proc.poll() is None:
        time.sleep(5)
        last = max(_last_sign_of_life(out_dir), start)
        if time.time() - last > stall_s:
            print("vmh: the test host shows no sign of life for %d s: stopping it"
                  % stall_s, file=sys.stderr, flush=True)
            stop_group(proc, 30)
            return 124
    return proc.returncode


def stop_group(proc, grace_s):
    """SIGTERM to the process group PROC leads (started with
    start_new_session), SIGKILL after GRACE_S seconds; waits for PROC."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def python_argv(module_args):
    """This interpreter running the harness's command line with ARGS."""
    return [sys.executable or "python3", os.path.join(paths.REPO, "bench", "vmh")] + module_args
