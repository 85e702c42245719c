"""A guest without MSI-X (`pci=nomsi`) gets its queue and configuration
interrupts through INTA# and the ISR register: fio verify passes on a
file disk with one queue and with two (both queues' interrupts share the
line), and the guest's /proc/interrupts shows the disk on the IO-APIC,
not on PCI-MSI.  On each guest kernel (the kernel fixture)."""
import re
import subprocess

import pytest

from vmharness import cmdlines, guestrun, paths

SCRIPT = r"""
cd /tmp
fio --eta=never --output=/tmp/fio.out /jobs/verify.fio 2>/tmp/fio.err
echo "verify-rc=$?"
head -c 2000 /tmp/fio.err
grep -i virtio /proc/interrupts | sed 's/^/irq: /'
"""


@pytest.mark.parametrize("queues", [1, 2])
def test_fio_verify_through_intx(tmp_path, kernel, queues):
    disk = tmp_path / "disk.img"
    subprocess.run(["truncate", "-s", "128M", str(disk)], check=True)
    cmdline = cmdlines.guest_cmdline(script=SCRIPT, disk_serial="data", extra="pci=nomsi")
    d = {"path": str(disk), "serial": "data", "queues": queues}
    argv = cmdlines.vmm_argv(kernel.path("vmlinux"), paths.INITRD, cmdline, 512, 2, [d],
                             paths.VMM_BIN)
    g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    assert "verify-rc=0" in g.lines, "\n".join(g.lines[-30:])
    irqs = [l for l in g.lines if l.startswith("irq: ")]
    print("\n".join(irqs))
    assert irqs and not any("MSI" in l for l in irqs), irqs
    # The disk's line (IO-APIC, level) took interrupts on some CPU.
    ioapic = [l for l in irqs if "IO-APIC" in l]
    assert ioapic, irqs
    counts = [int(n) for l in ioapic for n in re.findall(r"\s(\d+)(?=\s)", l.split(":", 2)[2])]
    assert sum(counts) > 0, ioapic
