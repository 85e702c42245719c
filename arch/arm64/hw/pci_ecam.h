/* PCI Express enhanced configuration access (ECAM) for a struct
 * pci_host: each function's configuration space is a 4 KiB page of MMIO
 * at base + (bus << 20 | device << 15 | function << 12).  Bus 0 is the
 * host's slots (function 0 each); a bus above 0 is the bridge's whose
 * secondary bus it is (pci_host_cfg_bus: the hot-plug root ports).
 * Linux's pci-host-ecam-generic driver uses it.
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
 * accesses of 1, 2 or 4 naturally aligned bytes; anything else, a
 * function other than 0 on bus 0, a bus no bridge has, or an empty slot
 * reads all ones and writes nothing. */
void pci_ecam_mmio(void *opaque, uint64_t addr, uint8_t *data,
		   unsigned int size, bool write);

#endif
