"""How often guests die, under our VMM and under QEMU (issue 10).

Boots N guests one after another per configuration and job, the
configurations interleaved in an order shuffled anew in each round, all
in one boot of the test host (or here on a hardware KVM), and counts how
each run ended: clean, or a guest death by kind (guestrun.DEATHS: stall,
double fault, entry-stack guard page, panic, oops; a hang at the timeout;
any other exit).  Every death's console is kept, and beside it the host
KVM's last events (kvmtrace: each vCPU's last exits, with rip).  Rates
come with Wilson 95% intervals; two configurations are compared with a
two-sided Fisher exact test.  A test-host death ends the inner run early: the outer part
reports it and the runs already recorded stay.
"""
import contextlib
import itertools
import os
import re
import tempfile
import time

from . import (cmdlines, config, counters, fiojson, guestrun, kvmtrace, pages, plan, qemumon, results,
               scenario)
from .stats import binom_two_sided, fisher_two_sided, wilson
from .profile import JOBS, guest_argv

# verify is guest/jobs/verify.fio; the others are profile's jobs (the seed
# phases are where our guests have triple-faulted most).
DEATH_JOBS = dict(JOBS, verify=None)

NAME = "deaths"
HELP = "death rates, ours and QEMU's"
COMMAND = True


def parse_config(spec):
    """A deaths configuration (config.parse): profile's vmm and qemu keys
    (kvmtool and host are profile's), a job of DEATH_JOBS in jobs=, and
    host_thp=always|madvise|never for either."""
    return config.parse(spec, "deaths", DEATH_JOBS)


THP = "/sys/kernel/mm/transparent_hugepage/enabled"


@contextlib.contextmanager
def host_thp(mode, path=None):
    """The host's transparent huge pages set to MODE (always, madvise,
    never) for the block, then set back; MODE None: left alone.  Both
    VMMs advise huge pages for guest RAM, so this decides whether the
    host's khugepaged and compaction move guest pages under a running
    guest."""
    if not mode:
        yield
        return
    path = path or THP
    with open(path) as f:
        old = re.search(r"\[(\w+)\]", f.read()).group(1)
    with open(path, "w") as f:
        f.write(mode)
    try:
        yield
    finally:
        with open(path, "w") as f:
            f.write(old)


def one_run(cfg, job, disk, args, log_path, recorder):
    if DEATH_JOBS[job] is None:
        cmdline = cmdlines.guest_cmdline(fio=job, disk_serial="data")
    else:
        cmdline = cmdlines.guest_cmdline(
            script=guestrun.fio_script(job, DEATH_JOBS[job]), disk_serial="data")
    argv = guest_argv(cfg, cmdline, disk, args)
    before_stop = None
    with tempfile.TemporaryDirectory(prefix="vmh-mon") as tmp:
        if cfg["kind"] == "qemu":
            # A stuck QEMU guest's registers, beside what our VMM prints
            # with -v at a stop (a unix socket's path must be short).
            sock = os.path.join(tmp, "mon")
            argv += qemumon.argv(sock)
            before_stop = lambda proc: qemumon.save_registers(sock, log_path + ".regs")
        recorder.clear()
        irqs0 = counters.host_interrupts()
        kvm = {}

        def on_phase(name, edge, proc):
            # the host KVM's counts of the guest's fio phase (exits,
            # interrupts injected): its work as the emulator sees it
            kvm[edge] = counters.kvm_stats(proc.pid)
        with host_thp(cfg["opts"].get("host_thp")):
            g = guestrun.GuestRun(argv, timeout=args.boot_timeout, log_path=log_path,
                                  before_stop=before_stop, on_phase=on_phase).run()
        irqs = counters.interrupts_delta(irqs0, counters.host_interrupts())
    res = fiojson.extract(g.lines).get(job)
    outcome = g.outcome
    if outcome == "clean" and not (res and res[0] == 0 and res[1]):
        outcome = "no-result"
    if outcome == "clean" and os.path.exists(log_path):
        os.unlink(log_path)  # keep the consoles of deaths only
        if os.path.exists(log_path + ".vmm"):
            os.unlink(log_path + ".vmm")
    if outcome != "clean" and recorder.save(log_path + ".kvmtrace"):
        # QEMU ends with status 0 and says nothing on a triple fault
        # (-no-reboot): the host's trace says it.
        how = kvmtrace.describe(log_path + ".kvmtrace") or ""
        if outcome == "no-result" and how.startswith("triple fault"):
            outcome = "triple-fault"
    rec = {"config": cfg["name"], "job": job, "outcome": outcome,
           "rc": g.rc, "seconds": round(g.seconds, 1), "log": log_path,
           "host_irqs": irqs}
    if outcome == "clean":
        rec["ios"] = fiojson.summary(res[1])["ios"]  # the run's work
        if kvm.get("begin") and kvm.get("end"):
            rec["kvm"] = counters.delta(kvm["begin"], kvm["end"])
    return rec


