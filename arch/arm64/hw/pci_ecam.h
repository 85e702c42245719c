/* PCI Express enhanced configuration access (ECAM) for bus 0 of a
 * struct pci_host: each function's configuration space is a 4 KiB page
 * of MMIO at base + (device << 15 | function << 12).  Linux's
 * pci-host-ecam-generic driver uses it.
 */
#ifndef ARM64_HW_PCI_ECAM_H
#define ARM64_HW_PCI_ECAM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/pci_host.h"

struct pci_ecam {
	pthread_mutex_t lock; /* one configuration access at a time */
	uint64_t base;
	struct pci_host *host;
};

void pci_ecam_init(struct pci_ecam *e, struct pci_host *host, uint64_t base);
/* Bus handler for the window (ARM64_PCI_ECAM_SIZE bytes at base):
 * accesses of 1, 2 or 4 naturally aligned bytes; anything else, another
 * bus or function, or an empty slot reads all ones and writes nothing. */
void pci_ecam_mmio(void *opaque, uint64_t addr, uint8_t *data,
		   unsigned int size, bool write);

#endif
