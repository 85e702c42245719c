/* The virtio-blk device: features, config space, queues. */
#include "blk/blk.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/queue.h"

#define BLK_MAX_DWZ_SECTORS (1u << 22) /* 2 GiB per discard/write-zeroes */

struct blk_dev {
	struct blk_opts opts;
	const struct blk_backend_ops *ops;
	struct blk_backend *backend;
	struct blk_backend_info info;
	struct blk_req_limits limits;
	unsigned int nq;      /* queues offered */
	unsigned int running; /* queues started */
	struct blk_queue q[BLK_MAX_QUEUES];
	struct blk_stats stats; /* totals of stopped queues */
	struct lat_queue lat[BLK_MAX_QUEUES]; /* per queue, stopped runs */
};

static void blk_dev_reset(void *impl);

int blk_dev_create(const struct blk_opts *o, struct blk_dev **out, char *msg,
		   unsigned int msglen)
{
	struct blk_dev *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	d->opts = *o;
	d->nq = o->queues ? o->queues : 1;
	lat_clock_init();
	if (d->nq > BLK_MAX_QUEUES) {
		snprintf(msg, msglen, "at most %u queues per disk",
			 BLK_MAX_QUEUES);
		free(d);
		return -EINVAL;
	}
	d->ops = o->path ? &blk_backend_file : &blk_backend_ram;
	ret = d->ops->open(o, &d->backend, &d->info, msg, msglen);
	if (ret) {
		free(d);
		return ret;
	}
	for (unsigned int i = 0; i < BLK_MAX_QUEUES; i++) {
		d->q[i].kick_fd = d->q[i].call_fd = d->q[i].stop_fd = -1;
		pthread_mutex_init(&d->q[i].lock, NULL);
		pthread_cond_init(&d->q[i].cond, NULL);
	}
	for (unsigned int i = 0; i < d->nq && !ret; i++) {
		d->q[i].cpu = o->pin ? o->queue_cpu[i] : -1;
		ret = blk_queue_spawn(&d->q[i], i);
	}
	if (ret) {
		snprintf(msg, msglen, "cannot create iothreads: %s",
			 strerror(-ret));
		blk_dev_destroy(d);
		return ret;
	}
	memcpy(d->limits.serial, o->serial, BLK_ID_BYTES);
	d->limits.capacity = d->info.size >> BLK_SECTOR_SHIFT;
	d->limits.ro = d->info.ro || o->ro;
	d->limits.max_discard_sectors = BLK_MAX_DWZ_SECTORS;
	d->limits.max_write_zeroes_sectors = BLK_MAX_DWZ_SECTORS;
	*out = d;
	return 0;
}

void blk_dev_destroy(struct blk_dev *d)
{
	if (!d)
		return;
	blk_dev_reset(d);
	for (unsigned int i = 0; i < BLK_MAX_QUEUES; i++) {
		blk_queue_exit(&d->q[i]);
		pthread_mutex_destroy(&d->q[i].lock);
		pthread_cond_destroy(&d->q[i].cond);
	}
	d->ops->close(d->backend);
	free(d);
}

static uint64_t blk_dev_features(void *impl)
{
	const struct blk_dev *d = impl;
	uint64_t f = 1ull << VIRTIO_F_VERSION_1 |
		     1ull << VIRTIO_RING_F_EVENT_IDX |
		     1ull << VIRTIO_RING_F_INDIRECT_DESC |
		     1ull << VIRTIO_BLK_F_SEG_MAX |
		     1ull << VIRTIO_BLK_F_BLK_SIZE |
		     1ull << VIRTIO_BLK_F_FLUSH |
		     1ull << VIRTIO_BLK_F_MQ;

	if (d->limits.ro)
		return f | 1ull << VIRTIO_BLK_F_RO;
	if (d->info.discard)
		f |= 1ull << VIRTIO_BLK_F_DISCARD;
	if (d->info.write_zeroes)
		f |= 1ull << VIRTIO_BLK_F_WRITE_ZEROES;
	return f;
}

