"""--pin with a real guest, while fio verify runs on a file disk with a
queue per vCPU.  on: vCPU i is bound to the i-th CPU the VMM may use and
queue q's iothread to vCPU q's CPU, the VMM's other threads are left
where they may run.  follow (the default): the vCPUs may run on every
CPU the VMM may, each iothread on one of them at a time, and -v counts
the moves.  In both the verify passes and the VMM exits 0.

Stock kernel only: binding is the VMM's business, whatever the guest."""
import os
import re
import subprocess

import guestlib
from test_sandbox import Sampler, per_thread
from vmharness import cmdlines, fiojson, guestrun, paths


def thread_cpus(pid):
    """{thread name: [set of CPUs it may run on]} of a running process."""
    return per_thread(pid, lambda task: [os.sched_getaffinity(int(os.path.basename(task)))])


def verify_sampled(tmp_path, extra):
    """fio verify on a 256 MiB file with 2 queues and 2 vCPUs, the VMM's
    threads' CPU sets sampled every half second meanwhile: the run (its
    verify passed, the VMM exited 0) and every sample taken."""
    disk = tmp_path / "disk.img"
    subprocess.run(["truncate", "-s", "256M", str(disk)], check=True)
    cmdline = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    d = {"path": str(disk), "serial": "data", "queues": 2}
    argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD, cmdline, 512, 2,
                             [d], paths.VMM_BIN, extra=extra)
    samples = []
    sampler = Sampler(read=lambda pid: samples.append(thread_cpus(pid)) or samples[-1])
    sampler.start()
    try:
        g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    finally:
        sampler.stop.set()
        sampler.join()
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    rc, doc = fiojson.extract(g.lines)["verify"]
    assert rc == 0 and doc and fiojson.summary(doc)["ios"] > 0
    return g, sampler.best, samples


def test_threads_bound_while_fio_runs(tmp_path):
    g, got, _ = verify_sampled(tmp_path, ["--pin", "on"])
    allowed = sorted(os.sched_getaffinity(0))
    cpu = [allowed[0], allowed[1 % len(allowed)]]
    print("threads' CPUs:", got)
    want = {"vcpu0": {cpu[0]}, "vcpu1": {cpu[1]},
            "iothread-q0": {cpu[0]}, "iothread-q1": {cpu[1]}}
    for name, cpus in want.items():
        assert got.get(name) == [cpus], (name, got)
    assert got.get("vmm") and all(c == set(allowed) for c in got["vmm"]), got
    for name, cpus in want.items():
        assert "info: %s: on host CPU %d" % (name, min(cpus)) in g.stderr, g.stderr


def test_iothreads_follow_by_default(tmp_path):
    g, _, samples = verify_sampled(tmp_path, [])
    allowed = set(os.sched_getaffinity(0))
    full = [m for m in samples if all(n in m for n in
                                      ("vcpu0", "vcpu1", "iothread-q0", "iothread-q1"))]
    # from the main thread's first look on (20 ms after the vCPUs
    # start), every later sample
    bound = [i for i, m in enumerate(full)
             if all(len(m[n]) == 1 and len(m[n][0]) == 1 for n in ("iothread-q0", "iothread-q1"))]
    print("samples with every thread: %d, first followed: %s; last %s"
          % (len(full), bound[:1], full[-1:]))
    assert bound and len(full) - bound[0] >= 3, samples
    full = full[bound[0]:]
    for m in full:
        # the host places the vCPUs and the VMM's own threads
        for name in ("vcpu0", "vcpu1", "vmm"):
            assert all(c == allowed for c in m[name]), (name, m)
        # each iothread on one CPU the VMM may use, once its vCPU was seen
        for name in ("iothread-q0", "iothread-q1"):
            assert len(m[name]) == 1 and len(m[name][0]) == 1, (name, m)
            assert m[name][0] <= allowed, (name, m)
    moved = re.search(r"info: --pin follow: iothreads moved (\d+) times", g.stderr)
    assert moved and int(moved.group(1)) >= 2, g.stderr
    assert "cannot move" not in g.stderr and "sandbox" not in g.stderr, g.stderr
