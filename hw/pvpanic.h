/* pvpanic as a PCI device (vendor 0x1b36, device 0x0011): one MMIO BAR
 * whose byte register reports the supported events and takes the
 * guest's panic notification (Linux: pvpanic-pci).
 */
#ifndef HW_PVPANIC_H
#define HW_PVPANIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/pci_func.h"
#include "hw/pci_host.h"

#define PVPANIC_BAR_SIZE 16
#define PVPANIC_PANICKED 0x1
#define PVPANIC_CRASH_LOADED 0x2

struct pvpanic {
	pthread_mutex_t lock;
	struct pci_func func;
	void (*panic)(void *opaque, uint8_t events);
	void *opaque;
};

extern const struct pci_dev_ops pvpanic_ops;

int pvpanic_init(struct pvpanic *p, uint32_t bar,
		 void (*panic)(void *opaque, uint8_t events), void *opaque);

#endif
