/* A virtio-blk disk on virtio-pci: wires blk/ and virtio/pci to KVM
 * (MSI routes + irqfd per interrupt source, ioeventfd per queue).
 */
#ifndef VMM_VDISK_H
#define VMM_VDISK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "blk/blk.h"
#include "virtio/pci.h"
#include "vmm/kvm.h"
#include "hw/pci_host.h"

struct vdisk {
	struct vm *vm;
	struct blk_dev *blk;
	struct vdev vdev;
	struct vpci pci;
	unsigned int nq;
	int kick[VDEV_MAX_QUEUES];
	int call[VPCI_MAX_SRC];   /* [0]: config interrupt; [1 + q]: queue q */
	int gsi[VPCI_MAX_SRC];
	bool irqfd_on[VPCI_MAX_SRC];
	bool notify_on;
	uint64_t notify_base;
	uint64_t slow_kicks;       /* kicks that exited to a vCPU thread */
	/* INTx (a guest without MSI-X): a thread turns every interrupt
	 * eventfd into an ISR bit and the INTA# level on intx_gsi. */
	int intx_gsi;              /* -1: none */
	bool intx_on;
	int intx_stop;
	pthread_t intx_thread;
};

extern const struct pci_dev_ops vdisk_pci_ops;

/* Takes over blk (destroyed by vdisk_destroy).  0 or -errno. */
int vdisk_create(struct vm *vm, struct blk_dev *blk, uint32_t bar,
		 struct vdisk **out);
/* The GSI (IOAPIC pin) its INTA# line reaches. */
void vdisk_set_intx_gsi(struct vdisk *d, unsigned int gsi);
/* Reset the device: its iothreads have stopped serving (in-flight I/O
 * done) and its figures are final. */
void vdisk_stop(struct vdisk *d);
/* Its counters and each queue's latency breakdown as one JSON object
 * (complete once vdisk_stop() returned). */
void vdisk_stats_json(struct vdisk *d, FILE *f);
/* Reset the device, end its iothreads, then free everything. */
void vdisk_destroy(struct vdisk *d);

#endif
