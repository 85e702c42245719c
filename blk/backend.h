/* Storage backends behind virtio-blk, plugged in through one ops table.
 *
 * A backend is opened once per disk; each virtqueue opens its own
 * backend queue, which only that queue's iothread touches.  submit()
 * either serves a parsed request at once (the RAM disk; a file on tmpfs)
 * or queues it; kick() hands queued requests to the kernel; reap()
 * returns finished ones with r->result set.  A backend whose completions
 * arrive asynchronously exposes a wait fd that becomes readable when
 * reap() has work.
 */
#ifndef BLK_BACKEND_H
#define BLK_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "blk/req.h"

struct blk_opts;
struct blk_backend;
struct gmem;
struct blk_bq;

/* What open() learned about the disk. */
struct blk_backend_info {
	uint64_t size;     /* bytes; capacity is size / 512 */
	uint32_t blk_size; /* logical block size */
	bool ro;
	bool discard;      /* discard works */
	bool write_zeroes; /* write-zeroes works */
	char note[160];    /* one line for the user, or "" */
};

#define BLK_SUBMIT_DONE 1

struct blk_backend_ops {
	const char *name;
	/* 0 or -errno; on error, msg (if not NULL) gets one line. */
	int (*open)(const struct blk_opts *o, struct blk_backend **out,
		    struct blk_backend_info *info, char *msg, unsigned int msglen);
	void (*close)(struct blk_backend *b);
	/* Make the disk size bytes (another thread than the queues').
	 * Requests in flight past a new, smaller end fail with IOERR.  0,
	 * or -errno with one line in msg. */
	int (*resize)(struct blk_backend *b, uint64_t size, char *msg,
		      unsigned int msglen);
	/* A queue for one iothread: at most depth requests in flight (the
	 * virtqueue's size); write_through: FLUSH was not negotiated, so a
	 * write must be durable when it completes; mem (or NULL): the
	 * memory the requests' buffers usually lie in, which the backend
	 * may register with the kernel once for all requests.  0 or
	 * -errno. */
	int (*queue_open)(struct blk_backend *b, unsigned int depth,
			  bool write_through, const struct gmem *mem,
			  struct blk_bq **out);
	/* Waits for in-flight requests, then frees the queue. */
	void (*queue_close)(struct blk_bq *q);
	/* BLK_SUBMIT_DONE: finished now, r->result set (reap() never
	 * returns it, inflight() never counts it); 0: queued, reap()
	 * returns it once finished; -EAGAIN: full, try again after a reap;
	 * another -errno: refused. */
	int (*submit)(struct blk_bq *q, struct blk_req *r);
	/* Hand everything accepted so far to the kernel. */
	void (*kick)(struct blk_bq *q);
	/* Finished requests, at most max; never blocks. */
	unsigned int (*reap)(struct blk_bq *q, struct blk_req **out,
			     unsigned int max);
	/* Readable when reap() has work; -1 if completions are synchronous.
	 * The iothread clears it with a read. */
	int (*wait_fd)(struct blk_bq *q);
	/* Requests queued and not yet reaped. */
	unsigned int (*inflight)(struct blk_bq *q);
};

extern const struct blk_backend_ops blk_backend_file;
extern const struct blk_backend_ops blk_backend_ram;

#endif
