/* The virtio-blk device: features, config space, queues. */
#include "blk/blk.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blk/queue.h"
#include "host/clock.h"

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
	/* The live figures (blk_dev_queue_stats): each queue's counters
	 * over its stopped runs, and what `stats --reset` took away. */
	pthread_mutex_t stats_lock; /* set_up, totals, baselines */
	struct blk_qraw total[BLK_MAX_QUEUES], base[BLK_MAX_QUEUES];
	struct lat_queue lat_base[BLK_MAX_QUEUES];
	bool latency_on;   /* atomic: the iothreads keep the breakdown */
	bool latency_ever; /* it was on at some time */
	struct blk_gate gate;
	struct blk_limit limit;
	bool paused;       /* blk_dev_pause_io, until blk_dev_resume_io */
	bool failing;      /* blk_dev_fail_io: for good */
};

static void blk_dev_reset(void *impl);
static void blk_queue_free(struct blk_queue *q);

/* A queue's counters as one value: its own and its ring's. */
static void blk_qraw_add(struct blk_qraw *t, const struct blk_queue *q)
{
	const uint64_t *c = (const uint64_t *)&q->ctr;
	uint64_t *tc = (uint64_t *)&t->c;

	for (size_t i = 0; i < sizeof(t->c) / sizeof(uint64_t); i++)
		tc[i] += ctr_get(&c[i]);
	t->v.popped += ctr_get(&q->vq.stats.popped);
	t->v.bad_chains += ctr_get(&q->vq.stats.bad_chains);
	t->v.ring_errors += ctr_get(&q->vq.stats.ring_errors);
	t->v.notifies += ctr_get(&q->vq.stats.notifies);
}

int blk_dev_create(const struct blk_opts *o, struct blk_dev **out, char *msg,
		   unsigned int msglen)
{
	struct blk_dev *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	d->opts = *o;
	d->nq = o->queues ? o->queues : 1;
	d->latency_on = d->latency_ever = o->latency;
	pthread_mutex_init(&d->stats_lock, NULL);
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
		pthread_mutex_destroy(&d->stats_lock);
		free(d);
		return ret;
	}
	pthread_condattr_t mono;

	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	for (unsigned int i = 0; i < BLK_MAX_QUEUES; i++) {
		d->q[i].kick_fd = d->q[i].call_fd = d->q[i].stop_fd = -1;
		d->q[i].wake_fd = -1;
		d->q[i].gate = &d->gate;
		d->q[i].latency_on = &d->latency_on;
		pthread_mutex_init(&d->q[i].lock, NULL);
		pthread_cond_init(&d->q[i].cond, &mono);
	}
	pthread_condattr_destroy(&mono);
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
	blk_dev_set_limit(d, &(struct blk_limit){ o->iops, o->bw,
						  o->burst_ms });
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
		blk_queue_free(&d->q[i]);
		pthread_mutex_destroy(&d->q[i].lock);
		pthread_cond_destroy(&d->q[i].cond);
	}
	d->ops->close(d->backend);
	pthread_mutex_destroy(&d->stats_lock);
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
	c.capacity = __atomic_load_n(&d->limits.capacity, __ATOMIC_RELAXED);
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
	q->cap = 0;
}

/* The arrays indexed by head, for a ring of size heads.  Kept
 * from one activation to the next (freed by blk_dev_destroy): a driver
 * that resets and sets the queue up again (a guest's reboot, or each
 * input of the device fuzz target) reuses them instead of allocating
 * and faulting in some 100 KB per queue each time. */
static int blk_queue_arrays(struct blk_queue *q, uint16_t size)
{
	if (q->cap < size) {
		blk_queue_free(q);
		q->reqs = calloc(size, sizeof(*q->reqs));
		q->iovs = calloc((size_t)size * BLK_REQ_MAX_IOV,
				 sizeof(*q->iovs));
		q->reaped = calloc(size, sizeof(*q->reaped));
		q->unpublished = calloc(size, sizeof(*q->unpublished));
		if (!q->reqs || !q->iovs || !q->reaped || !q->unpublished) {
			blk_queue_free(q);
			return -ENOMEM;
		}
		q->cap = size;
		return 0;
	}
	/* Not the iovecs (100 KB for 32 heads): a request's parse writes
	 * every one it uses, as it does for a head used twice in one run. */
	memset(q->reqs, 0, size * sizeof(*q->reqs));
	memset(q->reaped, 0, size * sizeof(*q->reaped));
	memset(q->unpublished, 0, size * sizeof(*q->unpublished));
	return 0;
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
	q->poll_max_ns = d->opts.poll_us * 1000ull;
	q->kick_fd = c->kick_fd;
	q->call_fd = c->call_fd;
	q->needs_reset = a->needs_reset;
	q->reset_opaque = a->opaque;
	memset(&q->ctr, 0, sizeof(q->ctr));
	q->pushed = false;
	memset(&q->lat, 0, sizeof(q->lat));
	q->n_unpublished = 0;
	return blk_queue_arrays(q, c->size);
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
			if (ret) {
				blk_queue_free(&d->q[i]);
			} else {
				pthread_mutex_lock(&d->stats_lock);
				d->q[i].set_up = true;
				pthread_mutex_unlock(&d->stats_lock);
			}
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
	s->io_errors += q->ctr.io_errors;
}

