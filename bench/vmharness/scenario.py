"""What a scenario of bench/vmbench is, and what the scenarios share.

A scenario is one module of this package with these module-level names
(scenarios.py lists them, in order; tests/py/test_scenarios.py checks
that each has every one):

  NAME              its name: the word of its command (bench/vmbench NAME
                    ...) and the kind standing.scan gives the directories
                    it writes (pages.command_kind of their meta.json)
  HELP              one line for `bench/vmbench --help`
  COMMAND           True: NAME is a sub-command.  False: it is reached
                    through the sweep's options (bench/vmbench [OPTION]...,
                    no command word: --hunt, --scenario hw-check), which
                    take its add_arguments, check and run
  add_arguments(p)  its options, on an argparse parser (guest_options
                    adds the ones every test-host scenario shares)
  check(args)       its defaults, and every refusal (a bad -c through
                    config.py, a job that does not exist, ...) before
                    anything boots or is written: raises ConfigError,
                    which bench/vmbench prints as one line, status 2
  run(args)         the command once checked (args.argv: its words): the
                    plan, here or in the test host, and its analysis; its
                    status.  The test-host scenarios run their plan
                    through run_here_or_in_testhost: run_plan(args), the
                    plan where guests run, one run (one_run) at a time
  analyse(out)      the tables of a directory it wrote, as text
  is_result(out)    whether it wrote directory OUT (`bench/vmbench analyse
                    OUT` asks each scenario in turn)
  sections(entries) its part of bench/RESULTS.md: [(key, title, lines)]
                    for every section it has, lines [] when no data in
                    ENTRIES (standing.scan's) answers it; standing.py puts
                    them in scenarios.PAGE's order

This module holds what they share: the one error type, the argument
parser that raises it, the options of the test-host scenarios, their
checks, OUT/meta.json, and the driver of a plan run here or in the test
host.  It imports none of the scenarios (they import it)."""
import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

from . import config, nullblk, pages, paths, plan, results, testhost
from .config import ConfigError

# Every scenario module's names (the interface above).
ENTRY_POINTS = ("NAME", "HELP", "COMMAND", "add_arguments", "check", "run", "analyse",
                "is_result", "sections")

# A scenario's test-host boot may run a whole plan (100 deaths runs: about
# 40 minutes); the test host's own default limit is 30.
BOOT_LIMIT_S = 6 * 3600


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are ConfigError, as the scenarios'
    refusals are: bench/vmbench prints either as one line."""

    def error(self, message):
        raise ConfigError("%s (%s --help)" % (message, self.prog))


# ---- the options of the scenarios over the test host ------------------------

def guest_options(p, queues=2, disk_mb=1024, config_help=""):
    """The options every test-host scenario has: its configurations, the
    guests' shape, the data disk, the seed, where it runs."""
    p.add_argument("-c", "--config", action="append",
                   help="vmm[:queues=N,poll=US,batch=on,pin=on,bin=PATH,append=W1+W2,"
                   "kernel=bzimage|vmlinux|PATH,name=L] or qemu[:...] (default: "
                   "qemu, vmm); append: words for the guest kernel's "
                   "command line; kernel: overrides --kernel, or a guest kernel of one's own "
                   "(PATH: a bzImage, or a vmlinux but for kvmtool; virtio_blk built in; its release "
                   "and sha256 go with every run, and a file that changes stops the plan); host_thp="
                   "always|madvise|never: the host's transparent huge pages "
                   "during this configuration's runs (deaths only)" + config_help)
    p.add_argument("-o", "--out")
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--queues", type=int, default=queues)
    p.add_argument("--mem", type=int, default=512, help="MiB per guest")
    p.add_argument("--disk-mb", type=int, default=disk_mb)
    p.add_argument("--disk-dir", default="/tmp",
                   help="where the backing file goes (default /tmp: tmpfs in the test host)")
    p.add_argument("--backing", default="file",
                   help="file (in --disk-dir) or nullb[:bs=B,completion_ns=N]: a "
                   "memory-backed null_blk device of --disk-mb in the test host, "
                   "opened with O_DIRECT by every VMM (defaults bs=512, "
                   "completion_ns=10000)")
    p.add_argument("--kernel", choices=("bzimage", "vmlinux"), default="vmlinux")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--boot-timeout", type=int, default=240)
    p.add_argument("--where", choices=("auto", "here", "testhost"), default="auto")
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)


def check_jobs(jobs):
    """Each of JOBS is a guest/jobs/NAME.fio: a typo stops here, not
    inside the guest or the test host."""
    for j in jobs:
        if not os.path.isfile(os.path.join(paths.REPO, "guest", "jobs", j + ".fio")):
            raise ConfigError("-j %s: no guest/jobs/%s.fio" % (j, j))


def check_configs(specs, name, jobs=None):
    """Every -c of SPECS through config.py's table of scenario NAME."""
    for c in specs or ():
        config.parse(c, name, jobs)


