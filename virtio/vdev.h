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

struct vdev_queue {
	uint16_t size;        /* set by the driver, <= max_size */
	uint16_t max_size;
	uint16_t msix_vector;
	bool enabled;
	uint64_t desc, driver, device;
	int kick_fd, call_fd; /* owned by the transport */
};

struct vdev_ops {
	uint32_t device_id;                       /* VIRTIO_ID_* */
	uint64_t (*features)(void *impl);          /* offered */
	unsigned int (*num_queues)(void *impl);
	uint16_t (*queue_max_size)(void *impl);
	uint32_t (*config_size)(void *impl);
	void (*config_read)(void *impl, uint32_t off, void *buf, uint32_t len);
	void (*config_write)(void *impl, uint32_t off, const void *buf,
			     uint32_t len);
	/* DRIVER_OK with the queues the driver enabled.  0 or -errno. */
	int (*start)(void *impl, const struct gmem *m, uint64_t features,
		     const struct vdev_queue *q, unsigned int nq);
	/* Reset: returns once no thread touches guest memory for it. */
	void (*stop)(void *impl);
};

#endif
