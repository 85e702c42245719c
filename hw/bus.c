/* Port I/O and MMIO dispatch. */
#include "hw/bus.h"

#include <errno.h>
#include <string.h>


int bus_add(struct bus *b, uint64_t base, uint64_t len, bus_fn fn,
	    void *opaque)
{
	if (!len || base + len < base)
		return -EINVAL;
	if (b->n >= BUS_MAX_DEVS)
		return -ENOSPC;
	for (unsigned int i = 0; i < b->n; i++)
		if (base < b->r[i].base + b->r[i].len &&
		    b->r[i].base < base + len)
			return -EINVAL;
	b->r[b->n++] = (struct bus_range){ base, len, fn, opaque };
	return 0;
}

void bus_access(struct bus *b, uint64_t addr, uint8_t *data,
		unsigned int size, bool write)
{
	for (unsigned int i = 0; i < b->n; i++) {
		const struct bus_range *r = &b->r[i];

		if (addr >= r->base && addr - r->base < r->len) {
			r->fn(r->opaque, addr, data, size, write);
			return;
		}
	}
	if (b->fallback &&
	    b->fallback(b->fallback_opaque, addr, data, size, write))
		return;
	__atomic_add_fetch(&b->unclaimed, 1, __ATOMIC_RELAXED);
	if (!write)
		memset(data, 0xff, size);
	/* Counted only: the VMM reports b->unclaimed. */
}
