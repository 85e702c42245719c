"""Launch to /init, per stage, our VMM beside QEMU on the same kernel
file (issue 12).  Each boot runs `true` in the guest (guest/init run64)
and powers off; R rounds, every configuration on every kernel once per
round, in an order shuffled with the recorded seed.

Stages, in seconds from the launch of the VMM process (CLOCK_MONOTONIC):
  entry       the guest's first instruction: the first kvm:kvm_entry
              event of the host's kernel (tracefs, trace_clock mono; the
              ring buffer keeps its oldest events, so the first one stays)
  kernel      the kernel's own clock starts (early in start_kernel,
              after any decompressor): /init's time less the kernel's
              uptime that /init prints.  No console output is needed for
              it, so the guest boots with the tests' quiet command line
              (with loglevel=6 the test host's guests print an XSAVE
              warning and 40 lines of CPUID leaves over the UART, under
              both VMMs, which is not what is being measured)
  first_line  the first console line, if any comes before /init (none
              under quiet, unless something goes wrong)
  init        /init's first line ("guest: init uptime=U", U being the
              kernel's own uptime then)
  exit        the VMM process's exit after /init's power off
and the guest's exits by reason up to /init and in all (kvm:kvm_exit
histogram, every thread: the host runs one VM at a time here).

Configurations (-c NAME[:bin=PATH,name=LABEL]):
  vmm           ours, the bzImage
  vmm-elf       ours, the uncompressed vmlinux (no decompressor)
  qemu          QEMU pc, the bzImage (SeaBIOS, linuxboot option ROM)
  qemu-pvh      QEMU pc, the vmlinux through its PVH entry
  qemu-microvm  QEMU microvm, the vmlinux through PVH (qboot; virtio-mmio
                disks named on the command line; ACPI off): the small
                kernel only, as the stock one has virtio-mmio as a module
                the image does not load (its /init would find no disk)
"""
import os
import re
import statistics
import time

from . import cmdlines, config, counters, guestrun, pages, paths, plan, results, scenario
from .scenario import ConfigError
from .stats import paired_log_ratio

CONFIGS = config.BOOT_KINDS  # name: (VMM, image, machine)
# qemu-microvm only when asked: in the test host it made the test host's
# own kernel lock up (soft lockup in kvm_arch_vcpu_ioctl_run, QEMU's vCPU
# thread, 2 of 2 tries on 2026-12-01), taking the other runs with it.
DEFAULT_CONFIGS = ["vmm", "vmm-elf", "qemu", "qemu-pvh"]
NAME = "boot"
HELP = "launch to /init per stage, ours and QEMU's"
COMMAND = True
STAGES = ("entry", "kernel", "init", "exit")
INIT_LINE = re.compile(r"^guest: init uptime=([0-9.]+)")
STARTUP_LINE = re.compile(r"startup: (.+) at ([0-9.]+) ms$")


def vmm_startup(stderr):
    """[(stage, ms)] from our VMM's -vv lines, in their order."""
    return [(m.group(1), float(m.group(2))) for m in
            (STARTUP_LINE.search(l) for l in stderr.splitlines()) if m]


def parse_config(spec):
    """A boot configuration (config.parse): NAME[:bin=PATH,name=L,jobs=K1+K2],
    NAME one of CONFIGS, jobs= the kernels it boots (qemu-microvm: small)."""
    return config.parse(spec, "boot", paths.KERNELS)


