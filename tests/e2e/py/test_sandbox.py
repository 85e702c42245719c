"""The sandbox with a real guest: while fio verify runs on a file disk
with two queues (io_uring, then the sync engine), every thread of the VMM
is under a seccomp filter (mode 2 in /proc), and the sandbox stops
nothing: the verify passes and the VMM exits 0.  It runs with
glibc.malloc.arena_test=1: glibc then sizes its arena pool (reading
/sys, which no filter allows) at the second thread's first malloc, as
it does at the ninth with 8 vCPUs and 8 queues; the VMM must have set
that up before any filter (host/sandbox.c).

Stock kernel only: this is about the VMM's process (its threads'
filters), which does the same whatever kernel the guest runs."""
import glob
import os
import subprocess
import threading

import pytest

import guestlib
from vmharness import cmdlines, fiojson, guestrun, paths


def per_thread(pid, values):
    """{thread name: [values]} of a running process, values(task dir)
    giving a list for each of its threads."""
    out = {}
    for task in glob.glob("/proc/%d/task/*" % pid):
        try:
            with open(os.path.join(task, "comm")) as f:
                name = f.read().strip()
            got = values(task)
        except OSError:
            continue  # the thread ended meanwhile
        out.setdefault(name, []).extend(got)
    return out


def seccomp_modes(pid):
    """{thread name: [modes]} of a running process."""
    def modes(task):
        with open(os.path.join(task, "status")) as f:
            return [int(l.split()[1]) for l in f if l.startswith("Seccomp:")]
    return per_thread(pid, modes)


def vmm_children():
    """PIDs of this process's children that are our VMM."""
    pids = []
    for f in glob.glob("/proc/%d/task/*/children" % os.getpid()):
        try:
            with open(f) as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:
            pass
    out = []
    for pid in pids:
        try:
            with open("/proc/%d/comm" % pid) as fh:
                if fh.read().strip() == "vmm":
                    out.append(pid)
        except OSError:
            pass
    return out


class Sampler(threading.Thread):
    """Every half second, read(pid) of the running VMM ({thread name:
    [values]}; the seccomp modes of its threads unless told); keeps the
    sample with the most thread names."""

    def __init__(self, read=seccomp_modes):
        super().__init__(daemon=True)
        self.read = read
        self.best = {}
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(0.5):
            for pid in vmm_children():
                m = self.read(pid)
                if len(m) > len(self.best):
                    self.best = m


@pytest.mark.parametrize("engine", ["uring", "sync"])
def test_every_thread_confined_while_fio_runs(tmp_path, engine, monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_test=1")
    disk = tmp_path / "disk.img"
    subprocess.run(["truncate", "-s", "256M", str(disk)], check=True)
    cmdline = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    d = {"path": str(disk), "serial": "data", "queues": 2,
         "opts": ["engine=" + engine]}
    argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD, cmdline, 512, 2,
                             [d], paths.VMM_BIN)
    sampler = Sampler()
    sampler.start()
    try:
        g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    finally:
        sampler.stop.set()
        sampler.join()
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    assert "sandbox" not in g.stderr, g.stderr
    rc, doc = fiojson.extract(g.lines)["verify"]
    assert rc == 0 and doc and fiojson.summary(doc)["ios"] > 0
    modes = sampler.best
    print("seccomp modes:", modes)
    for kind in ("vmm", "vcpu0", "vcpu1", "iothread-q0", "iothread-q1"):
        assert kind in modes, modes
    assert all(m == 2 for ms in modes.values() for m in ms), modes
