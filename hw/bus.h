/* Port I/O and MMIO dispatch for vCPU exits. */
#ifndef HW_BUS_H
#define HW_BUS_H

#include <stdbool.h>
#include <stdint.h>

#define BUS_MAX_DEVS 32

/* data holds size bytes, little endian; on a read the handler fills it. */
typedef void (*bus_fn)(void *opaque, uint64_t addr, uint8_t *data,
		       unsigned int size, bool write);

struct bus_range {
	uint64_t base, len;
	bus_fn fn;
	void *opaque;
};

struct bus {
	unsigned int n;
	struct bus_range r[BUS_MAX_DEVS];
	/* Called for addresses no range claims (e.g. PCI BARs); returns
	 * false if nothing decodes there either. */
	bool (*fallback)(void *opaque, uint64_t addr, uint8_t *data,
			 unsigned int size, bool write);
	void *fallback_opaque;
	uint64_t unclaimed;
};

/* Ranges are fixed before the vCPUs run.  0 or -ENOSPC / -EINVAL. */
int bus_add(struct bus *b, uint64_t base, uint64_t len, bus_fn fn,
	    void *opaque);
/* Dispatch one access.  Unclaimed reads return all ones. */
void bus_access(struct bus *b, uint64_t addr, uint8_t *data,
		unsigned int size, bool write);

#endif
