/* One virtqueue of a blk device and the iothread that serves it.
 * Internal to blk/. */
#ifndef BLK_QUEUE_H
#define BLK_QUEUE_H

#include <pthread.h>

#include "blk/backend.h"
#include "blk/blk.h"
#include "virtio/virtq.h"

/* The iothread's state, under lock: the caller moves IDLE -> STARTING and
 * -> EXIT, the thread STARTING -> RUNNING or IDLE, and RUNNING -> IDLE
 * once stopping is seen and in-flight I/O has finished. */
enum blk_qstate { BLK_Q_IDLE, BLK_Q_STARTING, BLK_Q_RUNNING, BLK_Q_EXIT };

struct blk_queue {
	struct virtq vq;
	unsigned int index;        /* in the device, for the thread's name */
	int cpu;                   /* host CPU the thread is bound to, or -1 */
	const char *name;          /* the disk's file, or "ram", for messages */
	const struct blk_req_limits *limits;
	const struct blk_backend_ops *ops;
	struct blk_backend *backend;
	bool write_through;       /* FLUSH not negotiated */
	struct blk_bq *bq;
	bool batch;
	bool latency;             /* keep lat (blk_opts.latency) */
	uint64_t poll_max_ns;     /* 0: never poll */
	uint64_t poll_ns;         /* the current window, adapted */
	int kick_fd, call_fd;
	int stop_fd;              /* wakes the thread; >= 0 while it exists */
	void (*needs_reset)(void *opaque);
	void *reset_opaque;

	struct blk_req *reqs;     /* indexed by head */
	struct iovec *iovs;       /* BLK_REQ_MAX_IOV per head */
	struct blk_req **reaped;  /* what one reap() returns */
	struct blk_req **unpublished; /* finished, pushed, not yet published */
	unsigned int n_unpublished;
	bool pushed;              /* used entries pushed since the last notify */
	bool backend_full;        /* submit said -EAGAIN this pass */
	bool reset_sent;          /* needs_reset already reported */
	uint64_t io_errors;
	struct lat_queue lat;     /* this run's latency breakdown */

	pthread_t thread;
	pid_t tid;                /* the thread's, once it runs (atomic) */
	bool set_up;              /* rings and buffers ready (between start and stop) */
	bool started;             /* its iothread serves the ring */
	bool stopping;            /* set by blk_queue_stop, read by the thread */
	int start_err;            /* from the thread's queue_open */
	pthread_mutex_t lock;     /* the state handshake only */
	pthread_cond_t cond;
	enum blk_qstate state;
};

/* Create the queue's iothread, idle until blk_queue_start(). */
int blk_queue_spawn(struct blk_queue *q, unsigned int index);
/* End the thread (after blk_queue_stop, if it was started). */
void blk_queue_exit(struct blk_queue *q);
/* Let the iothread serve the ring; returns once its backend queue is
 * open (or could not be). */
int blk_queue_start(struct blk_queue *q);
/* Stop it: wake, drain in-flight I/O, close the backend queue; the
 * thread stays, idle. */
void blk_queue_stop(struct blk_queue *q);

#endif