/* Stop the iothreads, wait for in-flight I/O.  Idempotent. */
static void blk_dev_reset(void *impl)
{
	struct blk_dev *d = impl;

	for (unsigned int i = 0; i < d->running; i++) {
		if (!d->q[i].set_up)
			continue;
		blk_queue_stop(&d->q[i]); /* nothing to do if paused */
		pthread_mutex_lock(&d->stats_lock);
		d->q[i].set_up = false;
		blk_stats_add(&d->stats, &d->q[i]);
		blk_qraw_add(&d->total[i], &d->q[i]);
		for (unsigned int st = 0; st < LAT_STAGES; st++)
			lat_merge(&d->lat[i].stage[st], &d->q[i].lat.stage[st]);
		pthread_mutex_unlock(&d->stats_lock);
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
	return q < d->nq && d->latency_ever ? &d->lat[q] : NULL;
}

pid_t blk_dev_queue_tid(const struct blk_dev *d, unsigned int q)
{
	return q < d->nq ? __atomic_load_n(&d->q[q].tid, __ATOMIC_RELAXED) : 0;
}

/* ---- the running disk, from another thread (the control socket) ---- */

const struct blk_opts *blk_dev_opts(const struct blk_dev *d)
{
	return &d->opts;
}

uint64_t blk_dev_capacity(const struct blk_dev *d)
{
	return __atomic_load_n(&d->limits.capacity, __ATOMIC_RELAXED);
}

/* Queue q's counters and latency so far, stopped runs and the running
 * one together (under stats_lock).  inflight: heads popped and not
 * given back, of the running one. */
static void blk_dev_queue_raw(struct blk_dev *d, unsigned int i,
			      struct blk_qraw *raw, uint64_t *inflight,
			      struct lat_queue *lat)
{
	const struct blk_queue *q = &d->q[i];

	*raw = d->total[i];
	*inflight = 0;
	if (lat)
		*lat = d->lat[i];
	if (!q->set_up)
		return;
	/* completed before popped: a later popped is never below it. */
	uint64_t done = ctr_get(&q->ctr.completed);
	uint64_t popped = ctr_get(&q->vq.stats.popped);

	*inflight = popped > done ? popped - done : 0;
	blk_qraw_add(raw, q);
	for (unsigned int st = 0; lat && st < LAT_STAGES; st++)
		lat_merge(&lat->stage[st], &q->lat.stage[st]);
}

bool blk_dev_queue_stats(struct blk_dev *d, unsigned int i,
			 struct blk_qstats *s, struct lat_queue *lat, bool reset)
{
	struct blk_qraw raw, base;
	const struct blk_qraw *b = &base;
	struct lat_queue own, old;
	const struct lat_queue *lb = &d->lat_base[i];
	uint64_t typed = 0;

	if (i >= d->nq)
		return false;
	if (!lat)
		lat = &own;
	/* One snapshot: what is answered and, with reset, the new baseline
	 * (a request counted in neither would be lost to a sum of
	 * intervals). */
	pthread_mutex_lock(&d->stats_lock);
	blk_dev_queue_raw(d, i, &raw, &s->inflight, lat);
	base = d->base[i];
	if (reset) {
		old = d->lat_base[i];
		lb = &old;
		d->base[i] = raw;
		d->lat_base[i] = *lat;
	}
	for (unsigned int st = 0; st < LAT_STAGES; st++)
		lat_since(&lat->stage[st], &lb->stage[st]);
	pthread_mutex_unlock(&d->stats_lock);
	s->reads = raw.c.by_type[BLK_T_READ] - b->c.by_type[BLK_T_READ];
	s->writes = raw.c.by_type[BLK_T_WRITE] - b->c.by_type[BLK_T_WRITE];
	s->flushes = raw.c.by_type[BLK_T_FLUSH] - b->c.by_type[BLK_T_FLUSH];
	s->discards = raw.c.by_type[BLK_T_DISCARD] -
		      b->c.by_type[BLK_T_DISCARD];
	s->write_zeroes = raw.c.by_type[BLK_T_WZ] - b->c.by_type[BLK_T_WZ];
	for (unsigned int t = 0; t < BLK_T_KINDS; t++)
		typed += raw.c.by_type[t] - b->c.by_type[t];
	s->completed = raw.c.completed - b->c.completed;
	s->others = s->completed > typed ? s->completed - typed : 0;
	s->bytes_read = raw.c.bytes_read - b->c.bytes_read;
	s->bytes_written = raw.c.bytes_written - b->c.bytes_written;
	s->io_errors = raw.c.io_errors - b->c.io_errors;
	s->kicks = raw.c.kicks - b->c.kicks;
	s->poll_hits = raw.c.poll_hits - b->c.poll_hits;
	s->throttle_waits = raw.c.throttle_waits - b->c.throttle_waits;
	s->bad_chains = raw.v.bad_chains - b->v.bad_chains;
	s->ring_errors = raw.v.ring_errors - b->v.ring_errors;
	s->interrupts = raw.v.notifies - b->v.notifies;
	return true;
}

void blk_dev_stats_reset(struct blk_dev *d)
{
	pthread_mutex_lock(&d->stats_lock);
	for (unsigned int i = 0; i < d->nq; i++) {
		uint64_t inflight;

		memset(&d->lat_base[i], 0, sizeof(d->lat_base[i]));
		blk_dev_queue_raw(d, i, &d->base[i], &inflight,
				  &d->lat_base[i]);
	}
	pthread_mutex_unlock(&d->stats_lock);
}

bool blk_dev_latency_kept(const struct blk_dev *d)
{
	return __atomic_load_n(&d->latency_on, __ATOMIC_RELAXED);
}

void blk_dev_set_latency(struct blk_dev *d, bool on)
{
	pthread_mutex_lock(&d->stats_lock);
	if (on)
		d->latency_ever = true;
	__atomic_store_n(&d->latency_on, on, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->stats_lock);
}

/* Tell every iothread the gate changed (it may sleep on it). */
static void blk_dev_wake(struct blk_dev *d)
{
	uint64_t one = 1;

	for (unsigned int i = 0; i < d->nq; i++)
		if (d->q[i].wake_fd >= 0)
			(void)!write(d->q[i].wake_fd, &one, sizeof(one));
}

static void blk_gate_update(struct blk_dev *d)
{
	unsigned int g = (d->failing ? BLK_GATE_FAILING : 0) |
			 (d->paused ? BLK_GATE_HELD : 0) |
			 (d->limit.iops || d->limit.bw ? BLK_GATE_LIMITED : 0);

	__atomic_store_n(&d->gate.active, g, __ATOMIC_RELEASE);
	blk_dev_wake(d);
}

void blk_dev_set_limit(struct blk_dev *d, const struct blk_limit *l)
{
	uint64_t now = mono_ns();
	uint64_t burst_ns = (l->burst_ms ? l->burst_ms :
			     BLK_BURST_MS_DEFAULT) * 1000000ull;

	d->limit = *l;
	throttle_set(&d->gate.ops, l->iops, burst_ns, now);
	throttle_set(&d->gate.bytes, l->bw, burst_ns, now);
	blk_gate_update(d);
}

void blk_dev_get_limit(const struct blk_dev *d, struct blk_limit *l)
{
	*l = d->limit;
}

/* Under q->lock: is the queue serving its ring (its iothread running
 * a run)? */
static bool blk_queue_serving(const struct blk_queue *q)
{
	return q->state == BLK_Q_RUNNING || q->state == BLK_Q_STARTING;
}

int blk_dev_pause_io(struct blk_dev *d, unsigned int timeout_ms)
{
	struct timespec end;
	int ret = 0;

	/* Paused already: parked says what is true since (the queues
	 * popped nothing more); a second pause does not wait again for
	 * what the first found stuck. */
	if (d->paused)
		timeout_ms = 0;
	/* q->cond waits on CLOCK_MONOTONIC (blk_dev_new). */
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	for (unsigned int i = 0; i < d->nq && !d->paused; i++) {
		pthread_mutex_lock(&d->q[i].lock);
		d->q[i].parked = false;
		pthread_mutex_unlock(&d->q[i].lock);
	}
	if (!d->paused) {
		d->paused = true;
		blk_gate_update(d);
	}
	for (unsigned int i = 0; i < d->nq && !ret; i++) {
		struct blk_queue *q = &d->q[i];

		pthread_mutex_lock(&q->lock);
		while (blk_queue_serving(q) && !q->parked)
			if (pthread_cond_timedwait(&q->cond, &q->lock,
						   &end) == ETIMEDOUT) {
				ret = -ETIMEDOUT;
				break;
			}
		pthread_mutex_unlock(&q->lock);
	}
	return ret;
}

void blk_dev_resume_io(struct blk_dev *d)
{
	d->paused = false;
	blk_gate_update(d);
}

bool blk_dev_paused(const struct blk_dev *d)
{
	return d->paused;
}

void blk_dev_fail_io(struct blk_dev *d)
{
	d->failing = true;
	blk_gate_update(d);
}

unsigned int blk_dev_serving_queues(struct blk_dev *d)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < d->nq; i++) {
		pthread_mutex_lock(&d->q[i].lock);
		n += blk_queue_serving(&d->q[i]);
		pthread_mutex_unlock(&d->q[i].lock);
	}
	return n;
}

