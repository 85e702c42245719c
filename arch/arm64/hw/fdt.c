/* The arm64 guest's device tree (see fdt.h). */
#include "arch/arm64/hw/fdt.h"

#include <libfdt.h>
#include <stdio.h>
#include <string.h>

#include "arch/arm64/hw/layout.h"

/* Devicetree bindings' constants (include/dt-bindings/interrupt-
 * controller/arm-gic.h and irq.h). */
#define GIC_SPI 0
#define GIC_PPI 1
#define IRQ_EDGE_RISING 1
#define IRQ_LEVEL_HIGH 4
#define IRQ_LEVEL_LOW 8
#define PCI_SPACE_MEM32 0x02000000u
#define UART_CLOCK 1843200

/* Each step returns libfdt's status; the first error stops the tree. */
#define TRY(x)                                                          \
	do {                                                            \
		int r_ = (x);                                           \
		if (r_ < 0)                                             \
			return r_;                                      \
	} while (0)

/* Arrays of cells written big-endian straight into the tree's room for
 * the property (libfdt's placeholder).  A property's value is 4-byte
 * aligned only: 64-bit values are copied in. */
static int prop_u64s(void *fdt, const char *name, const uint64_t *v,
		     unsigned int n)
{
	uint8_t *p;
	int r = fdt_property_placeholder(fdt, name, (int)(n * 8), (void **)&p);

	for (unsigned int i = 0; !r && i < n; i++) {
		fdt64_t be = cpu_to_fdt64(v[i]);

		memcpy(p + 8 * i, &be, 8);
	}
	return r;
}

static int prop_cells(void *fdt, const char *name, const uint32_t *v,
		      unsigned int n)
{
	fdt32_t *p;
	int r = fdt_property_placeholder(fdt, name, (int)(n * sizeof(*p)),
					 (void **)&p);

	for (unsigned int i = 0; !r && i < n; i++)
		p[i] = cpu_to_fdt32(v[i]);
	return r;
}

static int fdt_cpus(void *fdt, const struct arm64_fdt *c)
{
	char name[32];

	TRY(fdt_begin_node(fdt, "cpus"));
	TRY(fdt_property_cell(fdt, "#address-cells", 1));
	TRY(fdt_property_cell(fdt, "#size-cells", 0));
	for (unsigned int i = 0; i < c->ncpus; i++) {
		/* reg: the affinity fields of MPIDR_EL1 (Aff2..Aff0). */
		uint32_t reg = (uint32_t)(c->mpidr[i] & 0xffffff);

		snprintf(name, sizeof(name), "cpu@%x", reg);
		TRY(fdt_begin_node(fdt, name));
		TRY(fdt_property_string(fdt, "device_type", "cpu"));
		TRY(fdt_property_string(fdt, "compatible", "arm,arm-v8"));
		TRY(fdt_property_string(fdt, "enable-method", "psci"));
		TRY(fdt_property_cell(fdt, "reg", reg));
		TRY(fdt_end_node(fdt));
	}
	return fdt_end_node(fdt);
}

static int fdt_timer_psci(void *fdt)
{
	const uint32_t irqs[] = {
		GIC_PPI, ARM64_PPI_TIMER_SEC, IRQ_LEVEL_LOW,
		GIC_PPI, ARM64_PPI_TIMER_PHYS, IRQ_LEVEL_LOW,
		GIC_PPI, ARM64_PPI_TIMER_VIRT, IRQ_LEVEL_LOW,
		GIC_PPI, ARM64_PPI_TIMER_HYP, IRQ_LEVEL_LOW,
	};

	TRY(fdt_begin_node(fdt, "timer"));
	TRY(fdt_property_string(fdt, "compatible", "arm,armv8-timer"));
	TRY(prop_cells(fdt, "interrupts", irqs, 12));
	TRY(fdt_property(fdt, "always-on", NULL, 0));
	TRY(fdt_end_node(fdt));
	/* KVM implements PSCI 0.2 in the kernel (KVM_ARM_VCPU_PSCI_0_2),
	 * called with HVC. */
	TRY(fdt_begin_node(fdt, "psci"));
	TRY(fdt_property_string(fdt, "compatible", "arm,psci-0.2"));
	TRY(fdt_property_string(fdt, "method", "hvc"));
	return fdt_end_node(fdt);
}

