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
import statistics
import subprocess
import time

from . import (cmdlines, config, counters, fiojson, guestrun, kernels, paths, plan, profile_page,
               results, scenario)
from .profile_tables import analyse
from .scenario import ConfigError

NAME = "profile"
HELP = "per-request counters, ours vs QEMU and kvmtool"
COMMAND = True

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
KVMTOOL_BIN = paths.KVMTOOL_BIN
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


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    scenario.guest_options(
        p, config_help="; or kvmtool[:name=L,bin=PATH,jobs=A+B,append=W1+W2]: "
        "kvmtool (kernel=PATH too; build/peers/x86/lkvm-static, which bench/peers-x86.sh "
        "builds when it is missing) with the same bzImage, initrd, "
        "vCPUs, memory, command line and data disk file, one queue "
        "(kvmtool's virtio-blk has no more), the disk as the guest's "
        "/dev/vda")
    p.add_argument("-j", "--job", action="append", choices=sorted(JOBS))
    p.add_argument("-r", "--repeats", type=int, default=3)
    p.add_argument("--tries", type=int, default=2)


def check(args):
    scenario.check_guest_options(args, NAME, ["qemu", "vmm"], ["seed-randread"], parse_config)
    if not args.inner:
        try:  # a bad name stops here, and kvmtool is built, not in the test host
            prepare(args.config)
        except ValueError as e:
            raise ConfigError(str(e))


def run(args):
    return scenario.run_here_or_in_testhost(args, run_plan, analyse)


def is_result(out):
    """A profile's meta.json, or runs.jsonl alone (the first profiles
    had no meta.json)."""
    kind = scenario.recorded_kind(out)
    return kind == NAME or (kind is None and results.exists(os.path.join(out, "runs.jsonl"))
                            and not results.exists(os.path.join(out, "plan.json")))


def sections(entries):
    return profile_page.sections(entries, tuple(JOBS))
