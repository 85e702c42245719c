"""What the end-to-end tests share over vmharness: the guest kernels,
the disks, the command lines of a guest under our VMM or QEMU, and the
checks of what guest/init prints (its disk lines, fio's JSON, the RUN
block, the control socket's answers).  Every check fails with the end of the console (GuestRun.tail).

In the test host a guest has 1 vCPU and 1 queue unless its test is about
more: 2-vCPU guests are where its emulated AMD-V kills or hangs guests
(guest/README.md, known problems)."""
import json
import os
import re
import subprocess
import time

import pytest

from vmharness import cmdlines, fiojson, guestrun, paths

MIB = 1 << 20
MEM_MB = 512
BOOT_TIMEOUT = 240   # s per guest that runs fio
SHORT_TIMEOUT = 120  # s per guest that runs a command or nothing

# Guests' vCPUs and queues per disk when the test is not about them: 1
# in the test host (above), 2 on a hardware KVM.
CPUS = QUEUES = 1 if os.environ.get("TESTHOST") else 2

KERNEL_NAMES = sorted(paths.KERNELS, key=lambda k: k != "stock")  # stock first


class Kernel:
    """One of paths.KERNELS; path() fails the test when the file is not
    there (a kernel not built is a failure, never a skip)."""

    def __init__(self, name):
        self.name = name

    def path(self, form="bzImage"):
        p = paths.KERNELS[self.name][form]
        if not os.path.isfile(p):
            pytest.fail("the %s kernel's %s is missing: %s (guest/build.sh, `make guest`, builds it)"
                        % (self.name, form, p), pytrace=False)
        return p

    def __repr__(self):
        return self.name


STOCK = Kernel("stock")


def new_disk(path, size_mib):
    """A sparse file of SIZE_MIB at PATH (replacing any)."""
    path = str(path)
    if os.path.exists(path):
        os.unlink(path)
    subprocess.run(["truncate", "-s", "%dM" % size_mib, path], check=True)
    return path


def disk(path, serial, queues=1, readonly=False, **kw):
    """A disk for cmdlines: O_DIRECT (cache=none) where the file's
    filesystem has it (not the test host's tmpfs), as run.sh did."""
    d = {"path": str(path), "serial": serial, "queues": queues, "readonly": readonly}
    if not d["path"].startswith("ram:"):
        d["direct"] = cmdlines.direct_ok(d["path"])
    d.update(kw)
    return d


def std_disks(tmp_path, data_mib, queues=1):
    """vda: a 64 MiB read-only disk, serial sys; vdb: the data disk
    (a file of DATA_MIB), serial data."""
    return [disk(new_disk(tmp_path / "sys.img", 64), "sys", queues, readonly=True),
            disk(new_disk(tmp_path / "data.img", data_mib), "data", queues)]


def vmm_argv(kernel_path, cmdline, disks, cpus=1, verbose=True, extra=()):
    return cmdlines.vmm_argv(kernel_path, paths.INITRD, cmdline, MEM_MB, cpus, disks,
                             paths.VMM_BIN, verbose=verbose, extra=extra)


def qemu_argv(kernel_path, cmdline, disks, cpus=1):
    return cmdlines.qemu_argv(kernel_path, paths.INITRD, cmdline, MEM_MB, cpus, disks)


def run(argv, tmp_path, name="guest", timeout=BOOT_TIMEOUT, **kw):
    """One guest, tried again after a test-host death (run_with_retries);
    logs in TMP_PATH/NAME.log.N."""
    return guestrun.run_with_retries(argv, str(tmp_path / (name + ".log")),
                                     timeout=timeout, **kw)


def ended_clean(g):
    """The VMM exited 0."""
    assert g.rc == 0, "the VMM failed\n" + g.tail()


DISK_LINE = re.compile(r"^guest: disk (vd[a-z]+) serial=(\S+) size=(\d+)MiB ro=(\d) queues=(\d+)$")


def disk_lines(g):
    """{serial: (name, size MiB, ro, queues)} from guest/init's lines."""
    out = {}
    for line in g.lines:
        m = DISK_LINE.match(line)
        if m and m.group(2) not in out:
            out[m.group(2)] = (m.group(1), int(m.group(3)), int(m.group(4)), int(m.group(5)))
    return out


