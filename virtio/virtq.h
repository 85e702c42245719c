/* Split virtqueue, device side (virtio 1.2, 2.7).
 *
 * Pure ring logic over guest memory: no threads, no syscalls.  After
 * DRIVER_OK a queue is touched by exactly one thread.  Supports
 * VERSION_1, EVENT_IDX and INDIRECT_DESC.
 *
 * Outcomes for a hostile guest (ARCHITECTURE.md, "Guest input"):
 *  - a bad chain: virtq_pop() returns -EBADMSG with elem->head set; the
 *    caller returns that head with used.len = 0.  Counted.
 *    An indirect table may sit at any address in RAM, may follow direct
 *    descriptors (it then ends the chain) and holds at most
 *    VIRTQ_MAX_SIZE entries, whatever the queue size; a direct chain
 *    longer than the queue is a loop.
 *  - a bad ring: virtq_pop() returns -EPROTO and the queue is broken for
 *    good; the caller sets DEVICE_NEEDS_RESET.  Counted.
 */
#ifndef VIRTIO_VIRTQ_H
#define VIRTIO_VIRTQ_H

#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "host/counter.h"
#include "virtio/gmem.h"

#define VIRTQ_MAX_SIZE 1024

struct virtq_stats {
	uint64_t popped;
	uint64_t bad_chains;
	uint64_t ring_errors;
	uint64_t notifies;
};

struct virtq {
	const struct gmem *mem;
	uint16_t size;
	bool event_idx;
	bool indirect;
	bool broken;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t *used_event;  /* in the avail ring, written by the driver */
	uint16_t *avail_event; /* in the used ring, written by us */

	uint16_t last_avail;   /* next avail entry to pop */
	uint16_t avail_seen;   /* avail->idx as last read and checked */
	uint16_t used_idx;     /* next used slot; published up to here */
	uint16_t published;    /* used->idx as last published */
	uint16_t signalled;    /* used->idx at the last notify */
	bool signalled_valid;
	uint16_t inflight;     /* heads popped and not yet pushed */
	bool busy[VIRTQ_MAX_SIZE]; /* in-flight heads */
	struct virtq_stats stats;
};

/* One popped chain.  iov[0..n_out) are device-readable, then
 * iov[n_out..n_out+n_in) device-writable. */
struct virtq_elem {
	uint16_t head;
	unsigned int n_out, n_in;
	uint64_t out_len, in_len;
	struct iovec *iov;
};

/* Set a queue up over rings the driver placed in guest memory.
 * 0, -EINVAL (size not a power of two in 1..VIRTQ_MAX_SIZE), or -EFAULT
 * (a ring misaligned or not wholly inside RAM). */
int virtq_init(struct virtq *vq, const struct gmem *m, uint16_t size,
	       uint64_t desc, uint64_t avail, uint64_t used, bool event_idx,
	       bool indirect);

/* Pop the next chain into iov[0..max_iov).
 * 1: an element; 0: ring empty; -EBADMSG: bad chain (see above);
 * -EPROTO: the ring is broken. */
int virtq_pop(struct virtq *vq, struct virtq_elem *e, struct iovec *iov,
	      unsigned int max_iov);

/* virtq_pop() in two steps, so the caller can pick the iovec storage by
 * head: the next head (1, 0 if empty, -EPROTO), then its chain (0 or
 * -EBADMSG; the head stays in flight either way). */
int virtq_next_head(struct virtq *vq, uint16_t *head);
int virtq_read_chain(struct virtq *vq, uint16_t head, struct virtq_elem *e,
		     struct iovec *iov, unsigned int max_iov);

/* virtq_read_chain() for the chain a driver queues most: one indirect
 * descriptor of a three-entry table linked 0 -> 1 -> 2, as Linux lays
 * out a one-segment block request.  Each entry's buffer (non-empty,
 * inside RAM) goes to iov[0..3), readable ones first; returns how many
 * are readable (0-3), or -EAGAIN for any other chain (iov then holds
 * nothing to use), which virtq_read_chain() then decides.  This
 * accepts only chains that one takes, with the same iovecs
 * (tests/unit/test_virtq.c compares the two).  Only iov is written:
 * the queue is neither counted nor changed. */
int virtq_read_chain3(const struct virtq *vq, uint16_t head,
		      struct iovec iov[3]);

/* Hand back the most recently popped head without consuming it. */
void virtq_unpop(struct virtq *vq, uint16_t head);

/* Put a completed head into the used ring (not yet visible). */
void virtq_push(struct virtq *vq, uint16_t head, uint32_t len);

/* Make pushed entries visible to the driver. */
void virtq_publish(struct virtq *vq);

/* After publish: should the driver be interrupted now? */
bool virtq_need_notify(struct virtq *vq);
/* The next virtq_need_notify() says yes: entries were published when no
 * interrupt could be sent (the device was paused). */
void virtq_owe_notify(struct virtq *vq);

/* Ask for / suppress kicks.  virtq_enable_kick() returns true if the
 * driver added buffers meanwhile (the caller must drain again). */
bool virtq_enable_kick(struct virtq *vq);
void virtq_disable_kick(struct virtq *vq);

/* The driver has made buffers available that we have not popped. */
bool virtq_avail_pending(const struct virtq *vq);
/* From any thread: every buffer the driver made available has been
 * published as used (avail->idx == used->idx) and, with EVENT_IDX, the
 * driver has taken them all (used_event == used->idx). */
bool virtq_driver_idle(const struct virtq *vq);

/* Bytes of guest memory the three rings occupy, for a given size. */
uint64_t virtq_desc_bytes(uint16_t size);
uint64_t virtq_avail_bytes(uint16_t size);
uint64_t virtq_used_bytes(uint16_t size);

#endif
