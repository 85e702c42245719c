"""`make run` (bench/vmbench run): the job this VMM exists for.  A VM with 2
vCPUs, 512 MiB and a 1 GiB RAM disk (ram:1G, 2 queues) as /dev/vdb runs
fio's randread-4k and then randwrite-4k (guest/jobs/: io_uring, O_DIRECT,
4 KiB, QD32, 5 s; one boot per job, guest/init's fio= action), and a
summary follows: IOPS, bandwidth, mean and p99 completion latency per job
and direction.  Exit status 0 when every job ran and reported."""
import os
import shlex

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


def run_jobs(args):
    """Inside a KVM that runs Linux: one boot per job; prints the
    summary; returns the exit status."""
    os.makedirs(args.out, exist_ok=True)
    kernel = paths.KERNELS[args.kernel]["bzImage"]
    disks = [{"path": "ram:64M", "serial": "sys"},
             {"path": args.disk, "serial": "data", "queues": args.queues}]
    rc, summary = 0, []
    for job in args.job:
        cmdline = cmdlines.guest_cmdline(fio=job, disk_serial="data")
        argv = cmdlines.vmm_argv(kernel, paths.INITRD, cmdline, args.mem, args.cpus, disks,
                                 paths.VMM_BIN)
        print("run: fio %s: %s" % (job, shown(argv)), flush=True)
        g = guestrun.run_with_retries(argv, os.path.join(args.out, job + ".log"),
                                      timeout=args.boot_timeout)
        res = fiojson.extract(g.lines).get(job)
        if g.outcome != "clean" or not res or res[0] != 0 or not res[1]:
            print("run: fio %s failed\n%s" % (job, g.tail()), flush=True)
            rc = 1
            continue
        counters = guestrun.vmm_counters(g)[len("virtio-blk: "):]
        print("run: fio %s: done in %.1f s (boot included)%s" % (
            job, g.seconds, "; " + counters if counters else ""), flush=True)
        summary += summary_lines(job, res[1])
    print()
    print("fio summary: vmm, %d vCPUs, %d MiB, %s kernel, /dev/vdb = %s with %d queues "
          "(io_uring, O_DIRECT, 4 KiB, QD32, 5 s)" % (args.cpus, args.mem, args.kernel,
                                                     args.disk, args.queues))
    if os.environ.get("TESTHOST"):
        print("inside the test host (QEMU TCG, nested AMD-V): slow in absolute terms")
    print("\n".join(summary))
    return rc


def run_arm64(args):
    """The same job on the arm64 VMM (build/arm64/vmm, Debian's arm64
    kernel): one arm64 test-host boot runs every job's VM (its programs
    are busybox and static arm64 binaries: no Python there), and the
    consoles come back here for the summary.  Returns the exit status."""
    from . import testhost
    os.makedirs(args.out, exist_ok=True)
    disks = [{"path": "ram:64M", "serial": "sys"},
             {"path": args.disk, "serial": "data", "queues": args.queues}]
    script = ["set -u"]
    for job in args.job:
        cmdline = cmdlines.guest_cmdline(fio=job, disk_serial="data")
        argv = cmdlines.vmm_argv(paths.ARM64_KERNEL, paths.ARM64_INITRD, cmdline,
                                 args.mem, args.cpus, disks, paths.ARM64_VMM)
        log = os.path.join(args.out, job)
        print("run: fio %s (arm64): %s" % (job, shown(argv)), flush=True)
        script.append("%s </dev/null >%s 2>%s; echo $? >%s" % (
            " ".join(shlex.quote(a) for a in argv), shlex.quote(log + ".log"),
            shlex.quote(log + ".err"), shlex.quote(log + ".rc")))
        for ext in (".log", ".err", ".rc"):
            if os.path.exists(log + ext):
                os.unlink(log + ext)
    testhost.run_until_command_ends(["sh", "-c", "\n".join(script)], args.out,
                                    timeout_s=args.boot_timeout * len(args.job) + 120,
                                    boots=2, arch="arm64")
    rc, summary = 0, []
    for job in args.job:
        log = os.path.join(args.out, job)
        lines = open(log + ".log", errors="replace").read().splitlines() \
            if os.path.exists(log + ".log") else []
        res = fiojson.extract(lines).get(job)
        if not res or res[0] != 0 or not res[1]:
            print("run: fio %s failed\n%s" % (job, "\n".join(lines[-30:])), flush=True)
            rc = 1
            continue
        summary += summary_lines(job, res[1])
    print()
    print("fio summary: vmm on arm64, %d vCPUs, %d MiB, Debian's arm64 kernel, /dev/vdb = %s "
          "with %d queues (io_uring, O_DIRECT, 4 KiB, QD32, 5 s)"
          % (args.cpus, args.mem, args.disk, args.queues))
    print("inside the arm64 test host (QEMU TCG aarch64, nested KVM): slow in absolute terms")
    print("\n".join(summary))
    return rc