def check_guest_options(args, name, configs, jobs=None, parse=None):
    """The checks and defaults guest_options' scenarios share: CONFIGS
    when no -c is given, every -c through PARSE (config.py), the
    --backing spec, JOBS when no -j is given (None: the scenario has no
    jobs), the seed and OUT."""
    args.config = args.config or list(configs)
    for c in args.config:
        (parse or (lambda spec: config.parse(spec, name)))(c)
    try:
        nullblk.parse_spec(args.backing)
    except ValueError as e:
        raise ConfigError(str(e))
    if jobs is not None:
        args.job = args.job or list(jobs)
    if args.seed is None:
        args.seed = int(time.time())
    args.out = os.path.abspath(args.out or default_out(name))


def default_out(name):
    """build/vmbench/NAME-YYYYMMDD-HHMMSS."""
    return os.path.join(paths.BUILD, "vmbench", name + "-" + time.strftime("%Y%m%d-%H%M%S"))


def recorded_kind(out):
    """The command that wrote OUT, as its meta.json says (pages.command_kind),
    or None without one."""
    try:
        with results.open(os.path.join(out, "meta.json")) as f:
            return pages.command_kind(json.load(f).get("command"))
    except (OSError, ValueError, AttributeError):
        return None


# ---- running a plan ----------------------------------------------------------

def boot_finished(out_dir, rc):
    """run_with_reboots' test: a boot that ended early is written down
    (deaths counts them) before it is booted again."""
    if rc != 0:
        plan.record_testhost_end(out_dir, rc)
    return rc == 0


def write_meta(args):
    """OUT/meta.json: what ran (the VMM binary's hash, the tree and
    whether it was clean, QEMU's version), the command and the seed."""
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True,
                                  cwd=paths.REPO).stdout.strip()
        except OSError:
            return None
    try:
        with open(paths.VMM_BIN, "rb") as f:
            vmm_sha = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        vmm_sha = None
    meta = {"command": " ".join(["bench/vmbench"] + args.argv), "seed": args.seed,
            "vmm_bin": paths.VMM_BIN, "vmm_sha256": vmm_sha,
            "git_head": out(["git", "rev-parse", "HEAD"]),
            "git_dirty": bool(out(["git", "status", "--porcelain", "--untracked-files=no"])),
            "qemu": (out(["qemu-system-x86_64", "--version"]) or "").split("\n")[0],
            "host": platform.node(), "kernel": platform.release(),
            "nproc": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "testhost": {k: os.environ[k] for k in ("TESTHOST_QEMU", "TESTHOST_CPU",
                                                    "TESTHOST_ACCEL", "TESTHOST_APPEND",
                                                    "TESTHOST_SMP", "TESTHOST_MEM")
                         if k in os.environ},
            "testhost_qemu": (out([os.environ.get("TESTHOST_QEMU", "qemu-system-x86_64"),
                                   "--version"]) or "").split("\n")[0]}
    # Each configuration's own binary (bin=), where it runs one: the
    # sha256 above is build/vmm's.
    bins = {}
    for c in getattr(args, "config", None) or ():
        for kv in c.partition(":")[2].split(","):
            k, _, v = kv.partition("=")
            if k == "bin" and v not in bins:
                try:
                    with open(v, "rb") as f:
                        bins[v] = hashlib.sha256(f.read()).hexdigest()
                except OSError:
                    bins[v] = None
    if bins:
        meta["bin_sha256"] = bins
    # kvmtool, where a profile runs the default one (a rebuild from
    # another tarball would change it).
    if any(c.split(":")[0] == "kvmtool" and "bin=" not in c for c in getattr(args, "config", None) or ()):
        try:
            with open(paths.KVMTOOL_BIN, "rb") as f:
                meta.update(kvmtool_bin=paths.KVMTOOL_BIN,
                            kvmtool_sha256=hashlib.sha256(f.read()).hexdigest())
        except OSError:
            pass
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def run_here_or_in_testhost(args, run_plan, analyse, boots=3, stall_s=420):
    """A scenario's plan: RUN_PLAN(args) here where KVM is fast (or with
    --inner, inside the test host), else in the test host, booted again
    for what is left if it dies (BOOTS boots at most; STALL_S without a
    sign of life stops one); then ANALYSE(OUT), printed."""
    os.makedirs(args.out, exist_ok=True)
    if not args.inner:
        write_meta(args)
    if args.inner or args.where == "here" or (args.where == "auto" and testhost.kvm_is_fast()):
        run_plan(args)
        if args.inner:
            return 0
    else:
        argv = args.argv + ["--inner", "--out", args.out, "--seed", str(args.seed)]
        print("vmbench: in the test host (this KVM is too slow for Linux), seed %d, out %s"
              % (args.seed, args.out), flush=True)
        # A test host that dies or locks up is booted again for what is
        # left (the plan skips runs already recorded).  No time limit
        # that a long plan reaches: the stall detector stops a boot that
        # locked up.
        testhost.run_with_reboots(lambda: testhost.python_argv(argv), args.out,
                                  lambda rc: boot_finished(args.out, rc),
                                  boots=boots, timeout_s=BOOT_LIMIT_S, stall_s=stall_s)
    sys.stdout.write(analyse(args.out))
    return 0
