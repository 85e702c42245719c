/* The virtio-blk device: config space, features, and one iothread per
 * virtqueue.  Transport-independent: a transport (virtio/vdev and
 * virtio/pci, or a test driver) activates it with rings in guest memory
 * and a kick and a call eventfd per queue.
 */
#ifndef BLK_BLK_H
#define BLK_BLK_H

#include <linux/virtio_blk.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "blk/backend.h"
#include "blk/latency.h"
#include "virtio/gmem.h"
#include "virtio/vdev.h"

#define BLK_MAX_QUEUES 16
#define BLK_QUEUE_SIZE 256 /* queue size we offer */

/* How a file or block device is served: io_uring (falling back to
 * synchronous calls when the host has none), or either by choice. */
enum blk_engine { BLK_ENGINE_AUTO, BLK_ENGINE_URING, BLK_ENGINE_SYNC };

struct blk_opts {
	const char *path;  /* backing file or block device; NULL for RAM */
	uint64_t ram_size; /* bytes, for the RAM disk */
	bool ro;
	bool direct;       /* O_DIRECT */
	bool batch;        /* submit and complete once per drain pass */
	/* Keep each queue's latency breakdown (blk_dev_latency): three clock
	 * reads and three histogram adds per request, about 90 instructions
	 * of some 1100 (bench/JOURNAL.md).  Set by the VMM when the user
	 * asks for the figures (-v, --stats), not by the spec. */
	bool latency;
	unsigned int queues;
	unsigned int poll_us; /* most an idle iothread polls before sleeping */
	enum blk_engine engine;
	char serial[BLK_ID_BYTES + 1];
	/* Set by the VMM (--pin on), not by the spec: queue i's iothread
	 * runs on host CPU queue_cpu[i]. */
	bool pin;
	int queue_cpu[BLK_MAX_QUEUES];
	/* A rate limit from the start (iops=, bw=, burst=); 0: none. */
	uint64_t iops, bw, burst_ms;
	/* For the VMM, not the device: a launch disk in a hot-plug slot of
	 * its own, which `vmm ctl detach` can take out (vmm/hotplug.h). */
	bool hotplug;
};

#define BLK_POLL_US_DEFAULT 32 /* as QEMU's iothread poll-max-ns */
#define BLK_POLL_US_MAX 1000000

/* Parse "PATH[,ro][,direct][,queues=N][,serial=ID][,batch=on][,poll=US]
 * [,engine=uring|sync][,iops=N][,bw=SIZE][,burst=MS][,hotplug]"
 * or "ram:SIZE[,queues=N][,serial=ID][,batch=on][,poll=US][,iops=..]".
 * 0 or -EINVAL with one line in msg.  o->path points into spec. */
int blk_opts_parse(char *spec, struct blk_opts *o, char *msg,
		   unsigned int msglen);

/* Sizes: a number of MiB, or a number with a K, M or G suffix. */
int blk_parse_size(const char *s, uint64_t *bytes);
/* Rates (bw=): bytes per second, or a number with a K, M or G suffix
 * (powers of 1024). */
int blk_parse_rate(const char *s, uint64_t *bytes);

struct blk_stats {
	/* requests: heads popped, bad chains included. */
	uint64_t requests, bad_chains, ring_errors, notifies, io_errors;
};

struct blk_dev;

int blk_dev_create(const struct blk_opts *o, struct blk_dev **out, char *msg,
		   unsigned int msglen);
void blk_dev_destroy(struct blk_dev *d);

/* The device as the transport drives it (virtio/vdev.h), impl being the
 * struct blk_dev: features, config space, and activate() with the
 * queues the driver enabled, one iothread serving each.  reset() stops
 * the iothreads once in-flight I/O has finished; pause() (bus mastering
 * off) does the same with no interrupt, keeping every queue where it
 * is, and resume() starts them again from there with one notification
 * decision per queue.  Tests and benchmarks drive it through the same
 * table. */
extern const struct vdev_ops blk_dev_ops;

/* Totals over queues stopped so far (read after a reset). */
void blk_dev_stats(const struct blk_dev *d, struct blk_stats *s);
/* One line for the user about how the disk is served ("" if nothing to
 * say): set when io_uring was wanted and the host refused it. */
const char *blk_dev_note(const struct blk_dev *d);
/* The thread id of queue q's iothread, for placing it (vmm/follow.c);
 * 0 if there is no such queue or its thread has not started yet. */
pid_t blk_dev_queue_tid(const struct blk_dev *d, unsigned int q);

/* Queue q's latency breakdown over its stopped runs (read after a
 * reset); NULL if there is no such queue or the disk does not keep one
 * (blk_opts.latency). */
const struct lat_queue *blk_dev_latency(const struct blk_dev *d,
					unsigned int q);

