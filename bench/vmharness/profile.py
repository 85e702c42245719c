"""Where the time goes, per request, for our VMM, QEMU and kvmtool side
by side (issue 8, deliverable 1).

Every configuration runs every job R times, in an order shuffled anew in
each repeat (seeded, recorded), all in one boot of the test host (or here
on a hardware KVM).  Around fio's run in the guest (PHASE markers) the
harness takes the counters of counters.Snapshot; afterwards each figure is
divided by the I/Os fio did.  The result is one JSON line per run in
OUT/runs.jsonl and a markdown table per job in OUT/table.md.
"""
import json
import os
import re
import shlex
import statistics
import subprocess
import time

from . import cmdlines, config, counters, fiojson, guestrun, kernels, paths, plan
from .stats import paired_log_ratio

SEED = ["--bs=512", "--ioengine=libaio", "--iodepth=64", "--numjobs=32",
        "--direct=1", "--thread", "--group_reporting", "--norandommap",
        "--time_based", "--runtime=8"]

# Seed 004's own job (guest/jobs/seed-virtio-blk.fio as the e2e suite
# runs it): 256 jobs of 256 KiB each, capped at 10 s, per phase.
SEED256 = ["--bs=512", "--ioengine=libaio", "--iodepth=64", "--numjobs=256",
           "--direct=1", "--thread", "--group_reporting", "--norandommap",
           "--ioscheduler=none", "--size=256k", "--loops=1", "--runtime=10"]

# The jobs, as fio arguments (the guest runs fio 3.33, built static).
JOBS = {
    "seed256-seqread": ["--name=seed256-seqread", "--rw=read"] + SEED256,
    "seed256-seqwrite": ["--name=seed256-seqwrite", "--rw=write"] + SEED256,
    "seed256-randread": ["--name=seed256-randread", "--rw=randread"] + SEED256,
    "seed256-randwrite": ["--name=seed256-randwrite", "--rw=randwrite"] + SEED256,
    # The four phases of seed 004's job (guest/jobs/seed-virtio-blk.fio),
    # each time-based for 8 s with 32 jobs instead of 256 x 4 MiB.
    "seed-seqread": ["--name=seed-seqread", "--rw=read"] + SEED,
    "seed-seqwrite": ["--name=seed-seqwrite", "--rw=write"] + SEED,
    # guest/jobs/seq-read.fio and seq-write.fio.
    "seq-read": ["--name=seq-read", "--rw=read", "--bs=128k",
                 "--ioengine=io_uring", "--iodepth=32", "--direct=1",
                 "--group_reporting", "--time_based", "--runtime=5"],
    "seq-write": ["--name=seq-write", "--rw=write", "--bs=128k",
                  "--ioengine=io_uring", "--iodepth=32", "--direct=1",
                  "--group_reporting", "--time_based", "--runtime=5"],
    # The seeds' kind of job (seed 004, reduced as guest/jobs says):
    # 512-byte random reads, 32 jobs at depth 64 through libaio.
    "seed-randread": ["--name=seed-randread", "--rw=randread", "--bs=512",
                      "--ioengine=libaio", "--iodepth=64", "--numjobs=32",
                      "--direct=1", "--thread", "--group_reporting",
                      "--norandommap", "--time_based", "--runtime=8"],
    "seed-randwrite": ["--name=seed-randwrite", "--rw=randwrite", "--bs=512",
                       "--ioengine=libaio", "--iodepth=64", "--numjobs=32",
                       "--direct=1", "--thread", "--group_reporting",
                       "--norandommap", "--time_based", "--runtime=8"],
    "randread-4k": ["--name=randread-4k", "--rw=randread", "--bs=4k",
                    "--ioengine=io_uring", "--iodepth=32", "--direct=1",
                    "--group_reporting", "--norandommap", "--randrepeat=0",
                    "--time_based", "--runtime=5"],
    "randwrite-4k": ["--name=randwrite-4k", "--rw=randwrite", "--bs=4k",
                     "--ioengine=io_uring", "--iodepth=32", "--direct=1",
                     "--group_reporting", "--norandommap", "--randrepeat=0",
                     "--time_based", "--runtime=5"],
}


# kvmtool for x86 (bench/peers-x86.sh builds it, static, from the shared
# peers tarball; no kvmtool code in this repository).
KVMTOOL_BIN = os.path.join(paths.BUILD, "peers", "x86", "lkvm-static")
PEERS_X86 = os.path.join(paths.REPO, "bench", "peers-x86.sh")
# kernel= in a configuration: these two name --kernel's files; anything
# else is the path of a guest kernel of one's own (kernels.py).
KERNEL_KINDS = config.KERNEL_KINDS


