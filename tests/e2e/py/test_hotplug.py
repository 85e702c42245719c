"""Disks attached and detached while the guest runs (`vmm run
--hotplug-slots`, `vmm ctl attach`, `vmm ctl detach`).

One guest with its launch disk (vda) and the default 4 empty hot-plug
slots (--api).  Three times in a row: the host attaches `ram:64M`
through the socket and gets the name the guest will use (vdb); the
guest's pciehp powers the slot on and probes virtio_blk with no action
of the guest's own, /dev/vdb appears with the size and serial asked
for, and fio writes and verifies 16 MiB on it (crc32c); the host then
detaches it (attention button: the guest's pciehp waits its 5 s,
removes the driver and powers the slot off), and the guest no longer
has /sys/block/vdb.  The VMM's threads and open files after each
detach equal their count before the first attach.  Bad requests are
refused with one line and change nothing: a spec naming a missing file,
a bad option, a launch disk's detach, an unknown disk, a detach twice.
Another guest detaches a RAM disk while fio writes to it, orderly and
then with --force (test_detach_under_io).

The three cycles run on both guest kernels: Debian's has the port
driver and pciehp built in (CONFIG_PCIEPORTBUS, CONFIG_HOTPLUG_PCI_PCIE),
the small kernel from guest/small.config's hot-plug lines; no firmware
table is needed (no ACPI here: Linux takes native hot-plug).  The rest
runs on the stock kernel."""
import os
import re

import pytest

import guestlib
from guestlib import ctl, field, wait_step
from vmharness import cmdlines, guestrun

CYCLES = 3


def counts(pid):
    """The VMM's threads and open files."""
    return (len(os.listdir("/proc/%d/task" % pid)), len(os.listdir("/proc/%d/fd" % pid)))


# The whole script goes on the kernel command line (base64): one loop;
# BESIDE, when set, runs fio verify on the launch disk ($DISK) over and
# over meanwhile, each pass saying BESIDE rc=N.
BESIDE = ("( while [ ! -e /tmp/stop ]; do fio --eta=never --name=b --filename=$DISK "
          "--ioengine=psync --direct=1 --bs=64k --rw=write --verify=crc32c --do_verify=1 "
          "--size=8M --output=/tmp/b.out; echo \"BESIDE rc=$?\"; done ) & b=$!\n")
SCRIPT = (
    "%s"
    "i=1; while [ $i -le %d ]; do\n"
    + wait_step("attach$i") +
    "n=0; while [ ! -b /dev/vdb ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done\n"
    'echo "SEEN$i $(cat /sys/block/vdb/size) $(cat /sys/block/vdb/serial)"\n'
    "fio --eta=never --name=v --filename=/dev/vdb --ioengine=psync --direct=1 --bs=64k "
    "--rw=write --verify=crc32c --do_verify=1 --size=16M --output=/tmp/v.out\n"
    'echo "VERIFY$i rc=$?"\n'
    + wait_step("detach$i") +
    "n=0; while [ -e /sys/block/vdb ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done\n"
    '[ -e /sys/block/vdb ] && echo "STILL$i" || echo "GONE$i"\n'
    "i=$((i + 1)); done\n"
    "%s"
    "dmesg | grep -iE 'pciehp|pcieport|virtio|vdb|BAR' | tail -n 40\n")


# make test: three cycles on each guest kernel; make e2e: fifty, with
# the launch disk verified meanwhile.
@pytest.mark.parametrize("cycles,kname", [
    (CYCLES, "stock"), (CYCLES, "small"),
    pytest.param(50, "stock", marks=pytest.mark.long)])