bool blk_dev_rings_idle(struct blk_dev *d)
{
	bool idle = true;

	for (unsigned int i = 0; i < d->nq && idle; i++) {
		struct blk_queue *q = &d->q[i];

		pthread_mutex_lock(&q->lock);
		if (blk_queue_serving(q))
			idle = virtq_driver_idle(&q->vq);
		pthread_mutex_unlock(&q->lock);
	}
	return idle;
}

void blk_dev_set_sync(struct blk_dev *d)
{
	for (unsigned int i = 0; i < BLK_MAX_QUEUES; i++)
		d->q[i].sync = true;
}

unsigned int blk_dev_serve(struct blk_dev *d)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < d->running; i++)
		n += blk_queue_serve(&d->q[i]);
	return n;
}

/* Shrink: with the queues paused and nothing in flight, so that no
 * request checked against the old end runs after the truncate (a write
 * past the new end would extend the file again); the backend first, so
 * that one it refuses changes nothing the guest sees. */
static int blk_dev_shrink(struct blk_dev *d, uint64_t bytes,
			  unsigned int timeout_ms, char *msg,
			  unsigned int msglen)
{
	bool was_paused = d->paused;
	int ret = blk_dev_pause_io(d, timeout_ms);

	if (ret)
		snprintf(msg, msglen, "requests still in flight after %u ms; "
			 "nothing changed", timeout_ms);
	else
		ret = d->ops->resize(d->backend, bytes, msg, msglen);
	if (!ret)
		__atomic_store_n(&d->limits.capacity,
				 bytes >> BLK_SECTOR_SHIFT, __ATOMIC_RELAXED);
	if (!was_paused)
		blk_dev_resume_io(d);
	return ret;
}

