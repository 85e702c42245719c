"""Where guests run: here when this host's KVM runs Linux at usable
speed, else inside the test host (tests/testhost/run.sh: QEMU TCG with an
emulated AMD-V, see guest/README.md), one boot at a time under a lock.

The test host exists for two architectures, chosen by the ARCH parameter
of the functions that boot it (passed to run.sh as TESTHOST_ARCH):
"x86_64" (the default) and "arm64", QEMU's virt machine at EL2 with KVM
inside, whose commands are shell scripts and static arm64 programs of the
checkout (no host root, no Python there)."""
import fcntl
import os
import re
import signal
import stat
import subprocess
import sys
import time

from . import paths, qemumon

LOCK = "/tmp/testhost.lock"

# The test host's architectures (tests/testhost/run.sh's TESTHOST_ARCH),
# and the other names they go by.
ARCHES = ("x86_64", "arm64")
ARCH_ALIASES = {"amd64": "x86_64", "aarch64": "arm64"}


def check_arch(arch):
    """ARCH as run.sh's TESTHOST_ARCH names it ("x86_64" or "arm64"; also
    "amd64", "aarch64"); ValueError for anything else, before a boot."""
    name = ARCH_ALIASES.get(arch, arch)
    if name not in ARCHES:
        raise ValueError("test host architecture %r: one of %s" % (arch, ", ".join(ARCHES)))
    return name


def run_argv(argv):
    """The command line that runs ARGV in the test host."""
    return [paths.TESTHOST_RUN] + list(argv)


def run_env(out_dir, timeout_s, env=None, arch="x86_64"):
    """The environment of tests/testhost/run.sh for one boot: ENV (default
    ours) with the results directory, time limit, architecture and QEMU's
    monitor socket (kept if ENV names one)."""
    e = dict(os.environ if env is None else env)
    e["TESTHOST_OUT"] = out_dir
    e["TESTHOST_TIMEOUT"] = str(timeout_s)
    e["TESTHOST_ARCH"] = check_arch(arch)
    # QEMU's monitor, read if the test host locks up (save_monitor).
    e.setdefault("TESTHOST_MONITOR", "/tmp/testhost-monitor.%d.sock" % os.getpid())
    return e


