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
};

#define BLK_POLL_US_DEFAULT 32 /* as QEMU's iothread poll-max-ns */
#define BLK_POLL_US_MAX 1000000

/* Parse "PATH[,ro][,direct][,queues=N][,serial=ID][,batch=on][,poll=US]
 * [,engine=uring|sync]"
 * or "ram:SIZE[,queues=N][,serial=ID][,batch=on][,poll=US]".  0 or
 * -EINVAL with one line in msg.  o->path points into spec. */
int blk_opts_parse(char *spec, struct blk_opts *o, char *msg,
		   unsigned int msglen);

/* Sizes: a number of MiB, or a number with a K, M or G suffix. */
int blk_parse_size(const char *s, uint64_t *bytes);

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

#endif