def test_attach_detach(tmp_path, cycles, kname):
    sock = str(tmp_path / "api.sock")
    beside = cycles > CYCLES
    script = SCRIPT % (BESIDE if beside else "", cycles,
                       "touch /tmp/stop; wait $b\n" if beside else "")
    state, errors = {}, []  # filled by fresh(), before each try

    def at_attach(i, proc):
        if i == 1:
            state["start"] = counts(proc.pid)
            state["refusals"] = refusals(sock, "start")
        state["names"].append(ctl(sock, "attach", "ram:64M,serial=hp%d" % i)["name"])

    def at_detach(i, proc):
        state["names"].append(ctl(sock, "detach", "vdb")["name"])
        state["counts"].append(counts(proc.pid))
        if i == 1:
            state["refusals"] += refusals(sock, "after")

    steps = {}
    for i in range(1, cycles + 1):
        steps["attach%d" % i] = (lambda i: lambda p: at_attach(i, p))(i)
        steps["detach%d" % i] = (lambda i: lambda p: at_detach(i, p))(i)

    lines = guestlib.api_steps(lambda name, proc: steps[name](proc), errors)

    img = guestlib.new_disk(tmp_path / "data.img", 16)
    argv = guestlib.vmm_argv(guestlib.Kernel(kname).path("vmlinux"),
                             cmdlines.guest_cmdline(script=script, disk_serial="data"),
                             [guestlib.disk(img, "data")], extra=["--api", sock])

    def fresh():  # a try the test host killed counts for nothing
        state.clear()
        state.update({"counts": [], "names": [], "refusals": []})
        errors.clear()

    g = guestlib.run(argv, tmp_path, timeout=300 + 25 * cycles, on_line=lines,
                     stdin=guestrun.ANSWER, before_try=fresh)
    assert not errors, "\n".join(errors) + "\n" + g.tail()
    assert "NO-ANSWER" not in g.lines, "the host never answered\n" + g.tail()
    guestlib.ended_clean(g)
    for i in range(1, cycles + 1):
        assert field(g, "SEEN%d" % i) == [str(64 * 2048), "hp%d" % i], g.tail()
        assert field(g, "VERIFY%d" % i) == ["rc=0"], g.tail()
        assert "GONE%d" % i in g.lines, "vdb still there after detach %d\n%s" % (i, g.tail())
    assert state["names"] == ["vdb"] * (2 * cycles)
    assert state["counts"] == [state["start"]] * cycles, \
        "threads and fds: %s at start, %s after each detach" % (state["start"], state["counts"])
    bad = [r for r in state["refusals"] if not r[1]]
    assert not bad, "refusals: %s" % bad
    if beside:  # the launch disk's verify passed every time, and ran
        # A pass's line may run into the host's answer echoed on the
        # console ("BESIDE rc=0go"): the status is the number after rc=.
        passes = [re.match(r"BESIDE rc=(\d+)", l).group(1) for l in g.lines
                  if re.match(r"BESIDE rc=\d+", l)]
        assert passes and set(passes) == {"0"}, (passes, g.tail())
        print("%d cycles, %d verify passes beside" % (cycles, len(passes)))
    out = "\n".join(g.lines)
    for word in ("Oops", "BUG:", "WARNING:", "hung_task", "blocked for more than"):
        assert word not in out, "%s in the guest's log\n%s" % (word, g.tail())


def refusals(sock, when):
    """Bad requests: each one line, status 1, nothing changed (the disk
    list as it was).  [(what, ok)]."""
    before = [d["name"] for d in ctl(sock, "info")["disks"]]
    got = []
    for args, want in (
            (("attach", "/nonexistent/disk.img"), "No such file"),
            (("attach", "ram:64M,bogus=1"), "bad disk option"),
            (("detach", "vda"), "given at launch"),
            (("detach", "vdq"), "no disk 'vdq'"),
            (("detach", "vdb", "--force"), "no disk 'vdb'")):
        rc, err = ctl(sock, *args, ok=False)
        lines = err.strip().splitlines()
        got.append(("%s %s: rc=%d %r" % (when, " ".join(args), rc, err),
                    rc == 1 and len(lines) == 1 and want in lines[0]))
    after = [d["name"] for d in ctl(sock, "info")["disks"]]
    got.append(("%s: disks %s then %s" % (when, before, after), before == after))
    return got


