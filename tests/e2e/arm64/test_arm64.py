"""arm64 end to end (issue 38): Debian's arm64 kernel under our arm64 VMM
in the arm64 test host (QEMU TCG aarch64 with virtualization=on, KVM
inside): fio verify on a RAM disk and on a file with 1 and 2 queues,
each queue's interrupts on its own ITS MSI; a read-only disk; the
console both ways under the sandbox; PSCI poweroff and reset; a panic
seen through pvpanic; disks attached and detached through the control
socket (PCIe native hot-plug): three cycles with bad requests refused
and no thread or fd left behind, a full slot, detach under fio (orderly
and forced), the guest's own remove and rescan.

One test-host boot runs the cases (tests/e2e/arm64/cases.sh); a test
host that dies is booted again for the cases left.  ARM64_E2E_CASES
(space-separated) picks the cases; `make test` runs QUICK, `make e2e`
all of them.
"""
import os
import re

import pytest

from vmharness import paths, testhost

CASES = os.path.join(paths.REPO, "tests", "e2e", "arm64", "cases.sh")
OUT = os.path.join(paths.BUILD, "e2e-arm64")
QUICK = "verify-ram-2q verify-file-1q readonly console sigterm poweroff reset panic"
ALL = QUICK + (" verify-ram-1q verify-file-2q verify-intx hotplug hotplug-io hotplug-rescan"
               " hotplug-launch hotplug-50 sizes sizes-4 sizes-16")
WANTED = os.environ.get("ARM64_E2E_CASES", ALL).split()
CASE_TIMEOUT = 900


def _done(case):
    return os.path.exists(os.path.join(OUT, case, "rc"))


@pytest.fixture(scope="session")
def results():
    """Runs the wanted cases in the arm64 test host (booted again, three
    boots at most, while cases are left); returns the output folder."""
    for f in (paths.ARM64_VMM, paths.ARM64_KERNEL, paths.ARM64_INITRD):
        assert os.path.exists(f), "%s missing: make ARCH=arm64, ARCH=arm64 guest/build.sh" % f
    import shutil
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    env = dict(os.environ, CASE_TIMEOUT=str(CASE_TIMEOUT))

    def left():
        return [c for c in WANTED if not _done(c)]
    testhost.run_with_reboots(
        lambda: [CASES, OUT] + left(), OUT,
        lambda rc: not left(), boots=3, env=env, arch="arm64",
        timeout_s=len(WANTED) * CASE_TIMEOUT, stall_s=CASE_TIMEOUT + 120)
    return OUT


def case(results, name):
    if name not in WANTED:
        pytest.skip("not in ARM64_E2E_CASES")
    d = os.path.join(results, name)
    assert _done(name), "case %s did not run (test host died three times?)" % name

    def read(f):
        p = os.path.join(d, f)
        return open(p, errors="replace").read() if os.path.exists(p) else ""
    rc = int(read("rc"))
    return rc, read("console"), read("stderr"), read


def irq_count(line):
    """A /proc/interrupts line's count, all CPUs together ("N: c0 c1 ...
    CHIP ...")."""
    count = 0
    for word in line.split(":", 1)[1].split():
        if not word.isdigit():
            break
        count += int(word)
    return count


def queue_interrupts(console):
    """The guest's /proc/interrupts lines of the target disk's queues
    (virtioN-req.Q of the disk with the most queue lines: vdb, the last):
    {queue: (irq, total count, line)}."""
    per_dev = {}
    for line in console.splitlines():
        m = re.match(r"\s*(\d+):(.*)\s(virtio\d+)-req\.(\d+)\s*$", line)
        if not m:
            continue
        per_dev.setdefault(m.group(3), {})[int(m.group(4))] = (
            int(m.group(1)), irq_count(line), line)
    assert per_dev, "no virtio queue in the guest's /proc/interrupts"
    return per_dev[sorted(per_dev)[-1]]


@pytest.mark.parametrize("name,queues", [
    ("verify-ram-2q", 2), ("verify-file-1q", 1),
    ("verify-ram-1q", 1), ("verify-file-2q", 2)])
