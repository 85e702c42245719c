"""The sweep: `bench/vmbench [OPTION]...` with no command word, fio jobs
from guest/jobs/ in guests under a list of configurations, R interleaved
repeats, statistics, sweeps, guest-count scaling, plots (bench/README.md,
"vmbench in one paragraph").  This module is its front (scenario.py's
entry points): the options, their checks, and which half runs; the plan
and its runs are vmbench.py (the outer half), vmbench_run.py (the runs)
and report.py (the tables).  Its modes are scenarios of their own with
their options here: the counter-example hunt (--hunt, vmbench_hunt.py)
and hw-check (--scenario hw-check, vmbench_hw.py); --scenario kernels
and regress are presets of the plan (vmbench.PRESETS)."""
import argparse
import contextlib
import io
import json
import os

from . import pages, report, results, scenario, vmbench, vmbench_hunt, vmbench_hw
from .vmbench_base import Error, say

NAME = "sweep"
HELP = ("fio jobs in guests under each configuration (-c), R interleaved repeats, "
        "compared with the first")
COMMAND = False

DESCRIPTION = """\
Runs fio jobs (guest/jobs/NAME.fio) in guests under each configuration,
R times each, interleaved (every configuration once per repeat, in an
order shuffled anew in each repeat, seeded and recorded), and compares
every figure (IOPS, bandwidth, mean and p99 completion latency) with the
first configuration: mean, standard deviation and 95% interval (log
scale), the ratio to the baseline paired by repeat with its 95% interval
and the paired t-test's p-value (significant when p < 0.05), sentences
written from them, and every planned run without a result.  Prints a
markdown table; writes CSV, JSON and PNG plots to OUT."""

CONFIGS = """\
configurations (-c, repeatable; the first one is the baseline; config.py
parses them, its "vmbench" table):
  vmm[:OPT,...]    our VMM (build/vmm).  OPT: queues=N batch=on|off poll=US
                   backend=file|ram direct=auto|on|off bin=PATH name=LABEL
                   kernel=PATH (a guest kernel of one's own, bzImage or
                   vmlinux, instead of --kernel's) modules=DIR (its
                   modules: `make modules_install INSTALL_MOD_PATH=DIR`;
                   none needed when virtio_blk is built in)
  qemu[:OPT,...]   QEMU with KVM, virtio-blk-pci, same vCPUs, queues and
                   disks.  OPT: queues=N iothread=on|off
                   aio=io_uring|native|threads cache=auto|none|writeback
                   kernel=PATH modules=DIR name=LABEL
  host[:name=L]    the host (or test host) itself: /usr/bin/fio, the same
                   job on the same backing file (the physical limit)
  direct=auto/cache=auto: O_DIRECT (cache=none) where the backing file's
  filesystem supports it (not on the test host's tmpfs).

scenarios (--scenario; its defaults, which later options override):
  plug      seed 004: our VMM, RAM disk, batch=on (baseline) vs batch=off,
            job seed-virtio-blk further reduced (numjobs=32, each phase
            time_based for runtime=3 s), 1 vCPU, 1 queue
  peers     qemu (baseline), vmm, host; randread-4k and randwrite-4k;
            queues 1 and 2; runtime 3
  scaling   qemu (baseline), vmm; randread-4k; 1..4 guests at once, 1 vCPU
            and 1 queue each; runtime 3
  regress A B  two builds of our VMM (git revisions; "work" = the working
            tree's build/vmm), each built in a worktree under build/regress/;
            randread-4k randwrite-4k seq-read seq-write; lists every
            figure where B is significantly worse than A
  kernels A B [C...]  guest kernels side by side, each [NAME=]PATH
            [,modules=DIR]: a bzImage or vmlinux of one's own (its
            release and sha256 recorded with every run; a kernel file
            that changes during the plan stops it), under one -c
            (default vmm) with the same disk, vCPUs and jobs (those of
            regress); ratios to A, and every figure where a later kernel
            is significantly worse than A
  hw-check  for a machine with hardware KVM: checks /dev/kvm and its speed
            (status 3 when it is not fast), builds what is missing, then
            peers and scaling (runtime 4, --guests 1-4) in time boxes that
            share --budget S (480), into OUT/peers, OUT/scaling and
            OUT/hw-check.md (default OUT build/hw-check-DATE).
            --allow-slow goes on without a fast KVM (through the test host).

environment: VMBENCH_WHERE, VMBENCH_HOST_FIO (default /usr/bin/fio),
  VMBENCH_FULL_JSON=1 (fio's JSON untrimmed), VMM_BIN,
  TESTHOST_MEM/TESTHOST_SMP/TESTHOST_TIMEOUT (test host),
  HWCHECK_BUDGET/HWCHECK_RUNTIME/HWCHECK_GUESTS/HWCHECK_ALLOW_SLOW (hw-check)."""

