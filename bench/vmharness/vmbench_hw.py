"""bench/vmbench --scenario hw-check: the peers and scaling scenarios on a
machine with hardware KVM, in under 8 minutes, into one directory.

For a machine that is not the development machine: hardware
virtualization (Intel VT-x or AMD-V) behind /dev/kvm, Debian 12 with
tests/deps.sh's packages, 4 or more cores.  In one run:
  1. /dev/kvm: present, readable and writable by us;
  2. its speed: build/vmm probe (exit 0 = fast, i.e. not the emulated
     kvm_pvm of the development machines); a slow or missing KVM stops
     here (status 3): use bench/vmbench, which goes through the test host;
  3. builds what is missing: build/vmm (make), the guest (guest/build.sh);
  4. --scenario peers   (qemu, vmm, host; randread-4k and randwrite-4k;
     1 and 2 queues; R=3; 4 s per fio point);
  5. --scenario scaling (qemu, vmm; randread-4k; 1..4 guests; R=3; 4 s).
The budget (--budget S, HWCHECK_BUDGET, 480 s) left after the checks and
builds is split between the two as time boxes (peers half, scaling the
rest); a scenario over its box is stopped and its finished runs analysed
(--analyze).  Output: OUT (default build/hw-check-DATE/) with hw-check.md
(machine, kvmprobe, both tables, the time each took), peers/ and scaling/.
Exit status: 0 when both completed, 1 if one failed or was cut, 2 on bad
use, 3 when this machine has no fast KVM.
"""
import os
import subprocess
import sys
import time

from . import paths, results, testhost
from .vmbench_base import Error, git, machine_line, positive, self_path

NAME = "hw-check"
HELP = "peers and scaling on a machine with hardware KVM, in under 8 minutes"
COMMAND = False  # bench/vmbench --scenario hw-check (sweep.py)


def say(msg):
    print("hw-check: %s" % msg, file=sys.stderr, flush=True)


def scenario(out, name, box, where, runtime, extra):
    """bench/vmbench --scenario NAME in a time box of BOX s: (status, s)."""
    t0 = time.time()
    box = max(box, 30)
    say("scenario %s (time box %ds)" % (name, box))
    argv = [sys.executable or "python3", self_path(), "--scenario", name, "--runtime", runtime,
            "--title", "hw-check " + name, "-o", os.path.join(out, name), "--where", where] + extra
    with open(os.path.join(out, name + ".stdout"), "w") as so, \
            open(os.path.join(out, name + ".log"), "w") as se:
        proc = subprocess.Popen(argv, stdout=so, stderr=se, start_new_session=True)
        try:
            rc = proc.wait(box)
        except subprocess.TimeoutExpired:
            # The whole group: vmbench, its guests (or the test host).
            testhost.stop_group(proc, 10)
            rc = 124
            say("%s: over its time box; analysing the runs that finished" % name)
    if rc == 124:
        with open(os.path.join(out, name + ".stdout"), "w") as so, \
                open(os.path.join(out, name + ".log"), "a") as se:
            subprocess.run([sys.executable or "python3", self_path(), "--analyze",
                            os.path.join(out, name)], stdout=so, stderr=se)
    took = int(time.time() - t0)
    say("%s: status %d, %ds" % (name, rc, took))
    return rc, took