def run_plan(args):
    counters.ensure_mounts()
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    disk = plan.data_disk(args, "vmh-deaths.img")
    cfgs = [parse_config(c) for c in args.config]
    done = {(r["round"], r["config"], r["job"]) for r in plan.load_runs(args.out)}
    recorder = kvmtrace.FlightRecorder()
    if not recorder.start():
        print("vmbench: no kvm tracepoints here: deaths keep their consoles only",
              flush=True)
    for rnd, _, cfg, job in plan.rounds(cfgs, args.job, args.n, args.seed, done):
        log = os.path.join(args.out, "logs", "n%03d-%s-%s.log" % (rnd, cfg["name"], job))
        plan.set_in_flight(args.out, {"config": cfg["name"], "job": job, "round": rnd})
        rec = one_run(cfg, job, disk, args, log, recorder)
        rec.update({"round": rnd, "seed": args.seed, "time": time.time()})
        plan.record(args.out, rec)
        plan.set_in_flight(args.out, None)
        print("vmbench: n%03d %-10s %-12s %s" % (rnd, cfg["name"], job, rec["outcome"]),
              flush=True)
    recorder.stop()
    # Which of the host's CPUs took which interrupts (the test host's
    # deaths have all been on its CPU 0).
    try:
        with open("/proc/interrupts") as src, \
                open(os.path.join(args.out, "interrupts.txt"), "w") as dst:
            dst.write(src.read())
    except OSError:
        pass


_OUR_CR3 = re.compile(r"vCPU (\d+): .*\bcr3=(0x[0-9a-f]+)")
_QEMU_CPU = re.compile(r"^CPU#(\d+)")
_QEMU_CR3 = re.compile(r"\bCR3=([0-9a-f]+)")


def stuck_cr3(log_path):
    """Each vCPU's CR3 as read at the stop of a stuck guest: ours from
    -v's lines (LOG.vmm), QEMU's from its monitor (LOG.regs); either may
    be gzip'd (FILE.gz).  {} if neither has one (a guest that ended by
    itself)."""
    out = {}
    try:
        with kvmtrace.open_text(log_path + ".vmm") as f:
            for line in f:
                m = _OUR_CR3.search(line)
                if m:
                    out[int(m.group(1))] = m.group(2)
    except OSError:
        pass
    try:
        with kvmtrace.open_text(log_path + ".regs") as f:
            cpu = None
            for line in f:
                m = _QEMU_CPU.match(line)
                if m:
                    cpu = int(m.group(1))
                m = _QEMU_CR3.search(line)
                if m and cpu is not None:
                    out[cpu] = "%#x" % int(m.group(1), 16)
    except OSError:
        pass
    return out


def death_notes(out_dir, runs):
    """A line per death whose host trace or stop registers say more:
    how it ended (kvmtrace.describe) and each vCPU's CR3 at the stop."""
    lines = []
    for r in runs:
        if r["outcome"] == "clean":
            continue
        log = os.path.join(out_dir, "logs", os.path.basename(r["log"]))
        how = kvmtrace.describe(log + ".kvmtrace") if kvmtrace.saved(log + ".kvmtrace") else None
        cr3 = stuck_cr3(log)
        if not how and not cr3:
            continue
        words = [how] if how else []
        if cr3:
            words.append("CR3 at the stop: " + ", ".join(
                "vCPU %d %s" % kv for kv in sorted(cr3.items())))
        lines.append("- n%03d %s %s (%s): %s" % (r["round"], r["config"], r["job"],
                                               r["outcome"], "; ".join(words)))
    return lines