# Detach while fio writes to the disk, orderly then forced: fio ends (with
# errors, or done) within 60 s, the guest's log has no oops, BUG, WARNING
# or hung task, and the launch disk still passes a verify.  A fio still
# blocked after 60 s: the blocked tasks (sysrq w) on the console, the
# guest powered off, the test failed with them.
IO_SCRIPT = (
    "for m in safe force; do\n"
    + wait_step("attach-$m") +
    "n=0; while [ ! -b /dev/vdb ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done\n"
    "fio --eta=never --name=w --filename=/dev/vdb --ioengine=libaio --iodepth=16 --direct=1 "
    "--bs=4k --rw=randwrite --time_based --runtime=30 --output=/tmp/w.out & f=$!\n"
    # detach once fio's writes are reaching the disk (its write count
    # moves), at most 60 s
    "n=0; w=0; while [ \"$w\" = 0 ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); "
    "read -r _ _ _ _ w _ </sys/block/vdb/stat; done\n"
    + wait_step("detach-$m") +
    "( sleep 60; echo \"FIO-STUCK-$m\"; echo w > /proc/sysrq-trigger; sleep 5; "
    "dmesg | tail -n 60; poweroff -f ) & w=$!\n"
    "wait $f; echo \"FIO-$m rc=$?\"; kill $w\n"
    "n=0; while [ -e /sys/block/vdb ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done\n"
    '[ -e /sys/block/vdb ] && echo "STILL-$m" || echo "GONE-$m"\n'
    "done\n"
    "fio --eta=never --name=v --filename=$DISK --ioengine=psync --direct=1 --bs=64k "
    "--rw=write --verify=crc32c --do_verify=1 --size=8M --output=/tmp/v.out\n"
    'echo "LAUNCH rc=$?"\n')


# Before detach --force answered the rings first and an empty port's
# window read 0 (2026-12-07), this guest hung after the forced detach:
# its virtio_blk waited for the requests it still had, and its vp_reset
# polled an all-ones status for good.
def test_detach_under_io(tmp_path):
    sock = str(tmp_path / "api.sock")
    errors = []

    trace = guestlib.console_trace(tmp_path)

    def act(name, proc):
        kind, mode = name.split("-")
        if kind == "attach":
            ctl(sock, "attach", "ram:64M")
        elif mode == "safe":
            ctl(sock, "detach", "vdb")
        else:
            ctl(sock, "detach", "vdb", "--force")
    step = guestlib.api_steps(act, errors, trace)

    img = guestlib.new_disk(tmp_path / "data.img", 16)
    argv = guestlib.vmm_argv(guestlib.STOCK.path("vmlinux"),
                             cmdlines.guest_cmdline(script=IO_SCRIPT, disk_serial="data"),
                             [guestlib.disk(img, "data")], extra=["--api", sock])
    g = guestlib.run(argv, tmp_path, timeout=300, on_line=step, stdin=guestrun.ANSWER,
                     before_try=errors.clear)
    assert not errors, "\n".join(errors) + "\n" + g.tail()
    stuck = [line for line in g.lines if line.startswith("FIO-STUCK")]
    assert not stuck, "fio blocked after the detach: %s\n%s" % (stuck, "\n".join(g.lines[-120:]))
    guestlib.ended_clean(g)
    for m in ("safe", "force"):
        assert field(g, "FIO-%s" % m), g.tail()  # fio ended, either way
        assert "GONE-%s" % m in g.lines, "vdb still there after %s detach\n%s" % (m, g.tail())
    assert field(g, "LAUNCH") == ["rc=0"], g.tail()
    out = "\n".join(g.lines)
    for word in ("Oops", "BUG:", "WARNING:", "hung_task", "blocked for more than"):
        assert word not in out, "%s in the guest's log\n%s" % (word, g.tail())


# The guest lets an attached disk go on its own (sysfs remove of its PCI
# function) and takes it back (rescan); the VMM's `info` says so each
# time (active_queues 0, then 1), and the disk stays attached throughout.
RESCAN_SCRIPT = (
    wait_step("attach") +
    "n=0; while [ ! -b /dev/vdb ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done\n"
    "p=$(readlink -f /sys/block/vdb/device/..)\n"
    'echo "FUNCTION ${p##*/}"\n'
    "echo 1 > $p/remove\n"
    "n=0; while [ -e /sys/block/vdb ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done\n"
    '[ -e /sys/block/vdb ] && echo "STILL-removed" || echo "GONE-removed"\n'
    + wait_step("removed") +
    "echo 1 > /sys/bus/pci/rescan\n"
    "n=0; while [ ! -b /dev/vdb ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done\n"
    "dd if=/dev/vdb of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null; echo \"READ rc=$?\"\n"
    + wait_step("rescanned") + wait_step("detach") +
    "n=0; while [ -e /sys/block/vdb ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done\n"
    '[ -e /sys/block/vdb ] && echo "STILL-detached" || echo "GONE-detached"\n')


