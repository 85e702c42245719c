/* PCI host bridge: slots, BAR windows, configuration access by slot. */
#include "hw/pci_host.h"

#include <errno.h>
#include <string.h>

static uint32_t bridge_read(void *opaque, uint32_t off, unsigned int size)
{
	return pci_func_read(opaque, off, size);
}

static void bridge_write(void *opaque, uint32_t off, unsigned int size,
			 uint32_t val)
{
	pci_func_write(opaque, off, size, val);
}

static bool bridge_mmio(void *opaque, uint64_t addr, uint8_t *data,
			unsigned int size, bool write)
{
	(void)opaque, (void)addr, (void)data, (void)size, (void)write;
	return false;
}

static const struct pci_dev_ops bridge_ops = {
	.cfg_read = bridge_read, .cfg_write = bridge_write,
	.mmio = bridge_mmio,
};

void pci_host_init(struct pci_host *h, uint64_t mmio_start, uint64_t mmio_end)
{
	memset(h, 0, sizeof(*h));
	/* Intel 440FX-like host bridge: class 06 00 00. */
	pci_func_init(&h->bridge, 0x8086, 0x1237, 0x060000, 2, 0, 0);
	h->mmio_next = mmio_start;
	h->mmio_end = mmio_end;
	pci_host_add(h, &bridge_ops, &h->bridge);
}

void pci_host_set_io(struct pci_host *h, uint64_t start, uint64_t end)
{
	h->io_next = start;
	h->io_end = end;
}

int pci_host_add(struct pci_host *h, const struct pci_dev_ops *ops,
		 void *opaque)
{
	if (h->nslots >= PCI_HOST_SLOTS)
		return -ENOSPC;
	h->ops[h->nslots] = ops;
	h->opaque[h->nslots] = opaque;
	return (int)h->nslots++;
}

/* Take size bytes (a power of two), aligned, from [*next, end). */
static int pci_host_alloc(uint64_t *next, uint64_t end, uint32_t size,
			  uint32_t *addr)
{
	uint64_t a = (*next + size - 1) & ~((uint64_t)size - 1);

	if (a + size > end)
		return -ENOSPC;
	*addr = (uint32_t)a;
	*next = a + size;
	return 0;
}

int pci_host_alloc_bar(struct pci_host *h, uint32_t size, uint32_t *addr)
{
	return pci_host_alloc(&h->mmio_next, h->mmio_end, size, addr);
}

int pci_host_alloc_io(struct pci_host *h, uint32_t size, uint32_t *port)
{
	return pci_host_alloc(&h->io_next, h->io_end, size, port);
}

void pci_host_cfg(struct pci_host *h, unsigned int slot, uint32_t off,
		  uint8_t *data, unsigned int size, bool write)
{
	uint32_t v = 0;

	if (slot >= h->nslots) {
		if (!write)
			memset(data, 0xff, size);
		return;
	}
	if (write) {
		memcpy(&v, data, size);
		h->ops[slot]->cfg_write(h->opaque[slot], off, size, v);
	} else {
		v = h->ops[slot]->cfg_read(h->opaque[slot], off, size);
		memcpy(data, &v, size);
	}
}

void pci_host_cfg_bus(struct pci_host *h, unsigned int bus,
		      unsigned int devfn, uint32_t off, uint8_t *data,
		      unsigned int size, bool write)
{
	/* Bridges are added before the vCPUs run and stay. */
	for (unsigned int i = 1; i < h->nslots; i++)
		if (h->ops[i]->bus_cfg &&
		    h->ops[i]->bus_cfg(h->opaque[i], bus, devfn, off, data,
				       size, write))
			return;
	if (!write)
		memset(data, 0xff, size);
}

bool pci_host_mmio(void *opaque, uint64_t addr, uint8_t *data,
		   unsigned int size, bool write)
{
	struct pci_host *h = opaque;

	/* Slots are fixed once the vCPUs run; each device locks itself. */
	for (unsigned int i = 1; i < h->nslots; i++)
		if (h->ops[i]->mmio(h->opaque[i], addr, data, size, write))
			return true;
	return false;
}

bool pci_host_pio(void *opaque, uint64_t port, uint8_t *data,
		  unsigned int size, bool write)
{
	struct pci_host *h = opaque;

	for (unsigned int i = 1; i < h->nslots; i++)
		if (h->ops[i]->pio &&
		    h->ops[i]->pio(h->opaque[i], port, data, size, write))
			return true;
	return false;
}