def interrupt_lines(runs):
    """Per configuration, clean runs and deaths apart: the test host's
    interrupts per second of a run, per CPU (runs that recorded them)."""
    groups = {}
    for r in runs:
        if r.get("host_irqs") and r.get("seconds"):
            key = (r["config"], "clean" if r["outcome"] == "clean" else "died")
            groups.setdefault(key, []).append(r)
    lines = []
    for (cfg, how), rs in sorted(groups.items()):
        rows = []
        for k in counters.HOST_IRQS + ("dev",):
            if not all(k in r["host_irqs"] for r in rs):
                continue
            rates = [sum(r["host_irqs"][k][i] / r["seconds"] for r in rs) / len(rs)
                     for i in range(len(rs[0]["host_irqs"][k]))]
            rows.append("%s %s" % (k, "/".join("%.0f" % x for x in rates)))
        lines.append("- %s, %s (n=%d): %s" % (cfg, how, len(rs), ", ".join(rows)))
    return lines


def vcpu_preemptions(run):
    """Times the test host's KVM saw one of the guest's vCPU threads
    switched out while still runnable (its steal-time "preempted" counts:
    reported, or not at an instruction boundary), during the fio phase."""
    kvm = run.get("kvm", {})
    if "preemption_reported" not in kvm:
        return None
    return kvm["preemption_reported"] + kvm.get("preemption_other", 0)


# What a clean run's work is counted in, for deaths per unit of work: the
# requests fio completed, the interrupts the host's KVM injected into the
# guest during the fio phase (the triple faults so far happened while the
# emulated CPU delivered an interrupt or exception to the guest), and its
# vCPU threads' preemptions (most of those triple faults came right after
# a host reschedule).
WORK = (("request", "requests", lambda r: r.get("ios")),
        ("interrupt injected", "injections",
         lambda r: r.get("kvm", {}).get("irq_injections")),
        ("vCPU preemption", "preemptions", vcpu_preemptions))


def per_work(runs, c1, c2, unit, plural, count):
    """Deaths of C1 and C2 per million units of work, and the exact test
    of "the same deaths per unit": given both configurations' deaths,
    C1's share of them is binomial with C1's share of the work.  A
    configuration's work is, per job, its runs times the mean work
    (COUNT(run)) of its clean runs of that job.  One line, or None where
    some job of theirs has no clean run with a count (a job that always
    died, or runs recorded before the count existed)."""
    expo, dead, per_run = {}, {}, {}
    for c in (c1, c2):
        rs = [r for r in runs if r["config"] == c]
        expo[c] = 0.0
        for j in {r["job"] for r in rs}:
            rj = [r for r in rs if r["job"] == j]
            work = [w for w in (count(r) for r in rj if r["outcome"] == "clean")
                    if w is not None]
            if not sum(work):
                return None
            expo[c] += len(rj) * sum(work) / len(work)
        dead[c] = sum(1 for r in rs if r["outcome"] != "clean")
        per_run[c] = expo[c] / len(rs)
    d = dead[c1] + dead[c2]
    p = binom_two_sided(dead[c1], d, expo[c1] / (expo[c1] + expo[c2])) if d else 1.0
    ratio = per_run[c2] / per_run[c1]
    return ("Per %s: %s %.2f deaths per million %s (%d in %.2fM), %s %.2f "
            "(%d in %.2fM; %.2fx %s's %s per run); exact test of the same rate "
            "per %s p = %.3f (%s)" % (
                unit, c1, 1e6 * dead[c1] / expo[c1], plural, dead[c1], expo[c1] / 1e6,
                c2, 1e6 * dead[c2] / expo[c2], dead[c2], expo[c2] / 1e6, ratio, c1,
                plural, unit, p, "significant" if p < 0.05 else "not significant"))