/* ---- the running disk, from another thread (the control socket) ----
 * Any one thread may call these while the guest runs. */

/* One queue's counters since start (or the last blk_dev_stats_reset). */
struct blk_qstats {
	/* Requests given back, by type (others: answered by the device
	 * itself, e.g. GET_ID, refused or bad); bytes of reads and writes
	 * that succeeded. */
	uint64_t completed, reads, writes, flushes, discards, write_zeroes,
		 others;
	uint64_t bytes_read, bytes_written;
	uint64_t io_errors, bad_chains, ring_errors;
	uint64_t inflight;   /* now */
	uint64_t kicks;      /* driver notifications the iothread woke on */
	uint64_t interrupts; /* notifications sent to the driver */
	uint64_t poll_hits;  /* idle polls that found work */
	uint64_t throttle_waits; /* sleeps for the rate limit's tokens */
};

const struct blk_opts *blk_dev_opts(const struct blk_dev *d);
uint64_t blk_dev_capacity(const struct blk_dev *d); /* sectors */
/* false if there is no queue q.  lat, if not NULL: its breakdown (all
 * zero while latency was never kept).  reset: what was read is the new
 * baseline (one snapshot: the intervals so read add up to the total). */
bool blk_dev_queue_stats(struct blk_dev *d, unsigned int q,
			 struct blk_qstats *s, struct lat_queue *lat,
			 bool reset);
void blk_dev_stats_reset(struct blk_dev *d);
/* The latency breakdown (blk_opts.latency) on or off at run time. */
void blk_dev_set_latency(struct blk_dev *d, bool on);
bool blk_dev_latency_kept(const struct blk_dev *d);

/* A rate limit shared by the disk's queues (blk/throttle.h): requests
 * per second and bytes per second (0: none), and how far ahead of the
 * rate a burst may go, in milliseconds of it.  A request waiting for the
 * limit is delayed, never failed; its iothread sleeps meanwhile. */
struct blk_limit {
	uint64_t iops, bw, burst_ms;
};
#define BLK_BURST_MS_DEFAULT 10
#define BLK_BURST_MS_MAX 60000
#define BLK_IOPS_MAX 1000000000ull
/* One field of a limit by name (iops=N, bw=RATE, burst=MS): 0 or
 * -EINVAL. */
int blk_limit_set(struct blk_limit *l, const char *name, const char *v);
void blk_dev_set_limit(struct blk_dev *d, const struct blk_limit *l);
void blk_dev_get_limit(const struct blk_dev *d, struct blk_limit *l);

/* Pause: the queues pop nothing more and finish what is in flight;
 * returns once they have (0), or -ETIMEDOUT after timeout_ms (they stay
 * paused).  The guest's requests wait in the rings until resume.  On a
 * disk paused already it does not wait: 0 or -ETIMEDOUT as things are. */
int blk_dev_pause_io(struct blk_dev *d, unsigned int timeout_ms);
void blk_dev_resume_io(struct blk_dev *d);
bool blk_dev_paused(const struct blk_dev *d);

/* For a disk about to be removed by force: from now on every request,
 * those waiting on a pause or a limit too, is answered IOERR at once
 * without reaching the backend; what the backend has completes as
 * usual.  For good (a reset does not end it). */
void blk_dev_fail_io(struct blk_dev *d);
/* Queues serving the guest's rings now: 0 until the guest's driver has
 * set the device up, and again once it has reset it (its driver
 * unbound, the device removed on the guest's side). */
unsigned int blk_dev_serving_queues(struct blk_dev *d);
/* Every serving queue's ring is idle as its driver sees it: each
 * request made available has been answered. */
bool blk_dev_rings_idle(struct blk_dev *d);

/* Change the capacity to bytes (a multiple of 512): a file grows
 * (ftruncate) or, with shrink, shrinks; a RAM disk grows within the
 * address space kept for it.  A shrink pauses the queues (as
 * blk_dev_pause_io, waiting timeout_ms at most) around the truncate;
 * requests waiting past the new end then get IOERR.  The transport then
 * tells the driver (a configuration change).  0, or -errno with one
 * line in msg; refused, nothing the guest sees has changed. */
int blk_dev_resize(struct blk_dev *d, uint64_t bytes, bool shrink,
		   unsigned int timeout_ms, char *msg, unsigned int msglen);

/* For a test that drives the device from one thread (the fuzz target
 * tests/fuzz/fuzz_device.c): before the first activate, make the disk's
 * queues served only by blk_dev_serve() on the caller's thread, their
 * iothreads left idle.  blk_dev_serve() returns requests handled. */
void blk_dev_set_sync(struct blk_dev *d);
unsigned int blk_dev_serve(struct blk_dev *d);

#endif