def test_verify(results, name, queues):
    rc, con, err, _ = case(results, name)
    assert rc == 0, "status %d: %s" % (rc, err[-2000:])
    assert "fio rc=0" in con, con[-3000:]
    q = queue_interrupts(con)
    assert sorted(q) == list(range(queues)), q
    irqs = {irq for irq, _, _ in q.values()}
    assert len(irqs) == queues, "queues share an interrupt: %s" % q
    for n, (irq, count, line) in q.items():
        assert "ITS-MSI" in line, line
        assert count > 0, "queue %d had no interrupt: %s" % (n, line)
    # --stats, written at exit by the main thread under its filter: the
    # target disk's requests, each of its queues serving some
    import json
    stats = json.loads(open(os.path.join(results, name, "stats.json")).read())
    disk = stats["disks"][-1]
    assert disk["requests"] > 1000 and disk["io_errors"] == 0, disk
    assert len(disk["queues"]) == queues, disk


def test_verify_intx(results):
    rc, con, err, _ = case(results, "verify-intx")
    assert rc == 0, "status %d: %s" % (rc, err[-2000:])
    assert "fio rc=0" in con, con[-3000:]
    # INTx: one line per device on a GIC SPI, none through the ITS
    lines = [l for l in con.splitlines() if re.search(r"virtio\d", l)]
    assert lines and not any("ITS-MSI" in l for l in lines), lines
    assert any("GICv3" in l and irq_count(l) > 0 for l in lines), lines


def test_sigterm(results):
    rc, con, err, _ = case(results, "sigterm")
    assert rc == 143, err[-2000:]
    assert "stopped by signal 15" in err, err[-2000:]
    for cpu in (0, 1):
        assert re.search(r"vCPU %d: .*pc=0x[0-9a-f]+" % cpu, err), err[-2000:]


def test_readonly(results):
    rc, con, err, read = case(results, "readonly")
    assert rc == 0, err[-2000:]
    assert "ro=1" in con, con[-2000:]
    m = re.search(r"dd rc=(\d+)", con)
    assert m and m.group(1) != "0", con[-2000:]
    assert read("before") and read("before") == read("after")


def test_console_both_ways_under_the_sandbox(results):
    rc, con, err, read = case(results, "console")
    assert rc == 0, err[-2000:]
    assert "got:hello from the host" in con, con[-2000:]
    threads = read("threads").splitlines()
    # main, console input, vCPUs, iothreads: every one filtered
    assert len(threads) >= 4, threads
    for t in threads:
        assert re.search(r"Seccomp:\s+2$", t), t


@pytest.mark.parametrize("name,words", [
    ("poweroff", "powered off"), ("reset", "guest reset")])
def test_psci_ends_the_vm(results, name, words):
    rc, con, err, _ = case(results, name)
    assert rc == 0, err[-2000:]
    assert words in err, err[-2000:]


def test_panic_through_pvpanic(results):
    rc, con, err, _ = case(results, "panic")
    assert rc == 3, err[-2000:]
    assert "panicked" in err, err[-2000:]


BAD = ("Oops", "BUG:", "WARNING:", "hung_task", "blocked for more than")


def no_oops(con):
    for bad in BAD:
        assert bad not in con, "%s in the guest's log\n%s" % (bad, con[-3000:])


def ctl_ok(out, name="vdb"):
    """A `vmm ctl` attach or detach's output file (cases.sh ctl_out):
    status 0, and the disk's name printed."""
    return "rc=0" in out and re.search(r"^%s$" % name, out, re.M) is not None


def check_refusals(read, sub=""):
    """The bad requests (cases.sh refuse): each status 1, one line on
    stderr with the words wanted; the disk list (vda at least) the same
    before and after each round.  Returns the requests seen."""
    seen = check_refusals_only(read, sub)
    disks = dict(l.split(": ", 1) for l in read(sub + "disks").splitlines())
    whens = {w.rsplit("-", 1)[0] for w in disks}
    for w in whens:
        assert disks[w + "-before"] == disks[w + "-after"], disks
        assert "vda" in disks[w + "-before"].split(), disks
    return seen


