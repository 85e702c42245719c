/* PC configuration mechanism #1. */
#include "arch/x86/hw/pci_cf8.h"

#include <string.h>

#define CFG_ENABLE 0x80000000u

void pci_cf8_init(struct pci_cf8 *c, struct pci_host *host)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->host = host;
}

/* Slot addressed by 0xcf8 on bus 0, or -1: function 0 only. */
static int pci_cf8_slot(const struct pci_cf8 *c)
{
	uint32_t a = c->addr;
	unsigned int bus = (a >> 16) & 0xff, dev = (a >> 11) & 0x1f;
	unsigned int fn = (a >> 8) & 7;

	if (!(a & CFG_ENABLE) || bus || fn)
		return -1;
	return (int)dev;
}

/* Bus addressed by 0xcf8 when it is enabled and not bus 0, else 0. */
static unsigned int pci_cf8_bus(const struct pci_cf8 *c)
{
	return c->addr & CFG_ENABLE ? (c->addr >> 16) & 0xff : 0;
}

void pci_cf8_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
		bool write)
{
	struct pci_cf8 *c = opaque;

	pthread_mutex_lock(&c->lock);
	if (port == PCI_CF8_ADDR && size == 4) {
		if (write)
			memcpy(&c->addr, data, 4);
		else
			memcpy(data, &c->addr, 4);
	} else if (port >= PCI_CF8_DATA) {
		int slot = pci_cf8_slot(c);
		uint32_t off = (c->addr & 0xfc) + (uint32_t)(port - PCI_CF8_DATA);

		if (pci_cf8_bus(c)) {
			pci_host_cfg_bus(c->host, pci_cf8_bus(c),
					 (c->addr >> 8) & 0xff, off, data,
					 size, write);
		} else if (slot < 0) {
			if (!write)
				memset(data, 0xff, size);
		} else {
			pci_host_cfg(c->host, (unsigned int)slot, off, data,
				     size, write);
		}
	} else if (!write) {
		memset(data, 0xff, size); /* 0xcf9 reset control and others */
	}
	pthread_mutex_unlock(&c->lock);
}
