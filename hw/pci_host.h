/* PCI host bridge: configuration mechanism #1 on 0xcf8/0xcfc, bus 0,
 * and the MMIO and I/O windows the devices' BARs are placed in.
 */
#ifndef HW_PCI_HOST_H
#define HW_PCI_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "virtio/pci.h"

#define PCI_HOST_ADDR 0xcf8
#define PCI_HOST_DATA 0xcfc
#define PCI_HOST_SLOTS 32
/* The I/O window, where PC firmware puts PCI I/O BARs too: above every
 * legacy port the machine has. */
#define PCI_HOST_IO_START 0xc000
#define PCI_HOST_IO_END 0x10000

struct pci_dev_ops {
	uint32_t (*cfg_read)(void *opaque, uint32_t off, unsigned int size);
	void (*cfg_write)(void *opaque, uint32_t off, unsigned int size,
			  uint32_t val);
	/* MMIO at addr: false if none of the device's BARs decodes it. */
	bool (*mmio)(void *opaque, uint64_t addr, uint8_t *data,
		     unsigned int size, bool write);
	/* The same for port I/O; NULL: the device has no I/O BAR. */
	bool (*pio)(void *opaque, uint64_t port, uint8_t *data,
		    unsigned int size, bool write);
};

struct pci_host {
	pthread_mutex_t lock;
	uint32_t addr;       /* 0xcf8 */
	struct pci_func bridge;
	const struct pci_dev_ops *ops[PCI_HOST_SLOTS];
	void *opaque[PCI_HOST_SLOTS];
	unsigned int nslots;
	uint64_t mmio_next, mmio_end;
	uint64_t io_next;
};

void pci_host_init(struct pci_host *h, uint64_t mmio_start, uint64_t mmio_end);
/* Next free slot; -ENOSPC when the bus is full. */
int pci_host_add(struct pci_host *h, const struct pci_dev_ops *ops,
		 void *opaque);
/* Room in the MMIO window for a BAR of size bytes (power of two).
 * 0 or -ENOSPC. */
int pci_host_alloc_bar(struct pci_host *h, uint32_t size, uint32_t *addr);
/* The same in the I/O window. */
int pci_host_alloc_io(struct pci_host *h, uint32_t size, uint32_t *port);
void pci_host_io(void *opaque, uint64_t port, uint8_t *data,
		 unsigned int size, bool write);
/* Bus fallbacks: MMIO to a memory BAR, port I/O to an I/O BAR. */
bool pci_host_mmio(void *opaque, uint64_t addr, uint8_t *data,
		   unsigned int size, bool write);
bool pci_host_pio(void *opaque, uint64_t port, uint8_t *data,
		  unsigned int size, bool write);

#endif