def test_hotplug(results):
    """Three cycles: `vmm ctl attach ram:64M,serial=hpN` answers vdb and
    the guest's pciehp brings /dev/vdb up (64 MiB, serial hpN) on its
    own; fio verifies 16 MiB on it; `vmm ctl detach vdb` returns once
    the guest let it go, and /sys/block/vdb is gone; the VMM's threads
    and fds after each detach as before the first attach.  Bad requests
    refused before the first attach and after the first detach.  No
    oops, BUG or warning; the VMM ends with status 0."""
    rc, con, err, read = case(results, "hotplug")
    for i in (1, 2, 3):
        attach, detach = read("attach%d" % i), read("detach%d" % i)
        assert ctl_ok(attach), "attach %d: %s\n%s\n%s" % (i, attach, err[-2000:], con[-3000:])
        assert "SEEN%d %d hp%d" % (i, 64 * 2048, i) in con, con[-3000:]
        assert "VERIFY%d rc=0" % i in con, con[-3000:]
        assert ctl_ok(detach), "detach %d: %s\n%s" % (i, detach, con[-3000:])
        assert "GONE%d" % i in con.split(), con[-3000:]
    counts = dict(l.split(" ", 1) for l in read("counts").splitlines())
    assert list(counts) == ["start", "detach1", "detach2", "detach3"], counts
    assert set(counts.values()) == {counts["start"]}, \
        "threads and fds after each detach differ from the start: %s" % counts
    seen = check_refusals(read)
    assert len(seen) == 10 and seen[0].startswith("start ") \
        and seen[5].startswith("after "), seen
    no_oops(con)
    assert rc == 0, "status %d: %s" % (rc, err[-2000:])


def test_hotplug_50(results):
    """Fifty attach/verify/detach cycles while the launch disk runs fio
    verify over and over: every cycle's disk seen and verified and gone,
    the VMM's threads and fds back to the start after each detach,
    every verify beside passing, no oops; status 0."""
    rc, con, err, read = case(results, "hotplug-50")
    lines = con.split()
    for i in range(1, 51):
        assert ctl_ok(read("attach%d" % i)), "attach %d: %s\n%s" % (
            i, read("attach%d" % i), con[-3000:])
        assert "SEEN%d %d hp%d" % (i, 64 * 2048, i) in con, "cycle %d\n%s" % (i, con[-3000:])
        assert "VERIFY%d rc=0" % i in con, "cycle %d\n%s" % (i, con[-3000:])
        assert ctl_ok(read("detach%d" % i)), "detach %d: %s" % (i, read("detach%d" % i))
        assert "GONE%d" % i in lines, "cycle %d\n%s" % (i, con[-3000:])
    counts = dict(l.split(" ", 1) for l in read("counts").splitlines())
    assert len(counts) == 51 and set(counts.values()) == {counts["start"]}, \
        "threads and fds after each detach differ from the start: %s" % counts
    passes = re.findall(r"BESIDE rc=(\d+)", con)
    assert passes and set(passes) == {"0"}, (passes, con[-3000:])
    no_oops(con)
    assert rc == 0, "status %d: %s" % (rc, err[-2000:])


def test_hotplug_no_free_slot(results):
    """--hotplug-slots 1 with its slot in use: the second attach is
    refused with one line and status 1, the disks as they were; `vmm
    ctl quit` then ends the VMM as SIGTERM would (143)."""
    rc, con, err, read = case(results, "hotplug")
    sub = "full/"
    assert ctl_ok(read(sub + "attach")), read(sub + "attach") + read(sub + "stderr")[-2000:]
    assert "SEEN %d" % (64 * 2048) in read(sub + "console"), read(sub + "console")[-3000:]
    assert check_refusals(read, sub) == ["full attach ram:64M"]
    assert read(sub + "disks").splitlines()[0].split(": ")[1].split() == ["vda", "vdb"]
    assert "rc=0" in read(sub + "quit") and read(sub + "rc").strip() == "143", \
        read(sub + "quit") + read(sub + "stderr")[-2000:]