USAGE = """\
bench/vmbench [OPTION]...
       bench/vmbench --scenario plug|peers|scaling [OPTION]...
       bench/vmbench --scenario regress REV_A REV_B [OPTION]...
       bench/vmbench --scenario kernels A B [C...] [OPTION]...
       bench/vmbench --scenario kernels A B --hunt [--budget S] [OPTION]...
       bench/vmbench --scenario hw-check [-o OUTDIR] [--budget S] [--allow-slow]
       bench/vmbench --analyze OUTDIR | --resume OUTDIR
       bench/vmbench COMMAND [ARG]...   (bench/vmbench COMMAND --help)"""


def _sweep(key):
    """--bs LIST and the like: a sweep of fio's KEY."""
    return lambda v: "%s=%s" % (key, v)


def add_arguments(p):
    p.add_argument("words", nargs="*", metavar="REV|KERNEL",
                   help="--scenario regress's two revisions, or --scenario kernels' kernels "
                   "([NAME=]PATH[,modules=DIR])")
    p.add_argument("-j", "--job", "--jobs", dest="jobs", action="append", metavar="NAME[,NAME...]",
                   help="fio jobs from guest/jobs (default randread-4k)")
    p.add_argument("-c", "--config", dest="cfgs", action="append", default=[], metavar="SPEC",
                   help="add a configuration (default: qemu, vmm)")
    p.add_argument("-r", "--repeats", metavar="R", help="runs per configuration (default 3)")
    p.add_argument("--runtime", metavar="S",
                   help="fio runtime=S for every job (time cap for size-based jobs)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="fio option for every job (repeatable)")
    for key, what in (("bs", "block size (e.g. 4k,16k,64k)"), ("iodepth", "queue depth"),
                      ("numjobs", "fio numjobs")):
        p.add_argument("--" + key, dest="sweeps", action="append", type=_sweep(key),
                       metavar="LIST", help="sweep " + what)
    p.add_argument("--sweep", dest="sweeps", action="append", default=[], metavar="KEY=V1,V2",
                   help="sweep any fio option (repeatable)")
    p.add_argument("--queues", metavar="LIST", help="sweep virtqueue count (overrides queues=)")
    p.add_argument("--guests", metavar="LIST",
                   help="guests at once, e.g. 1,2,4 or 1-4 (default 1); each has its own "
                   "disk, figures are summed")
    p.add_argument("--cpus", metavar="N", help="vCPUs per guest (default 2)")
    p.add_argument("--mem", metavar="SIZE", help="RAM per guest (default 512M)")
    p.add_argument("--kernel", metavar="NAME",
                   help="guest kernel: stock (Debian's, default) or small (guest/small.config; "
                   "make guest)")
    p.add_argument("--disk-size", dest="disk", metavar="SIZE",
                   help="data disk per guest (default 512M)")
    p.add_argument("--backing", metavar="file|nullb[:bs=B,completion_ns=N]",
                   help="what each guest's data disk is: a file (the default; in the test "
                   "host on tmpfs, which our VMM serves synchronously, never through "
                   "io_uring) or a null_blk device of the test host (memory-backed, bs 512, "
                   "completion 10000 ns by default), opened with O_DIRECT by every "
                   "configuration: the path io_uring is about")
    p.add_argument("--boot-timeout", metavar="S", help="per guest boot (default 300)")
    p.add_argument("--seed", metavar="N",
                   help="seed of the order within each repeat (default: the time)")
    p.add_argument("-o", "--out", metavar="DIR", help="results (default build/vmbench/NAME-DATE)")
    p.add_argument("--where", metavar="auto|host|testhost",
                   help="where guests run (default: `vmm probe` decides)")
    p.add_argument("--title", metavar="TEXT", help="title of the table and plots")
    p.add_argument("--scenario", metavar="NAME",
                   help="%s or hw-check: below" % "|".join(vmbench.PRESETS))
    vmbench_hunt.add_arguments(p)
    vmbench_hw.add_arguments(p)
    p.add_argument("--analyze", metavar="DIR", help="only redo the analysis of an earlier run")
    p.add_argument("--baseline", metavar="LABEL",
                   help="with --analyze: compare with the configuration LABEL instead of the "
                   "first (OUT/table-vs-LABEL.md)")
    p.add_argument("--resume", metavar="DIR",
                   help="run what an interrupted invocation left undone (same plan, same "
                   "directory), then analyse")
    p.add_argument("--inner", metavar="DIR", help=argparse.SUPPRESS)


def parser(commands=""):
    """The sweep's parser (COMMANDS: the epilog's list of commands)."""
    p = scenario.Parser(prog="bench/vmbench", usage=USAGE, description=DESCRIPTION,
                        epilog=CONFIGS + ("\n\n" + commands if commands else ""),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return p


def options(ns):
    """The parsed options as the plan reads them (vmbench.check,
    vmbench_hunt, vmbench_hw): a dict of strings, None where not given."""
    o = {k: getattr(ns, k) for k in (
        "repeats", "runtime", "queues", "guests", "cpus", "mem", "disk", "boot_timeout", "out",
        "where", "title", "seed", "budget", "kernel", "baseline", "backing", "scenario",
        "analyze", "resume", "inner", "allow_slow", "hunt")}
    o.update(jobs=",".join(ns.jobs) if ns.jobs else None, cfgs=list(ns.cfgs),
             sets=list(ns.sets), sweeps=list(ns.sweeps or []), regress=None, kernels=None, points=None)
    words = list(ns.words)
    if o["scenario"] == "regress":
        if len(words) != 2:
            raise Error("--scenario regress REV_A REV_B")
        o["regress"] = tuple(words)
    elif o["scenario"] == "kernels":
        if len(words) < 2:
            raise Error("--scenario kernels A B [C...]: two kernels or more "
                              "(each PATH or NAME=PATH)")
        o["kernels"] = words
    elif words:
        raise Error("'%s': words only after --scenario regress or kernels (a command? "
                          "bench/vmbench --help lists them)" % " ".join(words))
    return o


def parse_args(argv):
    """ARGV's options (options()), or ConfigError."""
    return options(parser().parse_args(argv))


def check(args):
    """The refusals before anything is built or written: the preset's and
    the options' (vmbench.apply_defaults, on a copy: the plan applies
    them again), every -c through config.py, the kernels' words, the
    hunt's and hw-check's own.  What needs files (the jobs, the binaries,
    the kernels) vmbench.check refuses as the plan is made, still before
    anything runs."""
    o = args.o = options(args)
    if o["inner"] or o["analyze"] or o["resume"]:
        return
    if o["scenario"] == "hw-check":
        vmbench_hw.check(args)
        return
    if o["where"] is None:
        o["where"] = os.environ.get("VMBENCH_WHERE") or "auto"
    vmbench.apply_defaults(dict(o, cfgs=list(o["cfgs"])))
    for spec in o["cfgs"]:
        vmbench.parse_config(spec)
    if o["kernels"]:
        vmbench.kernel_specs(o["kernels"])
    if o["hunt"]:
        vmbench_hunt.check(args)


def run(args):
    o = args.o
    try:
        if o["inner"]:
            from . import vmbench_run
            return vmbench_run.inner(os.path.abspath(o["inner"]))
        if o["analyze"]:
            return vmbench.analyse(o["analyze"], o["baseline"])
        if o["resume"]:
            return vmbench.resume(o["resume"])
        if o["scenario"] == "hw-check":
            return vmbench_hw.run(args)
        if o["hunt"]:
            return vmbench_hunt.run(args)
        out, where = vmbench.prepare(o, args.argv)
        return vmbench.run_plan(out, where)
    except KeyboardInterrupt:
        say("stopped")
        return 130


def is_result(out):
    """A sweep's plan.json (its configurations) beside its runs."""
    kind = scenario.recorded_kind(out)
    if kind not in (None, NAME):
        return False
    try:
        with results.open(os.path.join(out, "plan.json")) as f:
            return "cfgs" in json.load(f) and results.exists(os.path.join(out, "runs.jsonl"))
    except (OSError, ValueError, TypeError):
        return False


def analyse(out):
    """vmbench.analyse's tables, as report.analyse prints them."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        vmbench.analyse(out)
    return text.getvalue()


# ---- RESULTS.md: seed 004 on today's driver, guest batching x device batching --

# Seed 004's own figures (kvmtool, RAM disk, 2012): IOPS change of its
# virtio_blk patch that removed plug/unplug and completion batching.
SEED004 = (("seq-read", 28), ("seq-write", 24), ("rnd-read", 21), ("rnd-write", 16))
SEED004_CFGS = ("stock-nobatch", "stock-batch", "noplug-nobatch", "noplug-batch")


def labels(entry):
    """The configurations of a sweep's plan (plan.json), [] if unreadable."""
    try:
        with results.open(os.path.join(entry["dir"], "plan.json")) as f:
            return [c["label"] for c in json.load(f)["cfgs"]]
    except (OSError, ValueError, KeyError):
        return []


def _pair(res, phase, config, figure):
    r = next((r for r in res if r["phase"] == phase and r["config"] == config
              and r["figure"] == figure), None)
    if not r or r["ratio"] is None:
        return {"ratio": None, "lo": None, "hi": None, "n": 0}
    return {"ratio": r["ratio"], "lo": r["ratio_ci95"][0], "hi": r["ratio_ci95"][1],
            "n": r["pairs"]}


def seed004_section(entries):
    """The newest plan with the four configurations of seed 004's 2x2:
    the stock small kernel and guest/patches/noplug's, each under our
    device's default and batch=on."""
    found = next((e for e in entries if e["kind"] == NAME
                  and sorted(labels(e)) == sorted(SEED004_CFGS)), None)
    if not found:
        return []
    d, meta = found["dir"], found["meta"]
    loaded = report.load(d)

    def summary(baseline):
        m, points, configs, runs, _ = loaded
        m = dict(m, _baseline=baseline)
        return report.summarise(m, report.build_samples(m, points, configs, runs))
    by_stock, by_stock_batch = summary("stock-nobatch"), summary("stock-batch")
    cols = (("noplug / stock, device default (no batching)", by_stock, "noplug-nobatch"),
            ("noplug / stock, device batch=on", by_stock_batch, "noplug-batch"),
            ("batch=on / default, stock kernel", by_stock, "stock-batch"))
    out = ["Seed 004 removed plug/unplug and completion batching from the guest's "
           "virtio_blk in 2012 and measured IOPS +28/+24/+21/+16 % (seq-read, seq-write, "
           "rnd-read, rnd-write) under kvmtool on a RAM disk.  Linux 6.1's virtio_blk "
           "batches its kicks instead (`bd->last`, `queue_rqs`); guest/patches/noplug "
           "kicks for every request.  IOPS change, then mean completion latency change, "
           "each with its 95% interval:", "",
           "| phase | seed 004 | " + " | ".join(c[0] for c in cols) + " |",
           "|---|---:|" + "---|" * len(cols)]
    pairs = {}
    for phase, seed in SEED004:
        cells = []
        for title, res, cfg in cols:
            iops, lat = _pair(res, phase, cfg, "iops"), _pair(res, phase, cfg, "lat_mean_us")
            pairs[(phase, cfg)] = iops
            cells.append("IOPS %s; latency %s" % (pages.pct(iops), pages.pct(lat)))
        out.append("| %s | +%d %% | %s |" % (phase, seed, " | ".join(cells)))
    out.append("")
    n = max((p["n"] for p in pairs.values()), default=0)

    def said(cfg, what):
        sig = [ph for ph, _ in SEED004 if pages.verdict(pairs[(ph, cfg)]) != "not significant"
               and pages.verdict(pairs[(ph, cfg)]) != "no interval"]
        if not sig:
            return "%s: no phase significantly different (%d pairs each)" % (what, n)
        return "%s: significantly different on %s (%d pairs each)" % (
            what, ", ".join("%s %s" % (ph, pages.pct(pairs[(ph, cfg)])) for ph in sig), n)
    out.append("- " + said("noplug-nobatch", "The guest kicking for every request, "
                           "under our device's default") + "; the seed measured +16 to +28 %.")
    out.append("- " + said("noplug-batch", "The same under batch=on") + ".")
    out.append("- " + said("stock-batch", "Our device's batch=on with the stock kernel") + ".")
    out.append("")
    out += ["- Data: `%s` (table.md; the plot plots/ratio-iops-seed-virtio-blk.png; "
            "table-vs-stock-batch.md for the second column), %s" % (d, meta.get("date", "?")),
            "- Command: `%s`" % meta.get("command", "?"),
            "- Machine: %s; guests ran in the %s (%s)" % (meta.get("machine", "?"),
                                                        meta.get("where", "?"),
                                                        meta.get("testhost", "?")),
            "- Kernels: %s" % meta.get("kernels", "?"),
            "- Job: guest/jobs/seed-virtio-blk.fio reduced for the emulated test host "
            "(fio overrides: %s), %s" % (meta.get("fio_sets", "?"), meta.get("guest", "?"))]
    return out


def sections(entries):
    return [("seed004", "Seed 004 on today's driver: guest batching x device batching",
             seed004_section(entries))]