static unsigned int blk_dev_num_queues(void *impl)
{
	const struct blk_dev *d = impl;

	return d->nq;
}

static uint16_t blk_dev_queue_max_size(void *impl)
{
	(void)impl;
	return BLK_QUEUE_SIZE;
}

static uint32_t blk_dev_config_size(void *impl)
{
	(void)impl;
	return sizeof(struct virtio_blk_config);
}

static void blk_dev_config_read(void *impl, uint32_t off, void *buf,
				uint32_t len)
{
	const struct blk_dev *d = impl;
	struct virtio_blk_config c;

	memset(buf, 0, len);
	if (off > sizeof(c) || len > sizeof(c) - off)
		return;
	memset(&c, 0, sizeof(c));
	c.capacity = d->limits.capacity;
	c.seg_max = BLK_SEG_MAX;
	c.blk_size = d->info.blk_size;
	c.num_queues = (uint16_t)d->nq;
	c.max_discard_sectors = d->limits.max_discard_sectors;
	c.max_discard_seg = 1;
	c.discard_sector_alignment = d->info.blk_size >> BLK_SECTOR_SHIFT;
	c.max_write_zeroes_sectors = d->limits.max_write_zeroes_sectors;
	c.max_write_zeroes_seg = 1;
	c.write_zeroes_may_unmap = 1;
	memcpy(buf, (const uint8_t *)&c + off, len);
}

/* No writable config field is offered (no CONFIG_WCE): writes are
 * dropped. */
static void blk_dev_config_write(void *impl, uint32_t off, const void *buf,
				 uint32_t len)
{
	(void)impl;
	(void)off;
	(void)buf;
	(void)len;
}

static void blk_queue_free(struct blk_queue *q)
{
	free(q->reqs);
	free(q->iovs);
	free(q->reaped);
	q->reqs = NULL;
	q->iovs = NULL;
	q->reaped = NULL;
	free(q->unpublished);
	q->unpublished = NULL;
}

static int blk_queue_setup(struct blk_dev *d, struct blk_queue *q,
			   const struct vdev_activation *a, uint64_t features,
			   const struct vdev_queue *c)
{
	int ret = virtq_init(&q->vq, a->mem, c->size, c->desc, c->avail,
			     c->used,
			     features & (1ull << VIRTIO_RING_F_EVENT_IDX),
			     features & (1ull << VIRTIO_RING_F_INDIRECT_DESC));

	if (ret)
		return ret;
	q->limits = &d->limits;
	q->name = d->opts.path ? d->opts.path : "ram";
	q->ops = d->ops;
	q->backend = d->backend;
	q->write_through = !(features & (1ull << VIRTIO_BLK_F_FLUSH));
	q->batch = d->opts.batch;
	q->latency = d->opts.latency;
	q->poll_max_ns = d->opts.poll_us * 1000ull;
	q->kick_fd = c->kick_fd;
	q->call_fd = c->call_fd;
	q->needs_reset = a->needs_reset;
	q->reset_opaque = a->opaque;
	q->io_errors = 0;
	q->pushed = false;
	memset(&q->lat, 0, sizeof(q->lat));
	q->reqs = calloc(c->size, sizeof(*q->reqs));
	q->iovs = calloc((size_t)c->size * BLK_REQ_MAX_IOV, sizeof(*q->iovs));
	q->reaped = calloc(c->size, sizeof(*q->reaped));
	q->unpublished = calloc(c->size, sizeof(*q->unpublished));
	q->n_unpublished = 0;
	if (!q->reqs || !q->iovs || !q->reaped || !q->unpublished) {
		blk_queue_free(q);
		return -ENOMEM;
	}
	return 0;
}

/* DRIVER_OK: one iothread serves each queue the driver enabled.  0 or
 * -errno (then nothing runs). */