int blk_dev_resize(struct blk_dev *d, uint64_t bytes, bool shrink,
		   unsigned int timeout_ms, char *msg, unsigned int msglen)
{
	uint64_t cur = blk_dev_capacity(d) << BLK_SECTOR_SHIFT;
	int ret;

	if (!bytes || bytes % BLK_SECTOR_SIZE) {
		snprintf(msg, msglen, "size %llu is not a positive multiple "
			 "of 512", (unsigned long long)bytes);
		return -EINVAL;
	}
	if (d->limits.ro) {
		snprintf(msg, msglen, "the disk is read-only");
		return -EROFS;
	}
	if (bytes < cur && !shrink) {
		snprintf(msg, msglen, "%llu bytes is smaller than the disk "
			 "(%llu): shrinking needs --shrink",
			 (unsigned long long)bytes, (unsigned long long)cur);
		return -EINVAL;
	}
	if (bytes == cur)
		return 0;
	if (bytes < cur)
		return blk_dev_shrink(d, bytes, timeout_ms, msg, msglen);
	/* Growing: the space first, then the capacity the guest may use. */
	ret = d->ops->resize(d->backend, bytes, msg, msglen);
	if (ret)
		return ret;
	__atomic_store_n(&d->limits.capacity, bytes >> BLK_SECTOR_SHIFT,
			 __ATOMIC_RELAXED);
	return 0;
}
