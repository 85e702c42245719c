/* The driver side of a split virtqueue, for tests, fuzzers and devbench:
 * builds chains in fake guest memory, publishes them, reads the used
 * ring, and honours EVENT_IDX in both directions like Linux does. */
#ifndef TESTS_DRIVER_H
#define TESTS_DRIVER_H

#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stdint.h>

#include "tests/support/fakemem.h"

struct drv_buf {
	uint64_t gpa;
	uint32_t len;
	bool write; /* device-writable */
};

struct drv_vq {
	struct fakemem *fm;
	uint16_t size;
	bool event_idx;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t free_head, num_free;
	uint16_t avail_idx;   /* our shadow of avail->idx */
	uint16_t kicked_idx;  /* avail idx at the last kick decision */
	uint16_t last_used;
	uint16_t chain_len[1024]; /* descriptors used by each head */
	uint64_t indirect_gpa[1024]; /* per-head indirect table, 0 if none */
};

int drv_vq_init(struct drv_vq *q, struct fakemem *fm, uint16_t size,
		bool event_idx);
/* Every head's indirect table now, not on first use (when several
 * threads would share the allocator).  0 or -ENOMEM. */
int drv_vq_alloc_indirect(struct drv_vq *q);
/* Write a chain (direct, or one indirect descriptor with a table) and
 * make it available.  Returns the head, or -ENOSPC. */
int drv_vq_add(struct drv_vq *q, const struct drv_buf *b, unsigned int n,
	       bool indirect);
/* After adds: does the device want a kick? (EVENT_IDX or NO_NOTIFY) */
bool drv_vq_kick_needed(struct drv_vq *q);
/* 1 and the entry if the device used one, else 0. */
int drv_vq_get_used(struct drv_vq *q, uint16_t *head, uint32_t *len);
/* Ask for an interrupt at the next used entry; returns true if entries
 * are already there (poll again instead of sleeping). */
bool drv_vq_enable_cb(struct drv_vq *q);
void drv_vq_disable_cb(struct drv_vq *q);
/* The device-side config the queue needs. */
void drv_vq_addrs(const struct drv_vq *q, uint64_t *desc, uint64_t *avail,
		  uint64_t *used);

/* The head the next drv_vq_add() will use (to pick per-head buffers). */
static inline uint16_t drv_vq_peek_head(const struct drv_vq *q)
{
	return q->free_head;
}

#endif
