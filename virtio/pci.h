/* PCI configuration space and the virtio-pci modern transport (pure).
 *
 * Two parts, none of which makes a KVM ioctl, on a generic PCI function
 * (struct pci_func, hw/pci_func.h):
 *  - struct vdev (virtio/vdev.c): device status state machine, feature
 *    negotiation and the queue registers, on top of a struct vdev_ops;
 *  - struct vpci (virtio/pci.c): the virtio-pci modern register layout
 *    (common, notify, ISR and device config capabilities) and MSI-X in
 *    BAR 0, and a second notify area in I/O BAR 2, decoded into vdev
 *    calls.  What needs KVM (MSI routes, irqfds,
 *    ioeventfds) is asked for through struct vpci_cb.
 *
 * Every value the guest writes is checked here; nothing the guest does
 * makes these functions fail in a way that stops the VMM.
 */
#ifndef VIRTIO_PCI_H
#define VIRTIO_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/pci_func.h"
#include "virtio/gmem.h"
#include "virtio/vdev.h"

/* ---- virtio-pci modern transport (virtio/pci.c) ------------------- */

/* BAR 0 layout. */
#define VPCI_COMMON_OFF 0x0000
#define VPCI_COMMON_LEN 0x0040
#define VPCI_ISR_OFF 0x1000
#define VPCI_ISR_LEN 0x0004
#define VPCI_DEVCFG_OFF 0x2000
#define VPCI_DEVCFG_LEN 0x1000
#define VPCI_NOTIFY_OFF 0x3000
#define VPCI_NOTIFY_MULT 4
#define VPCI_NOTIFY_LEN (VDEV_MAX_QUEUES * VPCI_NOTIFY_MULT)
#define VPCI_MSIX_TABLE_OFF 0x4000
#define VPCI_MSIX_PBA_OFF 0x5000
#define VPCI_BAR_SIZE 0x8000
#define VPCI_MSIX_MAX (VDEV_MAX_QUEUES + 1)

/* BAR 2: the notify area once more, in I/O space, at offset 0 with the
 * same multiplier.  Its capability comes before BAR 0's, and a driver
 * takes the first notify capability it can use (Linux does), so a
 * driver that can reach I/O space kicks with an OUT: KVM on AMD
 * completes an OUT exit in the kernel from the exit's own information,
 * while an MMIO write exits as a nested page fault whose instruction
 * KVM fetches, decodes and emulates (bench/JOURNAL.md has the figures).
 * A driver without I/O space uses BAR 0's, which works as before. */
#define VPCI_IO_BAR 2
#define VPCI_IO_BAR_SIZE (VDEV_MAX_QUEUES * VPCI_NOTIFY_MULT)

/* Interrupt sources: 0 is the config change, 1 + q is queue q. */
#define VPCI_SRC_CONFIG 0
#define VPCI_SRC_QUEUE(q) (1 + (q))
#define VPCI_MAX_SRC (1 + VDEV_MAX_QUEUES)

struct vpci_cb {
	void *opaque;
	/* Source src now delivers the MSI (addr, data), or, with on false,
	 * nothing (vector masked, unprogrammed, or MSI-X off): signals must
	 * stay pending until it is on again. */
	void (*irq_route)(void *opaque, unsigned int src, bool on,
			  uint64_t addr, uint32_t data);
	/* Is source src's interrupt pending (for the PBA)?  May be NULL. */
	bool (*irq_pending)(void *opaque, unsigned int src);
	/* A notify area moved: kicks for queue q arrive at base + q *
	 * VPCI_NOTIFY_MULT, in I/O space if io, else in memory space.
	 * mapped false: that area decodes nowhere. */
	void (*notify_map)(void *opaque, bool io, bool mapped, uint64_t base);
	/* A kick that reached the vCPU thread (no ioeventfd caught it). */
	void (*notify)(void *opaque, unsigned int q);
	/* INTx mode (MSI-X off, INTx not disabled) begins or ends: while on,
	 * every source raises INTA# and sets its ISR bit.  May be NULL. */
	void (*intx_mode)(void *opaque, bool on);
	/* The driver read the ISR (which clears it): lower INTA# unless a
	 * bit is set again meanwhile.  May be NULL. */
	void (*intx_ack)(void *opaque);
};

struct vpci_msix_entry {
	uint32_t addr_lo, addr_hi, data, ctrl;
};

struct vpci_route {
	bool on;
	uint64_t addr;
	uint32_t data;
};

struct vpci {
	pthread_mutex_t lock;
	struct pci_func func;
	struct vdev *vdev;
	struct vpci_cb cb;
	unsigned int nvec;
	uint8_t msix_cap;         /* offset of the MSI-X capability */
	struct vpci_msix_entry msix[VPCI_MSIX_MAX];
	struct vpci_route route[VPCI_MAX_SRC];
	bool route_valid;
	bool notify_mapped[2];    /* [0]: BAR 0's area, [1]: the I/O BAR's */
	uint64_t notify_base[2];
	bool bus_master;          /* PCI_COMMAND_MASTER as last seen */
	bool intx;                /* INTx mode, as last told to vmm/ */
	uint64_t bad_access;      /* malformed guest accesses, counted */
};

/* A virtio-pci function for v with BAR 0 (VPCI_BAR_SIZE, 32-bit memory)
 * at bar_addr and BAR 2 (VPCI_IO_BAR_SIZE, I/O) at io_addr; io_addr 0:
 * no I/O BAR and no notify capability in it (a machine without I/O
 * space, arm64).  0 or -EINVAL. */
int vpci_init(struct vpci *p, struct vdev *v, const struct vpci_cb *cb,
	      uint32_t bar_addr, uint32_t io_addr);
void vpci_destroy(struct vpci *p);
uint32_t vpci_cfg_read(struct vpci *p, uint32_t off, unsigned int size);
void vpci_cfg_write(struct vpci *p, uint32_t off, unsigned int size,
		    uint32_t val);
/* If addr falls in BAR 0 as it decodes now, *off gets the offset. */
bool vpci_bar_hit(struct vpci *p, uint64_t addr, uint64_t *off);
/* If port falls in the I/O BAR as it decodes now, *off gets the offset. */
bool vpci_io_hit(struct vpci *p, uint64_t port, uint64_t *off);
/* I/O BAR access at offset off: a 2-byte write at q * VPCI_NOTIFY_MULT
 * kicks queue q; reads return 0; anything else is a bad access. */
void vpci_io_read(struct vpci *p, uint64_t off, void *data,
		  unsigned int size);
void vpci_io_write(struct vpci *p, uint64_t off, const void *data,
		   unsigned int size);
/* BAR 0 access at offset off of size 1, 2, 4 or 8 (little endian). */
void vpci_bar_read(struct vpci *p, uint64_t off, void *data,
		   unsigned int size);
void vpci_bar_write(struct vpci *p, uint64_t off, const void *data,
		    unsigned int size);
/* The Interrupt Line register's value as firmware would leave it: the
 * GSI that INTA# reaches. */
void vpci_set_intx_line(struct vpci *p, uint8_t line);
/* Reset the device (as a status write of 0 would); for VM shutdown. */
void vpci_reset(struct vpci *p);
/* The device's configuration changed (any thread): vdev_config_changed
 * under the lock. */
void vpci_config_changed(struct vpci *p);
/* The features the driver accepted (FEATURES_OK), or 0 (any thread). */
uint64_t vpci_features(struct vpci *p);

#endif