def check_disk(g, serial, size_mib, ro, queues):
    """The guest listed the disk SERIAL with that size, read-only flag
    and number of queues."""
    got = disk_lines(g).get(serial)
    assert got, "the guest did not list a disk with serial %s\n%s" % (serial, g.tail())
    assert got[1:] == (size_mib, ro, queues), (
        "disk %s: size=%dMiB ro=%d queues=%d, want size=%dMiB ro=%d queues=%d\n%s"
        % ((serial,) + got[1:] + (size_mib, ro, queues, g.tail())))


def fio_doc(g, job):
    """fio's JSON for JOB: the VMM exited 0, both markers are there, fio
    ended 0, the JSON parses and no job reports an error."""
    ended_clean(g)
    got = fiojson.extract(g.lines).get(job)
    assert got, "no FIO-JSON END marker for %s\n%s" % (job, g.tail())
    rc, doc = got
    assert rc == 0, "fio %s failed in the guest: rc=%d\n%s" % (job, rc, g.tail())
    assert doc, "fio %s: what is between the markers is not JSON\n%s" % (job, g.tail())
    errs = ["%s: error %s" % (j.get("jobname"), j["error"])
            for j in doc.get("jobs", []) if j.get("error")]
    assert not errs, "fio %s reports errors: %s\n%s" % (job, errs, g.tail())
    return doc


def run_out(g):
    """The lines of the guest's RUN block: the VMM exited 0, the RUN END
    marker is there, and the command's status was 0."""
    ended_clean(g)
    rc, lines = guestrun.run_block(g.lines)
    assert rc is not None, "no RUN END marker\n" + g.tail()
    assert rc == 0, "guest command failed: rc=%d\n%s" % (rc, g.tail())
    return lines


# Our VMM's per-disk counters (-v), the last line, for the record.
vmm_counters = guestrun.vmm_counters


# ---- the control socket (vmm run --api) ----------------------------------

def ctl(sock, *args, ok=True, timeout=120):
    """`vmm ctl --json SOCK ARGS`: the answer's "return"; ok=False: (its
    exit status, its stderr) without a check."""
    out = subprocess.run([paths.VMM_BIN, "ctl", "--json", sock] + list(args),
                         capture_output=True, text=True, timeout=timeout)
    if not ok:
        return out.returncode, out.stderr
    assert out.returncode == 0, "vmm ctl %s: %s%s" % (" ".join(args), out.stdout, out.stderr)
    return json.loads(out.stdout)["return"]


def console_trace(tmp_path):
    """f(line): the console as it comes, line by line with a time, kept
    where it outlives the test host (beside VMH_PYTEST_RECORD's file)
    when there is such a place: what a guest that never ends said."""
    rec = os.environ.get("VMH_PYTEST_RECORD")
    d = os.path.dirname(rec) if rec else str(tmp_path)
    f = open(os.path.join(d, "console-%s.log" % os.path.basename(str(tmp_path))), "a")

    def write(line):
        f.write("%.3f %s\n" % (time.monotonic(), line))
        f.flush()
    return write


def wait_step(name):
    """A guest script's step that says API-WAIT NAME and waits for the
    host's answer (GuestRun's on_line acts, then guestrun.answer)."""
    return ('echo "API-WAIT %s"\n'
            'read -r -t 300 go || { echo NO-ANSWER; poweroff -f; }\n' % name)


def api_steps(act, errors, trace=None):
    """GuestRun's on_line for a guest script of wait_step()s: for each
    API-WAIT NAME, act(NAME, proc), then the answer that lets the guest
    go on.  An exception from act is kept in the list errors (the guest
    goes on all the same), for the test to report with the guest's log;
    trace, if given, sees every line."""
    def on_line(line, proc):
        if trace:
            trace(line)
        w = line.split()
        if len(w) != 2 or w[0] != "API-WAIT":
            return
        try:
            act(w[1], proc)
        except Exception as e:
            errors.append("%s: %r" % (line, e))
        guestrun.answer(proc, "go")
    return on_line


def field(g, word):
    """The words after WORD on the guest's first line starting with it."""
    for line in g.lines:
        w = line.split()
        if w and w[0] == word:
            return w[1:]
    raise AssertionError("no %s line\n%s" % (word, g.tail()))
