/* Requests finished inside submit(), handed back by reap() oldest first:
 * the RAM disk's, and the file backend's for files on tmpfs.  A ring of
 * size slots; the caller keeps count below size (its depth check).
 * Internal to blk/. */
#ifndef BLK_FIFO_H
#define BLK_FIFO_H

#include "blk/req.h"

struct blk_fifo {
	unsigned int head;     /* oldest */
	unsigned int count;
	unsigned int size;
	struct blk_req **slot; /* size entries */
};

static inline void blk_fifo_push(struct blk_fifo *f, struct blk_req *r)
{
	unsigned int tail = f->head + f->count;

	f->slot[tail < f->size ? tail : tail - f->size] = r;
	f->count++;
}

/* Up to max of the oldest into out[]; returns how many. */
static inline unsigned int blk_fifo_pop(struct blk_fifo *f,
					struct blk_req **out, unsigned int max)
{
	unsigned int n = f->count < max ? f->count : max;

	for (unsigned int i = 0; i < n; i++) {
		out[i] = f->slot[f->head];
		if (++f->head == f->size)
			f->head = 0;
	}
	f->count -= n;
	return n;
}

#endif
