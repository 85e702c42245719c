/* The x86-64 machine: in-kernel irqchip and PIT, the 8250 console on
 * 0x3f8, i8042 and RTC, PCI through 0xcf8/0xcfc with I/O BARs, the MP
 * table, and the vCPUs at the 64-bit boot entry. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/hw/boot.h"
#include "arch/x86/hw/i8042.h"
#include "arch/x86/hw/mptable.h"
#include "arch/x86/hw/pci_cf8.h"
#include "arch/x86/hw/rtc.h"
#include "arch/x86/vmm/kvm_x86.h"
#include "host/log.h"
#include "vmm/arch.h"
#include "vmm/machine.h"

#define POST_PORT 0x80

struct machine_arch {
	struct kvm_cpuid2 *cpuid; /* supported, hypervisor bit set */
	struct i8042 kbd;
	struct rtc rtc;
	struct pci_cf8 cf8;
};

static void on_reset(void *opaque)
{
	machine_exit(opaque, VMM_EXIT_RESET, "guest reset (i8042)");
}

static void post_io(void *opaque, uint64_t port, uint8_t *data,
		    unsigned int size, bool write)
{
	(void)opaque, (void)port;
	if (!write)
		memset(data, 0xff, size);
}

static int x86_legacy(struct machine *m)
{
	struct machine_arch *a = m->arch;
	int r = 0;

	machine_serial(m, SERIAL_IRQ);
	i8042_init(&a->kbd, on_reset, m);
	rtc_init(&a->rtc);
	r |= bus_add(&m->pio, SERIAL_PORT, 8, serial_io, &m->serial);
	r |= bus_add(&m->pio, I8042_DATA, 1, i8042_io, &a->kbd);
	r |= bus_add(&m->pio, I8042_CMD, 1, i8042_io, &a->kbd);
	r |= bus_add(&m->pio, RTC_INDEX, 2, rtc_io, &a->rtc);
	r |= bus_add(&m->pio, POST_PORT, 1, post_io, NULL);
	r |= bus_add(&m->pio, PCI_CF8_ADDR, 8, pci_cf8_io, &a->cf8);
	return r ? -EINVAL : 0;
}

/* INTA# of each slot on its own IOAPIC pin (the MP table says which). */
static unsigned int x86_intx_irq(unsigned int slot)
{
	return MPTABLE_PCI_PIN(slot);
}

static int x86_vcpus(struct machine *m, const struct boot_regs *regs)
{
	struct machine_arch *a = m->arch;
	uint32_t sig, feat;
	int r;

	x86_cpu_signature(a->cpuid, &sig, &feat);
	r = mptable_write(m->vm.ram + BOOT_MPTABLE, BOOT_MPTABLE,
			  BOOT_KERNEL - BOOT_MPTABLE, m->cfg->cpus, sig, feat,
			  m->pci_intx);
	if (r)
		return r;
	r = machine_vcpus(m);
	for (unsigned int i = 0; !r && i < m->ncpus; i++)
		r = x86_vcpu_init(a->cpuid, m->vcpu[i].fd, i);
	if (r)
		return r;
	return x86_vcpu_boot_regs(m->vcpu[0].fd, regs->rip, regs->rsi,
				  regs->rsp, regs->cr3, BOOT_GDT);
}

int arch_machine_build(struct machine *m, struct blk_dev **disks,
		       const struct arch_kernel *ak, const uint8_t *initrd,
		       size_t initrd_size)
{
	const struct vmm_config *cfg = m->cfg;
	const struct boot_kernel *k = x86_boot_kernel(ak);
	struct boot_regs regs;
	uint64_t low, high;
	char msg[256];
	int r;

	m->arch = calloc(1, sizeof(*m->arch));
	if (!m->arch)
		return -ENOMEM;
	boot_split(cfg->mem, &low, &high);
	r = x86_vm_setup(&m->vm, cfg->mem, low, &m->arch->cpuid, msg,
			 sizeof(msg));
	if (r) {
		pr_err("%s", msg);
		return r;
	}
	startup_mark("VM and its RAM");
	r = boot_load(m->vm.ram, low, high, k, initrd, initrd_size,
		      cfg->params, &regs, msg, sizeof(msg));
	if (r) {
		pr_err("%s", msg);
		return r;
	}
	startup_mark("kernel and initrd in RAM");
	pci_host_init(&m->pci, BOOT_MMIO_START, BOOT_MMIO_END);
	pci_host_set_io(&m->pci, PCI_CF8_IO_START, PCI_CF8_IO_END);
	pci_cf8_init(&m->arch->cf8, &m->pci);
	r = machine_pci(m, disks, true, x86_intx_irq);
	if (!r)
		r = hotplug_create(m, disks, &m->hp);
	if (!r)
		r = x86_legacy(m);
	if (r) {
		pr_err("cannot set up devices: %s", strerror(-r));
		return r;
	}
	startup_mark("devices");
	r = x86_vcpus(m, &regs);
	if (r)
		pr_err("cannot set up vCPUs: %s", strerror(-r));
	return r;
}

void arch_machine_free(struct machine *m)
{
	if (!m->arch)
		return;
	free(m->arch->cpuid);
	free(m->arch);
	m->arch = NULL;
}
