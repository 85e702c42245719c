/* One virtqueue of a blk device and the iothread that serves it.
 * Internal to blk/. */
#ifndef BLK_QUEUE_H
#define BLK_QUEUE_H

#include <pthread.h>

#include "blk/backend.h"
#include "blk/blk.h"
#include "virtio/virtq.h"

struct blk_queue {
	struct virtq vq;
	unsigned int index;        /* in the device, for the thread's name */
	const struct blk_req_limits *limits;
	const struct blk_backend_ops *ops;
	struct blk_backend *backend;
	struct blk_queue_params params;
	struct blk_bq *bq;
	bool batch;
	uint64_t poll_max_ns;     /* 0: never poll */
	uint64_t poll_ns;         /* the current window, adapted */
	int kick_fd, call_fd, stop_fd;
	void (*needs_reset)(void *opaque);
	void *reset_opaque;

	struct blk_req *reqs;     /* indexed by head */
	struct iovec *iovs;       /* BLK_REQ_MAX_IOV per head */
	struct blk_req **done;    /* reap buffer */
	struct blk_req **unpublished; /* reaped, pushed, not yet published */
	unsigned int n_unpublished;
	bool pushed;              /* used entries pushed since the last notify */
	bool backend_full;        /* submit said -EAGAIN this pass */
	bool reset_sent;          /* needs_reset already reported */
	uint64_t io_errors;
	struct lat_queue lat;     /* this run's latency breakdown */

	pthread_t thread;
	bool set_up;              /* rings and buffers ready (between start and stop) */
	bool started;             /* its iothread runs */
	bool stopping;            /* set by blk_queue_stop, read by the thread */
	int start_err;            /* from the thread's queue_open */
	pthread_mutex_t lock;     /* start handshake only */
	pthread_cond_t cond;
	bool start_done;
};

/* Start the queue's iothread; returns once its backend queue is open. */
int blk_queue_start(struct blk_queue *q);
/* Stop it: wake, drain in-flight I/O, join. */
void blk_queue_stop(struct blk_queue *q);

#endif
