/* A virtio device as the transport sees it: status, features, queues.
 *
 * The transport (virtio/pci) turns register accesses into calls here;
 * the device type (blk) plugs in through one ops table.
 */
#ifndef VIRTIO_VDEV_H
#define VIRTIO_VDEV_H

#include <stdbool.h>
#include <stdint.h>

#include "virtio/gmem.h"

#define VDEV_MAX_QUEUES 16

/* One virtqueue, from the transport's registers to the device's ring:
 * the driver programs it, the device serves it once activated.  The
 * ring addresses keep the names of the split ring (virtio 1.2, 2.7) and
 * of the queue_desc/queue_avail/queue_used registers: the avail ring is
 * the driver area, the used ring the device area. */
struct vdev_queue {
	uint16_t size;        /* set by the driver, <= max_size */
	uint16_t max_size;
	uint16_t msix_vector;
	bool enabled;         /* the driver enabled it: the device serves it */
	uint64_t desc, avail, used; /* guest-physical ring addresses */
	int kick_fd;          /* eventfd the driver's kicks arrive on */
	int call_fd;          /* eventfd the device signals to interrupt */
};

/* What a device receives when the driver sets DRIVER_OK (as Cloud
 * Hypervisor's and Firecracker's devices do at activate()): guest
 * memory, the negotiated features, its queues, and the means to ask for
 * a reset.  The structure itself does not outlive the call (the device
 * copies the queue fields it keeps); mem, needs_reset and opaque must
 * stay valid until the device's reset(). */
struct vdev_activation {
	const struct gmem *mem;
	uint64_t features;           /* negotiated */
	const struct vdev_queue *q;  /* every queue; served: those enabled */
	unsigned int nq;
	/* Any thread of the device, once a ring is broken: the transport
	 * sets DEVICE_NEEDS_RESET and sends a config interrupt. */
	void (*needs_reset)(void *opaque);
	void *opaque;
};

/* A device type, as the transport drives it.  impl is the device. */
struct vdev_ops {
	uint32_t device_id;                       /* VIRTIO_ID_* */
	/* The class code a PCI transport shows: base class, subclass and
	 * programming interface, 0xBBSSPP. */
	uint32_t pci_class;
	uint64_t (*features)(void *impl);          /* offered */
	unsigned int (*num_queues)(void *impl);
	uint16_t (*queue_max_size)(void *impl);
	uint32_t (*config_size)(void *impl);
	void (*config_read)(void *impl, uint32_t off, void *buf, uint32_t len);
	void (*config_write)(void *impl, uint32_t off, const void *buf,
			     uint32_t len);
	/* DRIVER_OK: serve the queues the driver enabled.  0 or -errno (then
	 * nothing runs, and the transport sets DEVICE_NEEDS_RESET). */
	int (*activate)(void *impl, const struct vdev_activation *a);
	/* Reset: returns once no thread touches guest memory for it. */
	void (*reset)(void *impl);
	/* Bus mastering off: finish what is in flight, then touch guest
	 * memory no more (no interrupt either) until resume(), which goes on
	 * where pause() left off.  May be NULL when activate() needs no RAM. */
	void (*pause)(void *impl);
	int (*resume)(void *impl);
};

/* The device state behind the registers (virtio/vdev.c). */

#define VDEV_NO_VECTOR 0xffff
#define VDEV_ISR_QUEUE 0x1
#define VDEV_ISR_CONFIG 0x2

struct vdev {
	const struct vdev_ops *ops;
	void *impl;
	const struct gmem *mem;
	uint64_t offered;         /* device features, transport-filtered */
	uint64_t driver_features; /* as written by the driver */
	uint32_t dfselect, gfselect;
	uint8_t status;
	uint8_t needs_reset;      /* set by any thread, atomically */
	uint8_t isr;              /* ISR status, read-to-clear (atomic) */
	uint16_t queue_select;
	uint16_t msix_config;
	uint8_t config_generation; /* bumped by vdev_config_changed */
	unsigned int nq;
	bool started;
	bool dma_off;             /* the transport forbids DMA (bus master off) */
	struct vdev_queue q[VDEV_MAX_QUEUES];
	/* Raise the config-change interrupt (any thread). */
	void (*config_irq)(void *opaque);
	void *opaque;
	uint64_t refused;         /* driver writes refused, counted */
};

/* 0 or -EINVAL (bad ops, too many queues, queue size not 2^n). */
int vdev_init(struct vdev *v, const struct vdev_ops *ops, void *impl,
	      const struct gmem *m, void (*config_irq)(void *), void *opaque);
uint8_t vdev_get_status(const struct vdev *v);
/* Driver writes the status register.  0 resets.  FEATURES_OK is
 * refused (stays clear) when the driver accepted features that were not
 * offered or left out VERSION_1; DRIVER_OK activates the device.  Returns
 * the status as it now reads. */
uint8_t vdev_set_status(struct vdev *v, uint8_t val);
void vdev_reset(struct vdev *v);
uint32_t vdev_get_device_features(const struct vdev *v);
uint32_t vdev_get_driver_features(const struct vdev *v);
void vdev_set_driver_features(struct vdev *v, uint32_t val);
/* The selected queue, or NULL when queue_select is out of range. */
struct vdev_queue *vdev_selected(struct vdev *v);
/* Queue register writes; ignored (and counted) after the queue was
 * enabled, after DRIVER_OK, or for a queue that does not exist. */
void vdev_queue_set_size(struct vdev *v, uint16_t size);
void vdev_queue_set_addr(struct vdev *v, unsigned int which, bool hi,
			 uint32_t val); /* which: 0 desc, 1 avail, 2 used */
/* Enable: checks size and that the rings lie in RAM; refused if not. */
void vdev_queue_enable(struct vdev *v);
/* Any thread: the device needs a reset (sets the status bit, sends a
 * config interrupt). */
void vdev_signal_needs_reset(struct vdev *v);
/* The transport allows or forbids DMA (PCI: Bus Master Enable).  Off:
 * an active device is paused before this returns, and DRIVER_OK waits
 * until it is on again; on: a paused device resumes, a waiting one is
 * activated. */
void vdev_set_dma(struct vdev *v, bool on);
/* The device's configuration changed (a disk's capacity): the
 * generation moves on and, once the driver is running (DRIVER_OK), it
 * gets a configuration-change interrupt.  Under the transport's lock. */
void vdev_config_changed(struct vdev *v);
/* ISR status, cleared by the read. */
uint8_t vdev_read_isr(struct vdev *v);

#endif