# QEMU's options (config.SCENARIOS["profile"]): release=10: QEMU 10.0 from
# Debian's backports (tests/testhost/emulator.sh unpacks it under
# build/testhost/qemu), with vqmap=on (iothread-vq-mapping: one IOThread
# per virtqueue) unless told; bin=PATH: another QEMU; iothread=off: none;
# aio=: QEMU's drive aio=.
QEMU_RELEASES = config.QEMU_RELEASES
EMULATOR_SH = os.path.join(paths.REPO, "tests", "testhost", "emulator.sh")
# host: the test host's own fio on the data disk, the job as the guests
# run it (the physical limit); it takes only a name and jobs.
HOST_FIO = paths.HOST_FIO


def parse_config(spec):
    """A profile configuration (config.parse): vmm[:k=v,...], qemu[:k=v,...],
    host[:name=L,jobs=A+B], and kvmtool[:name=L,bin=PATH,jobs=A+B,append=W1+W2]:
    kvmtool (lkvm run) with the same kernel (its bzImage: kvmtool loads
    no ELF), initrd, vCPUs, memory, command line and data disk file."""
    return config.parse(spec, "profile", JOBS)


def prepare(configs):
    """Before the test host (whose view of the checkout is read-only):
    every configuration parses, and kvmtool is built where one needs the
    default binary.  Raises ValueError with what is wrong."""
    cfgs = [parse_config(c) for c in configs]
    if any(c["kind"] == "kvmtool" and "bin" not in c["opts"] for c in cfgs):
        r = subprocess.run([PEERS_X86], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0 or not os.access(KVMTOOL_BIN, os.X_OK):
            raise ValueError("kvmtool: %s failed (status %d)" % (PEERS_X86, r.returncode))
    if any(c["opts"].get("bin") in QEMU_RELEASES.values() for c in cfgs if c["kind"] == "qemu"):
        r = subprocess.run([EMULATOR_SH], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise ValueError("qemu:release=10: %s could not fetch Debian's backported "
                             "qemu-system-x86 (status %d)" % (EMULATOR_SH, r.returncode))
    if any(c["kind"] == "host" for c in cfgs) and not os.access(HOST_FIO, os.X_OK):
        raise ValueError("host: no fio at %s (VMBENCH_HOST_FIO)" % HOST_FIO)
    for c in cfgs:
        b = c["opts"].get("bin")
        if c["kind"] == "qemu" and b and not os.access(b, os.X_OK):
            raise ValueError("qemu: bin=%s is not an executable file" % b)
        if c["kind"] == "kvmtool" and b and not os.access(b, os.X_OK):
            raise ValueError("kvmtool: bin=%s is not an executable file" % b)
        k = own_kernel(c)
        if k:
            fmt, _ = kernels.describe(k)  # KernelError is a ValueError
            if c["kind"] == "kvmtool" and fmt != "bzImage":
                raise ValueError("%s: kernel=%s is a %s; kvmtool loads no ELF, only a "
                                 "bzImage" % (c["name"], k, fmt))
    return cfgs


def own_kernel(cfg):
    """A configuration's kernel of one's own (kernel=PATH), or None."""
    k = cfg["opts"].get("kernel")
    return None if k in (None,) + KERNEL_KINDS else k


def kernel_of_run(cfg, out):
    """"RELEASE SHA256" of CFG's own kernel for this run's record, or
    None.  A kernel file that differs from the one the configuration's
    earlier runs in OUT booted stops the plan (KernelError)."""
    k = own_kernel(cfg)
    if not k:
        return None
    now = "%s %s" % (kernels.describe(k)[1], kernels.sha256(k))
    before = {r["kernel"] for r in plan.load_runs(out)
              if r["config"] == cfg["name"] and r.get("kernel")}
    if before and now not in before:
        raise kernels.KernelError("%s: kernel %s changed since the plan's first run "
                                  "(%s, now %s): refused" % (
                                      cfg["name"], k, " ".join(before), now))
    return now


# kvmtool gives the data disk no serial of ours: in its guest the one
# virtio disk is the first, /dev/vda (cmdlines.kvmtool_argv), and the
# guest script says so before fio_script's.
KVMTOOL_SCRIPT_HEAD = "FIO_DISK=/dev/vda\n"


def guest_argv(cfg, cmdline, disk, args):
    """The command line of one guest under CFG.  The configuration's
    append= words go on the guest kernel's command line, kernel=
    (bzimage or vmlinux, ours only) overrides --kernel, and backend=ram
    (ours only) makes the data disk a RAM disk of the file's size."""
    cmdline = " ".join(w for w in (cmdline, plan.guest_extra(cfg)) if w)
    kind = cfg["opts"].get("kernel", args.kernel)
    kernel = own_kernel(cfg) or (paths.BZIMAGE if kind == "bzimage" else paths.VMLINUX)
    bzimage = own_kernel(cfg) or paths.BZIMAGE  # QEMU's and kvmtool's
    d = dict(disk)
    d["queues"] = int(cfg["opts"].get("queues", args.queues))
    if cfg["kind"] == "vmm":
        if cfg["opts"].get("backend") == "ram":  # our RAM disk, the file's size
            d.update(path="ram:%dM" % args.disk_mb, direct=False)
        d["opts"] = ["%s=%s" % (k, v) for k, v in cfg["opts"].items()
                     if k in config.VMM_DISK]
        pin = cfg["opts"].get("pin")
        extra = ["--pin", pin] if pin else []
        if cfg["opts"].get("api") == "poll":
            extra += ["--api", api_socket()]
        return cmdlines.vmm_argv(kernel, paths.INITRD, cmdline, args.mem,
                                 args.cpus, [d], cfg["opts"].get("bin", paths.VMM_BIN),
                                 extra=extra)
    if cfg["kind"] == "kvmtool":
        d["queues"] = 1
        return cmdlines.kvmtool_argv(bzimage, paths.INITRD, cmdline, args.mem,
                                     args.cpus, [d], cfg["opts"].get("bin", KVMTOOL_BIN))
    d["iothread"] = cfg["opts"].get("iothread", "on") == "on"
    d["vqmap"] = cfg["opts"].get("vqmap") == "on"
    if "aio" in cfg["opts"]:
        d["aio"] = cfg["opts"]["aio"]
    return cmdlines.qemu_argv(bzimage, paths.INITRD, cmdline, args.mem,
                              args.cpus, [d], qemu_bin=cfg["opts"].get("bin", "qemu-system-x86_64"))


def api_socket():
    """vmm:api=poll: the control socket of this process's guest (short:
    a UNIX socket's path has at most 107 bytes)."""
    return "/tmp/vmbench-api.%d.sock" % os.getpid()


class ApiPoller:
    """vmm:api=poll: `vmm ctl SOCK stats --every 1s` through the measured
    phase, as someone watching the device would; lines: what it printed."""

    def __init__(self, vmm_bin, log_path):
        self.argv = [vmm_bin, "ctl", api_socket(), "stats", "--every", "1s"]
        self.log_path = log_path
        self.proc = None

    def start(self):
        self.out = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.argv, stdout=self.out, stderr=subprocess.STDOUT)

    def stop(self):
        if not self.proc:
            return 0
        self.proc.terminate()
        self.proc.wait()
        self.out.close()
        with open(self.log_path) as f:
            return sum(1 for l in f if " reads/s " in l)


def device_latency(stats_path):
    """Our VMM's --stats: per stage, the mean over queues of p50 and p99
    (us), for the data disk."""
    try:
        with open(stats_path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    out = {}
    queues = [q for q in doc["disks"][0]["queues"] if q["submit_to_complete"]["count"]]
    for stage in ("pop_to_submit", "submit_to_complete", "complete_to_publish"):
        for p in ("p50", "p99"):
            vals = [q[stage][p] / 1e3 for q in queues]
            if vals:
                out["%s_%s" % (stage, p)] = statistics.mean(vals)
    return out


def pin_qemu_threads(pid):
    """qemu:pin=on, as close to our --pin on as QEMU allows: vCPU i
    ("CPU i/KVM", -name debug-threads=on) on the i-th CPU QEMU may use,
    its iothreads ("IO ...", one for the disk's queues) beside vCPU 0;
    the other threads are left alone.  {thread name: CPU} of those bound."""
    allowed = sorted(os.sched_getaffinity(pid))
    placed = {}
    for tid, t in counters.threads(pid).items():
        if t["kind"] == "vcpu":
            cpu = allowed[int(re.search(r"\d+", t["comm"]).group()) % len(allowed)]
        elif t["kind"] == "iothread":
            cpu = allowed[0]
        else:
            continue
        os.sched_setaffinity(tid, {cpu})
        placed[t["comm"]] = cpu
    return placed


def host_run(cfg, job, disk, log_path):
    """The test host's own fio on the data disk, JOBS[job] as a guest
    runs it: the physical limit beside the VMMs' guests."""
    argv = [HOST_FIO, "--eta=never", "--output-format=json",
            "--filename=" + disk["path"]] + JOBS[job]
    if not disk.get("direct"):  # a file on tmpfs: no O_DIRECT there
        argv = [a for a in argv if a != "--direct=1"]
    t0 = time.time()
    with open(log_path, "w") as log:
        log.write(" ".join(argv) + "\n")
        log.flush()
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=log, text=True)
    rec = {"config": cfg["name"], "job": job, "rc": p.returncode, "log": log_path,
           "seconds": round(time.time() - t0, 1)}
    try:
        doc = json.loads(p.stdout[p.stdout.index("{"):])
    except ValueError:
        doc = None
    rec["outcome"] = "clean" if p.returncode == 0 and doc else "no-result"
    if rec["outcome"] == "clean":
        rec["fio"] = fiojson.summary(doc)
    return rec


def one_run(cfg, job, disk, args, log_path):
    if cfg["kind"] == "host":
        return host_run(cfg, job, disk, log_path)
    script = guestrun.fio_script(job, JOBS[job])
    if cfg["kind"] == "kvmtool":
        script = KVMTOOL_SCRIPT_HEAD + script
        cmdline = cmdlines.guest_cmdline(script=script)
    else:
        cmdline = cmdlines.guest_cmdline(script=script, disk_serial="data")
    snap = {}
    stats_path = log_path + ".stats.json"
    argv = guest_argv(cfg, cmdline, disk, args)
    if cfg["kind"] == "vmm":
        argv += ["--stats", stats_path]

    poller = None
    if cfg["kind"] == "vmm" and cfg["opts"].get("api") == "poll":
        poller = ApiPoller(cfg["opts"].get("bin", paths.VMM_BIN), log_path + ".api.log")

    def on_phase(name, edge, proc):
        if edge == "begin":
            if poller:
                poller.start()
            if cfg["kind"] == "qemu" and cfg["opts"].get("pin") == "on":
                snap["pinned"] = pin_qemu_threads(proc.pid)
            snap["s"] = counters.Snapshot(proc.pid)
            snap["s"].begin()
        elif "s" in snap:
            snap["d"] = snap["s"].end()
            if poller:
                snap["api_lines"] = poller.stop()

    g = guestrun.GuestRun(argv,
                          timeout=args.boot_timeout, on_phase=on_phase,
                          log_path=log_path).run()
    res = fiojson.extract(g.lines).get(job)
    outcome = g.outcome
    if outcome == "clean" and not (res and res[1]):
        # as in deaths: QEMU ends with status 0 and says nothing when its
        # guest resets (-no-reboot), a triple fault among them
        outcome = "no-result"
    rec = {"config": cfg["name"], "job": job, "outcome": outcome,
           "rc": g.rc, "seconds": round(g.seconds, 1), "log": log_path}
    if "pinned" in snap:
        rec["pinned"] = snap["pinned"]
    if poller:
        rec["api_lines"] = snap["api_lines"] if "api_lines" in snap else poller.stop()
    if res and res[1] and "d" in snap:
        rec["fio"] = fiojson.summary(res[1])
        rec["counters"] = snap["d"]
        if cfg["kind"] == "vmm":
            rec["device_latency_us"] = device_latency(stats_path)
        irqs = guestrun.guest_irqs(g.lines, job)
        if irqs is not None:
            rec["guest_irqs"] = irqs
    return rec


def run_plan(args):
    """The inner part: where KVM is fast."""
    counters.ensure_mounts()
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    disk = plan.data_disk(args, "vmh-disk.img")
    cfgs = [parse_config(c) for c in args.config]
    done = {(r["repeat"], r["config"], r["job"])
            for r in plan.load_runs(args.out) if "fio" in r}
    for rep, i, cfg, job in plan.rounds(cfgs, args.job, args.repeats,
                                        args.seed, done):
        for attempt in range(1, args.tries + 1):
            log = os.path.join(args.out, "logs", "r%d-%s-%s-try%d.log" % (
                rep, cfg["name"].replace("/", "_"), job, attempt))
            try:
                own = kernel_of_run(cfg, args.out)
            except kernels.KernelError as e:
                print("vmbench: refused: %s" % e, flush=True)
                raise SystemExit(2)
            rec = one_run(cfg, job, disk, args, log)
            rec.update({"repeat": rep, "position": i, "try": attempt,
                        "seed": args.seed, "time": time.time()})
            if own:
                rec["kernel"] = own
            plan.record(args.out, rec)
            print("vmbench: r%d %-16s %-14s %s %s" % (
                rep, cfg["name"], job, rec["outcome"],
                "%.0f IOPS" % rec["fio"]["iops"] if "fio" in rec else "no result"),
                flush=True)
            if "fio" in rec:
                break


# ---- analysis -----------------------------------------------------------

def per_request(rec):
    """One run's figures divided by its I/Os."""
    ios = rec["fio"]["ios"] or 1
    if "counters" not in rec:  # the test host's own fio: no VMM to count
        return {"iops": rec["fio"]["iops"], "lat_mean_us": rec["fio"]["lat_mean_us"]}
    c = rec["counters"]
    k = c["kvm"]
    out = {"iops": rec["fio"]["iops"], "lat_mean_us": rec["fio"]["lat_mean_us"],
           "exits": k.get("exits", 0) / ios,
           "irq_injections": k.get("irq_injections", 0) / ios,
           "halt_exits": k.get("halt_exits", 0) / ios,
           "io_exits(userspace)": k.get("io_exits", 0) / ios,
           "mmio_exits(userspace)": k.get("mmio_exits", 0) / ios,
           "host_busy": c.get("host_busy") or 0}
    for reason, n in c["exit_reasons"].items():
        out["exit:" + reason] = n / ios
    for stage, v in (rec.get("device_latency_us") or {}).items():
        out["device_us:" + stage] = v
    # The guest's own count, all CPUs: which interrupts it took (timer,
    # IPIs, each queue's vector), where the host's counters say how many.
    for name, per_cpu in (rec.get("guest_irqs") or {}).items():
        out["guest_irq:" + name] = sum(per_cpu) / ios
    # The VMM process's CPU split: its vCPUs' time in the guest (the
    # guest's own work, whoever hosts it) and the rest, the VMM's own
    # cost (vCPU exits handled in KVM and in user space, iothreads, the
    # kernel's io_uring and io-wq work on its behalf).
    run = sum(t["run_ns"] for t in c["threads"].values())
    guest = sum(t.get("guest_ns", 0) for t in c["threads"].values())
    if any("guest_ns" in t for t in c["threads"].values()):
        out["cpu_us:guest"] = guest / 1e3 / ios
        out["cpu_us:vmm_own"] = (run - guest) / 1e3 / ios
    for kind, t in c["threads"].items():
        out["cpu_us:" + kind] = t["run_ns"] / 1e3 / ios
        out["wait_us:" + kind] = t["wait_ns"] / 1e3 / ios
        out["vcsw:" + kind] = t["vcsw"] / ios
        out["ivcsw:" + kind] = t["ivcsw"] / ios
    return out


def table(runs, configs, job):
    """Markdown: one row per figure, one column per configuration (mean
    over its runs, with the run count), QEMU-relative where it applies."""
    configs = [c for c in configs if any(r["config"] == c and r["job"] == job for r in runs)]
    per = {c: [per_request(r) for r in runs
               if r["config"] == c and r["job"] == job and "fio" in r]
           for c in configs}
    keys = []
    for rows in per.values():
        for row in rows:
            for k in row:
                if k not in keys:
                    keys.append(k)
    order = ["iops", "lat_mean_us", "exits", "irq_injections", "halt_exits",
             "io_exits(userspace)", "mmio_exits(userspace)", "host_busy"]
    keys = [k for k in order if k in keys] + sorted(k for k in keys if k not in order)
    lines = ["| per request (%s) | %s |" % (job, " | ".join(
        "%s (n=%d)" % (c, len(per[c])) for c in configs)),
        "|---|" + "---:|" * len(configs)]
    for k in keys:
        cells = []
        for c in configs:
            if k.startswith("guest_irq:"):
                # The guest lists only the rows that moved: absent is 0.
                vals = [row.get(k, 0.0) for row in per[c]
                        if any(x.startswith("guest_irq:") for x in row)]
            else:
                vals = [row[k] for row in per[c] if k in row]
            if not vals and k.split(":")[0] in ("device_us",):
                cells.append("n/a")
                continue
            vals = vals or [0.0] * len(per[c])
            if not vals:
                cells.append("-")
                continue
            m = statistics.mean(vals)
            fmt = "%.0f" if k == "iops" else ("%.1f" if "_us" in k else "%.3f")
            cells.append(fmt % m)
        lines.append("| %s | %s |" % (k, " | ".join(cells)))
    return "\n".join(lines)


def paired_ratio(runs, job, base, other, key="iops"):
    """The runs are paired by repeat (both ran in the same repeat of
    the same test-host boot): the geometric mean of other/base over the
    repeats where both have a result, with a t interval on the log scale
    (which cannot leave (0, inf)).  None if fewer than 2 pairs."""
    by = {}
    for r in runs:
        if r["job"] == job and "fio" in r and r["config"] in (base, other):
            by.setdefault(r["repeat"], {})[r["config"]] = r["fio"][key]
    pr = paired_log_ratio(by, base, other)
    if not pr:
        return None
    return dict(zip(("n", "ratio", "lo", "hi"), pr))


def ratio_lines(runs, configs, job):
    """Each of our configurations against every baseline that ran the
    job: vmm-X against qemu-X where there is one (else every QEMU), against
    kvmtool-X (else kvmtool), and against the test host's own fio; and
    kvmtool against QEMU."""
    out = []
    ran = [c for c in configs if any(r["config"] == c and r["job"] == job for r in runs)]
    qemus = [b for b in ran if b.startswith("qemu")]
    for c in ran:
        if c.startswith("kvmtool"):  # the two peers, QEMU the base
            out += [_ratio_line(runs, job, b, c) for b in qemus]
        if not c.startswith("vmm"):
            continue
        bases = ["qemu" + c[3:]] if c[3:] and "qemu" + c[3:] in qemus else list(qemus)
        kt = "kvmtool" + c[3:] if "kvmtool" + c[3:] in ran else "kvmtool"
        bases += [kt] if kt in ran else []
        bases += [b for b in ran if b.startswith("host")]
        for b in bases:
            out.append(_ratio_line(runs, job, b, c))
    return out


def _ratio_line(runs, job, base, c):
    pr = paired_ratio(runs, job, base, c)
    if not pr:
        return "%s / %s IOPS: fewer than 2 paired repeats" % (c, base)
    verdict = ("significantly higher" if pr["lo"] > 1 else
               "significantly lower" if pr["hi"] < 1 else "not significant")
    return "%s / %s IOPS: %.2fx (95%% CI %.2f-%.2f, %d paired repeats, %s)" % (
        c, base, pr["ratio"], pr["lo"], pr["hi"], pr["n"], verdict)


def planned_configs(out_dir):
    """The configurations' names in the order of the command's -c options
    (meta.json), the first the baseline; [] if it does not say."""
    try:
        with open(os.path.join(out_dir, "meta.json")) as f:
            words = shlex.split(json.load(f).get("command", ""))
    except (OSError, ValueError):
        return []
    out = []
    for i, w in enumerate(words[:-1]):
        if w in ("-c", "--config"):
            spec = words[i + 1]  # vmm, qemu or kvmtool[:k=v,...,name=N]
            opts = dict(kv.split("=", 1) for kv in spec.partition(":")[2].split(",")
                        if "=" in kv)
            out.append(opts.get("name", spec))
    return out


def analyse(out_dir):
    runs = plan.load_runs(out_dir)
    configs, jobs = [], []
    # The command's order (the first -c is the baseline), then any other.
    for c in planned_configs(out_dir) + [r["config"] for r in runs]:
        if c not in configs and any(r["config"] == c for r in runs):
            configs.append(c)
    for r in runs:
        if r["job"] not in jobs:
            jobs.append(r["job"])
    parts = []
    base = [c for p in ("host", "qemu", "kvmtool") for c in configs if c.startswith(p)]
    configs = base + [c for c in configs if c not in base]  # baselines first
    for job in jobs:
        parts.append(table(runs, configs, job))
        parts.append("\n".join(ratio_lines(runs, configs, job)))
        bad = [r for r in runs if r["job"] == job and "fio" not in r]
        if bad:
            parts.append("runs without a result: " + ", ".join(
                "%s r%d try%d (%s)" % (r["config"], r["repeat"], r["try"], r["outcome"]) for r in bad))
    text = "\n\n".join(parts) + "\n"
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(text)
    return text
