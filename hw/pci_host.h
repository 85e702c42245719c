/* PCI host bridge, bus 0: its slots, the MMIO and I/O windows the
 * devices' BARs are placed in, and configuration access by slot.  How
 * the guest reaches configuration space is the architecture's: the
 * 0xcf8/0xcfc ports on x86 (arch/x86/hw/pci_cf8.h), ECAM on arm64
 * (arch/arm64/hw/pci_ecam.h).
 */
#ifndef HW_PCI_HOST_H
#define HW_PCI_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "hw/pci_func.h"

#define PCI_HOST_SLOTS 32

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
	/* A bridge: a configuration access to bus (not 0), devfn; false if
	 * the bus is not behind it.  NULL: not a bridge. */
	bool (*bus_cfg)(void *opaque, unsigned int bus, unsigned int devfn,
			uint32_t off, uint8_t *data, unsigned int size,
			bool write);
};

struct pci_host {
	struct pci_func bridge;
	const struct pci_dev_ops *ops[PCI_HOST_SLOTS];
	void *opaque[PCI_HOST_SLOTS];
	unsigned int nslots;
	uint64_t mmio_next, mmio_end;
	uint64_t io_next, io_end;
};

/* A bus with the host bridge in slot 0 and no I/O window. */
void pci_host_init(struct pci_host *h, uint64_t mmio_start, uint64_t mmio_end);
/* The I/O window [start, end) for I/O BARs. */
void pci_host_set_io(struct pci_host *h, uint64_t start, uint64_t end);
/* Next free slot; -ENOSPC when the bus is full. */
int pci_host_add(struct pci_host *h, const struct pci_dev_ops *ops,
		 void *opaque);
/* Room in the MMIO window for a BAR of size bytes (power of two).
 * 0 or -ENOSPC. */
int pci_host_alloc_bar(struct pci_host *h, uint32_t size, uint32_t *addr);
/* The same in the I/O window. */
int pci_host_alloc_io(struct pci_host *h, uint32_t size, uint32_t *port);
/* A configuration access of size bytes at off of the function in slot
 * (function 0 of bus 0); an empty slot reads all ones.  The caller
 * serialises accesses (the device locks its own state). */
void pci_host_cfg(struct pci_host *h, unsigned int slot, uint32_t off,
		  uint8_t *data, unsigned int size, bool write);
/* The same on bus (not 0) at devfn: the first bridge in slot order
 * whose buses include it answers; none: reads all ones. */
void pci_host_cfg_bus(struct pci_host *h, unsigned int bus,
		      unsigned int devfn, uint32_t off, uint8_t *data,
		      unsigned int size, bool write);
/* Bus fallbacks: MMIO to a memory BAR, port I/O to an I/O BAR. */
bool pci_host_mmio(void *opaque, uint64_t addr, uint8_t *data,
		   unsigned int size, bool write);
bool pci_host_pio(void *opaque, uint64_t port, uint8_t *data,
		  unsigned int size, bool write);

#endif
