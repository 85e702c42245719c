"""bench/vmbench lockup: does the test host lock up when a nested guest
keeps an interrupt pending with IF clear?  No Linux guest, no disk: tiny
guests of tests/smoke/guest.S under our VMM, one after another, each for
a few seconds, in the test host.

  ifpoll  reads a UART register in a loop (an exit each) with IF clear;
          nothing is pending.
  iftrap  the same loop with the LAPIC timer running: its interrupt
          stays pending, so the test host's KVM asks for an interrupt
          window on every entry.

Both set up an IDT whose every gate prints "TRAP" and the frame: on a
correct CPU neither ever prints one.  At each boot the control
(IFTRAP_STI: IF set) must print five, or the gates are not working.  A
test host that shows no sign of life for STALL_S seconds is stopped and
booted again; its run in flight counts as a lock-up of that guest."""
import os
import signal
import subprocess
import time

from . import config, paths, plan, scenario
from .stats import fisher_two_sided, wilson

GUESTS = dict(zip(config.LOCKUP_GUESTS, ("IFPOLL", "IFTRAP")))
NAME = "lockup"
HELP = "test-host lock-ups under a guest with an interrupt pending and IF clear"
COMMAND = True
CONTROL = "IFTRAP_STI"
CONTROL_TRAPS = 5
# A run writes runs.jsonl every few seconds: a lock-up shows in under a
# minute, and the plan expects several (BOOTS boots at most).
STALL_S = 45
BOOTS = 10
IMAGES = os.path.join(paths.BUILD, "lockup")


def build_images(out=IMAGES):
    """The guests' images (here: the checkout is read-only in the test
    host), by the smoke tests' own builder."""
    subprocess.run([os.path.join(paths.REPO, "tests", "smoke", "mkguest.sh"), out,
                    CONTROL] + list(GUESTS.values()), check=True)


def traps(path):
    with open(path, "rb") as f:
        return sum(1 for l in f if l.startswith(b"TRAP "))


def one_run(image, seconds, log_path):
    """IMAGE under our VMM for SECONDS, then SIGTERM (SIGKILL 10 s later
    if it has not ended).  Returns the record: status, TRAP lines, and an
    outcome: clean (stopped by the signal, no trap), trap (a gate ran),
    or how the VMM ended by itself (triple-fault: status 4)."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([paths.VMM_BIN, "run", "-k", image, "-m", "32M"],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        # One sleep, not Popen.wait's polling (about 20 wake-ups a second
        # in the test host): the runs by hand that locked it up slept in
        # one piece, and a first run of this scenario that polled had
        # none in 80.
        time.sleep(seconds)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    rc = proc.returncode
    status = 128 - rc if rc < 0 else rc  # killed by a signal: 128 + its number
    n = traps(log_path)
    outcome = ("trap" if n else "clean" if status == 128 + signal.SIGTERM
               else "triple-fault" if status == 4 else "status %d" % status)
    return {"status": status, "traps": n, "outcome": outcome}


def run_plan(args):
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    log = os.path.join(args.out, "logs", "control-%d.log" % int(time.time()))
    rec = one_run(os.path.join(IMAGES, CONTROL + ".img"), 30, log)
    rec.update({"control": True, "time": time.time()})
    plan.record(args.out, rec)
    if rec["traps"] != CONTROL_TRAPS:
        print("vmbench: the control (IF set) printed %d traps, not %d: the gates do not work"
              % (rec["traps"], CONTROL_TRAPS), flush=True)
        return
    cfgs = [{"kind": "vmm", "name": g, "opts": {}} for g in args.config]
    done = {(r["round"], r["config"], r["job"]) for r in plan.load_runs(args.out)
            if not r.get("control")}
    for rnd, _, cfg, job in plan.rounds(cfgs, ["loop"], args.n, args.seed, done):
        g = cfg["name"]
        plan.set_in_flight(args.out, {"config": g, "job": job, "round": rnd})
        rec = one_run(os.path.join(IMAGES, GUESTS[g] + ".img"), args.seconds,
                      os.path.join(args.out, "logs", "n%03d-%s.log" % (rnd, g)))
        rec.update({"config": g, "job": job, "round": rnd, "time": time.time()})
        plan.record(args.out, rec)
        plan.set_in_flight(args.out, None)
        print("vmbench: n%03d %-7s %s" % (rnd, g, rec["outcome"]), flush=True)


def analyse(out_dir):
    """A table per guest: runs, test-host boots that ended (locked up, or
    died: a soft lockup panics it) with that guest in flight, other ends,
    traps; the two guests' rates compared (Fisher's exact test)."""
    runs = plan.load_runs(out_dir)
    controls = [r for r in runs if r.get("control")]
    runs = [r for r in runs if not r.get("control")]
    ends = plan.load_testhost_ends(out_dir)
    lines = ["| guest | runs | test host stopped (lock-up or death) | rate | 95% CI | "
             "other ends | runs with a trap |",
             "|---|---:|---:|---:|---|---|---:|"]
    totals = {}
    for g in sorted({r["config"] for r in runs} | {e["in_flight"]["config"] for e in ends
                                                    if "in_flight" in e}):
        rs = [r for r in runs if r["config"] == g]
        locks = sum(1 for e in ends if e.get("in_flight", {}).get("config") == g)
        n = len(rs) + locks
        other = {}
        for r in rs:
            if r["outcome"] not in ("clean", "trap"):
                other[r["outcome"]] = other.get(r["outcome"], 0) + 1
        lo, hi = wilson(locks, n)
        lines.append("| %s | %d | %d | %.1f%% | %.1f-%.1f%% | %s | %d |" % (
            g, n, locks, 100.0 * locks / n if n else 0, 100 * lo, 100 * hi,
            ", ".join("%s %d" % kv for kv in sorted(other.items())) or "-",
            sum(1 for r in rs if r["traps"])))
        totals[g] = (locks, n)
    out = "\n".join(lines) + "\n"
    if len(totals) == 2:
        (g1, (l1, n1)), (g2, (l2, n2)) = sorted(totals.items())
        p = fisher_two_sided(l1, n1 - l1, l2, n2 - l2)
        out += ("\nTest host stopped: %s %d/%d, %s %d/%d; Fisher's exact test p = %.3g (%s)\n"
                % (g1, l1, n1, g2, l2, n2, p, "significant" if p < 0.05 else "not significant"))
    unknown = [e for e in ends if "in_flight" not in e]
    out += ("\nTest-host boots: %d; %d ended early (%s); %d with no run in flight (not in "
            "the table).  Controls (IF set) at each boot's start: %s traps\n" % (
                len(controls), len(ends),
                ", ".join(e["kind"] for e in ends) or "none", len(unknown),
                "/".join(str(c["traps"]) for c in controls) or "none"))
    with open(os.path.join(out_dir, "lockup.md"), "w") as f:
        f.write(out)
    return out


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    scenario.guest_options(p, queues=1, disk_mb=0)
    p.add_argument("-n", type=int, default=30, help="rounds: runs per guest")
    p.add_argument("--seconds", type=float, default=5, help="per run")


def check(args):
    scenario.check_guest_options(args, NAME, sorted(GUESTS))
    if not args.inner:
        build_images()


def run(args):
    return scenario.run_here_or_in_testhost(args, run_plan, analyse, boots=BOOTS,
                                            stall_s=STALL_S)


def is_result(out):
    return scenario.recorded_kind(out) == NAME


def sections(entries):
    return []  # lockup.md and its JOURNAL entry say what it found