def test_guest_remove_and_rescan(tmp_path):
    sock = str(tmp_path / "api.sock")
    seen, errors = {}, []

    def active(name="vdb"):
        d = [d for d in ctl(sock, "info")["disks"] if d["name"] == name]
        return d[0]["active_queues"] if d else None

    def act(name, proc):
        if name == "attach":
            ctl(sock, "attach", "ram:64M")
        elif name == "detach":
            ctl(sock, "detach", "vdb")
        else:
            # The guest's reset reaches the device from its vCPU
            # before the guest goes on: no wait needed.
            seen[name] = active()
    step = guestlib.api_steps(act, errors)

    def fresh():
        seen.clear()
        errors.clear()

    img = guestlib.new_disk(tmp_path / "data.img", 16)
    argv = guestlib.vmm_argv(guestlib.STOCK.path("vmlinux"),
                             cmdlines.guest_cmdline(script=RESCAN_SCRIPT, disk_serial="data"),
                             [guestlib.disk(img, "data")], extra=["--api", sock])
    g = guestlib.run(argv, tmp_path, timeout=300, on_line=step, stdin=guestrun.ANSWER,
                     before_try=fresh)
    assert not errors, "\n".join(errors) + "\n" + g.tail()
    assert "NO-ANSWER" not in g.lines, "the host never answered\n" + g.tail()
    guestlib.ended_clean(g)
    assert "GONE-removed" in g.lines, g.tail()
    assert field(g, "READ") == ["rc=0"], g.tail()
    assert "GONE-detached" in g.lines, g.tail()
    # Removed on the guest's side: still attached, no queue in use; back
    # after the rescan with its one queue.
    assert seen == {"removed": 0, "rescanned": 1}, (seen, g.tail())


# A disk given at launch with `hotplug` sits in a slot of its own: the
# guest finds it at boot (its pciehp sees the slot occupied and enables
# it), and detach takes it out like an attached disk, here while fio
# writes to it (fio sees the errors and ends); the freed slot takes the
# next attach.  The disk on bus 0 is still refused, with the way to make
# it detachable.
LAUNCH_SCRIPT = (
    "up() { n=0; while [ ! -b /dev/vdb ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done; "
    'echo "SEEN$1 $(cat /sys/block/vdb/size) $(cat /sys/block/vdb/serial)"; }\n'
    "gone() { n=0; while [ -e /sys/block/vdb ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done; "
    '[ -e /sys/block/vdb ] && echo "STILL$1" || echo "GONE$1"; }\n'
    "v() { fio --eta=never --name=v --filename=$1 --ioengine=psync --direct=1 --bs=64k "
    "--rw=write --verify=crc32c --do_verify=1 --size=$2 --output=/tmp/v.out; }\n"
    'up 1; v /dev/vdb 16M; echo "VERIFY1 rc=$?"\n'
    "fio --eta=never --name=w --filename=/dev/vdb --ioengine=libaio --iodepth=16 --direct=1 "
    "--bs=4k --rw=randwrite --time_based --runtime=30 --output=/tmp/w.out & f=$!\n"
    "n=0; w=0; while [ \"$w\" = 0 ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); "
    "read -r _ _ _ _ w _ </sys/block/vdb/stat; done\n"
    + wait_step("detach1") +
    'wait $f; echo "FIO rc=$?"; gone 1\n'
    + wait_step("attach2") +
    'up 2; v /dev/vdb 16M; echo "VERIFY2 rc=$?"\n'
    + wait_step("detach2") +
    'gone 2; v $DISK 8M; echo "LAUNCH rc=$?"\n')


