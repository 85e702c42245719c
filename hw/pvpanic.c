/* pvpanic PCI device. */
#include "hw/pvpanic.h"

#include <string.h>

#define PVPANIC_VENDOR 0x1b36
#define PVPANIC_DEVICE 0x0011

int pvpanic_init(struct pvpanic *p, uint32_t bar,
		 void (*panic)(void *opaque, uint8_t events), void *opaque)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->panic = panic;
	p->opaque = opaque;
	/* class 08 80 00: system peripheral, other */
	pci_func_init(&p->func, PVPANIC_VENDOR, PVPANIC_DEVICE, 0x088000, 1,
		      PVPANIC_VENDOR, 0x1100);
	return pci_func_set_bar(&p->func, 0, PVPANIC_BAR_SIZE, false, bar);
}

static uint32_t pvpanic_cfg_read(void *opaque, uint32_t off,
				 unsigned int size)
{
	struct pvpanic *p = opaque;
	uint32_t v;

	pthread_mutex_lock(&p->lock);
	v = pci_func_read(&p->func, off, size);
	pthread_mutex_unlock(&p->lock);
	return v;
}

static void pvpanic_cfg_write(void *opaque, uint32_t off, unsigned int size,
			      uint32_t val)
{
	struct pvpanic *p = opaque;

	pthread_mutex_lock(&p->lock);
	pci_func_write(&p->func, off, size, val);
	pthread_mutex_unlock(&p->lock);
}

static bool pvpanic_mmio(void *opaque, uint64_t addr, uint8_t *data,
			 unsigned int size, bool write)
{
	struct pvpanic *p = opaque;
	uint64_t base;
	bool hit;

	pthread_mutex_lock(&p->lock);
	hit = pci_func_bar(&p->func, 0, &base) && addr >= base &&
	      addr - base < PVPANIC_BAR_SIZE;
	pthread_mutex_unlock(&p->lock);
	if (!hit)
		return false;
	if (!write) {
		memset(data, 0, size);
		if (addr == base)
			data[0] = PVPANIC_PANICKED | PVPANIC_CRASH_LOADED;
	} else if (addr == base && (data[0] & PVPANIC_PANICKED) && p->panic) {
		p->panic(p->opaque, data[0]);
	}
	return true;
}

const struct pci_dev_ops pvpanic_ops = {
	.cfg_read = pvpanic_cfg_read, .cfg_write = pvpanic_cfg_write,
	.mmio = pvpanic_mmio,
};