def probe(timeout_s=30):
    """One `vmm probe`: (exit status, its "guest loop ... verdict ..."
    lines as one, ns per guest loop iteration or None).  Status 0: this
    KVM runs guests at hardware speed; 6: an emulated one (about 1 us per
    guest instruction); 124: it did not answer in TIMEOUT_S (it hung once
    in the test host); 127: no build/vmm."""
    try:
        r = subprocess.run([paths.VMM_BIN, "probe"], capture_output=True, text=True,
                           timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return 124, "probe timed out", None
    except OSError as e:
        return 127, "vmm probe: %s" % e, None
    lines = (r.stdout + r.stderr).splitlines()
    m = re.search(r" ([0-9.]+) ns each", r.stdout)
    return (r.returncode,
            " ".join(l for l in lines if re.match(r"(guest loop|verdict)", l)) + " ",
            float(m.group(1)) if m else None)


def kvm_is_fast():
    """Whether guests run here: inside the test host, or where `vmm
    probe` finds a KVM at hardware speed."""
    if os.environ.get("TESTHOST"):
        return True  # inside the test host: its KVM is the fast one here
    return probe()[0] == 0


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


# run_inside's statuses besides the command's own: tests/testhost/run.sh
# ends with TIMED_OUT at its time limit and DIED when the test host died
# (a panic ends QEMU); LOCKED_UP is ours, for a test host stopped by the
# stall detector.
TIMED_OUT, DIED, LOCKED_UP = 124, 125, 123
ENDED_EARLY = (TIMED_OUT, DIED, LOCKED_UP)


def run_inside(argv, out_dir, timeout_s=1800, env=None, stall_s=420, arch="x86_64"):
    """Run ARGV (a command of this checkout) in one boot of the ARCH test
    host; its output comes back on ours; OUT_DIR is writable there.  A
    test host that has locked up (its console, OUT_DIR/runs.jsonl and
    OUT_DIR/heartbeat unchanged for stall_s seconds) is stopped.  Returns
    the exit status (TIMED_OUT, DIED, LOCKED_UP or the command's)."""
    e = run_env(out_dir, timeout_s, env, arch)
    # One test host at a time on this machine.  The lock is taken here,
    # before the clock of the stall detector starts (waiting for another
    # test host is not a lock-up), and handed to the test host's process
    # too, so that it is held as long as either lives.
    lock = open(LOCK, "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("vmbench: waiting for the test host that runs now (%s)" % LOCK,
              file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    with lock:
        return _run_locked(argv, out_dir, e, stall_s, lock.fileno())


def _run_locked(argv, out_dir, env, stall_s, lock_fd):
    proc = subprocess.Popen(run_argv(argv), env=env, cwd=paths.REPO,
                            start_new_session=True, pass_fds=(lock_fd,))
    start = time.time()
    while proc.poll() is None:
        time.sleep(5)
        last = max(_last_sign_of_life(out_dir), start)
        if time.time() - last > stall_s:
            print("vmbench: the test host shows no sign of life for %d s: stopping it"
                  % stall_s, file=sys.stderr, flush=True)
            save_monitor(env["TESTHOST_MONITOR"],
                         os.path.join(out_dir, ".testhost", "monitor.txt"),
                         int(env.get("TESTHOST_SMP", "2")), env["TESTHOST_ARCH"])
            stop_group(proc, 30)
            return LOCKED_UP
    return proc.returncode


def monitor_commands(cpus, arch="x86_64"):
    """What save_monitor asks QEMU: every CPU's registers and, on x86,
    every local APIC (QEMU has no such command for the arm64 GIC)."""
    cmds = ["info registers -a"]
    if check_arch(arch) == "x86_64":
        cmds += ["info lapic %d" % i for i in range(cpus)]
    return cmds


def save_monitor(sock, path, cpus, arch="x86_64"):
    """What a locked-up test host's CPUs were doing, from QEMU's monitor
    at SOCK: every CPU's registers and local APIC (its pending and
    in-service interrupts), into PATH (kept with the console)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for cmd in monitor_commands(cpus, arch):
            try:
                out = qemumon.ask(sock, cmd, timeout=10)
            except OSError as e:
                out = "no answer from QEMU's monitor: %s" % e
            f.write("# %s\n%s\n" % (cmd, out))


def stop_group(proc, grace_s):
    """SIGTERM to the process group PROC leads (started with
    start_new_session), SIGKILL after GRACE_S seconds; waits for PROC."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_with_reboots(next_argv, out_dir, finished, boots=3, **kw):
    """The emulated test host sometimes dies or locks up: run the command
    NEXT_ARGV() gives (called before each boot, so that it can leave out
    what is done) in a test-host boot, and boot it again until
    FINISHED(status) is true, BOOTS boots at most.  Returns (status of
    the last boot, boots used).  KW goes to run_inside."""
    for boot in range(1, boots + 1):
        rc = run_inside(next_argv(), out_dir, **kw)
        if finished(rc):
            break
        kept = keep_console(out_dir)
        print("vmbench: test host boot %d ended with status %d before the end%s; %s"
              % (boot, rc, ", its console kept in " + kept if kept else "",
                 "booting it again for what is left" if boot < boots
                 else "giving up"), file=sys.stderr, flush=True)
    return rc, boot


def run_until_command_ends(argv, out_dir, timeout_s, boots, arch="x86_64"):
    """ARGV in the ARCH test host, booted again from the start (BOOTS
    boots at most) only when the test host died before ARGV ended: a
    panic ends QEMU with no command status (OUT_DIR/.testhost/rc).  A
    command's own status, even 125, and a time limit (the hang may be the
    command's) are final.  Returns the last boot's status."""
    os.makedirs(out_dir, exist_ok=True)

    def ended(rc):
        return rc != DIED or os.path.exists(os.path.join(out_dir, ".testhost", "rc"))
    # run.sh's own limit comes first, so that it shows the console.
    return run_with_reboots(lambda: argv, out_dir, ended, boots=boots,
                            timeout_s=timeout_s, stall_s=timeout_s + 60, arch=arch)[0]


def keep_console(out_dir):
    """Rename OUT_DIR/.testhost (the console and status of a boot that
    ended early) to OUT_DIR/testhost-failed.HHMMSS[.N], so that the next
    boot does not write over the test host's last words.  tests/testhost/
    run.sh removes its pipes (stdout, stderr) when a boot ends; if it was
    killed first (SIGKILL after a lock-up), they go here, so that reading
    the kept files never blocks.  Returns the new name, or None if there
    was none."""
    th = os.path.join(out_dir, ".testhost")
    if not os.path.isdir(th):
        return None
    base = os.path.join(out_dir, "testhost-failed." + time.strftime("%H%M%S"))
    new, n = base, 1
    while os.path.exists(new):
        n += 1
        new = "%s.%d" % (base, n)
    os.rename(th, new)
    for name in os.listdir(new):
        p = os.path.join(new, name)
        if stat.S_ISFIFO(os.lstat(p).st_mode):
            os.unlink(p)
    return new


def python_argv(module_args):
    """This interpreter running the harness's command line with ARGS."""
    return [sys.executable or "python3", os.path.join(paths.REPO, "bench", "vmbench")] + module_args
