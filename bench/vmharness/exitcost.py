"""bench/vmbench exitcost: what one exit of a nested guest costs in the
test host, by kind.  No Linux guest, no disk: the EXITCOST guest of
tests/smoke/guest.S under our VMM, N runs one after another, each three
rounds of 4096 exits of each kind, timed with the TSC:

  C  cpuid                       handled in the test host's KVM (which,
                                 with no nrip-save in the emulated CPU,
                                 decodes it to skip it)
  I  a port read (the PIC's IMR) port I/O handled in KVM (the exit gives
                                 port and next rip: nothing to decode)
  L  an MMIO read (the LAPIC's   a nested page fault handled in KVM by
     version register)           emulating the instruction, the path of
                                 a virtio-pci kick on a memory BAR
  P  a port write (POST port)    port I/O out to the VMM and back
  M  an MMIO write to a hole     MMIO emulated, out to the VMM and back
  T  512 page reads, no exit
  W  the same reads, then I's    W - T: what one exit costs a guest that
     port read                   then touches 512 pages again

The table gives, per kind, the median of every round but each run's
first (a warm-up) in TSC ticks per exit (per loop pass for T and W) and
in microseconds (the test host's TSC rate, from its kernel log), and
W - T.  C to M touch almost no memory between exits; W - T against I
shows what refilling a working set after each world switch adds."""
import os
import re
import statistics
import subprocess
import time

from . import paths, plan, scenario

GUEST = "EXITCOST"
IMAGES = os.path.join(paths.BUILD, "exitcost")
EXITS = 4096  # per loop, as guest.S has it
KINDS = {
    "C": "cpuid (in KVM, decoded to skip it)",
    "I": "port read, the PIC (in KVM, nothing decoded)",
    "L": "MMIO read, the LAPIC (in KVM, emulated)",
    "P": "port write, out to the VMM",
    "M": "MMIO write, emulated, out to the VMM",
    "T": "512 page reads, no exit",
    "W": "512 page reads, then I's port read",
}
BOOTS = 2
NAME = "exitcost"
HELP = "what one exit costs in the test host, by kind"
COMMAND = True
RUN_TIMEOUT_S = 300


def build_images(out=IMAGES):
    subprocess.run([os.path.join(paths.REPO, "tests", "smoke", "mkguest.sh"), out, GUEST],
                   check=True)


def parse_rounds(text):
    """The rounds of one run's output after its first, as
    {kind: ticks per exit}; a line cut short is no round."""
    rounds = []
    for line in text.splitlines():
        pairs = re.findall(r"\b([%s]) ([0-9a-f]{16})\b" % "".join(KINDS), line)
        if [k for k, _ in pairs] == list(KINDS):
            rounds.append({k: int(v, 16) / EXITS for k, v in pairs})
    return rounds[1:]


def tsc_mhz(kernel_log):
    m = re.search(r"tsc: Detected ([0-9.]+) MHz", kernel_log)
    return float(m.group(1)) if m else None


def run_plan(args):
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    done = len(plan.load_runs(args.out))
    for i in range(done, args.n):
        path = os.path.join(args.out, "logs", "run%02d.log" % i)
        plan.set_in_flight(args.out, {"run": i})
        with open(path, "wb") as f:
            try:  # a run takes a few seconds; a hung one is recorded
                rc = subprocess.run([paths.VMM_BIN, "run", "-k",
                                     os.path.join(IMAGES, GUEST + ".img"), "-m", "32M"],
                                    stdin=subprocess.DEVNULL, stdout=f,
                                    stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        with open(path, "rb") as f:
            rounds = parse_rounds(f.read().decode("ascii", "replace"))
        plan.record(args.out, {"run": i, "status": rc, "rounds": rounds,
                               "tsc_mhz": tsc_mhz(log), "time": time.time()})
        plan.set_in_flight(args.out, None)
        analyse(args.out)  # the table so far: analyse OUT finds it
        print("vmbench: run %d status %s, %d rounds" % (i, rc, len(rounds)), flush=True)


def table(rounds, mhz):
    lines = ["| exit | TSC ticks per exit (median) | us per exit | rounds |",
             "|---|---:|---:|---:|"]
    # The kinds every round has: the first runs (before T and W) had five.
    kinds = [k for k in KINDS if all(k in r for r in rounds)]
    meds = {k: statistics.median(r[k] for r in rounds) for k in kinds}
    rows = [(k + ": " + KINDS[k], meds[k]) for k in kinds]
    if "T" in meds and "W" in meds:
        rows.append(("W - T: a port read with 512 pages to touch again",
                     statistics.median(r["W"] - r["T"] for r in rounds)))
    for what, med in rows:
        us = "%.1f" % (med / mhz) if mhz else "-"
        lines.append("| %s | %s | %s | %d |" % (what, format(round(med), ","), us, len(rounds)))
    return "\n".join(lines) + "\n"


def analyse(out_dir):
    runs = plan.load_runs(out_dir)
    rounds = [r for run in runs for r in run["rounds"]]
    bad = [run["run"] for run in runs if run["status"] != 0]
    if not rounds:
        out = "exitcost: no complete round in %d runs\n" % len(runs)
    else:
        mhz = next((run["tsc_mhz"] for run in runs if run.get("tsc_mhz")), None)
        out = table(rounds, mhz)
        out += "\n%d runs, TSC %s MHz%s\n" % (
            len(runs), "%.0f" % mhz if mhz else "unknown",
            "; runs that did not end with status 0: %s" % bad if bad else "")
    ends = plan.load_testhost_ends(out_dir)
    if ends:
        out += "Test-host boots that ended early: %s\n" % ", ".join(
            "%s (run %s in flight)" % (e["kind"], (e.get("in_flight") or {}).get("run", "?"))
            for e in ends)
    with open(os.path.join(out_dir, "exitcost.md"), "w") as f:
        f.write(out)
    return out


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    scenario.guest_options(p, queues=1, disk_mb=0)
    p.add_argument("-n", type=int, default=5, help="runs of the guest")


def check(args):
    # one guest under our VMM: config.py's exitcost table has no kinds,
    # so any -c is refused
    scenario.check_guest_options(args, NAME, [])
    if not args.inner:
        build_images()


def run(args):
    return scenario.run_here_or_in_testhost(args, run_plan, analyse, boots=BOOTS)


def is_result(out):
    return scenario.recorded_kind(out) == NAME


def sections(entries):
    return []  # exitcost.md and its JOURNAL entry say what it found
