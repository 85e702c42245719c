"""bench/vmbench hotplug: what a disk's attach and detach take, idle and
under load, and what empty hot-plug slots cost the disks given at
launch (issue 49, item 6), in the x86-64 or the arm64 test host.

The runs are bench/hotplug.sh (busybox sh: the arm64 test host has no
Python), which says what each figure is.  This module writes its plan
(OUT/plan.txt: per repeat, one guest with no slots and one with SLOTS,
in an order shuffled with the recorded seed), boots the test host (a
second boot goes on where the first stopped) and analyses
OUT/runs.jsonl and OUT/datapath/*.console:
  times     per mode (idle, load): median, min and max of each time over
            the cycles
  datapath  randread-4k IOPS with SLOTS empty slots / with none, paired
            by repeat (stats.paired_ratio: geometric mean, 95% t
            interval on the log scale, paired t-test)."""
import json
import os
import random
import statistics
import time

from . import fiojson, pages, paths, plan, scenario, testhost
from . import results as packed
from .scenario import ConfigError
from .stats import paired_ratio

SCRIPT = os.path.join(paths.REPO, "bench", "hotplug.sh")
TIMES = (("attach_ctl_ms", "attach answered"),
         ("readable_ms", "attach to /dev/vdb readable"),
         ("detach_ms", "detach to slot free"))
BINARIES = {"x86_64": paths.VMM_BIN, "arm64": paths.ARM64_VMM}

NAME = "hotplug"
HELP = ("attach and detach times, idle and under load, and the datapath with empty "
        "hot-plug slots against none (bench/hotplug.sh)")
COMMAND = True


def write_plan(out, repeats, slots, seed):
    path = os.path.join(out, "plan.txt")
    if os.path.exists(path):  # a plan is kept: its runs may be half done
        return
    rng = random.Random(seed)
    lines = []
    for r in range(1, repeats + 1):
        pair = [0, slots]
        rng.shuffle(pair)
        lines += ["%d %d" % (r, s) for s in pair]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_plan(args):
    """The plan, in the test host of args.arch; then the analysis."""
    os.makedirs(args.out, exist_ok=True)
    write_plan(args.out, args.repeats, args.slots, args.seed)
    done = os.path.join(args.out, "done")
    argv = [SCRIPT, args.out, args.arch, str(args.cycles)]
    # A guest boots, runs and ends in minutes; the stall limit is above
    # hotplug.sh's limit on one guest (900 s).
    testhost.run_with_reboots(lambda: argv, args.out, lambda rc: os.path.exists(done),
                              boots=3, arch=args.arch, timeout_s=5400, stall_s=1000)
    text = analyse(args.out)
    print(text, end="")
    return 0 if os.path.exists(done) else 1


def iops(out, repeat, slots):
    """randread-4k's IOPS of one datapath guest, None where it gave none."""
    path = os.path.join(out, "datapath", "%d-%d.console" % (repeat, slots))
    try:
        with open(path, errors="replace") as f:
            lines = [l.rstrip("\r\n") for l in f]
    except OSError:
        return None
    rc, doc = fiojson.extract(lines).get("randread-4k", (None, None))
    return fiojson.summary(doc)["iops"] if rc == 0 and doc else None


def results(out):
    """{arch, cycles: [record], times_status, pairs: [(none, with)],
    slots, failed: [datapath records that gave no IOPS]}."""
    runs = plan.load_runs(out)
    # Each guest of part 1 ("times", then its cycles); one that died is
    # run again on the test host's next boot: the last attempt counts.
    times, cycles = [], []
    for r in runs:
        if r.get("part") == "times":
            times.append(r)
            cycles = []
        elif r.get("part") == "cycle":
            cycles.append(r)
    by_repeat, failed, slots = {}, [], 0
    for r in runs:
        if r.get("part") != "datapath":
            continue
        v = iops(out, r["repeat"], r["slots"])
        if v is None:
            failed.append(r)
            continue
        by_repeat.setdefault(r["repeat"], {})[r["slots"]] = v
        slots = max(slots, r["slots"])
    pairs = [(v[0], v[slots]) for _, v in sorted(by_repeat.items()) if 0 in v and slots in v]
    arch = (runs[0].get("arch") if runs else None)
    return {"arch": arch, "cycles": cycles, "times_status": times[-1]["status"] if times else None,
            "times_failed": [t["status"] for t in times[:-1]],
            "pairs": pairs, "slots": slots, "failed": failed}


def times_table(cycles):
    """Markdown: per time and mode, median (min-max) in ms over the
    cycles that succeeded."""
    good = [c for c in cycles if c["attach_rc"] == 0 and c["detach_rc"] == 0]
    lines = ["| time | idle: median (min-max), ms | under load: median (min-max), ms |",
             "|---|---:|---:|"]
    for key, what in TIMES:
        cells = []
        for mode in ("idle", "load"):
            xs = [c[key] for c in good if c["mode"] == mode]
            cells.append("%d (%d-%d), %d cycles" % (statistics.median(xs), min(xs), max(xs), len(xs))
                         if xs else "-")
        lines.append("| %s | %s | %s |" % (what, cells[0], cells[1]))
    return lines


