"""The command line of the harness: bench/vmbench COMMAND ..., where a
command is one of the scenarios over the test host, and anything else
is vmbench's own options (vmbench.py: fio jobs under configurations).

  bench/vmbench profile [-c CONFIG]... [-j JOB]... [-r R] [-o OUT]
      where the time goes, per request, ours beside QEMU and kvmtool
      (profile.py)
  bench/vmbench analyse OUT
      redo the tables of an earlier run (any scenario, vmbench's too)
  bench/vmbench deaths [-c CONFIG]... [-n N] [-j verify -j randread-4k]
      how often guests die under each VMM (deaths.py)
  bench/vmbench cpuid [-c CONFIG]...
      what each VMM gives the same guest: CPUID, MSRs, flags, kernel log
      (cpuid.py)
  bench/vmbench lockup [-c ifpoll -c iftrap] [-n N] [--seconds S]
      does the test host lock up under a tiny guest that keeps an
      interrupt pending with IF clear (lockup.py)
  bench/vmbench exitcost [-n N]
      what one exit of a nested guest costs in the test host, by kind
      (port I/O, MMIO, in KVM or out to the VMM) (exitcost.py)
  bench/vmbench boot [-c CONFIG]... [-r R] [--kernels stock,small]
      launch to /init per stage, ours beside QEMU (pc, PVH, microvm) on
      the same kernel files (boot.py)
  bench/vmbench run [--arch x86_64|arm64] [--kernel stock|small] [-j JOB]...
      the main job (make run): fio randread-4k and randwrite-4k on a
      ram:1G disk with 2 queues, 2 vCPUs, a summary (mainjob.py);
      --arch arm64: the arm64 VMM, in the arm64 test host
  bench/vmbench pytest [-- PYTEST ARGS]
      the pytest end-to-end tests (tests/e2e/py) where guests can run:
      here on a hardware KVM, else in the test host (booted again for
      the tests left if it dies, 3 boots at most)
  bench/vmbench testhost [-o OUT] [--timeout S] [--boots N] [--arch A] -- CMD [ARG...]
      CMD in a test-host boot (tests/testhost/run.sh, under the lock),
      booted again from the start if the test host dies before CMD ends
      (N boots at most, default 3); its status is CMD's (make check's
      smoke tests run this way); --arch arm64: the arm64 test host
  bench/vmbench report [--check] [--headline]
      bench/RESULTS.md, the current standing, written from the newest
      data under bench/results/ (standing.py), with README's headline
      table and bench/headline.svg; --check: write nothing, status 1 if
      a committed page differs from the data; --headline: print the table
  bench/vmbench arm64-peers [-c CONFIG]... [-j JOB]... [-r R] [--seed S]
      our arm64 VMM beside kvmtool (and QEMU) in one arm64 test-host
      boot: fio, the guest's interrupts and the test host's KVM exits per
      request, paired ratios (arm64peers.py; the runs: bench/arm64/peers.sh)
"""
import argparse
import os
import sys
import time

from . import (arm64peers, boot, cpuid, deaths, exitcost, hotplug, lockup, mainjob, nullblk, paths, plan,
               profile, pytestrun, results, standing, testhost, vmbench)

# A scenario's test-host boot may run a whole plan (100 deaths runs: about
# 40 minutes); the test host's own default limit is 30.
SCENARIO_BOOT_LIMIT_S = 6 * 3600


def report(args):
    """bench/vmbench report: RESULTS.md from the data (standing.py)."""
    os.chdir(paths.REPO)  # the page names its data relative to the checkout
    if args.headline:
        sys.stdout.write(standing.headline())
        return 0
    differ = []
    for path, text in standing.outputs().items():
        try:
            with open(path) as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            differ.append(path)
            if not args.check:
                with open(path, "w") as f:
                    f.write(text)
    if args.check:
        print("report: %s" % ("%s differ from the data (bench/vmbench report writes them)"
                              % ", ".join(differ) if differ else "the pages match the data"))
        return 1 if differ else 0
    print("report: %s" % ("wrote " + ", ".join(differ) if differ else "nothing changed"))
    return 0


def boot_finished(out_dir, rc):
    """run_with_reboots' test: a boot that ended early is written down
    (deaths counts them) before it is booted again."""
    if rc != 0:
        plan.record_testhost_end(out_dir, rc)
    return rc == 0


