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
/* The device-side view of this queue, for blk_dev_start(). */
struct blk_queue_cfg blkdrv_q_cfg(const struct blkdrv_q *q);

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