def datapath_line(res):
    r = paired_ratio(res["pairs"])
    if r["ratio"] is None:
        return "No datapath pair.", r
    if r["lo"] is None:
        return "randread-4k IOPS with %d empty slots / with none: %.2fx (1 pair)." % (
            res["slots"], r["ratio"]), r
    sig = "significant" if r["lo"] > 1 or r["hi"] < 1 else "not significant"
    return ("randread-4k IOPS (ram:512M, 2 queues, 2 vCPUs) with %d empty slots / with "
            "none: %.2fx (%.2f-%.2f), %s, %d pairs; means %.0f and %.0f IOPS." % (
                res["slots"], r["ratio"], r["lo"], r["hi"], sig, r["n"],
                statistics.mean(w for _, w in res["pairs"]),
                statistics.mean(n for n, _ in res["pairs"]))), r


def analyse(out):
    """hotplug.md in OUT, and its text."""
    res = results(out)
    bad = [c for c in res["cycles"] if c["attach_rc"] != 0 or c["detach_rc"] != 0]
    lines = ["# Hot-plug, %s test host" % (res["arch"] or "?"), ""]
    lines += times_table(res["cycles"])
    lines.append("")
    lines.append("Under load: fio randread 4 KiB QD16 (io_uring, O_DIRECT) on the launch disk "
                 "throughout the cycle.  Times in 10 ms steps (the test host's /proc/uptime); "
                 "detach includes the guest's pciehp waiting 5 s for a cancel of the attention "
                 "button.")
    lines.append("")
    lines.append("%d cycles recorded, guest status %s%s%s." % (
        len(res["cycles"]), res["times_status"],
        "; attach or detach failed in cycles %s" % [c["cycle"] for c in bad] if bad else "",
        "; run again after %d guest(s) that ended early (status %s)" % (
            len(res["times_failed"]), ", ".join(map(str, res["times_failed"])))
        if res["times_failed"] else ""))
    lines.append("")
    lines.append(datapath_line(res)[0])
    if res["failed"]:
        lines.append("Datapath guests with no IOPS (left out): %s." % ", ".join(
            "%d-%d (status %s)" % (r["repeat"], r["slots"], r["status"]) for r in res["failed"]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "hotplug.md"), "w") as f:
        f.write(text)
    return text


def meta_binary(meta, arch):
    """meta.json's binary fields for ARCH's VMM (write_meta records build/vmm's)."""
    import hashlib
    path = BINARIES[arch]
    try:
        with open(path, "rb") as f:
            meta.update(vmm_bin=path, vmm_sha256=hashlib.sha256(f.read()).hexdigest())
    except OSError:
        meta.update(vmm_bin=path, vmm_sha256=None)
    meta["arch"] = arch
    if arch == "arm64":
        meta["machine"] = ("%s-core host (kernel %s), arm64 test host: QEMU TCG aarch64 with "
                           "virtualization=on, KVM inside" % (meta.get("nproc", "?"),
                                                              meta.get("kernel", "?")))
    return meta


def fix_meta(out, arch):
    path = os.path.join(out, "meta.json")
    with open(path) as f:
        meta = json.load(f)
    with open(path, "w") as f:
        json.dump(meta_binary(meta, arch), f, indent=1)


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    p.add_argument("--arch", choices=testhost.ARCHES, default="x86_64")
    p.add_argument("--cycles", type=int, default=5,
                   help="attach/detach cycles per mode (idle, load)")
    p.add_argument("-r", "--repeats", type=int, default=5, help="datapath pairs")
    p.add_argument("--slots", type=int, default=8, choices=range(1, 9),
                   help="the empty slots set against none (1 to 8)")
    p.add_argument("--seed", type=int, default=None, help="the order's seed (default: the time)")
    p.add_argument("-o", "--out", help="default build/vmbench/hotplug-ARCH-YYYYMMDD-HHMMSS")


def check(args):
    if args.cycles < 1 or args.repeats < 1:
        raise ConfigError("hotplug: --cycles and -r: at least 1")
    if args.seed is None:
        args.seed = int(time.time())
    args.out = os.path.abspath(args.out or scenario.default_out("hotplug-" + args.arch))


def run(args):
    os.makedirs(args.out, exist_ok=True)
    scenario.write_meta(args)
    fix_meta(args.out, args.arch)
    return run_plan(args)


def is_result(out):
    return scenario.recorded_kind(out) == NAME


def sections(entries):
    """Per architecture, the newest hotplug directory: its times table
    and the datapath line, as analyse writes them."""
    lines = []
    for arch, title in (("x86_64", "x86-64"), ("arm64", "arm64")):
        entry = next((e for e in entries if e["kind"] == NAME
                      and e["meta"].get("arch") == arch), None)
        if not entry:
            continue
        text = analyse(packed.real(entry["dir"]))
        body = [l for l in text.splitlines() if not l.startswith("# ")]
        while body and not body[0]:
            body.pop(0)
        lines += ["%s:" % title, ""] + body + [""] + pages.data_line(entry) + [""]
    return [("hotplug", "Hot-plug: attach and detach times, and empty slots beside the disks "
             "given at launch", lines)]