def write_meta(args):
    """OUT/meta.json: what ran (the VMM binary's hash, the tree and
    whether it was clean, QEMU's version), the command and the seed."""
    import hashlib
    import json
    import platform
    import subprocess

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
            with open(profile.KVMTOOL_BIN, "rb") as f:
                meta.update(kvmtool_bin=profile.KVMTOOL_BIN,
                            kvmtool_sha256=hashlib.sha256(f.read()).hexdigest())
        except OSError:
            pass
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def _scenario_parser(sub, name, help, queues=2, disk_mb=1024, config_help=""):
    """A scenario's sub-command with the options every scenario has:
    the guests' shape, the data disk, the seed, where it runs."""
    sp = sub.add_parser(name, help=help)
    sp.add_argument("-c", "--config", action="append",
                    help="vmm[:queues=N,poll=US,batch=on,pin=on,bin=PATH,append=W1+W2,"
                    "kernel=bzimage|vmlinux|PATH,name=L] or qemu[:...] (default: "
                    "qemu, vmm); append: words for the guest kernel's "
                    "command line; kernel: overrides --kernel, or a guest kernel of one's own "
                    "(PATH: a bzImage, or a vmlinux but for kvmtool; virtio_blk built in; its release "
                    "and sha256 go with every run, and a file that changes stops the plan); host_thp="
                    "always|madvise|never: the host's transparent huge pages "
                    "during this configuration's runs (deaths only)" + config_help)
    sp.add_argument("-o", "--out")
    sp.add_argument("--cpus", type=int, default=2)
    sp.add_argument("--queues", type=int, default=queues)
    sp.add_argument("--mem", type=int, default=512, help="MiB per guest")
    sp.add_argument("--disk-mb", type=int, default=disk_mb)
    sp.add_argument("--disk-dir", default="/tmp",
                    help="where the backing file goes (default /tmp: tmpfs in the test host)")
    sp.add_argument("--backing", default="file",
                    help="file (in --disk-dir) or nullb[:bs=B,completion_ns=N]: a "
                    "memory-backed null_blk device of --disk-mb in the test host, "
                    "opened with O_DIRECT by every VMM (defaults bs=512, "
                    "completion_ns=10000)")
    sp.add_argument("--kernel", choices=("bzimage", "vmlinux"), default="vmlinux")
    sp.add_argument("--seed", type=int, default=None)
    sp.add_argument("--boot-timeout", type=int, default=240)
    sp.add_argument("--where", choices=("auto", "here", "testhost"), default="auto")
    sp.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    return sp


def _add_scenarios(sub):
    p = _scenario_parser(sub, "profile", "per-request counters, ours vs QEMU and kvmtool",
                         config_help="; or kvmtool[:name=L,bin=PATH,jobs=A+B,append=W1+W2]: "
                         "kvmtool (kernel=PATH too; build/peers/x86/lkvm-static, which bench/peers-x86.sh "
                         "builds when it is missing) with the same bzImage, initrd, "
                         "vCPUs, memory, command line and data disk file, one queue "
                         "(kvmtool's virtio-blk has no more), the disk as the guest's "
                         "/dev/vda")
    p.add_argument("-j", "--job", action="append", choices=sorted(profile.JOBS))
    p.add_argument("-r", "--repeats", type=int, default=3)
    p.add_argument("--tries", type=int, default=2)
    dd = _scenario_parser(sub, "deaths", "death rates, ours and QEMU's")
    dd.add_argument("-j", "--job", action="append", choices=sorted(deaths.DEATH_JOBS))
    dd.add_argument("-n", type=int, default=10, help="rounds: runs per configuration and job")
    _scenario_parser(sub, "cpuid", "CPUID, MSRs and kernel log seen by the guest, ours and QEMU's",
                     queues=1, disk_mb=64)
    lk = _scenario_parser(sub, "lockup", "test-host lock-ups under a guest with an interrupt "
                          "pending and IF clear", queues=1, disk_mb=0)
    lk.add_argument("-n", type=int, default=30, help="rounds: runs per guest")
    lk.add_argument("--seconds", type=float, default=5, help="per run")
    ec = _scenario_parser(sub, "exitcost", "what one exit costs in the test host, by kind",
                          queues=1, disk_mb=0)
    ec.add_argument("-n", type=int, default=5, help="runs of the guest")
    b = _scenario_parser(sub, "boot", "launch to /init per stage, ours and QEMU's",
                         queues=1, disk_mb=64)
    b.add_argument("-r", "--repeats", type=int, default=5)
    b.add_argument("--kernels", default="stock,small",
                   help="comma-separated, of %s" % ", ".join(paths.KERNELS))


