"""--pin on with a real guest: while fio verify runs on a file disk with
a queue per vCPU, vCPU i is bound to the i-th CPU the VMM may use and
queue q's iothread to vCPU q's CPU, the VMM's other threads are left
where they may run, the verify passes and the VMM exits 0.

Stock kernel only: binding is the VMM's business, whatever the guest."""
import os
import subprocess

import guestlib
from test_sandbox import Sampler, per_thread
from vmharness import cmdlines, fiojson, guestrun, paths


def thread_cpus(pid):
    """{thread name: [set of CPUs it may run on]} of a running process."""
    return per_thread(pid, lambda task: [os.sched_getaffinity(int(os.path.basename(task)))])


def test_threads_bound_while_fio_runs(tmp_path):
    disk = tmp_path / "disk.img"
    subprocess.run(["truncate", "-s", "256M", str(disk)], check=True)
    cmdline = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    d = {"path": str(disk), "serial": "data", "queues": 2}
    argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD, cmdline, 512, 2,
                             [d], paths.VMM_BIN, extra=["--pin", "on"])
    sampler = Sampler(read=thread_cpus)
    sampler.start()
    try:
        g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    finally:
        sampler.stop.set()
        sampler.join()
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    rc, doc = fiojson.extract(g.lines)["verify"]
    assert rc == 0 and doc and fiojson.summary(doc)["ios"] > 0
    allowed = sorted(os.sched_getaffinity(0))
    cpu = [allowed[0], allowed[1 % len(allowed)]]
    got = sampler.best
    print("threads' CPUs:", got)
    want = {"vcpu0": {cpu[0]}, "vcpu1": {cpu[1]},
            "iothread-q0": {cpu[0]}, "iothread-q1": {cpu[1]}}
    for name, cpus in want.items():
        assert got.get(name) == [cpus], (name, got)
    assert got.get("vmm") and all(c == set(allowed) for c in got["vmm"]), got
    for name, cpus in want.items():
        assert "info: %s: on host CPU %d" % (name, min(cpus)) in g.stderr, g.stderr
