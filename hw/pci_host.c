/* PCI host bridge and configuration mechanism #1. */
#include "hw/pci_host.h"

#include <errno.h>
#include <string.h>

#define CFG_ENABLE 0x80000000u

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
	pthread_mutex_init(&h->lock, NULL);
	/* Intel 440FX-like host bridge: class 06 00 00. */
	pci_func_init(&h->bridge, 0x8086, 0x1237, 0x060000, 2, 0, 0);
	h->mmio_next = mmio_start;
	h->mmio_end = mmio_end;
	h->io_next = PCI_HOST_IO_START;
	pci_host_add(h, &bridge_ops, &h->bridge);
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
	return pci_host_alloc(&h->io_next, PCI_HOST_IO_END, size, port);
}

/* Slot addressed by 0xcf8, or -1: bus 0, function 0 only. */
static int pci_host_slot(const struct pci_host *h)
{
	uint32_t a = h->addr;
	unsigned int bus = (a >> 16) & 0xff, dev = (a >> 11) & 0x1f;
	unsigned int fn = (a >> 8) & 7;

	if (!(a & CFG_ENABLE) || bus || fn || dev >= h->nslots)
		return -1;
	return (int)dev;
}

static void pci_host_data(struct pci_host *h, unsigned int byte,
			  uint8_t *data, unsigned int size, bool write)
{
	int slot = pci_host_slot(h);
	uint32_t off = (h->addr & 0xfc) + byte, v = 0;

	if (slot < 0) {
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

void pci_host_io(void *opaque, uint64_t port, uint8_t *data,
		 unsigned int size, bool write)
{
	struct pci_host *h = opaque;

	pthread_mutex_lock(&h->lock);
	if (port == PCI_HOST_ADDR && size == 4) {
		if (write)
			memcpy(&h->addr, data, 4);
		else
			memcpy(data, &h->addr, 4);
	} else if (port >= PCI_HOST_DATA) {
		pci_host_data(h, (unsigned int)(port - PCI_HOST_DATA), data,
			      size, write);
	} else if (!write) {
		memset(data, 0xff, size); /* 0xcf9 reset control and others */
	}
	pthread_mutex_unlock(&h->lock);
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
