/* Requests finished inside submit(), handed back by reap() oldest first:
 * the RAM disk's, and the file backend's for files on tmpfs.  An array
 * of size slots filled in order; the caller keeps count below size (its
 * depth check).  reap() takes all of it as a rule (its max is the ring's
 * size), so a pop shifts the rest down only when it takes part.
 * Internal to blk/. */
#ifndef BLK_FIFO_H
#define BLK_FIFO_H

#include <assert.h>
#include <string.h>

#include "blk/req.h"

struct blk_fifo {
	unsigned int count;
	unsigned int size;
	struct blk_req **slot; /* size entries, the oldest first */
};

static inline void blk_fifo_push(struct blk_fifo *f, struct blk_req *r)
{
	assert(f->count < f->size); /* the caller's depth check */
	f->slot[f->count++] = r;
}

/* Up to max of the oldest into out[]; returns how many. */
static inline unsigned int blk_fifo_pop(struct blk_fifo *f,
					struct blk_req **out, unsigned int max)
{
	unsigned int n = f->count < max ? f->count : max;

	for (unsigned int i = 0; i < n; i++)
		out[i] = f->slot[i];
	f->count -= n;
	if (f->count)
		memmove(f->slot, f->slot + n, f->count * sizeof(f->slot[0]));
	return n;
}

#endif
