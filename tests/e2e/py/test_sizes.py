"""Sizes users run: one guest with 8 vCPUs and 8 disks (RAM disks and
files, a null_blk block device with O_DIRECT where the test host has
one), one disk with 16 queues (Linux uses as many as it has vCPUs) and the
others with one per vCPU, fio verify on every disk at once with a job on every vCPU (each
vCPU's requests go to its own queue), then each queue's interrupts
counted on its own MSI-X vector in the guest's /proc/interrupts.

Before the sandbox set glibc's arena limit up front (host/sandbox.c), a
VMM with 8 vCPUs and 8 queues stopped at the first I/O; this is the
test of that size.  Stock kernel only: this is about the VMM's threads,
queues and vectors."""
import re

import guestlib
from vmharness import cmdlines, guestrun, nullblk, paths

CPUS = 8
DISKS = 8
MIB_PER_JOB = 2

# fio verify on one disk (shell: $d is /sys/block/vdX), a job on each of
# the guest's $n vCPUs, job i on vCPU i (blk-mq sends vCPU i's requests
# to queue i), each on its own range; in the background, its pid added
# to $pids.  Shared with test_sizes_ctl.
VERIFY = r"""	dev=/dev/${d##*/}
	fio --name=v --filename=$dev --ioengine=io_uring --direct=1 --rw=randwrite \
		--bs=4k --iodepth=8 --size=%(mib)dm --offset_increment=%(mib)dm \
		--numjobs=$n --cpus_allowed=0-$((n - 1)) --cpus_allowed_policy=split \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 \
		--group_reporting --output=/tmp/${d##*/}.out >/dev/null 2>&1 &
	pids="$pids $!"
""" % {"mib": MIB_PER_JOB}
# A verify job's outcome ($d as above).
VERIFIED = ("echo \"verify ${d##*/}: $(grep -c 'err= 0' /tmp/${d##*/}.out) clean, "
            "$(grep -o 'err=[ 0-9]*' /tmp/${d##*/}.out | sort -u | tr '\\n' ' ')\"")
# Each virtio vector's interrupts, summed over the CPUs: "irq NAME N".
IRQ_TOTALS = r"""grep virtio /proc/interrupts | sed 's/^ *//' | while read -r irq rest; do
	name=${rest##* }
	total=0
	for c in $rest; do
		case $c in *[!0-9]*) break ;; esac
		total=$((total + c))
	done
	echo "irq $name $total"
done
"""

# fio verify on every disk at once, then each disk's outcome and queues.
SCRIPT = (r"""
n=$(nproc)
pids=
for d in /sys/block/vd*; do
""" + VERIFY + r"""done
bad=0
for p in $pids; do wait $p || bad=$((bad + 1)); done
for d in /sys/block/vd*; do
	""" + VERIFIED + r"""
	echo "queues ${d##*/}: $(ls -d $d/mq/* | wc -l)"
done
echo "failed fio runs: $bad"
""" + IRQ_TOTALS)


def disks(tmp_path, dev):
    out = []
    for i in range(DISKS):
        d = {"serial": "d%d" % i}
        if i == 0:
            d.update(path="ram:64M", queues=16)
        elif i == 1 and dev:
            d.update(path=dev, direct=True, queues=CPUS)
        elif i % 2:
            d.update(path="ram:%dM" % (MIB_PER_JOB * CPUS + 8), queues=CPUS)
        else:
            d.update(path=guestlib.new_disk(tmp_path / ("d%d.img" % i), MIB_PER_JOB * CPUS + 8),
                     queues=CPUS)
        out.append(d)
    return out


def test_eight_vcpus_eight_disks_verify_on_every_queue(tmp_path):
    dev = nullblk.create("nullbsizes", size_mib=64) if nullblk.unavailable() is None else None
    try:
        argv = cmdlines.vmm_argv(guestlib.STOCK.path("vmlinux"), paths.INITRD,
                                 cmdlines.guest_cmdline(script=SCRIPT), 1024, CPUS,
                                 disks(tmp_path, dev), paths.VMM_BIN)
        # 8 vCPUs on the test host's 2: the guest's stall warnings are no
        # death (test_sizes_ctl.py's docstring); its verify decides.
        g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"), timeout=600,
                                      stop_on_stall=False)
    finally:
        if dev:
            nullblk.remove("nullbsizes")
    assert g.rc == 0, g.tail()
    rc, out = guestrun.run_block(g.lines)
    assert rc == 0, g.tail()
    print("\n".join(out))
    assert "failed fio runs: 0" in out, g.tail()
    verify = [l for l in out if l.startswith("verify ")]
    assert len(verify) == DISKS, g.tail()
    for l in verify:
        assert "err= 0" in l and l.count("err=") == 1, l
    # Linux uses min(queues, vCPUs): the 16-queue disk has 8 here too.
    queues = {l.split()[1]: int(l.split()[2]) for l in out if l.startswith("queues ")}
    assert sorted(queues.values()) == [CPUS] * DISKS, queues
    # Each queue its own vector (virtioN-req.Q), and every queue a job
    # ran on raised interrupts: the first CPUS queues of every disk.
    irqs = {}
    for l in out:
        m = re.match(r"^irq (virtio\d+)-req\.(\d+) (\d+)$", l)
        if m:
            irqs.setdefault(m.group(1), {})[int(m.group(2))] = int(m.group(3))
    assert len(irqs) == DISKS, irqs
    for dev_irqs in irqs.values():
        for q in range(CPUS):
            assert dev_irqs.get(q, 0) > 0, (q, irqs)
