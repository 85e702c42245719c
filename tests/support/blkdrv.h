/* A virtio-blk driver for tests, fuzzers and devbench: builds requests
 * (header, data, status) on a driver-side queue and talks to the device
 * through a kick and a call eventfd, like a guest would. */
#ifndef TESTS_BLKDRV_H
#define TESTS_BLKDRV_H

#include "blk/blk.h"
#include "tests/support/driver.h"

struct blkdrv_q {
	struct drv_vq vq;
	uint64_t hdr_gpa;    /* 16 bytes per head */
	uint64_t status_gpa; /* 1 byte per head */
	int kick_fd, call_fd;
};

int blkdrv_q_init(struct blkdrv_q *q, struct fakemem *fm, uint16_t size,
		  bool event_idx);
void blkdrv_q_close(struct blkdrv_q *q);
/* This queue as a transport hands it to the device: enabled, with its
 * rings and eventfds. */
struct vdev_queue blkdrv_q_vdev(const struct blkdrv_q *q);
/* Activate d as the transport does at DRIVER_OK (blk_dev_ops.activate):
 * features as negotiated, queues q[0..nq), and needs_reset(opaque)
 * called by an iothread whose ring broke (NULL: nothing to call). */
int blkdrv_activate(struct blk_dev *d, const struct gmem *m,
		    uint64_t features, const struct vdev_queue *q,
		    unsigned int nq, void (*needs_reset)(void *opaque),
		    void *opaque);

/* Add a request: header, the data buffers, a status byte.  Returns the
 * head or -ENOSPC.  The status byte is preset to 0xff. */
int blkdrv_add(struct blkdrv_q *q, uint32_t type, uint64_t sector,
	       const struct drv_buf *data, unsigned int ndata, bool indirect);
uint8_t blkdrv_status(const struct blkdrv_q *q, uint16_t head);
/* Kick the device if it asked for kicks. */
void blkdrv_kick(struct blkdrv_q *q);
/* Wait for an interrupt (call eventfd); 1, or 0 on timeout. */
int blkdrv_wait_irq(struct blkdrv_q *q, int timeout_ms);
/* Run one request to completion: add, kick, wait.  Returns the status
 * byte, or -ETIMEDOUT; *used_len gets used.len. */
int blkdrv_sync(struct blkdrv_q *q, uint32_t type, uint64_t sector,
		const struct drv_buf *data, unsigned int ndata, bool indirect,
		uint32_t *used_len);

#endif