def _add_tools(sub):
    a = sub.add_parser("analyse", help="redo the tables of OUT")
    a.add_argument("out")
    rp = sub.add_parser("report", help="write bench/RESULTS.md from bench/results/")
    rp.add_argument("--check", action="store_true",
                    help="write nothing; status 1 if a page differs from the data's")
    rp.add_argument("--headline", action="store_true", help="print README's headline table")
    m = sub.add_parser("run", help="the main job: fio on ram:1G, a summary (make run)")
    m.add_argument("--arch", choices=("x86_64", "arm64"), default="x86_64",
                   help="arm64: build/arm64/vmm with Debian's arm64 kernel, in the "
                   "arm64 test host (--kernel and --where do not apply)")
    m.add_argument("--kernel", choices=sorted(paths.KERNELS), default="stock")
    m.add_argument("-j", "--job", action="append",
                   help="guest/jobs/NAME.fio (default randread-4k, randwrite-4k)")
    m.add_argument("--cpus", type=int, default=2)
    m.add_argument("--queues", type=int, default=2)
    m.add_argument("--mem", type=int, default=512, help="MiB")
    m.add_argument("--disk", default="ram:1G", help="the data disk (vdb)")
    m.add_argument("--boot-timeout", type=int, default=240)
    m.add_argument("-o", "--out", help="default build/run (arm64: build/run-arm64)")
    m.add_argument("--where", choices=("auto", "here", "testhost"), default="auto")
    m.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    t = sub.add_parser("pytest", help="end-to-end pytest tests (tests/e2e/py)")
    t.add_argument("args", nargs=argparse.REMAINDER)
    h = sub.add_parser("testhost", help="a command in the test host, booted again if it dies")
    h.add_argument("-o", "--out", default=os.path.join(paths.BUILD, "testhost", "out"))
    h.add_argument("--timeout", type=int, default=1800, help="seconds per boot")
    h.add_argument("--boots", type=int, default=3)
    h.add_argument("--arch", default="x86_64",
                   help="the test host's architecture: %s" % ", ".join(testhost.ARCHES))
    h.add_argument("command", nargs=argparse.REMAINDER)
    ap64 = sub.add_parser("arm64-peers", help="ours beside kvmtool (and QEMU) in the arm64 test host")
    ap64.add_argument("-c", "--config", action="append", choices=arm64peers.CONFIGS,
                      help="default: vmm-ram, vmm-file, kvmtool-file")
    ap64.add_argument("-j", "--job", action="append",
                      help="guest/jobs/NAME.fio (default %s)" % ", ".join(arm64peers.JOBS))
    ap64.add_argument("-r", "--repeats", type=int, default=5)
    ap64.add_argument("--seed", type=int, default=None, help="the order's seed (default: the time)")
    ap64.add_argument("--seed-runtime", type=int, default=0,
                      help="seed-virtio-blk's runtime per phase, s (0: the job file's 10)")
    ap64.add_argument("--check", action="append", metavar="CONFIG:JOB[+JOB]",
                      help="one boot of CONFIG before the repeats, outside the paired "
                      "design (repeat 0): does it run here at all")
    ap64.add_argument("--disk-mb", type=int, default=1024, help="the data disk's size")
    ap64.add_argument("--timeout", type=int, default=3600, help="seconds per test-host boot")
    ap64.add_argument("--boots", type=int, default=arm64peers.BOOTS)
    ap64.add_argument("-o", "--out", help="default bench/results/arm64-peers-YYYYMMDD-HHMM")
    hp = sub.add_parser("hotplug", help="attach and detach times, idle and under load, and "
                        "the datapath with empty hot-plug slots against none (bench/hotplug.sh)")
    hp.add_argument("--arch", choices=testhost.ARCHES, default="x86_64")
    hp.add_argument("--cycles", type=int, default=5,
                    help="attach/detach cycles per mode (idle, load)")
    hp.add_argument("-r", "--repeats", type=int, default=5, help="datapath pairs")
    hp.add_argument("--slots", type=int, default=8, choices=range(1, 9),
                    help="the empty slots set against none (1 to 8)")
    hp.add_argument("--seed", type=int, default=None, help="the order's seed (default: the time)")
    hp.add_argument("-o", "--out", help="default build/vmbench/hotplug-ARCH-YYYYMMDD-HHMMSS")


def parser():
    """bench/vmbench COMMAND's argument parser, a sub-command each."""
    ap = argparse.ArgumentParser(prog="bench/vmbench")
    sub = ap.add_subparsers(dest="cmd", required=True)
    _add_scenarios(sub)
    _add_tools(sub)
    return ap


def _check_jobs(ap, jobs):
    for j in jobs:  # a typo stops here, not inside the guest or the test host
        if not os.path.isfile(os.path.join(paths.REPO, "guest", "jobs", j + ".fio")):
            ap.error("-j %s: no guest/jobs/%s.fio" % (j, j))


