"""`make run` (bench/vmbench run): the job this VMM exists for.  A VM with 2
vCPUs, 512 MiB and a 1 GiB RAM disk (ram:1G, 2 queues) as /dev/vdb runs
fio's randread-4k and then randwrite-4k (guest/jobs/: io_uring, O_DIRECT,
4 KiB, QD32, 5 s; one boot per job, guest/init's fio= action), and a
summary follows: IOPS, bandwidth, mean and p99 completion latency per job
and direction.  Exit status 0 when every job ran and reported."""
import os
import shlex
import types

from . import cmdlines, fiojson, guestrun, paths


def summary_lines(job, doc):
    """One line per fio job and direction that did I/O."""
    out = []
    for j in doc.get("jobs", []):
        for side in ("read", "write"):
            d = j.get(side, {})
            if not d.get("iops"):
                continue
            clat = d.get("clat_ns", {})
            p99 = clat.get("percentile", {}).get("99.000000", 0)
            out.append("%-13s %-5s IOPS %7.0f  BW %7.1f MiB/s  latency mean %8.1f us, p99 %8.1f us"
                       % (j.get("jobname", job), side, d["iops"], d.get("bw_bytes", 0) / 1048576,
                          clat.get("mean", 0) / 1e3, p99 / 1e3))
    return out


def shown(argv):
    """The command for people: paths relative to the checkout, quoted."""
    return " ".join(shlex.quote(a.replace(paths.REPO + "/", "")) for a in argv)


def job_shape(job):
    """What guest/jobs/JOB.fio does, in its own first comment line (the
    summary's header): "4 KiB random reads, queue depth 32, ..."."""
    try:
        with open(os.path.join(paths.REPO, "guest", "jobs", job + ".fio")) as f:
            first = f.readline()
    except OSError:
        return job
    return first.lstrip("; ").rstrip().rstrip(".:") if first.startswith(";") else job


def data_disks(args):
    """The guest's disks: a small system disk (vda) and the data disk (vdb)."""
    return [{"path": "ram:64M", "serial": "sys"},
            {"path": args.disk, "serial": "data", "queues": args.queues}]


def job_argv(args, job, kernel, initrd, vmm_bin):
    """Our VMM's command line for one boot that runs fio job JOB."""
    cmdline = cmdlines.guest_cmdline(fio=job, disk_serial="data")
    return cmdlines.vmm_argv(kernel, initrd, cmdline, args.mem, args.cpus, data_disks(args),
                             vmm_bin)


def fio_result(job, lines):
    """fio's JSON of JOB from a console's LINES, or None when fio did not
    report (no block, a non-zero status, JSON that did not parse)."""
    res = fiojson.extract(lines).get(job)
    return res[1] if res and res[0] == 0 and res[1] else None


def failed(job, tail):
    print("run: fio %s failed\n%s" % (job, tail), flush=True)


def print_summary(args, vmm, kernel, where, lines):
    """The summary: what ran (VMM, KERNEL), where (a line, or None), and
    summary_lines' LINES."""
    print()
    print("fio summary: %s, %d vCPUs, %d MiB, %s, /dev/vdb = %s with %d queues (%s)"
          % (vmm, args.cpus, args.mem, kernel, args.disk, args.queues,
             "; ".join("%s: %s" % (j, job_shape(j)) for j in args.job)))
    if where:
        print(where)
    print("\n".join(lines))


def run_jobs(args):
    """Inside a KVM that runs Linux: one boot per job; prints the
    summary; returns the exit status."""
    os.makedirs(args.out, exist_ok=True)
    kernel = paths.KERNELS[args.kernel]["bzImage"]
    rc, summary = 0, []
    for job in args.job:
        argv = job_argv(args, job, kernel, paths.INITRD, paths.VMM_BIN)
        print("run: fio %s: %s" % (job, shown(argv)), flush=True)
        g = guestrun.run_with_retries(argv, os.path.join(args.out, job + ".log"),
                                      timeout=args.boot_timeout)
        doc = fio_result(job, g.lines)
        if g.outcome != "clean" or doc is None:
            failed(job, g.tail())
            rc = 1
            continue
        counters = guestrun.vmm_counters(g)[len("virtio-blk: "):]
        print("run: fio %s: done in %.1f s (boot included)%s" % (
            job, g.seconds, "; " + counters if counters else ""), flush=True)
        summary += summary_lines(job, doc)
    print_summary(args, "vmm", "%s kernel" % args.kernel,
                  "inside the test host (QEMU TCG, nested AMD-V): slow in absolute terms"
                  if os.environ.get("TESTHOST") else None, summary)
    return rc


# The arm64 test host runs busybox sh and static arm64 programs (no
# Python), so run_arm64 hands it one shell script for all the jobs.
ARM64_SCRIPT = "run-arm64.sh"


def arm64_script(args):
    """(the script, [(job, argv, OUT/JOB)]) that runs every job of ARGS in
    the arm64 test host: one VM per job, in turn, each bounded by
    args.boot_timeout; its console into OUT/JOB.log, its stderr into
    OUT/JOB.err, its exit status into OUT/JOB.rc."""
    script, runs = ["set -u"], []
    for job in args.job:
        argv = job_argv(args, job, paths.ARM64_KERNEL, paths.ARM64_INITRD, paths.ARM64_VMM)
        base = os.path.join(args.out, job)
        q = shlex.quote
        script.append("timeout -s TERM %d %s </dev/null >%s 2>%s; echo $? >%s" % (
            args.boot_timeout, " ".join(q(a) for a in argv), q(base + ".log"),
            q(base + ".err"), q(base + ".rc")))
        runs.append((job, argv, base))
    return "\n".join(script) + "\n", runs


def run_arm64(args):
    """The same job on the arm64 VMM (build/arm64/vmm, Debian's arm64
    kernel): one arm64 test-host boot runs every job's VM (arm64_script),
    and the consoles come back here for the summary.  Returns the exit
    status."""
    from . import testhost
    os.makedirs(args.out, exist_ok=True)
    script, runs = arm64_script(args)
    for job, argv, base in runs:
        print("run: fio %s (arm64): %s" % (job, shown(argv)), flush=True)
        for ext in (".log", ".err", ".rc"):
            if os.path.exists(base + ext):
                os.unlink(base + ext)
    path = os.path.join(args.out, ARM64_SCRIPT)
    with open(path, "w") as f:
        f.write(script)
    # Each VM has its own limit; the test host's (run.sh's) adds its boot.
    th = testhost.run_until_command_ends(["sh", path], args.out,
                                         timeout_s=args.boot_timeout * len(runs) + 180,
                                         boots=2, arch="arm64")
    if th != 0:
        print("run: the arm64 test host ended with status %d" % th, flush=True)
    rc, summary = 0, []
    for job, _, base in runs:
        lines = read_lines(base + ".log")
        doc = fio_result(job, lines)
        if doc is None:
            failed(job, "\n".join(lines[-30:] + read_lines(base + ".err")[-10:]))
            rc = 1
            continue
        counters = guestrun.vmm_counters(types.SimpleNamespace(
            stderr="\n".join(read_lines(base + ".err"))))[len("virtio-blk: "):]
        if counters:
            print("run: fio %s: %s" % (job, counters), flush=True)
        summary += summary_lines(job, doc)
    print_summary(args, "vmm on arm64", "Debian's arm64 kernel",
                  "inside the arm64 test host (QEMU TCG aarch64, nested KVM): slow in absolute terms",
                  summary)
    return rc


def read_lines(path):
    """PATH's lines, none if it is not there."""
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []
