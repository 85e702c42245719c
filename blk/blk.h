/* The virtio-blk device: config space, features, and one iothread per
 * virtqueue.  Transport-independent: a transport (virtio/pci, or a test
 * driver) hands it rings in guest memory and a kick and a call eventfd
 * per queue.
 */
#ifndef BLK_BLK_H
#define BLK_BLK_H

#include <linux/virtio_blk.h>
#include <stdbool.h>
#include <stdint.h>

#include "blk/backend.h"
#include "blk/latency.h"
#include "virtio/gmem.h"

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
	unsigned int queues;
	unsigned int poll_us; /* most an idle iothread polls before sleeping */
	enum blk_engine engine;
	char serial[BLK_ID_BYTES + 1];
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

struct blk_queue_cfg {
	uint16_t size;              /* 0: the driver did not enable it */
	uint64_t desc, avail, used; /* guest-physical ring addresses */
	int kick_fd;                /* eventfd the driver's kicks arrive on */
	int call_fd;                /* eventfd we signal to interrupt */
};

struct blk_stats {
	/* requests: heads popped, bad chains included. */
	uint64_t requests, bad_chains, ring_errors, notifies, io_errors;
};

struct blk_dev;

int blk_dev_create(const struct blk_opts *o, struct blk_dev **out, char *msg,
		   unsigned int msglen);
void blk_dev_destroy(struct blk_dev *d);

uint64_t blk_dev_features(const struct blk_dev *d);
unsigned int blk_dev_num_queues(const struct blk_dev *d);
void blk_dev_config(const struct blk_dev *d, struct virtio_blk_config *cfg);

/* Set before blk_dev_start (each queue copies it at start).
 * Called from an iothread when its ring is broken: the transport sets
 * DEVICE_NEEDS_RESET and sends a config interrupt. */
void blk_dev_set_reset_hook(struct blk_dev *d, void (*fn)(void *), void *opaque);

/* DRIVER_OK: start one iothread per queue.  0 or -errno (then nothing runs). */
int blk_dev_start(struct blk_dev *d, const struct gmem *m, uint64_t features,
		  const struct blk_queue_cfg *qc, unsigned int nq);
/* Reset: stop the iothreads, wait for in-flight I/O, join.  Idempotent. */
void blk_dev_stop(struct blk_dev *d);
/* Bus mastering off: stop the iothreads after in-flight I/O finished,
 * with no interrupt, keeping every queue where it is; resume starts them
 * again from there and makes one notification decision per queue.  0 or
 * -errno (then the caller sets NEEDS_RESET). */
void blk_dev_pause(struct blk_dev *d);
int blk_dev_resume(struct blk_dev *d);

/* Totals over queues stopped so far (read after blk_dev_stop). */
void blk_dev_stats(const struct blk_dev *d, struct blk_stats *s);
/* One line for the user about how the disk is served ("" if nothing to
 * say): set when io_uring was wanted and the host refused it. */
const char *blk_dev_note(const struct blk_dev *d);
/* Queue q's latency breakdown over its stopped runs (read after
 * blk_dev_stop); NULL if there is no such queue. */
const struct lat_queue *blk_dev_latency(const struct blk_dev *d,
					unsigned int q);

#endif
