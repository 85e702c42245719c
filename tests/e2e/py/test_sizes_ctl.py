"""Sizes users run, longer (`make e2e`; `make test` runs test_sizes.py's
8 vCPUs): guests with 1, 4, 8 and 16 vCPUs and 8 disks (RAM disks and
files, a null_blk block device with O_DIRECT where the test host has
one), one disk with 16 queues (Linux uses as many as it has vCPUs), one
with the VMM's default queue count (one per vCPU) and the others with one
per vCPU given, fio verify on every disk at once but one with a job on
every vCPU (each vCPU's requests go to its own queue), and on that one,
while the others verify, `resize`, `limit`, `pause` and `resume` through
the control socket; then the guest sees the new size and reads it, and
each queue's interrupts are counted on its own MSI-X vector in the
guest's /proc/interrupts.

The guest's RCU and soft-lockup warnings do not stop these guests: with
up to 16 vCPUs on the test host's 2 emulated CPUs a vCPU waits seconds
for a CPU, which the guest's watchdogs report while it goes on (taken
for the test host's death, the first warning had every 16-vCPU try
stopped and tried again).  A
guest that really hangs meets the deadline; the verify and the control
steps decide the outcome."""
import re

import guestlib
from guestlib import ctl
from test_sizes import DISKS, IRQ_TOTALS, MIB_PER_JOB, VERIFIED, VERIFY
from vmharness import cmdlines, guestrun, nullblk, paths

import pytest

pytestmark = pytest.mark.long
SIZES = [1, 4, 8, 16]

# fio verify on every disk at once but the one the host works on through
# the control socket (serial CTL_SERIAL), CPUS jobs per disk, job i on
# vCPU i (blk-mq sends vCPU i's requests to queue i), each on its own
# range.  While they run, the host resizes, limits, pauses and resumes
# that disk (API-WAIT ctl); the guest then sees its new size and reads it.
CTL_SERIAL = "d6"
SCRIPT = (r"""
n=$(nproc)
pids=
for d in /sys/block/vd*; do
	echo "disk ${d##*/} $(cat $d/serial) $(basename $(readlink $d/device))"
	[ "$(cat $d/serial)" = %s ] && { ctl=${d##*/}; continue; }
""" % CTL_SERIAL + VERIFY + r"""done
old=$(cat /sys/block/$ctl/size)
echo "API-WAIT ctl"
read -r -t 300 go || echo NO-ANSWER
bad=0
for p in $pids; do wait $p || bad=$((bad + 1)); done
i=0; while [ $(cat /sys/block/$ctl/size) = $old ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "ctl size $(cat /sys/block/$ctl/size)"
dd if=/dev/$ctl of=/dev/null bs=1M count=4 skip=$((old / 2048)) iflag=direct 2>/dev/null && echo "ctl read ok"
for d in /sys/block/vd*; do
	[ ${d##*/} = $ctl ] || """ + VERIFIED + r"""
	echo "queues ${d##*/}: $(ls -d $d/mq/* | wc -l)"
done
echo "failed fio runs: $bad"
""" + IRQ_TOTALS)


def completed(sock, name):
    return ctl(sock, "stats", name)["disks"][0]["total"]["completed"]


def disks(tmp_path, dev, cpus):
    mib = MIB_PER_JOB * cpus + 8
    out = []
    for i in range(DISKS):
        d = {"serial": "d%d" % i}
        if i == 0:
            d.update(path="ram:%dM" % max(64, mib), queues=16)
        elif i == 1 and dev:
            d.update(path=dev, direct=True, queues=cpus)
        elif i == 2:  # no queues=: the VMM's default, one per vCPU
            d.update(path=guestlib.new_disk(tmp_path / ("d%d.img" % i), mib), queues=None)
        elif i % 2:
            d.update(path="ram:%dM" % mib, queues=cpus)
        else:
            d.update(path=guestlib.new_disk(tmp_path / ("d%d.img" % i), mib), queues=cpus)
        out.append(d)
    return out


