/* PC configuration mechanism #1: the address register at port 0xcf8 and
 * the data window at 0xcfc-0xcff, onto a struct pci_host's bus 0; and
 * the I/O window PC firmware puts I/O BARs in.
 */
#ifndef X86_HW_PCI_CF8_H
#define X86_HW_PCI_CF8_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/pci_host.h"

#define PCI_CF8_ADDR 0xcf8
#define PCI_CF8_DATA 0xcfc
/* The I/O window: above every legacy port the machine has. */
#define PCI_CF8_IO_START 0xc000
#define PCI_CF8_IO_END 0x10000

struct pci_cf8 {
	pthread_mutex_t lock; /* the address and the data access it selects */
	uint32_t addr;
	struct pci_host *host;
};

void pci_cf8_init(struct pci_cf8 *c, struct pci_host *host);
/* Bus handler for the 8 ports at PCI_CF8_ADDR. */
void pci_cf8_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
		bool write);

#endif