def test_detach_launch_disk(tmp_path):
    sock = str(tmp_path / "api.sock")
    state, errors = {}, []

    def act(name, proc):
        if name == "detach1":
            state["info"] = {d["name"]: d["hotplug"] for d in ctl(sock, "info")["disks"]}
            rc, err = ctl(sock, "detach", "vda", ok=False)
            state["vda"] = (rc, err.strip())
            state["names"].append(ctl(sock, "detach", "vdb")["name"])
        elif name == "attach2":
            state["names"].append(ctl(sock, "attach", "ram:64M,serial=again")["name"])
        else:
            state["names"].append(ctl(sock, "detach", "vdb")["name"])
    step = guestlib.api_steps(act, errors)

    def fresh():
        state.clear()
        state["names"] = []
        errors.clear()

    img = guestlib.new_disk(tmp_path / "data.img", 16)
    argv = guestlib.vmm_argv(guestlib.STOCK.path("vmlinux"),
                             cmdlines.guest_cmdline(script=LAUNCH_SCRIPT, disk_serial="data"),
                             [guestlib.disk(img, "data"),
                              guestlib.disk("ram:64M", "boot", opts=["hotplug"])],
                             extra=["--api", sock])
    g = guestlib.run(argv, tmp_path, timeout=300, on_line=step, stdin=guestrun.ANSWER,
                     before_try=fresh)
    assert not errors, "\n".join(errors) + "\n" + g.tail()
    assert "NO-ANSWER" not in g.lines, "the host never answered\n" + g.tail()
    guestlib.ended_clean(g)
    assert field(g, "SEEN1") == [str(64 * 2048), "boot"], g.tail()
    assert field(g, "VERIFY1") == ["rc=0"], g.tail()
    assert state["info"] == {"vda": False, "vdb": True}, state
    rc, err = state["vda"]
    assert rc == 1 and len(err.splitlines()) == 1 and "hotplug" in err, state["vda"]
    assert field(g, "FIO"), g.tail()  # fio ended, errors or not
    assert "GONE1" in g.lines, "the launch disk still there after detach\n" + g.tail()
    assert state["names"] == ["vdb"] * 3, state["names"]
    assert field(g, "SEEN2") == [str(64 * 2048), "again"], g.tail()
    assert field(g, "VERIFY2") == ["rc=0"], g.tail()
    assert "GONE2" in g.lines, g.tail()
    assert field(g, "LAUNCH") == ["rc=0"], g.tail()
    out = "\n".join(g.lines)
    for word in ("Oops", "BUG:", "WARNING:", "hung_task", "blocked for more than"):
        assert word not in out, "%s in the guest's log\n%s" % (word, g.tail())


# A guest that ignores the attention button: its port driver unbound
# from the slot's root port (no pciehp there), the disk still in use.
# An orderly detach ends after --timeout with one line, status 1, and the
# disk stays attached and readable; --force then takes it out.
IGNORE_SCRIPT = (
    wait_step("attach") +
    "n=0; while [ ! -b /dev/vdb ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done\n"
    "p=$(readlink -f /sys/block/vdb/device/..); p=${p%/*}\n"
    "echo ${p##*/} > /sys/bus/pci/drivers/pcieport/unbind; echo \"UNBOUND ${p##*/} rc=$?\"\n"
    + wait_step("detach") +
    "dd if=/dev/vdb of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null; echo \"READ rc=$?\"\n"
    + wait_step("force"))


def test_guest_ignores_the_button(tmp_path):
    sock = str(tmp_path / "api.sock")
    state, errors = {}, []

    def names():
        return [d["name"] for d in ctl(sock, "info")["disks"]]

    def act(name, proc):
        if name == "attach":
            ctl(sock, "attach", "ram:64M")
        elif name == "detach":
            rc, err = ctl(sock, "detach", "vdb", "--timeout", "3000", ok=False)
            state["orderly"] = (rc, err.strip(), names())
        else:
            state["force"] = (ctl(sock, "detach", "vdb", "--force")["name"], names())
    step = guestlib.api_steps(act, errors)

    def fresh():
        state.clear()
        errors.clear()

    img = guestlib.new_disk(tmp_path / "data.img", 16)
    argv = guestlib.vmm_argv(guestlib.STOCK.path("vmlinux"),
                             cmdlines.guest_cmdline(script=IGNORE_SCRIPT, disk_serial="data"),
                             [guestlib.disk(img, "data")], extra=["--api", sock])
    g = guestlib.run(argv, tmp_path, timeout=300, on_line=step, stdin=guestrun.ANSWER,
                     before_try=fresh)
    assert not errors, "\n".join(errors) + "\n" + g.tail()
    assert "NO-ANSWER" not in g.lines, "the host never answered\n" + g.tail()
    guestlib.ended_clean(g)
    assert field(g, "UNBOUND")[-1:] == ["rc=0"], g.tail()
    rc, err, after = state["orderly"]
    assert rc == 1 and len(err.splitlines()) == 1, state["orderly"]
    assert "did not power its slot off within 3000 ms; still attached" in err, err
    assert after == ["vda", "vdb"], after
    assert field(g, "READ") == ["rc=0"], g.tail()  # still there, still served
    assert state["force"] == ("vdb", ["vda"]), state["force"]
