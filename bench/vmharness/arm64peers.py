"""Our arm64 VMM beside kvmtool (and QEMU) in one arm64 test-host boot
(issue 38, item 6): `bench/vmbench arm64-peers`.

The runs themselves are bench/arm64/peers.sh, a busybox sh script inside
the arm64 test host (no Python there).  This module writes its plan
(OUT/plan.txt: per repeat, the configurations in an order shuffled with
the recorded seed, and each guest's jobs shuffled too), boots the test
host (testhost.run_with_reboots, arch="arm64"; a second boot goes on
where the first stopped) and analyses what the script leaves:
OUT/runs.jsonl (one line per configuration, repeat and job) and
OUT/fio/*.json.

Configurations (peers.sh says how each is started):
  vmm-ram       ours, the data disk our RAM disk (ram:1G)
  vmm-file      ours, the data disk a 1 GiB file on the test host's tmpfs
  kvmtool-file  kvmtool, the same file (kvmtool has no RAM disk)
  qemu-file     QEMU 7.2 (Debian's arm64 build, unpacked with its
                libraries by bench/arm64/qemu-sysroot.sh), the same file,
                an iothread, aio=io_uring, cache=writeback
  vmm-nullb, kvmtool-nullb, qemu-nullb
                the same on a block device: a memory-backed null_blk of
                the data disk's size in the test host (512-byte blocks,
                10 us completions: the x86 comparison's device), opened
                with O_DIRECT by every VMM (QEMU: cache=none)
  vmm-nullb-poll0  ours on that null_blk with poll=0 (no polling)
  qemu10-nullb  QEMU 10.0 (Debian 12's backports: `bench/arm64/qemu-sysroot.sh
                10`) on that null_blk, one IOThread per queue
                (iothread-vq-mapping), cache=none, aio=io_uring
  host-nullb    no VM: the test host's own fio on that null_blk, the same
                jobs (the guest image's fio, run in the test host through
                chroot): the physical limit
The like-for-like pairs are the *-file ones (the same backing file, page
cache, no O_DIRECT: tmpfs has none in 6.1) and the *-nullb ones (the same
block device, O_DIRECT); vmm-ram against a *-file peer compares our RAM
disk with the peer's nearest equivalent.

Analysis: per job and fio phase, each configuration's IOPS and mean
completion latency (mean, sd, 95% interval on the log scale), and for
each comparison the per-repeat ratios' geometric mean with its 95% t
interval on the log scale and the paired t-test (stats.paired_ratio);
per request (over the whole job): the guest's interrupts on the data
disk's vectors (/proc/interrupts deltas) and this test host's KVM exits
(debugfs counters, read at the guest's PHASE markers) and the VMM
process's CPU, split into the vCPUs' time in guest mode and the VMM's own
(its threads' schedstat and guest_time, read at the same markers).  Issue 38's
target, at least 1.5x kvmtool's IOPS and at least QEMU's on every job,
and issue 47's, at least 0.8x the test host's own fio on the block
device, are checked against each like-for-like ratio and its interval.
"""
import json
import os
import random
import sys
import time

from . import arm64peers_page, nullblk, paths, results, scenario, testhost
from .arm64peers_analysis import CONFIGS, JOBS, all_done, analyse
from .scenario import ConfigError

NAME = "arm64-peers"
HELP = "ours beside kvmtool (and QEMU) in the arm64 test host"
COMMAND = True

RUNNER = os.path.join("bench", "arm64", "peers.sh")
BOOTS = 3
# The null_blk configurations' device: the x86 comparison's defaults.
NULLB = {"bs": nullblk.DEFAULTS["bs"], "completion_ns": nullblk.DEFAULTS["completion_ns"]}
# The stall limit of a test-host boot: bench/arm64/peers.sh writes
# OUT/heartbeat as each guest boot starts and bounds each boot below this
# (its RUN_TIMEOUT and QEMU_TIMEOUT), so only a test host that locked up
# stays silent this long.
STALL_S = 900

# ---- the plan -----------------------------------------------------------------

def make_plan(configs, jobs, repeats, seed, checks=()):
    """[(repeat, pos, config, [jobs])]: in each repeat every configuration
    once, in an order shuffled with SEED (so is each guest's job order);
    pos counts the guest boots from 1.  CHECKS [(config, [jobs])] come
    first, as repeat 0: one boot each, outside the paired design (does a
    configuration run here at all)."""
    rng = random.Random(seed)
    plan = [(0, -i, c, list(js)) for i, (c, js) in enumerate(checks)]
    pos = 0
    for rep in range(1, repeats + 1):
        order = list(configs)
        rng.shuffle(order)
        for c in order:
            js = list(jobs)
            rng.shuffle(js)
            pos += 1
            plan.append((rep, pos, c, js))
    return plan