class FirstEntry:
    """The time of the first kvm:kvm_entry after arm(), from tracefs."""

    def __init__(self):
        self.dir = next((t for t in counters.TRACEFS_CANDIDATES
                         if os.path.exists(os.path.join(t, "events", "kvm", "kvm_entry"))), None)

    def _w(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(value)

    def arm(self):
        if not self.dir:
            return False
        self._w("events/kvm/kvm_entry/enable", "0")
        self._w("trace_clock", "mono")
        self._w("options/overwrite", "0")  # full buffer: drop the newest
        self._w("trace", "")
        self._w("tracing_on", "1")
        self._w("events/kvm/kvm_entry/enable", "1")
        return True

    def first(self):
        """Monotonic seconds of the first kvm_entry, or None; disarms."""
        if not self.dir:
            return None
        self._w("events/kvm/kvm_entry/enable", "0")
        t = None
        with open(os.path.join(self.dir, "trace")) as f:
            for line in f:
                m = re.search(r"\s(\d+\.\d+): kvm_entry:", line)
                if m:
                    t = float(m.group(1))
                    break
        self._w("options/overwrite", "1")
        self._w("trace_clock", "local")
        self._w("trace", "")
        return t


def argv_for(cfg, kernel, disk, args):
    image = paths.KERNELS[kernel][cfg["image"]]
    if not os.path.exists(image):
        raise FileNotFoundError("%s kernel %s: %s (make guest)" % (kernel, cfg["image"], image))
    cmdline = cmdlines.guest_cmdline(script="true", disk_serial="data")
    d = dict(disk, queues=args.queues)
    if cfg["kind"] == "vmm":
        # -vv: our set-up stages' times on stderr (vmm/run.c startup_mark)
        return cmdlines.vmm_argv(image, paths.INITRD, cmdline, args.mem, args.cpus, [d],
                                 cfg["opts"].get("bin", paths.VMM_BIN), verbose=False,
                                 extra=["-vv"])
    # No ACPI in the small kernel: QEMU then names the virtio-mmio disks
    # on the kernel's command line.
    machine = cfg["machine"] and cfg["machine"] + ",acpi=off"
    return cmdlines.qemu_argv(image, paths.INITRD, cmdline, args.mem, args.cpus, [d],
                              machine=machine)


def one_boot(cfg, kernel, disk, args, log_path):
    exits = counters.ExitReasons()
    entry = FirstEntry()
    amd = counters.cpu_is_amd()
    seen = {}

    def on_line(line, proc):
        if "init" not in seen:
            m = INIT_LINE.match(line)
            if m:
                seen["init"] = time.monotonic()
                seen["uptime"] = float(m.group(1))
                seen["exits_init"] = exits.read(None, amd)

    exits.start()
    entry.arm()
    argv = argv_for(cfg, kernel, disk, args)
    launch = time.monotonic()
    g = guestrun.GuestRun(argv, timeout=args.boot_timeout, on_line=on_line,
                          log_path=log_path).run()
    end = launch + g.seconds
    first_entry = entry.first()
    all_exits = exits.stop(None, amd)
    ok = g.outcome == "clean" and "init" in seen and guestrun.run_block(g.lines)[0] == 0
    rec = {"config": cfg["name"], "job": kernel, "outcome": g.outcome if ok or g.outcome != "clean"
           else "no-init", "rc": g.rc, "log": log_path}
    if ok:
        rec["stages"] = {
            "entry": first_entry - launch if first_entry and first_entry >= launch else None,
            "kernel": seen["init"] - launch - seen["uptime"],
            "first_line": g.stamps[0] if g.stamps else None,
            "init": seen["init"] - launch,
            "exit": end - launch,
        }
        rec["guest_uptime_at_init"] = seen["uptime"]
        rec["exits_to_init"] = seen["exits_init"]
        rec["exits"] = all_exits
        if cfg["kind"] == "vmm":
            rec["vmm_startup_ms"] = vmm_startup(g.stderr)
    return rec


def run_plan(args):
    counters.ensure_mounts()
    disk = plan.data_disk(args, "vmh-boot.img")
    cfgs = [parse_config(c) for c in args.config]
    done = {(r["round"], r["config"], r["job"]) for r in plan.load_runs(args.out)}
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    for rnd, pos, cfg, kernel in plan.rounds(cfgs, args.kernels, args.repeats, args.seed, done):
        log = os.path.join(args.out, "logs", "%s-%s-%d.log" % (cfg["name"], kernel, rnd))
        rec = {"round": rnd, "position": pos}
        rec.update(one_boot(cfg, kernel, disk, args, log))
        rec["time"] = time.time()
        plan.record(args.out, rec)
        st = rec.get("stages")
        print("vmbench boot: round %d %s %s: %s" % (
            rnd, cfg["name"], kernel, rec["outcome"] if not st else " ".join(
                "%s %s" % (k, "-" if st[k] is None else "%.3f" % st[k]) for k in STAGES)),
            flush=True)


def stage(r, s):
    """Stage S of run R, in seconds, or None; "kernel" is derived from
    /init's time and the kernel's uptime then for runs recorded before
    it was a stage of its own."""
    st = r.get("stages") or {}
    if s == "kernel" and st.get("kernel") is None and st.get("init") is not None:
        return st["init"] - r["guest_uptime_at_init"]
    return st.get(s)


def _fmt(xs):
    if not xs:
        return "-"
    if len(xs) == 1:
        return "%.3f" % xs[0]
    return "%.3f ± %.3f" % (statistics.mean(xs), statistics.stdev(xs))


def paired(runs, kernel, base_of, other, stage_name):
    """Geometric mean over rounds of other/base at STAGE, base_of(round)
    naming the baseline's runs; a 95% t interval on the log scale."""
    by = {}
    for r in runs:
        if r["job"] == kernel and stage(r, stage_name):
            by.setdefault(r["round"], {})[r["config"]] = stage(r, stage_name)
    return paired_log_ratio(by, base_of, other)


def _ratio_line(label, pr):
    if not pr:
        return "- %s: fewer than 2 paired rounds" % label
    n, r, lo, hi = pr
    verdict = "significant" if lo > 1 or hi < 1 else "not significant"
    return "- %s: %.2fx (95%% CI %.2f-%.2f, %d paired rounds, %s)" % (label, r, lo, hi, n, verdict)


def analyse(out_dir):
    runs = plan.load_runs(out_dir)
    configs, kernels = [], []
    for r in runs:
        configs += [r["config"]] if r["config"] not in configs else []
        kernels += [r["job"]] if r["job"] not in kernels else []
    out = ["# Launch to /init, per stage (seconds from launch; mean ± sd over clean boots)", ""]
    for k in kernels:
        out += ["## %s kernel" % k, "",
                "| configuration | boots (clean/all) | entry | kernel | /init | exit | kernel uptime at /init | exits to /init | exits in all |",
                "|---|---|---|---|---|---|---|---|---|"]
        means = {}
        for c in configs:
            rs = [r for r in runs if r["config"] == c and r["job"] == k]
            ok = [r for r in rs if r.get("stages")]
            cols = []
            for s in STAGES:
                xs = [stage(r, s) for r in ok if stage(r, s) is not None]
                cols.append(_fmt(xs))
                if xs:
                    means[(c, s)] = statistics.mean(xs)
            up = _fmt([r["guest_uptime_at_init"] for r in ok])
            ex_i = _fmt([sum(r["exits_to_init"].values()) for r in ok])
            ex_a = _fmt([sum(r["exits"].values()) for r in ok])
            out.append("| %s | %d/%d | %s | %s | %s | %s |" % (
                c, len(ok), len(rs), " | ".join(cols), up, ex_i.replace(".000", ""),
                ex_a.replace(".000", "")))
        out.append("")
        # Exits to /init by reason, mean per boot.
        reasons = sorted({x for r in runs if r["job"] == k and r.get("stages")
                          for x in r["exits_to_init"]})
        if reasons:
            out += ["Exits to /init by reason (mean per boot):", "",
                    "| configuration | " + " | ".join(reasons) + " |",
                    "|---|" + "---|" * len(reasons)]
            for c in configs:
                ok = [r for r in runs if r["config"] == c and r["job"] == k and r.get("stages")]
                if ok:
                    out.append("| %s | %s |" % (c, " | ".join(
                        "%.0f" % statistics.mean([r["exits_to_init"].get(x, 0) for r in ok])
                        for x in reasons)))
            out.append("")
        # Our VMM's own set-up stages (-vv), mean ms since `vmm run` began.
        for c in configs:
            ok = [r for r in runs if r["config"] == c and r["job"] == k and r.get("vmm_startup_ms")]
            if ok:
                stages = [s for s, _ in ok[0]["vmm_startup_ms"]]
                out.append("%s set-up, mean ms since `vmm run` began (%d boots): %s" % (
                    c, len(ok), ", ".join("%s %.1f" % (s, statistics.mean(
                        [dict(r["vmm_startup_ms"]).get(s, 0) for r in ok])) for s in stages)))
        out.append("")
        # Ours against QEMU's best on the same file.
        for ours, peers in (("vmm-elf", ("qemu-pvh", "qemu-microvm")), ("vmm", ("qemu",))):
            peers = [p for p in peers if (p, "init") in means]
            if (ours, "init") not in means or not peers:
                continue
            best = min(peers, key=lambda p: means[(p, "init")])
            for s in ("init", "exit"):
                out.append(_ratio_line("%s / %s (QEMU's best on this file), launch to %s"
                                       % (ours, best, s), paired(runs, k, best, ours, s)))
        out.append("")
    if "stock" in kernels and "small" in kernels:
        for c in configs:
            by = {}
            for r in runs:
                if r["config"] == c and r.get("stages"):
                    by.setdefault(r["round"], {})[r["job"]] = r["stages"]["init"]
            pr = paired_log_ratio(by, "stock", "small")
            if pr:
                out.append(_ratio_line("%s: small / stock kernel, launch to /init" % c, pr))
        out.append("")
    text = "\n".join(out)
    with open(os.path.join(out_dir, "boot.md"), "w") as f:
        f.write(text)
    return text


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    scenario.guest_options(p, queues=1, disk_mb=64)
    p.add_argument("-r", "--repeats", type=int, default=5)
    p.add_argument("--kernels", default="stock,small",
                   help="comma-separated, of %s" % ", ".join(paths.KERNELS))


def check(args):
    args.kernels = args.kernels.split(",")
    for k in args.kernels:
        if k not in paths.KERNELS:
            raise ConfigError("--kernels: no kernel %r (%s)" % (k, ", ".join(paths.KERNELS)))
    scenario.check_guest_options(args, NAME, DEFAULT_CONFIGS, parse=parse_config)


def run(args):
    return scenario.run_here_or_in_testhost(args, run_plan, analyse)


def is_result(out):
    kind = scenario.recorded_kind(out)
    return kind == NAME or (kind is None and results.exists(os.path.join(out, "boot.md")))


def sections(entries):
    """The newest boot directory: analyse's stage titles and its launch
    to init and to exit lines."""
    entry = pages.newest(entries, NAME)
    lines = []
    if entry:
        # analyse writes boot.md beside the runs: a packed directory's
        # unpacked copy takes it.
        for line in analyse(results.real(entry["dir"])).splitlines():
            if line.startswith("## "):
                lines.append("%s:" % line[3:].capitalize())
            elif re.match(r"- .*launch to (init|exit):", line):
                lines.append(line)
        lines.append("")
        lines += pages.data_line(entry)
    return [("boot", "Boot: launch to /init", lines)]
