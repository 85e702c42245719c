"""--pin with a real guest, while fio verify runs on a file disk with a
queue per vCPU.  on: vCPU i is bound to the i-th CPU the VMM may use and
queue q's iothread to vCPU q's CPU, the VMM's other threads are left
where they may run.  follow (the default): the vCPUs may run on every
CPU the VMM may, each iothread on one of them at a time; vcpu0, bound
by the test to each CPU in turn, has iothread-q0 after it within 2 s
each time; -v counts two iothreads placed and the moves.  In both the verify passes and the VMM exits 0.

Stock kernel only: binding is the VMM's business, whatever the guest."""
import os
import re
import subprocess
import threading
import time

import guestlib
from test_sandbox import Sampler, per_thread, vmm_children
from vmharness import cmdlines, fiojson, guestrun, paths


def thread_cpus(pid):
    """{thread name: [set of CPUs it may run on]} of a running process."""
    return per_thread(pid, lambda task: [os.sched_getaffinity(int(os.path.basename(task)))])


def verify_sampled(tmp_path, extra):
    """fio verify on a 256 MiB file with 2 queues and 2 vCPUs, the VMM's
    threads' CPU sets sampled every half second meanwhile: the run (its
    verify passed, the VMM exited 0), the sample with the most threads
    and every sample of the last VMM started (a death is tried again)."""
    disk = tmp_path / "disk.img"
    subprocess.run(["truncate", "-s", "256M", str(disk)], check=True)
    cmdline = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    d = {"path": str(disk), "serial": "data", "queues": 2}
    argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD, cmdline, 512, 2,
                             [d], paths.VMM_BIN, extra=extra)
    samples = []
    sampler = Sampler(read=lambda pid: samples.append((pid, thread_cpus(pid))) or samples[-1][1])
    sampler.start()
    try:
        g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    finally:
        sampler.stop.set()
        sampler.join()
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    rc, doc = fiojson.extract(g.lines)["verify"]
    assert rc == 0 and doc and fiojson.summary(doc)["ios"] > 0
    last = samples[-1][0] if samples else None
    return g, sampler.best, [m for pid, m in samples if pid == last]


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


def tids_by_name(pid):
    """{thread name: [tid]} of a running process."""
    return per_thread(pid, lambda task: [int(os.path.basename(task))])


class Mover(threading.Thread):
    """Once a VMM runs with its iothreads placed, binds its vcpu0 to each
    CPU the VMM may use in turn and records, for each, whether
    iothread-q0 was on that CPU alone within 2 s; then frees vcpu0."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.followed = []

    def run(self):
        allowed = os.sched_getaffinity(0)
        while not self.stop.wait(0.2):
            for pid in vmm_children():
                try:
                    t = tids_by_name(pid)
                    vcpu, io = t["vcpu0"][0], t["iothread-q0"][0]
                    if len(os.sched_getaffinity(io)) != 1:
                        continue
                    for cpu in sorted(allowed):
                        os.sched_setaffinity(vcpu, {cpu})
                        end = time.monotonic() + 2
                        while os.sched_getaffinity(io) != {cpu} and time.monotonic() < end:
                            time.sleep(0.02)
                        self.followed.append((cpu, os.sched_getaffinity(io) == {cpu}))
                    os.sched_setaffinity(vcpu, allowed)
                    return
                except (KeyError, OSError):
                    continue  # not all threads there yet, or it ended


def test_iothreads_follow_by_default(tmp_path):
    mover = Mover()
    mover.start()
    try:
        g, _, samples = verify_sampled(tmp_path, [])
    finally:
        mover.stop.set()
        mover.join()
    # vcpu0 bound to each CPU in turn: iothread-q0 went after it each time
    print("iothread-q0 after vcpu0:", mover.followed)
    assert len(mover.followed) == len(os.sched_getaffinity(0)), mover.followed
    assert all(ok for _, ok in mover.followed), mover.followed
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
        # the host places the vCPUs and the VMM's own threads (vcpu0
        # is bound for a while by the test's Mover)
        for name in ("vcpu1", "vmm"):
            assert all(c == allowed for c in m[name]), (name, m)
        # each iothread on one CPU the VMM may use, once its vCPU was seen
        for name in ("iothread-q0", "iothread-q1"):
            assert len(m[name]) == 1 and len(m[name][0]) == 1, (name, m)
            assert m[name][0] <= allowed, (name, m)
    # both iothreads placed (the moves were checked by the Mover: this
    # VMM may be one tried again after it)
    placed = re.search(r"info: --pin follow: (\d+) iothreads placed, then moved \d+ times",
                       g.stderr)
    assert placed and int(placed.group(1)) == 2, g.stderr
    assert "cannot move" not in g.stderr and "sandbox" not in g.stderr, g.stderr