def test_hotplug_detach_under_io(results):
    """Detach while fio writes to vdb, orderly then forced, a fresh
    attach before each: fio ends within 60 s either way (else the
    guest's FIO-STUCK and blocked tasks), vdb goes, the launch disk
    still verifies; no oops, BUG, warning or hung task; status 0."""
    rc, con, err, read = case(results, "hotplug-io")
    stuck = [l for l in con.splitlines() if l.startswith("FIO-STUCK")]
    assert not stuck, "fio blocked after the detach: %s\n%s" % (stuck, con[-6000:])
    for m in ("safe", "force"):
        assert ctl_ok(read("attach-" + m)), "attach %s: %s\n%s" % (m, read("attach-" + m), con[-3000:])
        assert "SEEN-%s %d" % (m, 64 * 2048) in con, con[-3000:]
        assert ctl_ok(read("detach-" + m)), "detach %s: %s\n%s" % (m, read("detach-" + m), con[-3000:])
        assert re.search(r"^FIO-%s rc=\d+" % m, con, re.M), con[-3000:]  # ended, either way
        assert "GONE-" + m in con.split(), con[-3000:]
    assert "LAUNCH rc=0" in con, con[-3000:]
    no_oops(con)
    assert rc == 0, "status %d: %s" % (rc, err[-2000:])


def test_hotplug_launch_disk(results):
    """A launch disk given with `hotplug` (vdb) is in a slot: the guest
    finds it at boot and verifies it; `info` marks it (and not vda) as
    hot-pluggable; vda's detach is refused with the way to make it
    detachable; vdb's detach under fio ends fio and vdb goes; the freed
    slot takes an attach (vdb again), verified and detached; the launch
    disk on bus 0 still verifies; no oops; status 0."""
    rc, con, err, read = case(results, "hotplug-launch")
    assert "SEEN1 %d boot" % (64 * 2048) in con, err[-2000:] + con[-3000:]
    assert "VERIFY1 rc=0" in con, con[-3000:]
    info = read("info")
    assert re.search(r"^vda\s(?!.*hotplug).*$", info, re.M), info
    assert re.search(r"^vdb\s.*\shotplug$", info, re.M), info
    assert check_refusals_only(read) == ["launch detach vda"]
    assert ctl_ok(read("detach1")), read("detach1") + con[-3000:]
    assert re.search(r"^FIO rc=\d+", con, re.M), con[-3000:]  # ended, either way
    assert "GONE1" in con.split(), con[-3000:]
    assert ctl_ok(read("attach2")) and "vdb" in read("attach2"), read("attach2")
    assert "SEEN2 %d again" % (64 * 2048) in con, con[-3000:]
    assert "VERIFY2 rc=0" in con, con[-3000:]
    assert ctl_ok(read("detach2")), read("detach2")
    assert "GONE2" in con.split(), con[-3000:]
    assert "LAUNCH rc=0" in con, con[-3000:]
    no_oops(con)
    assert rc == 0, "status %d: %s" % (rc, err[-2000:])


def check_refusals_only(read, sub=""):
    """cases.sh refuse's lines alone (no disk lists): each status 1, one
    line with the words wanted.  Returns the requests seen."""
    lines = read(sub + "refusals").splitlines()
    assert lines, "no refusal ran"
    for line in lines:
        what, want, rc, n, err = line.split("|", 4)
        assert rc == "rc=1" and n == "lines=1" and want in err, line
    return [l.split("|")[0] for l in lines]


def active_queues(info):
    """`vmm ctl info`'s vdb line: (queues, active)."""
    m = re.search(r"^vdb\s.*\s(\d+) queues \((\d+) active\)", info, re.M)
    assert m, info
    return int(m.group(1)), int(m.group(2))


