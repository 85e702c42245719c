/* The arm64 machine: RAM at ARM64_RAM_BASE, the in-kernel GICv3 with
 * its ITS, the 8250 console on MMIO, PCI through ECAM (no I/O space),
 * the hot-plug root ports (vmm/hotplug.c) behind bus 0, the device tree, and the vCPUs at the Image's entry with x0 = the
 * tree.  The map is arch/arm64/hw/layout.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arm64/hw/fdt.h"
#include "arch/arm64/hw/layout.h"
#include "arch/arm64/hw/pci_ecam.h"
#include "arch/arm64/vmm/arm64.h"
#include "host/log.h"
#include "vmm/arch.h"
#include "vmm/machine.h"

/* Each hot-plug slot's secondary bus is in the ECAM window. */
_Static_assert(HOTPLUG_MAX_SLOTS < ARM64_PCI_ECAM_BUSES, "ECAM buses");

struct machine_arch {
	int gic_fd, its_fd;
	struct pci_ecam ecam;
	uint64_t mpidr[VMM_MAX_CPUS];
};

/* INTA# of each slot on its own SPI (the tree's interrupt-map). */
static unsigned int arm64_intx_irq(unsigned int slot)
{
	return arm64_spi_irq(ARM64_SPI_PCI + slot);
}

static int arm64_devices(struct machine *m, struct blk_dev **disks)
{
	int r;

	machine_serial(m, arm64_spi_irq(ARM64_SPI_UART));
	pci_host_init(&m->pci, ARM64_PCI_MMIO_BASE,
		      ARM64_PCI_MMIO_BASE + ARM64_PCI_MMIO_SIZE);
	pci_ecam_init(&m->arch->ecam, &m->pci, ARM64_PCI_ECAM_BASE);
	r = bus_add(&m->mmio, ARM64_UART_BASE, 8, serial_io, &m->serial);
	if (!r)
		r = bus_add(&m->mmio, ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE,
			    pci_ecam_mmio, &m->arch->ecam);
	/* No I/O space on arm64: the disks' notify area is BAR 0's. */
	if (!r)
		r = machine_pci(m, disks, false, arm64_intx_irq);
	return r;
}

static int arm64_vcpus(struct machine *m)
{
	int r = machine_vcpus(m);

	for (unsigned int i = 0; !r && i < m->ncpus; i++)
		r = arm64_vcpu_init(&m->vm, m->vcpu[i].fd, i,
				    &m->arch->mpidr[i]);
	return r;
}

static int arm64_tree(struct machine *m, const struct arm64_boot *b,
		      char *msg, size_t msglen)
{
	struct arm64_fdt t = {
		.ram_base = ARM64_RAM_BASE, .ram_size = m->cfg->mem,
		.ncpus = m->ncpus, .bootargs = m->cfg->params,
		.initrd = b->initrd, .initrd_end = b->initrd_end,
		.pci_intx = m->pci_intx,
		.pci_last_bus = m->hp ? hotplug_nslots(m->hp) : 0,
	};

	memcpy(t.mpidr, m->arch->mpidr, sizeof(uint64_t) * m->ncpus);
	return arm64_fdt_build(m->vm.ram + (b->fdt - ARM64_RAM_BASE),
			       ARM64_FDT_MAX, &t, msg, msglen);
}

static int arm64_ram(struct machine *m, char *msg, size_t msglen)
{
	int r = vm_map_ram(&m->vm, m->cfg->mem, msg, msglen);

	if (r)
		return r;
	r = vm_add_ram(&m->vm, ARM64_RAM_BASE, m->cfg->mem, 0);
	return r ? vm_fail(msg, msglen, "KVM_SET_USER_MEMORY_REGION", -r) : 0;
}

int arch_machine_build(struct machine *m, struct blk_dev **disks,
		       const struct arch_kernel *k, const uint8_t *initrd,
		       size_t initrd_size)
{
	struct arm64_boot b;
	char msg[256];
	int r;

	m->arch = calloc(1, sizeof(*m->arch));
	if (!m->arch)
		return -ENOMEM;
	m->arch->gic_fd = m->arch->its_fd = -1;
	r = arm64_ram(m, msg, sizeof(msg));
	if (!r)
		r = arm64_gic_create(&m->vm, &m->arch->gic_fd,
				     &m->arch->its_fd, msg, sizeof(msg));
	if (!r)
		r = arm64_boot_layout(&k->im, ARM64_RAM_BASE, m->cfg->mem,
				      initrd_size, &b, msg, sizeof(msg));
	if (r)
		goto fail;
	startup_mark("VM, its RAM and GIC");
	arm64_boot_load(m->vm.ram, ARM64_RAM_BASE, &b, k->img,
			k->im.file_size, initrd, initrd_size);
	startup_mark("kernel and initrd in RAM");
	r = arm64_devices(m, disks);
	if (r) {
		pr_err("cannot set up devices: %s", strerror(-r));
		return r;
	}
	startup_mark("devices");
	r = arm64_vcpus(m);
	if (r) {
		pr_err("cannot set up vCPUs: %s", strerror(-r));
		return r;
	}
	r = arm64_gic_init(m->arch->gic_fd, m->arch->its_fd, msg,
			   sizeof(msg));
	/* The hot-plug root ports after the GIC: KVM takes an irqfd (each
	 * port's interrupt) only once it is initialised (EAGAIN before).
	 * Their secondary buses 1 to n are in the ECAM window and the
	 * tree's bus-range; their MSIs carry requester ids (vm_msi_set). */
	if (!r) {
		r = hotplug_create(m, disks, &m->hp);
		if (r)
			vm_fail(msg, sizeof(msg), "hot-plug slots", -r);
	}
	if (!r)
		r = arm64_tree(m, &b, msg, sizeof(msg));
	if (!r) {
		r = arm64_vcpu_boot_regs(m->vcpu[0].fd, b.kernel, b.fdt);
		if (r)
			vm_fail(msg, sizeof(msg), "boot registers", -r);
	}
	if (!r)
		return 0;
fail:
	pr_err("%s", msg);
	return r < 0 ? r : -EINVAL;
}

void arch_machine_free(struct machine *m)
{
	if (!m->arch)
		return;
	if (m->arch->its_fd >= 0)
		close(m->arch->its_fd);
	if (m->arch->gic_fd >= 0)
		close(m->arch->gic_fd);
	free(m->arch);
	m->arch = NULL;
}
