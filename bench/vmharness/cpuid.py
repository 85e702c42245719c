"""What each VMM gives the same guest (issue 10, "find what differs"):
one guest per configuration, the same kernel and command line, dumps from
inside the guest the CPUID leaves of every vCPU and a few MSRs
(guest/cpuid-dump.c), /proc/cpuinfo and the kernel's log.  The analysis
sets the first two configurations side by side: feature flags only one
has, CPUID leaves and MSRs that differ, kernel log lines only one has.
"""
import os
import re
import time

from . import cmdlines, config, guestrun, plan, scenario
from .profile import guest_argv

SECTIONS = ("CPUID", "CPUINFO", "DMESG", "MSR")

NAME = "cpuid"
HELP = "CPUID, MSRs and kernel log seen by the guest, ours and QEMU's"
COMMAND = True

SCRIPT = "".join(
    'echo "=== %(s)s BEGIN ==="\n%(c)s\necho "=== %(s)s END ==="\n' % {"s": s, "c": c}
    for s, c in (("CPUID", "cpuid-dump"), ("CPUINFO", "cat /proc/cpuinfo"),
                 ("DMESG", "dmesg"), ("MSR", "cpuid-dump msr"))
)


def parse_config(spec):
    """A cpuid configuration (config.parse): ours or QEMU, as profile
    reads them, less jobs= (one guest each, no job)."""
    return config.parse(spec, "cpuid")


def dump_sections(lines):
    """({section: [lines]} between the markers of SCRIPT, [the sections
    that reached their END marker])."""
    out, ended, cur = {}, [], None
    for line in lines:
        m = re.match(r"^=== (\w+) (BEGIN|END) ===$", line)
        if m and m.group(1) in SECTIONS:
            cur = m.group(1) if m.group(2) == "BEGIN" else None
            if cur:
                out[cur] = []
            else:
                ended.append(m.group(1))
            continue
        if cur:
            out[cur].append(line)
    return out, ended


def _path(out_dir, name, ext):
    """OUT_DIR/NAME.EXT for a configuration's name (which may hold a /)."""
    return os.path.join(out_dir, name.replace("/", "_") + ext)


def run_plan(args):
    disk = plan.data_disk(args, "vmh-cpuid.img")
    done = {r["config"] for r in plan.load_runs(args.out) if r["outcome"] == "clean"}
    for spec in args.config:
        cfg = parse_config(spec)
        if cfg["name"] in done:
            continue
        log = _path(args.out, cfg["name"], ".log")
        g = guestrun.run_with_retries(
            guest_argv(cfg, cmdlines.guest_cmdline(script=SCRIPT, disk_serial="data"),
                       disk, args), log, timeout=args.boot_timeout)
        got, ended = dump_sections(g.lines)
        # The MSRs come last: a guest that dies reading one (seen under
        # QEMU in the test host) leaves the rest to compare.
        outcome = g.outcome
        if outcome == "clean" and len(ended) < len(SECTIONS):
            outcome = "died-in-msr" if ended == list(SECTIONS[:-1]) else "no-result"
        with open(_path(args.out, cfg["name"], ".txt"), "w") as f:
            for s in SECTIONS:
                for line in got.get(s, []):
                    f.write("%s %s\n" % (s, line))
        plan.record(args.out, {"config": cfg["name"], "outcome": outcome,
                               "rc": g.rc, "time": time.time()})
        print("vmbench: %s %s" % (cfg["name"], outcome), flush=True)


def load(out_dir, name):
    got = {s: [] for s in SECTIONS}
    with open(_path(out_dir, name, ".txt")) as f:
        for line in f:
            s, _, rest = line.rstrip("\n").partition(" ")
            got[s].append(rest)
    return got


def flags(cpuinfo):
    """The feature flags of the first CPU in /proc/cpuinfo."""
    for line in cpuinfo:
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def keyed(cpuid):
    """{'cpu N leaf L sub S' or 'cpu N msr M': value} from cpuid-dump."""
    out = {}
    for line in cpuid:
        key, sep, val = line.partition(": ")
        if sep:
            out[key] = val
    return out


# Kernel log lines that differ between any two boots: times, addresses,
# sizes, random values; stripped before comparing.
NOISE = re.compile(r"^\[[ 0-9.]+\] |0x[0-9a-f]+|\b[0-9a-f]{8,}\b|\d+(\.\d+)?")


def log_lines(dmesg):
    return {NOISE.sub("#", l).strip() for l in dmesg}


def analyse(out_dir):
    runs = [r for r in plan.load_runs(out_dir) if r["outcome"] in ("clean", "died-in-msr")]
    names = []
    for r in runs:
        if r["config"] not in names:
            names.append(r["config"])
    if len(names) < 2:
        return "vmh cpuid: fewer than two configurations ran to the end (%s)\n" % names
    a, b = names[:2]
    da, db = load(out_dir, a), load(out_dir, b)
    out = ["# What the guest sees: %s against %s" % (a, b), ""]
    fa, fb = flags(da["CPUINFO"]), flags(db["CPUINFO"])
    out.append("/proc/cpuinfo flags only under %s: %s" % (a, " ".join(sorted(fa - fb)) or "none"))
    out.append("/proc/cpuinfo flags only under %s: %s" % (b, " ".join(sorted(fb - fa)) or "none"))
    out += ["", "| CPUID leaf / MSR | %s | %s |" % (a, b), "|---|---|---|"]
    ka, kb = keyed(da["CPUID"] + da["MSR"]), keyed(db["CPUID"] + db["MSR"])
    for key in sorted(set(ka) | set(kb)):
        if ka.get(key) != kb.get(key):
            out.append("| %s | %s | %s |" % (key, ka.get(key, "-"), kb.get(key, "-")))
    la, lb = log_lines(da["DMESG"]), log_lines(db["DMESG"])
    for x, only in ((a, la - lb), (b, lb - la)):
        out += ["", "Kernel log lines only under %s (numbers as #):" % x]
        out += ["    " + l for l in sorted(only)] or ["    none"]
    text = "\n".join(out) + "\n"
    with open(os.path.join(out_dir, "cpuid.md"), "w") as f:
        f.write(text)
    return text


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    scenario.guest_options(p, queues=1, disk_mb=64)


def check(args):
    scenario.check_guest_options(args, NAME, ["qemu", "vmm"], parse=parse_config)


def run(args):
    return scenario.run_here_or_in_testhost(args, run_plan, analyse)


def is_result(out):
    return scenario.recorded_kind(out) == NAME


def sections(entries):
    return []  # a record of what differs, read with its JOURNAL entry
