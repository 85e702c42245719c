/* One virtqueue of a blk device and the iothread that serves it.
 * Internal to blk/. */
#ifndef BLK_QUEUE_H
#define BLK_QUEUE_H

#include <pthread.h>

#include "blk/backend.h"
#include "blk/blk.h"
#include "blk/throttle.h"
#include "virtio/virtq.h"

/* The iothread's state, under lock: the caller moves IDLE -> STARTING and
 * -> EXIT, the thread STARTING -> RUNNING or IDLE, and RUNNING -> IDLE
 * once stopping is seen and in-flight I/O has finished. */
enum blk_qstate { BLK_Q_IDLE, BLK_Q_STARTING, BLK_Q_RUNNING, BLK_Q_EXIT };

/* What may hold a disk's queues back before they pop a head, shared by
 * them (blk_dev_pause_io, blk_dev_set_limit).  active is read before
 * every pop: 0 on a disk nobody paused or limited. */
#define BLK_GATE_HELD 1u    /* paused: pop nothing */
#define BLK_GATE_LIMITED 2u /* a rate limit: pop when the buckets allow */
#define BLK_GATE_FAILING 4u /* forced removal: answer all IOERR, at once */
struct blk_gate {
	unsigned int active; /* atomic: BLK_GATE_* bits */
	struct throttle_bucket ops, bytes;
};

/* A queue's counters beside its ring's (virtq_stats): one writer, the
 * iothread (host/counter.h). */
enum { BLK_T_READ, BLK_T_WRITE, BLK_T_FLUSH, BLK_T_DISCARD, BLK_T_WZ,
       BLK_T_KINDS };
struct blk_qctr {
	uint64_t by_type[BLK_T_KINDS]; /* served by the backend */
	uint64_t completed;            /* every head given back */
	uint64_t bytes_read, bytes_written;
	uint64_t io_errors;
	uint64_t kicks;     /* driver notifications the thread woke on */
	uint64_t poll_hits; /* idle polls that found work */
	uint64_t throttle_waits; /* sleeps for the rate limit's tokens */
};

struct blk_qraw {
	struct blk_qctr c;
	struct virtq_stats v;
};

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
	uint16_t cap;             /* heads the four arrays above hold */
	unsigned int n_unpublished;
	bool pushed;              /* used entries pushed since the last notify */
	bool backend_full;        /* submit said -EAGAIN this pass */
	bool reset_sent;          /* needs_reset already reported */
	struct blk_qctr ctr;      /* this run's counters */
	struct lat_queue lat;     /* this run's latency breakdown */
	const bool *latency_on;   /* the disk's switch, read for each request */
	struct blk_gate *gate;    /* the disk's */
	bool gated;               /* the gate stopped this drain pass */
	uint64_t gate_wait_ns;    /* for how long (UINT64_MAX: held) */
	bool parked;              /* under lock: held, nothing in flight */
	int wake_fd;              /* eventfd: the gate changed */

	pthread_t thread;
	pid_t tid;                /* the thread's, once it runs (atomic) */
	bool set_up;              /* rings and buffers ready (between start and stop) */
	bool started;             /* its iothread serves the ring */
	bool sync;                /* no iothread: blk_queue_serve (tests) */
	bool stopping;            /* set by blk_queue_stop, read by the thread */
	int start_err;            /* from the thread's queue_open */
	pthread_mutex_t lock;     /* the state handshake and parked */
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
/* With q->sync set (blk_dev_set_sync), start and stop open and close the
 * backend queue on the caller's thread and wake no iothread; this serves
 * what the ring has available, on the caller's thread, as passes of the
 * iothread's loop would, until one makes no progress.  Returns requests
 * handled and completions reaped. */
unsigned int blk_queue_serve(struct blk_queue *q);

#endif
