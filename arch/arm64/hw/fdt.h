/* The arm64 guest's device tree, written with libfdt: memory, cpus
 * (PSCI 0.2 as enable-method), psci, the architected timer, the GICv3
 * with its ITS, the 8250 UART as the console, the generic ECAM PCI host
 * with its MSIs mapped to the ITS and INTx to GIC SPIs, and /chosen.
 * Addresses and interrupts are the machine's (arch/arm64/hw/layout.h).
 *
 * Pure: tests/unit/arm64/test_fdt.c reads every node back with libfdt.
 */
#ifndef ARM64_HW_FDT_H
#define ARM64_HW_FDT_H

#include <stddef.h>
#include <stdint.h>

#define ARM64_FDT_MAX_CPUS 64
#define ARM64_FDT_PHANDLE_GIC 1
#define ARM64_FDT_PHANDLE_ITS 2

struct arm64_fdt {
	uint64_t ram_base, ram_size;
	unsigned int ncpus;
	uint64_t mpidr[ARM64_FDT_MAX_CPUS]; /* each vCPU's MPIDR_EL1 */
	const char *bootargs;
	uint64_t initrd, initrd_end; /* equal: no initrd */
	uint32_t pci_intx;           /* PCI slots with an INTA# line */
	/* The last PCI bus: 0, or the hot-plug root ports' secondary buses
	 * 1 to n; below ARM64_PCI_ECAM_BUSES. */
	unsigned int pci_last_bus;
};

/* Write the tree into buf (size bytes) and check it with libfdt
 * (fdt_check_full).  0, or -1 with one line in msg. */
int arm64_fdt_build(void *buf, size_t size, const struct arm64_fdt *cfg,
		    char *msg, size_t msglen);

#endif