def analyse(out_dir):
    runs = plan.load_runs(out_dir)
    configs = sorted({r["config"] for r in runs})
    jobs = sorted({r["job"] for r in runs})
    lines = ["| configuration | job | runs | clean | deaths | rate | 95% CI | by kind |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    totals = {}
    for c in configs:
        for j in jobs:
            rs = [r for r in runs if r["config"] == c and r["job"] == j]
            if not rs:
                continue
            dead = [r for r in rs if r["outcome"] != "clean"]
            kinds = {}
            for r in dead:
                kinds[r["outcome"]] = kinds.get(r["outcome"], 0) + 1
            lo, hi = wilson(len(dead), len(rs))
            lines.append("| %s | %s | %d | %d | %d | %.1f%% | %.1f-%.1f%% | %s |" % (
                c, j, len(rs), len(rs) - len(dead), len(dead),
                100.0 * len(dead) / len(rs), 100 * lo, 100 * hi,
                ", ".join("%s %d" % kv for kv in sorted(kinds.items())) or "-"))
            t = totals.setdefault(c, [0, 0])
            t[0] += len(dead)
            t[1] += len(rs)
    out = "\n".join(lines) + "\n"
    for c1, c2 in itertools.combinations(sorted(totals), 2):
        (d1, n1), (d2, n2) = totals[c1], totals[c2]
        p = fisher_two_sided(d1, n1 - d1, d2, n2 - d2)
        out += ("\nAll jobs: %s %d/%d deaths, %s %d/%d; Fisher's exact test p = %.3f (%s)\n"
                % (c1, d1, n1, c2, d2, n2, p,
                   "significant" if p < 0.05 else "not significant"))
        for unit, plural, count in WORK:
            line = per_work(runs, c1, c2, unit, plural, count)
            if line:
                out += line + "\n"
    notes = death_notes(out_dir, runs)
    if notes:
        out += "\nHow they ended (the host's kvm trace, registers at a stop):\n" + "\n".join(notes) + "\n"
    irqs = interrupt_lines(runs)
    if irqs:
        out += ("\nThe test host's interrupts per second of a run (/proc/interrupts, "
                "CPU 0/CPU 1/...):\n" + "\n".join(irqs) + "\n")
    ends = plan.load_testhost_ends(out_dir)
    if ends:
        kinds = [e["kind"] for e in ends]
        out += ("\nTest host: %d boot(s) ended before the plan did: %d lock-up(s) "
                "(no sign of life, stopped), %d at the time limit, %d death(s); the run "
                "in flight each time is not in the table (it ran again in the next boot)\n"
                % (len(ends), kinds.count("lock-up"), kinds.count("time limit"),
                   kinds.count("death")))
        known = [e for e in ends if "in_flight" in e]
        if known:
            out += "In flight when it ended: %s\n" % ", ".join(
                "%s %s (n%03d, %s)" % (e["in_flight"]["config"], e["in_flight"]["job"],
                                       e["in_flight"]["round"],
                                       e["kind"])
                for e in known)
    with open(os.path.join(out_dir, "deaths.md"), "w") as f:
        f.write(out)
    return out


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    scenario.guest_options(p)
    p.add_argument("-j", "--job", action="append", choices=sorted(DEATH_JOBS))
    p.add_argument("-n", type=int, default=10, help="rounds: runs per configuration and job")


def check(args):
    scenario.check_guest_options(args, NAME, ["qemu", "vmm"], ["verify", "randread-4k"],
                                 parse_config)


def run(args):
    return scenario.run_here_or_in_testhost(args, run_plan, analyse)


def is_result(out):
    """A deaths meta.json, or (none) deaths.md or rounds in runs.jsonl."""
    kind = scenario.recorded_kind(out)
    if kind is not None:
        return kind == NAME
    if results.exists(os.path.join(out, "deaths.md")):
        return True
    try:
        with results.open(os.path.join(out, "runs.jsonl")) as f:
            return any('"round"' in line for line in f)
    except OSError:
        return False


def sections(entries):
    """The newest deaths directory with both VMMs: analyse's sentences
    on all jobs and per request."""
    entry = next((e for e in entries if e["kind"] == NAME
                  and {"qemu", "vmm"} <= {r["config"] for r in plan.load_runs(e["dir"])}), None)
    lines = []
    if entry:
        text = analyse(results.real(entry["dir"]))  # it writes deaths.md there
        lines = ["- " + line for line in pages.sentences(text, r"^(All jobs|Per request):")]
        lines.append("")
        lines += pages.data_line(entry)
    return [("deaths", "Deaths: how often guests die, ours and QEMU's", lines)]