def plan_text(plan, seed, seed_runtime, disk_mb):
    """OUT/plan.txt as peers.sh reads it."""
    lines = ["# bench/vmbench arm64-peers plan, seed %d" % seed,
             "runtime %d" % seed_runtime, "disk_mb %d" % disk_mb]
    if any(c.endswith("-nullb") for _, _, c, _ in plan):
        lines.append("nullb %d %d" % (NULLB["bs"], NULLB["completion_ns"]))
    lines += ["%d %d %s %s" % (rep, pos, c, ",".join(js)) for rep, pos, c, js in plan]
    return "\n".join(lines) + "\n"


def binaries_sha256():
    """{path: sha256} of the programs the runs use (our arm64 VMM and
    kvmtool), so that a figure names the builds it measured."""
    import hashlib
    out = {}
    for rel in ("build/arm64/vmm", "build/peers/arm64/lkvm-static"):
        try:
            with open(os.path.join(paths.REPO, rel), "rb") as f:
                out[rel] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            out[rel] = None
    return out


# ---- running it ---------------------------------------------------------------------

def run(args):
    """bench/vmbench arm64-peers: the plan, the test-host boot(s), the analysis."""
    t0 = time.time()
    out = args.out
    os.makedirs(out, exist_ok=True)
    if not os.path.exists(os.path.join(out, "plan.txt")):
        plan = make_plan(args.config, args.job, args.repeats, args.seed,
                         [(c.split(":")[0], c.split(":")[1].split("+")) for c in args.check or ()])
        with open(os.path.join(out, "plan.txt"), "w") as f:
            f.write(plan_text(plan, args.seed, args.seed_runtime, args.disk_mb))
    meta = {"command": " ".join(["bench/vmbench"] + args.argv), "seed": args.seed,
            "repeats": args.repeats, "configs": args.config, "jobs": args.job,
            "seed_runtime": args.seed_runtime, "disk_mb": args.disk_mb,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": "%d-core %s host; arm64 test host: QEMU TCG aarch64, nested KVM" % (
                os.cpu_count(), os.uname().machine),
            "load_before": os.getloadavg(),
            "sha256": binaries_sha256()}
    # A boot that ends with runs left (the test host died) is booted
    # again; peers.sh skips the runs already recorded.
    rc, used = testhost.run_with_reboots(lambda: ["sh", RUNNER, out], out,
                                         lambda rc: rc == 0 or all_done(out),
                                         boots=args.boots, timeout_s=args.timeout,
                                         stall_s=STALL_S, arch="arm64")
    meta.update(took_s=round(time.time() - t0), boots=used, testhost_rc=rc,
                load_after=os.getloadavg())
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    sys.stdout.write(analyse(out))
    return 0 if rc == 0 else 1


def add_arguments(p):
    p.add_argument("-c", "--config", action="append", metavar="CONFIG",
                   help="one of %s (default: vmm-ram, vmm-file, kvmtool-file)" % ", ".join(CONFIGS))
    p.add_argument("-j", "--job", action="append",
                   help="guest/jobs/NAME.fio (default %s)" % ", ".join(JOBS))
    p.add_argument("-r", "--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=None, help="the order's seed (default: the time)")
    p.add_argument("--seed-runtime", type=int, default=0,
                   help="seed-virtio-blk's runtime per phase, s (0: the job file's 10)")
    p.add_argument("--check", action="append", metavar="CONFIG:JOB[+JOB]",
                   help="one boot of CONFIG before the repeats, outside the paired "
                   "design (repeat 0): does it run here at all")
    p.add_argument("--disk-mb", type=int, default=1024, help="the data disk's size")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per test-host boot")
    p.add_argument("--boots", type=int, default=BOOTS)
    p.add_argument("-o", "--out", help="default bench/results/arm64-peers-YYYYMMDD-HHMM")


def check(args):
    args.config = args.config or ["vmm-ram", "vmm-file", "kvmtool-file"]
    scenario.check_configs(args.config, NAME)
    args.job = args.job or list(JOBS)
    scenario.check_jobs(args.job)
    for c in args.check or ():
        cj = c.split(":")
        if len(cj) != 2 or cj[0] not in CONFIGS:
            raise ConfigError("--check %s: CONFIG:JOB[+JOB], CONFIG one of %s"
                              % (c, ", ".join(CONFIGS)))
    if args.repeats < 1:
        raise ConfigError("-r: at least 1")
    if args.seed is None:
        args.seed = int(time.time())
    args.out = os.path.abspath(args.out or default_out())


def sections(entries):
    return arm64peers_page.sections(entries)


def default_out():
    return os.path.join(paths.REPO, "bench", "results",
                        "arm64-peers-" + time.strftime("%Y%m%d-%H%M", time.gmtime()))


def is_result(out):
    """Whether OUT is an arm64-peers directory (its plan.txt's first line)."""
    try:
        with results.open(os.path.join(out, "plan.txt")) as f:
            return "arm64-peers" in f.readline()
    except OSError:
        return False