def test_hotplug_guest_remove_and_rescan(results):
    """The guest removes the attached disk's PCI function: the VMM's
    info still lists vdb, no queue active; the guest's rescan brings it
    back (read with O_DIRECT), each queue active again; resize, limit,
    pause and resume work on it; then detach."""
    rc, con, err, read = case(results, "hotplug-rescan")
    assert ctl_ok(read("attach")), read("attach") + con[-3000:]
    assert "GONE-removed" in con.split(), con[-3000:]
    queues, active = active_queues(read("info-removed"))
    assert queues >= 1 and active == 0, read("info-removed")
    assert "READ rc=0" in con, con[-3000:]
    assert active_queues(read("info-rescanned")) == (queues, queues), read("info-rescanned")
    # resize, limit, pause, resume on the attached disk as on a launch disk
    assert read("resize").split() == ["100663296", "bytes", "rc=0"], read("resize")
    for c in ("limit", "pause", "resume"):
        assert read(c).split() == ["ok", "rc=0"], (c, read(c))
    assert re.search(r"^vdb\s+ram\s+100663296 bytes", read("info-resized"), re.M), \
        read("info-resized")
    assert ctl_ok(read("detach")), read("detach") + con[-3000:]
    assert "GONE-detached" in con.split(), con[-3000:]
    no_oops(con)
    assert rc == 0, "status %d: %s" % (rc, err[-2000:])


def sizes_outcome(rc, con, err, disks):
    """A sizes case's guest report: status 0, no failed fio run, one
    clean verify line per disk.  Returns ({disk: queues Linux uses},
    {virtioN: {queue: interrupts}}, [each queue's interrupt number])."""
    assert rc == 0, "status %d: %s\n%s" % (rc, err[-2000:], con[-3000:])
    lines = [l.strip() for l in con.splitlines()]
    assert "failed fio runs: 0" in lines, con[-3000:]
    verify = [l for l in lines if l.startswith("verify ")]
    assert len(verify) == disks, con[-3000:]
    for l in verify:
        assert "err= 0" in l and l.count("err=") == 1, l
    queues = {l.split()[1].rstrip(":"): int(l.split()[2])
              for l in lines if l.startswith("queues ")}
    irqs, nums = {}, []
    for l in lines:
        m = re.match(r"^irq (virtio\d+)-req\.(\d+) (\d+) (\d+) ITS-MSI$", l)
        if m:
            irqs.setdefault(m.group(1), {})[int(m.group(2))] = int(m.group(3))
            nums.append(m.group(4))
    return queues, irqs, nums


def test_sizes_eight_vcpus_eight_disks(results):
    """8 vCPUs, 8 disks (RAM, files, a null_blk with O_DIRECT where the
    test host makes one), one of 16 queues: fio verify on every disk with
    a job on every vCPU passes; Linux uses min(queues, vCPUs) = 8 queues
    on each; each queue has its own ITS interrupt, and every queue a job
    ran on raised some."""
    rc, con, err, read = case(results, "sizes")
    queues, irqs, nums = sizes_outcome(rc, con, err, disks=8)
    assert sorted(queues.values()) == [8] * 8, queues
    assert len(irqs) == 8, irqs
    for dev_irqs in irqs.values():
        assert sorted(dev_irqs) == list(range(8)), irqs
        assert all(n > 0 for n in dev_irqs.values()), irqs
    # one ITS MSI per queue: no two queues share an interrupt number
    assert len(nums) == 64 and len(set(nums)) == 64, nums
    # The test host makes null_blk devices (configfs): one disk is one.
    assert re.search(r"-d /dev/nullb\w*,direct,queues=8", read("disks")), \
        read("disks") + read("nullb")


@pytest.mark.parametrize("cpus", [4, 16])
def test_sizes_vcpus(results, cpus):
    """CPUS vCPUs (with verify-ram-1q's one and sizes' eight: 1, 4, 8 and
    16): fio verify with a job on every vCPU passes on a RAM disk with the
    default queue count, which is one per vCPU, and on a file with 4
    queues; each queue has its own ITS interrupt and raised some."""
    rc, con, err, read = case(results, "sizes-%d" % cpus)
    queues, irqs, nums = sizes_outcome(rc, con, err, disks=2)
    assert queues == {"vda": cpus, "vdb": 4}, queues
    assert sorted(len(q) for q in irqs.values()) == sorted([cpus, 4]), irqs
    for dev_irqs in irqs.values():
        assert all(n > 0 for n in dev_irqs.values()), irqs
    assert len(nums) == cpus + 4 and len(set(nums)) == cpus + 4, nums
