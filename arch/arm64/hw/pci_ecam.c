/* ECAM configuration access: bus 0, and the buses behind its bridges. */
#include "arch/arm64/hw/pci_ecam.h"

#include <string.h>

void pci_ecam_init(struct pci_ecam *e, struct pci_host *host, uint64_t base)
{
	memset(e, 0, sizeof(*e));
	pthread_mutex_init(&e->lock, NULL);
	e->base = base;
	e->host = host;
}

void pci_ecam_mmio(void *opaque, uint64_t addr, uint8_t *data,
		   unsigned int size, bool write)
{
	struct pci_ecam *e = opaque;
	uint64_t off = addr - e->base;
	unsigned int bus = (unsigned int)(off >> 20);
	unsigned int dev = (unsigned int)(off >> 15) & 0x1f;
	unsigned int fn = (unsigned int)(off >> 12) & 7;
	uint32_t reg = (uint32_t)(off & 0xfff);

	if ((!bus && fn) || (size != 1 && size != 2 && size != 4) ||
	    reg % size) {
		if (!write)
			memset(data, 0xff, size);
		return;
	}
	pthread_mutex_lock(&e->lock);
	if (bus)
		pci_host_cfg_bus(e->host, bus, (off >> 12) & 0xff, reg, data,
				 size, write);
	else
		pci_host_cfg(e->host, dev, reg, data, size, write);
	pthread_mutex_unlock(&e->lock);
}