def cmd_arm64_peers(ap, args, argv):
    args.config = args.config or ["vmm-ram", "vmm-file", "kvmtool-file"]
    args.job = args.job or list(arm64peers.JOBS)
    _check_jobs(ap, args.job)
    for c in args.check or ():
        cj = c.split(":")
        if len(cj) != 2 or cj[0] not in arm64peers.CONFIGS:
            ap.error("--check %s: CONFIG:JOB[+JOB], CONFIG one of %s"
                     % (c, ", ".join(arm64peers.CONFIGS)))
    if args.repeats < 1:
        ap.error("-r: at least 1")
    if args.seed is None:
        args.seed = int(time.time())
    args.out = os.path.abspath(args.out or arm64peers.default_out())
    return arm64peers.run(args)


def cmd_hotplug(ap, args, argv):
    if args.cycles < 1 or args.repeats < 1:
        ap.error("hotplug: --cycles and -r: at least 1")
    if args.seed is None:
        args.seed = int(time.time())
    args.out = os.path.abspath(args.out or os.path.join(
        paths.BUILD, "vmbench", "hotplug-%s-%s" % (args.arch, time.strftime("%Y%m%d-%H%M%S"))))
    os.makedirs(args.out, exist_ok=True)
    write_meta(args)
    hotplug.fix_meta(args.out, args.arch)
    return hotplug.run(args)


def cmd_testhost(ap, args, argv):
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("testhost: no command")
    try:
        arch = testhost.check_arch(args.arch)
    except ValueError as e:
        ap.error("testhost: --arch: %s" % e)
    return testhost.run_until_command_ends(command, os.path.abspath(args.out),
                                           args.timeout, args.boots, arch=arch)


def cmd_pytest(ap, args, argv):
    if args.args[:1] == ["--"]:  # bench/vmbench pytest -- -k NAME
        args.args = args.args[1:]
    argv = [sys.executable or "python3", "-m", "pytest", "-p", "no:cacheprovider", "--color=no",
            "-v", os.path.join(paths.REPO, "tests", "e2e", "py")] + args.args
    if testhost.kvm_is_fast():
        os.execvp(argv[0], argv)
    # A directory of its own: a run waiting for the test-host lock
    # must not touch the record of the run in progress.
    out = os.path.join(paths.BUILD, "vmbench", "pytest-%s-%d" % (
        time.strftime("%Y%m%d-%H%M%S"), os.getpid()))
    os.makedirs(out, exist_ok=True)
    return pytestrun.run(argv, out)


def cmd_run(ap, args, argv):
    args.job = args.job or ["randread-4k", "randwrite-4k"]
    _check_jobs(ap, args.job)
    args.out = os.path.abspath(args.out or os.path.join(
        paths.BUILD, "run-arm64" if args.arch == "arm64" else "run"))
    if args.arch == "arm64":
        return mainjob.run_arm64(args)
    if args.inner or args.where == "here" or (args.where == "auto" and testhost.kvm_is_fast()):
        return mainjob.run_jobs(args)
    print("run: this host's KVM is too slow for Linux: the VM runs inside the "
          "test host (tests/testhost/run.sh; QEMU TCG with nested AMD-V)", flush=True)
    os.makedirs(args.out, exist_ok=True)
    return testhost.run_inside(testhost.python_argv(argv + ["--inner"]), args.out,
                               timeout_s=900)


def cmd_report(ap, args, argv):
    return report(args)


def cmd_analyse(ap, args, argv):
    # A packed run directory (bench/results/pack.py): its unpacked
    # copy, where the tables are written and printed, not kept.
    args.out = results.real(args.out)
    if arm64peers.is_result(args.out):
        sys.stdout.write(arm64peers.analyse(args.out))
        return 0
    if os.path.exists(os.path.join(args.out, "plan.json")):  # vmbench's sweep
        return vmbench.main(["--analyze", args.out])
    if os.path.exists(os.path.join(args.out, "boot.md")):
        sys.stdout.write(boot.analyse(args.out))
    elif os.path.exists(os.path.join(args.out, "exitcost.md")):
        sys.stdout.write(exitcost.analyse(args.out))
    elif os.path.exists(os.path.join(args.out, "lockup.md")):
        sys.stdout.write(lockup.analyse(args.out))
    elif os.path.exists(os.path.join(args.out, "cpuid.md")):
        sys.stdout.write(cpuid.analyse(args.out))
    elif os.path.exists(os.path.join(args.out, "deaths.md")) or any(
            '"round"' in l for l in open(os.path.join(args.out, "runs.jsonl"))):
        sys.stdout.write(deaths.analyse(args.out))
    else:
        sys.stdout.write(profile.analyse(args.out))
    return 0