static int blk_dev_activate(void *impl, const struct vdev_activation *a)
{
	struct blk_dev *d = impl;
	uint64_t features;
	int ret = 0;

	if (d->running || !a->nq || a->nq > d->nq)
		return -EINVAL;
	features = a->features & blk_dev_features(d);
	d->limits.discard = features & (1ull << VIRTIO_BLK_F_DISCARD);
	d->limits.write_zeroes = features & (1ull << VIRTIO_BLK_F_WRITE_ZEROES);
	for (unsigned int i = 0; i < a->nq && !ret; i++) {
		if (!a->q[i].enabled)
			continue;
		ret = blk_queue_setup(d, &d->q[i], a, features, &a->q[i]);
		if (!ret) {
			ret = blk_queue_start(&d->q[i]);
			if (ret)
				blk_queue_free(&d->q[i]);
			else
				d->q[i].set_up = true;
		}
		if (!ret)
			d->running = i + 1; /* reset sees queues below this */
	}
	if (ret)
		blk_dev_reset(d);
	return ret;
}

static void blk_stats_add(struct blk_stats *s, const struct blk_queue *q)
{
	s->requests += q->vq.stats.popped;
	s->bad_chains += q->vq.stats.bad_chains;
	s->ring_errors += q->vq.stats.ring_errors;
	s->notifies += q->vq.stats.notifies;
	s->io_errors += q->io_errors;
}

/* Stop the iothreads, wait for in-flight I/O.  Idempotent. */
static void blk_dev_reset(void *impl)
{
	struct blk_dev *d = impl;

	for (unsigned int i = 0; i < d->running; i++) {
		if (!d->q[i].set_up)
			continue;
		d->q[i].set_up = false;
		blk_queue_stop(&d->q[i]); /* nothing to do if paused */
		blk_stats_add(&d->stats, &d->q[i]);
		for (unsigned int st = 0; st < LAT_STAGES; st++)
			lat_merge(&d->lat[i].stage[st], &d->q[i].lat.stage[st]);
		blk_queue_free(&d->q[i]);
	}
	d->running = 0;
}

static void blk_dev_pause(void *impl)
{
	struct blk_dev *d = impl;

	for (unsigned int i = 0; i < d->running; i++)
		if (d->q[i].set_up)
			blk_queue_stop(&d->q[i]);
}

static int blk_dev_resume(void *impl)
{
	struct blk_dev *d = impl;
	int ret = 0;

	for (unsigned int i = 0; i < d->running && !ret; i++) {
		struct blk_queue *q = &d->q[i];

		if (!q->set_up || q->started)
			continue;
		/* What was published while paused had no interrupt. */
		q->pushed = true;
		virtq_owe_notify(&q->vq);
		ret = blk_queue_start(q);
	}
	return ret;
}

const struct vdev_ops blk_dev_ops = {
	.device_id = VIRTIO_ID_BLOCK,
	.pci_class = 0x018000, /* mass storage, other */
	.features = blk_dev_features,
	.num_queues = blk_dev_num_queues,
	.queue_max_size = blk_dev_queue_max_size,
	.config_size = blk_dev_config_size,
	.config_read = blk_dev_config_read,
	.config_write = blk_dev_config_write,
	.activate = blk_dev_activate,
	.reset = blk_dev_reset,
	.pause = blk_dev_pause,
	.resume = blk_dev_resume,
};

void blk_dev_stats(const struct blk_dev *d, struct blk_stats *s)
{
	*s = d->stats;
}

const char *blk_dev_note(const struct blk_dev *d)
{
	return d->info.note;
}

const struct lat_queue *blk_dev_latency(const struct blk_dev *d,
					unsigned int q)
{
	return q < d->nq && d->opts.latency ? &d->lat[q] : NULL;
}

pid_t blk_dev_queue_tid(const struct blk_dev *d, unsigned int q)
{
	return q < d->nq ? __atomic_load_n(&d->q[q].tid, __ATOMIC_RELAXED) : 0;
}