static int fdt_gic(void *fdt, unsigned int ncpus)
{
	const uint64_t reg[] = { ARM64_GICD_BASE, ARM64_GICD_SIZE,
				 ARM64_GICR_BASE,
				 ARM64_GICR_STRIDE * ncpus };
	const uint64_t its[] = { ARM64_ITS_BASE, ARM64_ITS_SIZE };
	char name[40];

	snprintf(name, sizeof(name), "intc@%llx",
		 (unsigned long long)ARM64_GICD_BASE);
	TRY(fdt_begin_node(fdt, name));
	TRY(fdt_property_string(fdt, "compatible", "arm,gic-v3"));
	TRY(fdt_property_cell(fdt, "#interrupt-cells", 3));
	TRY(fdt_property(fdt, "interrupt-controller", NULL, 0));
	TRY(fdt_property_cell(fdt, "#address-cells", 2));
	TRY(fdt_property_cell(fdt, "#size-cells", 2));
	TRY(fdt_property(fdt, "ranges", NULL, 0));
	TRY(prop_u64s(fdt, "reg", reg, 4));
	TRY(fdt_property_cell(fdt, "phandle", ARM64_FDT_PHANDLE_GIC));
	snprintf(name, sizeof(name), "its@%llx",
		 (unsigned long long)ARM64_ITS_BASE);
	TRY(fdt_begin_node(fdt, name));
	TRY(fdt_property_string(fdt, "compatible", "arm,gic-v3-its"));
	TRY(fdt_property(fdt, "msi-controller", NULL, 0));
	TRY(fdt_property_cell(fdt, "#msi-cells", 1));
	TRY(prop_u64s(fdt, "reg", its, 2));
	TRY(fdt_property_cell(fdt, "phandle", ARM64_FDT_PHANDLE_ITS));
	TRY(fdt_end_node(fdt));
	return fdt_end_node(fdt);
}

static int fdt_uart(void *fdt)
{
	const uint64_t reg[] = { ARM64_UART_BASE, 8 };
	const uint32_t irq[] = { GIC_SPI, ARM64_SPI_UART, IRQ_LEVEL_HIGH };
	char name[32];

	snprintf(name, sizeof(name), "uart@%llx",
		 (unsigned long long)ARM64_UART_BASE);
	TRY(fdt_begin_node(fdt, name));
	TRY(fdt_property_string(fdt, "compatible", "ns16550a"));
	TRY(prop_u64s(fdt, "reg", reg, 2));
	TRY(prop_cells(fdt, "interrupts", irq, 3));
	TRY(fdt_property_cell(fdt, "clock-frequency", UART_CLOCK));
	return fdt_end_node(fdt);
}

/* interrupt-map: per slot with INTA#, the child's (phys.hi of the slot,
 * 0, 0, pin 1) to the GIC's (unit address 0 0, SPI, level). */
static int fdt_pci_intx(void *fdt, uint32_t slots)
{
	const uint32_t mask[] = { 0x1f << 11, 0, 0, 7 };
	uint32_t map[32 * 10];
	unsigned int n = 0;

	for (unsigned int s = 0; s < 32; s++) {
		if (!(slots & (1u << s)))
			continue;
		const uint32_t e[10] = { s << 11, 0, 0, 1,
					 ARM64_FDT_PHANDLE_GIC, 0, 0,
					 GIC_SPI, ARM64_SPI_PCI + s,
					 IRQ_LEVEL_HIGH };

		memcpy(map + n, e, sizeof(e));
		n += 10;
	}
	TRY(prop_cells(fdt, "interrupt-map-mask", mask, 4));
	return prop_cells(fdt, "interrupt-map", map, n);
}