@pytest.mark.parametrize("cpus", SIZES)
def test_sizes_verify_with_ctl_on_one_disk(tmp_path, cpus):
    dev = (nullblk.create("nullbsizesctl", size_mib=MIB_PER_JOB * cpus + 8)
           if nullblk.unavailable() is None else None)
    sock = str(tmp_path / "api.sock")
    # The control socket's disk is the 7th given (vdg to the VMM).
    name = "vd" + chr(ord("a") + int(CTL_SERIAL[1:]))
    grow = (MIB_PER_JOB * cpus + 8 + 64) << 20
    done, errors = {}, []

    def on_line(line, proc):
        # From the console's reader: never raises, errors reported after.
        if line.split() != ["API-WAIT", "ctl"]:
            return
        try:
            others = [completed(sock, "vda"), completed(sock, "vdb")]
            done["resize"] = ctl(sock, "resize", name, "%dM" % (grow >> 20))["size"]
            ctl(sock, "limit", name, "iops=200")
            ctl(sock, "pause", name)
            done["paused_inflight"] = ctl(sock, "stats", name)["disks"][0]["total"]["inflight"]
            ctl(sock, "resume", name)
            ctl(sock, "limit", name, "off")
            # the others' verify went on meanwhile
            done["others_moved"] = [completed(sock, "vda") > others[0],
                                    completed(sock, "vdb") > others[1]]
        except Exception as e:
            errors.append(repr(e))
        guestrun.answer(proc, "go")

    try:
        argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD,
                                 cmdlines.guest_cmdline(script=SCRIPT), 1024 + 64 * cpus, cpus,
                                 disks(tmp_path, dev, cpus), paths.VMM_BIN,
                                 extra=["--api", sock])
        # Stall warnings are no death here (the module's docstring).
        g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"), timeout=900,
                                      stop_on_stall=False,
                                      on_line=on_line, stdin=guestrun.ANSWER,
                                      before_try=lambda: (done.clear(), errors.clear()))
    finally:
        if dev:
            nullblk.remove("nullbsizesctl")
    assert g.rc == 0, g.tail()
    rc, out = guestrun.run_block(g.lines)
    assert rc == 0, g.tail()
    print("\n".join(out))
    assert not errors and "NO-ANSWER" not in out, (errors, g.tail())
    assert "failed fio runs: 0" in out, g.tail()
    verify = [l for l in out if l.startswith("verify ")]
    assert len(verify) == DISKS - 1, g.tail()
    for l in verify:
        assert "err= 0" in l and l.count("err=") == 1, l
    # resize, limit, pause, resume on one disk while the others verified
    assert done["resize"] == grow and done["paused_inflight"] == 0, done
    assert done["others_moved"] == [True, True], done
    assert "ctl size %d" % (grow // 512) in out and "ctl read ok" in out, g.tail()
    # Linux uses min(queues, vCPUs): the 16-queue disk has as many as
    # the guest has vCPUs, and so has the disk with the default count.
    queues = {l.split()[1]: int(l.split()[2]) for l in out if l.startswith("queues ")}
    assert sorted(queues.values()) == [cpus] * DISKS, queues
    # Each queue its own vector (virtioN-req.Q), and every queue a job
    # ran on raised interrupts: the first CPUS queues of every disk.  With
    # one vCPU Linux names the one vector virtioN-req.0 too.
    irqs = {}
    for l in out:
        m = re.match(r"^irq (virtio\d+)-req\.(\d+) (\d+)$", l)
        if m:
            irqs.setdefault(m.group(1), {})[int(m.group(2))] = int(m.group(3))
    assert len(irqs) == DISKS, irqs
    ctl_dev = next(l.split()[3] for l in out if l.startswith("disk ") and l.split()[2] == CTL_SERIAL)
    for virtio, dev_irqs in irqs.items():
        if virtio == ctl_dev:  # no verify job there: only the read's queue
            continue
        for q in range(cpus):
            assert dev_irqs.get(q, 0) > 0, (q, irqs)