def hw_check(o):
    t_start = time.time()
    out = os.path.abspath(o["out"] or os.path.join(
        paths.BUILD, "hw-check-" + time.strftime("%Y%m%d-%H%M%S")))
    budget = o["budget"] or os.environ.get("HWCHECK_BUDGET") or "480"
    if not positive(budget):
        raise Error("--budget %s: seconds, a positive number" % budget)
    budget = int(budget)
    runtime = o["runtime"] or os.environ.get("HWCHECK_RUNTIME") or "4"
    guests = o["guests"] or os.environ.get("HWCHECK_GUESTS") or "1-4"
    slow_ok = o["allow_slow"] or bool(os.environ.get("HWCHECK_ALLOW_SLOW"))
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise Error("cannot create %s: %s" % (out, e))
    # 1. /dev/kvm.
    if not os.path.exists("/dev/kvm"):
        say("no /dev/kvm (is the kvm_intel or kvm_amd module loaded, virtualization on in the firmware?)")
        return 3
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        say("/dev/kvm is not readable and writable by us (add yourself to its group, or run as root)")
        return 3
    # 2. Its speed.
    if subprocess.run(["make", "-s", "-C", paths.REPO, "build/vmm"], stdout=sys.stderr).returncode:
        say("cannot build build/vmm")
        return 2
    prc, pout, _ = testhost.probe()
    say(pout)
    where = "host"
    if prc != 0:
        if not slow_ok:
            say("this KVM is not fast enough for Linux guests (vmm probe status %d): "
                "not a hardware-KVM machine" % prc)
            return 3
        say("--allow-slow: going on; bench/vmbench will use the test host")
        where = "auto"
    try:
        with open("/proc/modules") as f:
            modules = " ".join(l.split()[0] for l in f if l.startswith("kvm"))
    except OSError:
        modules = "?"
    # 3. The guest image (build/vmm was made above).
    if subprocess.run([os.path.join(paths.REPO, "guest", "build.sh")],
                      stdout=sys.stderr).returncode:
        say("guest/build.sh failed")
        return 1
    # 4, 5. The scenarios, each in its time box.
    res = {}
    left = budget - 15 - (time.time() - t_start)
    res["peers"] = scenario(out, "peers", int(left / 2), where, runtime, [])
    res["scaling"] = scenario(out, "scaling", int(budget - 15 - (time.time() - t_start)),
                              where, runtime, ["--guests", guests])
    md = ["# hw-check: peers and scaling on hardware KVM", "",
          "- Date: %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "- Machine: %s" % machine_line(),
          "- Kernel: %s %s; KVM modules: %s" % (os.uname().sysname, os.uname().release, modules or "?"),
          "- vmm probe: %s" % pout,
          "- Tree: %s" % (git("describe", "--always", "--dirty") or "unknown"),
          "- fio runtime per point: %ss; budget for the whole check: %ds" % (runtime, budget)]
    md += ["- %s: status %d, %ds" % (s, rc, t) for s, (rc, t) in res.items()]
    md += ["- Total: %ds" % (time.time() - t_start), ""]
    for s in res:
        md += ["# " + s, ""]
        table = os.path.join(out, s, "table.md")
        if os.path.exists(table) and os.path.getsize(table):
            with open(table) as f:
                md.append(f.read())
        else:
            md.append("(no table: see %s.log)" % s)
        md.append("")
    report = os.path.join(out, "hw-check.md")
    with open(report, "w") as f:
        f.write("\n".join(md) + "\n")
    say("done in %ds: %s" % (time.time() - t_start, report))
    sys.stdout.write("\n".join(md) + "\n")
    return 0 if all(rc == 0 for rc, _ in res.values()) else 1


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    """Its options, on the sweep's parser (--budget is the hunt's too)."""
    p.add_argument("--allow-slow", action="store_true",
                   help="hw-check: go on without a fast KVM (through the test host)")


def check(args):
    budget = args.o["budget"] or os.environ.get("HWCHECK_BUDGET") or "480"
    if not positive(budget):
        raise Error("--budget %s: seconds, a positive number" % budget)


def run(args):
    return hw_check(args.o)


def is_result(out):
    return results.exists(os.path.join(out, "hw-check.md"))


def analyse(out):
    """hw-check.md as it was written (OUT/peers and OUT/scaling are
    sweeps' directories: `bench/vmbench analyse` redoes each)."""
    with results.open(os.path.join(out, "hw-check.md")) as f:
        return f.read()


def sections(entries):
    return []  # a check of a machine, not a standing figure