static int fdt_pci(void *fdt, uint32_t slots, unsigned int last_bus)
{
	/* The ECAM window as far as bus-range: the generic host sizes its
	 * mapping from reg and takes no bus reg leaves out. */
	const uint64_t reg[] = { ARM64_PCI_ECAM_BASE,
				 (uint64_t)(last_bus + 1) << 20 };
	/* One window, 32-bit memory at the same address on both sides. */
	const uint32_t ranges[] = {
		PCI_SPACE_MEM32, 0, (uint32_t)ARM64_PCI_MMIO_BASE,
		0, (uint32_t)ARM64_PCI_MMIO_BASE,
		0, (uint32_t)ARM64_PCI_MMIO_SIZE,
	};
	const uint32_t bus[] = { 0, last_bus };
	/* Requester id r is the ITS's device id r, on every bus (the MSI
	 * routes carry it: vmm/kvm.c). */
	const uint32_t msi[] = { 0, ARM64_FDT_PHANDLE_ITS, 0, 0x10000 };
	char name[32];

	snprintf(name, sizeof(name), "pci@%llx",
		 (unsigned long long)ARM64_PCI_ECAM_BASE);
	TRY(fdt_begin_node(fdt, name));
	TRY(fdt_property_string(fdt, "compatible", "pci-host-ecam-generic"));
	TRY(fdt_property_string(fdt, "device_type", "pci"));
	TRY(fdt_property_cell(fdt, "#address-cells", 3));
	TRY(fdt_property_cell(fdt, "#size-cells", 2));
	TRY(fdt_property_cell(fdt, "#interrupt-cells", 1));
	TRY(prop_cells(fdt, "bus-range", bus, 2));
	TRY(prop_u64s(fdt, "reg", reg, 2));
	TRY(prop_cells(fdt, "ranges", ranges, 7));
	TRY(prop_cells(fdt, "msi-map", msi, 4));
	TRY(fdt_property(fdt, "dma-coherent", NULL, 0));
	TRY(fdt_pci_intx(fdt, slots));
	return fdt_end_node(fdt);
}

static int fdt_chosen(void *fdt, const struct arm64_fdt *c)
{
	char path[40];

	snprintf(path, sizeof(path), "/uart@%llx",
		 (unsigned long long)ARM64_UART_BASE);
	TRY(fdt_begin_node(fdt, "chosen"));
	TRY(fdt_property_string(fdt, "bootargs", c->bootargs));
	TRY(fdt_property_string(fdt, "stdout-path", path));
	if (c->initrd_end > c->initrd) {
		TRY(fdt_property_u64(fdt, "linux,initrd-start", c->initrd));
		TRY(fdt_property_u64(fdt, "linux,initrd-end", c->initrd_end));
	}
	/* The BARs stay where the VMM put them (as kvmtool does). */
	TRY(fdt_property_cell(fdt, "linux,pci-probe-only", 1));
	return fdt_end_node(fdt);
}

static int fdt_write(void *fdt, size_t size, const struct arm64_fdt *c)
{
	const uint64_t mem[] = { c->ram_base, c->ram_size };
	char name[40];

	TRY(fdt_create(fdt, (int)size));
	TRY(fdt_finish_reservemap(fdt));
	TRY(fdt_begin_node(fdt, ""));
	TRY(fdt_property_string(fdt, "compatible", "linux,dummy-virt"));
	TRY(fdt_property_cell(fdt, "#address-cells", 2));
	TRY(fdt_property_cell(fdt, "#size-cells", 2));
	TRY(fdt_property_cell(fdt, "interrupt-parent", ARM64_FDT_PHANDLE_GIC));
	TRY(fdt_chosen(fdt, c));
	snprintf(name, sizeof(name), "memory@%llx",
		 (unsigned long long)c->ram_base);
	TRY(fdt_begin_node(fdt, name));
	TRY(fdt_property_string(fdt, "device_type", "memory"));
	TRY(prop_u64s(fdt, "reg", mem, 2));
	TRY(fdt_end_node(fdt));
	TRY(fdt_cpus(fdt, c));
	TRY(fdt_timer_psci(fdt));
	TRY(fdt_gic(fdt, c->ncpus));
	TRY(fdt_uart(fdt));
	TRY(fdt_pci(fdt, c->pci_intx, c->pci_last_bus));
	TRY(fdt_end_node(fdt));
	return fdt_finish(fdt);
}

int arm64_fdt_build(void *buf, size_t size, const struct arm64_fdt *cfg,
		    char *msg, size_t msglen)
{
	int r;

	if (!cfg->ncpus || cfg->ncpus > ARM64_FDT_MAX_CPUS) {
		snprintf(msg, msglen, "device tree: %u vCPUs", cfg->ncpus);
		return -1;
	}
	if (cfg->pci_last_bus >= ARM64_PCI_ECAM_BUSES) {
		snprintf(msg, msglen, "device tree: PCI bus %u past the ECAM "
			 "window's %u buses", cfg->pci_last_bus,
			 ARM64_PCI_ECAM_BUSES);
		return -1;
	}
	r = fdt_write(buf, size, cfg);
	if (!r)
		r = fdt_check_full(buf, size);
	if (r) {
		snprintf(msg, msglen, "device tree: %s", fdt_strerror(r));
		return -1;
	}
	return 0;
}
