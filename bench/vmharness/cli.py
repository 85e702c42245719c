"""The command line of the harness: `bench/vmbench COMMAND ...`, where a
command is a scenario of the registry (scenarios.py: profile, deaths,
cpuid, boot, lockup, exitcost, hotplug, arm64-peers; scenario.py says
what each has) or one of the tools below, and `bench/vmbench [OPTION]...`
without a command word is the sweep (sweep.py; its modes --hunt and
--scenario hw-check).  Every scenario goes through the same steps:
its parser (add_arguments), check (its refusals, one ConfigError, before
anything boots), run.  `bench/vmbench --help` lists the commands;
`bench/vmbench COMMAND --help` gives a command's options."""
import argparse
import os
import sys
import time

from . import mainjob, paths, pytestrun, results, scenarios, standing, testhost
from .scenario import ConfigError, Parser, check_jobs


# ---- the tools: commands that are not scenarios ----------------------------------

def tool_args(sub):
    """The tools' sub-commands on SUB."""
    a = sub.add_parser("analyse", help="redo the tables of OUT (whichever scenario wrote it)")
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


def cmd_analyse(args):
    """The scenario that wrote OUT redoes its tables; a packed run
    directory (bench/results/pack.py) in its unpacked copy, kept only
    while this process runs."""
    s = scenarios.which(args.out)
    if s is None:
        raise ConfigError("%s: no scenario wrote this (%s)" % (
            args.out, ", ".join(s.NAME for s in scenarios.ALL)))
    sys.stdout.write(s.analyse(results.real(args.out)))
    return 0


def cmd_report(args):
    os.chdir(paths.REPO)  # the page names its data relative to the checkout
    if args.headline:
        sys.stdout.write(standing.headline())
        return 0
    return standing.write(args.check)


def cmd_run(args):
    args.job = args.job or ["randread-4k", "randwrite-4k"]
    check_jobs(args.job)
    args.out = os.path.abspath(args.out or os.path.join(
        paths.BUILD, "run-arm64" if args.arch == "arm64" else "run"))
    if args.arch == "arm64":
        return mainjob.run_arm64(args)
    if args.inner or args.where == "here" or (args.where == "auto" and testhost.kvm_is_fast()):
        return mainjob.run_jobs(args)
    print("run: this host's KVM is too slow for Linux: the VM runs inside the "
          "test host (tests/testhost/run.sh; QEMU TCG with nested AMD-V)", flush=True)
    os.makedirs(args.out, exist_ok=True)
    return testhost.run_inside(testhost.python_argv(args.argv + ["--inner"]), args.out,
                               timeout_s=900)


def cmd_pytest(args):
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


def cmd_testhost(args):
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise ConfigError("testhost: no command")
    try:
        arch = testhost.check_arch(args.arch)
    except ValueError as e:
        raise ConfigError("testhost: --arch: %s" % e)
    return testhost.run_until_command_ends(command, os.path.abspath(args.out),
                                           args.timeout, args.boots, arch=arch)


TOOLS = {"analyse": cmd_analyse, "report": cmd_report, "run": cmd_run, "pytest": cmd_pytest,
         "testhost": cmd_testhost}


def scenario_command(args):
    """A scenario's command: its check, then its run."""
    args.scenario_module.check(args)
    return args.scenario_module.run(args)


# bench/vmbench COMMAND: the function that runs it, (args) -> status.
COMMANDS = dict({name: scenario_command for name in scenarios.COMMANDS}, **TOOLS)


# ---- the parsers -----------------------------------------------------------------

def parser():
    """bench/vmbench COMMAND's parser, a sub-command each: the registry's
    scenarios, then the tools."""
    ap = Parser(prog="bench/vmbench")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, s in scenarios.COMMANDS.items():
        sp = sub.add_parser(name, help=s.HELP)
        s.add_arguments(sp)
        sp.set_defaults(scenario_module=s)
    tool_args(sub)
    return ap


def commands_text():
    """The commands, for the sweep's --help."""
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return "commands (bench/vmbench COMMAND --help):\n" + "\n".join(
        "  %-12s %s" % (c.dest, c.help) for c in sub._choices_actions)


def parse(argv):
    """ARGV as a namespace: a command's, or (no command word) the sweep's."""
    if argv and argv[0] in COMMANDS:
        args = parser().parse_args(argv)
    else:
        args = scenarios.DEFAULT.parser(commands_text()).parse_args(argv)
        args.cmd, args.scenario_module = None, scenarios.DEFAULT
    args.argv = list(argv)
    return args


def main(argv):
    """bench/vmbench ARGV; a refusal (ConfigError) is one line, status 2."""
    try:
        args = parse(argv)
        return COMMANDS.get(args.cmd, scenario_command)(args)
    except ConfigError as e:
        cmd = argv[0] if argv and argv[0] in COMMANDS else ""
        print("bench/vmbench%s: error: %s" % (" " + cmd if cmd else "", e), file=sys.stderr)
        raise SystemExit(2)