# The scenarios over the test host: their module, and the parser of
# their configurations (config.py) where they take -c KIND[:k=v,...].
SCENARIOS = {"profile": (profile, profile.parse_config), "deaths": (deaths, deaths.parse_config),
             "cpuid": (cpuid, cpuid.parse_config), "boot": (boot, boot.parse_config),
             "lockup": (lockup, None), "exitcost": (exitcost, None)}


def _scenario_args(ap, args):
    """A scenario's own defaults and checks, before anything boots."""
    if args.cmd == "boot":
        args.config = args.config or boot.DEFAULT_CONFIGS
        args.kernels = args.kernels.split(",")
        for k in args.kernels:
            if k not in paths.KERNELS:
                ap.error("--kernels: no kernel %r (%s)" % (k, ", ".join(paths.KERNELS)))
    if args.cmd == "lockup":
        args.config = args.config or sorted(lockup.GUESTS)
        for c in args.config:
            if c not in lockup.GUESTS:
                ap.error("lockup: -c %s: one of %s" % (c, ", ".join(sorted(lockup.GUESTS))))
        if not args.inner:
            lockup.build_images()
    if args.cmd == "exitcost":
        if args.config:
            ap.error("exitcost: no configurations: one guest under our VMM")
        if not args.inner:
            exitcost.build_images()
    args.config = args.config or ["qemu", "vmm"]
    # Every configuration, checked here (config.py), not in the test host.
    parse = SCENARIOS[args.cmd][1]
    for c in args.config if parse else ():
        try:
            parse(c)
        except ValueError as e:
            ap.error(str(e))
    if args.cmd == "profile" and not args.inner:
        try:  # a bad name stops here, and kvmtool is built, not in the test host
            profile.prepare(args.config)
        except ValueError as e:
            ap.error(str(e))
    if args.cmd not in ("cpuid", "boot", "lockup", "exitcost"):
        args.job = args.job or (["verify", "randread-4k"] if args.cmd == "deaths"
                                else ["seed-randread"])
    if args.seed is None:
        args.seed = int(time.time())
    args.out = os.path.abspath(args.out or os.path.join(
        paths.BUILD, "vmbench", args.cmd + "-" + time.strftime("%Y%m%d-%H%M%S")))


def cmd_scenario(ap, args, argv):
    """A scenario's plan: here where KVM is fast (or --inner, inside the
    test host), else in the test host, booted again for what is left if
    it dies; then its analysis."""
    _scenario_args(ap, args)
    scenario = SCENARIOS[args.cmd][0]
    os.makedirs(args.out, exist_ok=True)
    if not args.inner:
        write_meta(args)
    if args.inner or args.where == "here" or (args.where == "auto" and testhost.kvm_is_fast()):
        scenario.run_plan(args)
        if args.inner:
            return 0
    else:
        argv = argv + ["--inner", "--out", args.out, "--seed", str(args.seed)]
        print("vmbench: in the test host (this KVM is too slow for Linux), seed %d, out %s"
              % (args.seed, args.out), flush=True)
        # A test host that dies or locks up is booted again for what is
        # left (the plan skips runs already recorded).  No time limit
        # that a long plan reaches: the stall detector stops a boot that
        # locked up.
        testhost.run_with_reboots(lambda: testhost.python_argv(argv), args.out,
                                  lambda rc: boot_finished(args.out, rc),
                                  boots=getattr(scenario, "BOOTS", 3),
                                  timeout_s=SCENARIO_BOOT_LIMIT_S,
                                  stall_s=getattr(scenario, "STALL_S", 420))
    sys.stdout.write(scenario.analyse(args.out))
    return 0


# bench/vmbench COMMAND: the function that runs it, (ap, args, argv) -> status.
COMMANDS = dict({s: cmd_scenario for s in SCENARIOS},
                analyse=cmd_analyse, run=cmd_run, pytest=cmd_pytest, testhost=cmd_testhost,
                report=cmd_report, hotplug=cmd_hotplug,
                **{"arm64-peers": cmd_arm64_peers})


def main(argv):
    """bench/vmbench ARGV: a command of COMMANDS, else vmbench's
    options (the fio scenarios)."""
    if not argv or argv[0] not in COMMANDS:
        return vmbench.main(argv)
    ap = parser()
    args = ap.parse_args(argv)
    args.argv = argv
    try:  # a bad --backing stops here, not inside the test host
        nullblk.parse_spec(getattr(args, "backing", None))
    except ValueError as e:
        ap.error(str(e))
    return COMMANDS[args.cmd](ap, args, argv)
