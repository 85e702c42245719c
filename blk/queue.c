/* One virtqueue of a blk device (queue.h) and its iothread: pop, parse,
 * submit; reap, push, notify.
 *
 * Default (batch off): a request goes to the backend as soon as it is
 * parsed, and each completion is published and notified (as EVENT_IDX
 * allows) as soon as it is reaped, or, for a request the backend served
 * inside submit() (the RAM disk, a file on tmpfs), as soon as it is
 * served.  batch=on submits once per drain pass and publishes
 * completions once per pass.
 *
 * An idle iothread first polls the avail ring and the backend, with kicks
 * still suppressed, for up to a window that adapts between 0 and the
 * disk's poll= limit (as QEMU's iothreads do): a request the driver adds
 * meanwhile costs it no notify write, which is a VM exit.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "blk/queue.h"
#include "host/affinity.h"
#include "host/clock.h"
#include "host/log.h"
#include "host/sandbox.h"

static void blk_fd_signal(int fd)
{
	uint64_t one = 1;

	/* Only fails if the counter would overflow: a wake-up is pending. */
	(void)!write(fd, &one, sizeof(one));
}

/* Read the eventfd's count (0 if it had none). */
static uint64_t blk_fd_clear(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

/* The latency breakdown: the unpublished requests' last stage ends now. */
static void blk_queue_lat_published(struct blk_queue *q)
{
	uint64_t t = lat_now();

	for (unsigned int i = 0; i < q->n_unpublished; i++)
		lat_add(&q->lat.stage[LAT_PUBLISH],
			t - q->unpublished[i]->t_reaped);
	q->n_unpublished = 0;
}

/* Publish what was pushed and interrupt the driver if it wants one. */
static void blk_queue_flush_used(struct blk_queue *q)
{
	if (!q->pushed)
		return;
	q->pushed = false;
	virtq_publish(&q->vq);
	if (q->n_unpublished)
		blk_queue_lat_published(q);
	if (virtq_need_notify(&q->vq))
		blk_fd_signal(q->call_fd);
}

/* After a push: the default publishes at once; batch=on leaves it to
 * the end of the drain pass (blk_queue_loop). */
static inline void blk_queue_pushed(struct blk_queue *q)
{
	if (!q->batch)
		blk_queue_flush_used(q);
}

static void blk_queue_complete(struct blk_queue *q, uint16_t head,
			       uint32_t len)
{
	ctr_add(&q->ctr.completed, 1);
	virtq_push(&q->vq, head, len);
	q->pushed = true;
	blk_queue_pushed(q);
}

/* Count a failed request and say what failed, in one line: rate-limited
 * (host/log.h), as a store that fails every request must not flood the
 * terminal; the count (--stats, -v) has them all. */
static void blk_queue_io_error(struct blk_queue *q, const struct blk_req *r,
			       int err)
{
	static const char *const what[] = {
		[VIRTIO_BLK_T_IN] = "read", [VIRTIO_BLK_T_OUT] = "write",
		[VIRTIO_BLK_T_FLUSH] = "flush",
		[VIRTIO_BLK_T_DISCARD] = "discard",
		[VIRTIO_BLK_T_WRITE_ZEROES] = "write-zeroes",
	};
	const char *w = r->type < sizeof(what) / sizeof(what[0]) &&
				what[r->type] ? what[r->type] : "request";

	ctr_add(&q->ctr.io_errors, 1);
	pr_guest(VLOG_WARN, "virtio-blk %s: %s of %llu bytes at sector %llu "
		 "failed: %s", q->name, w, (unsigned long long)r->len,
		 (unsigned long long)r->sector,
		 err ? strerrordesc_np(err) : "beyond the end of the file");
}

/* Which by_type counter a request type goes to; BLK_T_KINDS: none
 * (GET_ID and the other types counted only as completed). */
static inline unsigned int blk_type_kind(uint32_t type)
{
	switch (type) {
	case VIRTIO_BLK_T_IN: return BLK_T_READ;
	case VIRTIO_BLK_T_OUT: return BLK_T_WRITE;
	case VIRTIO_BLK_T_FLUSH: return BLK_T_FLUSH;
	case VIRTIO_BLK_T_DISCARD: return BLK_T_DISCARD;
	case VIRTIO_BLK_T_WRITE_ZEROES: return BLK_T_WZ;
	default: return BLK_T_KINDS;
	}
}

/* The counters of a request the backend served. */
static inline __attribute__((always_inline)) void
blk_queue_count(struct blk_queue *q, const struct blk_req *r)
{
	unsigned int k = blk_type_kind(r->type);

	ctr_add(&q->ctr.completed, 1);
	if (k < BLK_T_KINDS)
		ctr_add(&q->ctr.by_type[k], 1);
	if (r->result != VIRTIO_BLK_S_OK)
		return;
	if (r->type == VIRTIO_BLK_T_IN)
		ctr_add(&q->ctr.bytes_read, r->len);
	else if (r->type == VIRTIO_BLK_T_OUT)
		ctr_add(&q->ctr.bytes_written, r->len);
}

/* Push r, which the backend finished at t (r->result set), not yet
 * visible to the driver.  lat: r's latency is kept (the switch was on
 * when it was popped). */
static inline __attribute__((always_inline)) void
blk_queue_push_req(struct blk_queue *q, struct blk_req *r, uint64_t t,
		   bool lat)
{
	if (r->result == VIRTIO_BLK_S_IOERR)
		blk_queue_io_error(q, r, r->err);
	blk_queue_count(q, r);
	if (lat) {
		/* The array holds a ring's worth: more are pushed unpublished
		 * only if the driver made heads available again before it
		 * could see them used (never, if it keeps the rules).  Their
		 * last stage is then cut short; nothing is published early. */
		if (q->n_unpublished == q->vq.size)
			blk_queue_lat_published(q);
		lat_add(&q->lat.stage[LAT_BACKEND], t - r->t_submit);
		r->t_reaped = t;
		q->unpublished[q->n_unpublished++] = r;
	}
	virtq_push(&q->vq, r->head, blk_req_finish(r, r->result));
	q->pushed = true;
}

/* Push what one reap() returns (at most a ring's worth), not yet
 * visible to the driver.  Returns how many. */
static unsigned int blk_queue_push_reaped(struct blk_queue *q)
{
	unsigned int n = q->ops->reap(q->bq, q->reaped, q->vq.size);
	uint64_t t = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct blk_req *r = q->reaped[i];

		/* Measured if it was when popped (t_submit set). */
		if (r->t_submit && !t)
			t = lat_now();
		blk_queue_push_req(q, r, t, r->t_submit != 0);
	}
	return n;
}

/* The datapath's reap: take everything the backend finished.  Without
 * batch=on, what one reap delivered is published together, then one
 * notification decision: nothing waited for it.  With batch=on it
 * stays pushed until the drain pass ends (blk_queue_loop). */
static unsigned int blk_queue_reap(struct blk_queue *q)
{
	unsigned int n, total = 0;

	do {
		n = blk_queue_push_reaped(q);
		if (!n)
			break;
		blk_queue_pushed(q);
		total += n;
	} while (n == q->vq.size);
	return total;
}

static bool blk_queue_stopping(const struct blk_queue *q)
{
	/* Relaxed: only a flag; stop_fd's wake-up orders the rest. */
	return __atomic_load_n(&q->stopping, __ATOMIC_RELAXED);
}

/* blk_queue_parse for any chain the short way declines. */
static __attribute__((noinline)) bool
blk_queue_parse_general(struct blk_queue *q, uint16_t head,
			struct blk_req *r, struct iovec *iov)
{
	struct virtq_elem e;

	if (virtq_read_chain(&q->vq, head, &e, iov, BLK_REQ_MAX_IOV)) {
		blk_queue_complete(q, head, 0);
		return false;
	}
	switch (blk_req_parse(q->limits, &e, r)) {
	case BLK_PARSE_BAD_CHAIN:
		ctr_add(&q->vq.stats.bad_chains, 1);
		blk_queue_complete(q, head, 0);
		return false;
	case BLK_PARSE_ANSWERED:
		blk_queue_complete(q, head, r->used_len);
		return false;
	case BLK_PARSE_SUBMIT:
		break;
	}
	return true;
}

/* Read and check head's chain into r.  true: submit r; false: it was
 * answered here (pushed, with its status or as a bad chain). */
static inline __attribute__((always_inline)) bool
blk_queue_parse(struct blk_queue *q, uint16_t head, struct blk_req *r)
{
	struct iovec *iov = q->iovs + (size_t)head * BLK_REQ_MAX_IOV;
	/* Most requests: the short way, which declines anything unusual. */
	int n_out = virtq_read_chain3(&q->vq, head, iov);

	if (n_out >= 0 && blk_req_parse3(q->limits, head, iov, n_out, r))
		return true;
	return blk_queue_parse_general(q, head, r, iov);
}

/* The gate is active (paused or limited): may a head be popped now?
 * If not, the drain pass ends and the loop waits (blk_queue_wait_gate). */
static __attribute__((noinline)) bool blk_queue_gate_open(struct blk_queue *q,
							  unsigned int g,
							  uint64_t *now)
{
	uint64_t w, wb;

	if (g & BLK_GATE_FAILING)
		return true; /* blk_queue_one answers it */
	if (g & BLK_GATE_HELD) {
		q->gated = true;
		q->gate_wait_ns = UINT64_MAX;
		return false;
	}
	*now = mono_ns();
	w = throttle_wait_ns(&q->gate->ops, *now);
	wb = throttle_wait_ns(&q->gate->bytes, *now);
	if (wb > w)
		w = wb;
	if (!w)
		return true;
	q->gated = true;
	q->gate_wait_ns = w;
	return false;
}

/* A limited disk: r, just popped, takes its share of the buckets at
 * now, the time blk_queue_gate_open let it in: one op, whatever it is
 * (answered while parsing too: GET_ID, out of range, a bad chain), and
 * its bytes if it moves data (reads, writes, and write-zeroes, as QEMU
 * charges them; a discard moves none).  parsed: r is to be submitted. */
static __attribute__((noinline)) void blk_queue_gate_take(struct blk_queue *q,
							  const struct blk_req *r,
							  bool parsed,
							  uint64_t now)
{
	throttle_take(&q->gate->ops, 1, now);
	if (parsed && (r->type == VIRTIO_BLK_T_IN ||
		       r->type == VIRTIO_BLK_T_OUT ||
		       r->type == VIRTIO_BLK_T_WRITE_ZEROES))
		throttle_take(&q->gate->bytes, r->len, now);
}

/* Pop and handle one chain.  1: progress, 0: empty or backend full,
 * -EPROTO: ring broken.
 * Inlined, with the short way and blk_queue_push_req, into the drain
 * loop: the calls cost more than the work (bench/callgrind.sh). */
static inline __attribute__((always_inline)) int
blk_queue_one(struct blk_queue *q)
{
	struct blk_req *r;
	uint64_t t_pop;
	uint16_t head;
	bool lat, parsed;
	/* Relaxed: whatever mix of old and new limit a request sees is
	 * safe (the buckets' fields are atomics; a rate of 0 never waits). */
	unsigned int g = __atomic_load_n(&q->gate->active, __ATOMIC_RELAXED);
	uint64_t now = 0;
	int ret;

	if (__builtin_expect(g != 0, 0) && !blk_queue_gate_open(q, g, &now))
		return 0;
	ret = virtq_next_head(&q->vq, &head);
	if (ret <= 0)
		return ret;
	/* The latency switch (blk_dev_set_latency), read after the pop (an
	 * acquire of the ring): a request made after `latency on` was
	 * answered is measured, whenever the pass that pops it began. */
	lat = __atomic_load_n(q->latency_on, __ATOMIC_RELAXED);
	t_pop = lat ? lat_now() : 0;
	r = &q->reqs[head];
	parsed = blk_queue_parse(q, head, r);
	if (__builtin_expect(g != 0, 0)) { /* one test on the common path */
		if (g & BLK_GATE_FAILING) {
			if (parsed)
				blk_queue_complete(q, head, blk_req_finish(
					r, VIRTIO_BLK_S_IOERR));
			return 1;
		}
		if (g & BLK_GATE_LIMITED)
			blk_queue_gate_take(q, r, parsed, now);
	}
	if (!parsed)
		return 1;
	r->t_submit = lat ? lat_now() : 0; /* 0: not measured (reap) */
	ret = q->ops->submit(q->bq, r);
	if (ret == BLK_SUBMIT_DONE) {
		/* Finished already (nothing queued, no kick): published now,
		 * with its own notification decision, not when the pass
		 * ends; batch=on publishes it with the pass. */
		if (lat)
			lat_add(&q->lat.stage[LAT_SUBMIT], r->t_submit - t_pop);
		blk_queue_push_req(q, r, lat ? lat_now() : 0, lat);
		blk_queue_pushed(q);
		return 1;
	}
	if (ret == -EAGAIN) {
		/* Backend full: leave the chain in the ring until a reap. */
		virtq_unpop(&q->vq, head);
		q->backend_full = true;
		return 0;
	}
	if (ret) {
		blk_queue_io_error(q, r, -ret);
		blk_queue_complete(q, head, blk_req_finish(r, VIRTIO_BLK_S_IOERR));
		return 1;
	}
	if (lat)
		lat_add(&q->lat.stage[LAT_SUBMIT], r->t_submit - t_pop);
	if (!q->batch)
		q->ops->kick(q->bq);
	return 1;
}

/* One drain pass over the avail ring.  Returns requests handled. */
static unsigned int blk_queue_drain(struct blk_queue *q)
{
	unsigned int n = 0;
	int ret = 0;

	q->backend_full = false;
	q->gated = false;
	/* A reset asked for is seen before each head: a driver that keeps
	 * the ring full cannot hold it off.  At most a ring's worth per
	 * pass: requests finished inside submit() free their heads at once,
	 * and the backend's own completions are reaped between passes. */
	while (n < q->vq.size && !blk_queue_stopping(q) &&
	       (ret = blk_queue_one(q)) > 0)
		n++;
	if (ret == -EPROTO && !q->reset_sent) {
		/* The ring is broken: stop taking requests, tell the driver. */
		q->reset_sent = true;
		pr_guest(VLOG_WARN, "virtio-blk %s: queue %u: broken ring, "
			 "device needs reset", q->name, q->index);
		if (q->needs_reset)
			q->needs_reset(q->reset_opaque);
	}
	if (q->batch)
		q->ops->kick(q->bq);
	return n;
}

static void blk_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Idle since t0: watch the avail ring and reap the backend until
 * t0 + poll_ns, kicks still off.  true: there is work (completions
 * already pushed). */
static bool blk_queue_poll(struct blk_queue *q, uint64_t t0)
{
	uint64_t end = t0 + q->poll_ns;

	if (!q->poll_ns || q->vq.broken)
		return false;
	do {
		if (blk_queue_stopping(q))
			return true; /* the loop sees it and ends */
		if (!q->backend_full && virtq_avail_pending(&q->vq)) {
			ctr_add(&q->ctr.poll_hits, 1);
			return true;
		}
		if (q->ops->inflight(q->bq) && blk_queue_reap(q)) {
			blk_queue_flush_used(q);
			ctr_add(&q->ctr.poll_hits, 1);
			return true;
		}
		blk_cpu_relax();
	} while (mono_ns() < end);
	return false;
}

/* After an idle spell of idle_ns (poll and sleep) that polling did not
 * end: a window that would have caught it grows (from 4 us, doubling),
 * one that is hopeless shrinks (halving to 0), as QEMU adapts its own. */
static void blk_queue_poll_adapt(struct blk_queue *q, uint64_t idle_ns)
{
	if (idle_ns > q->poll_max_ns) {
		q->poll_ns /= 2;
		if (q->poll_ns < 1000)
			q->poll_ns = 0;
	} else if (q->poll_ns < q->poll_max_ns) {
		q->poll_ns = q->poll_ns ? q->poll_ns * 2 : 4000;
		if (q->poll_ns > q->poll_max_ns)
			q->poll_ns = q->poll_max_ns;
	}
}

/* Sleep until one of: the stop signal, a wake-up on wake_fd (the gate
 * changed: pause, resume, a new limit), a kick if kick_fd >= 0, a
 * completion if done_fd >= 0, the timeout if not NULL.  false: stop. */
static bool blk_queue_sleep(struct blk_queue *q, int kick_fd, int done_fd,
			    const struct timespec *timeout)
{
	/* poll ignores the entries whose fd is negative. */
	struct pollfd p[4] = {
		{ .fd = q->stop_fd, .events = POLLIN },
		{ .fd = q->wake_fd, .events = POLLIN },
		{ .fd = kick_fd, .events = POLLIN },
		{ .fd = done_fd, .events = POLLIN },
	};
	int n;

	/* A signal during a timed wait (the limit's): back to the loop,
	 * which computes a fresh wait (restarting this one would restart
	 * its full timeout).  An untimed wait just waits again. */
	while ((n = ppoll(p, 4, timeout, NULL)) < 0) {
		if (errno != EINTR)
			return false;
		if (timeout)
			return true;
	}
	if (!n)
		return true;
	if (p[0].revents)
		return false;
	if (p[1].revents)
		blk_fd_clear(q->wake_fd);
	if (p[2].revents)
		ctr_add(&q->ctr.kicks, blk_fd_clear(kick_fd));
	if (p[3].revents)
		blk_fd_clear(done_fd);
	return true;
}

/* The gate closed the last drain pass: sleep until it may open (the
 * limit's wait, or a wake-up: resume, a new limit), reaping what is in
 * flight meanwhile.  Kicks are not watched: the drain pass after this
 * looks at the ring itself.  Paused with nothing in flight, the queue
 * says it is parked (blk_dev_pause_io waits for that).  false: stop. */
static bool blk_queue_wait_gate(struct blk_queue *q)
{
	bool held = q->gate_wait_ns == UINT64_MAX;
	struct timespec ts = { .tv_sec = (time_t)(q->gate_wait_ns / 1000000000),
			       .tv_nsec = (long)(q->gate_wait_ns % 1000000000) };
	unsigned int inflight = q->ops->inflight(q->bq);

	if (held && !inflight) {
		pthread_mutex_lock(&q->lock);
		q->parked = true;
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
	if (!held)
		ctr_add(&q->ctr.throttle_waits, 1);
	return blk_queue_sleep(q, -1, inflight ? q->ops->wait_fd(q->bq) : -1,
			       held ? NULL : &ts);
}

static void blk_queue_loop(struct blk_queue *q)
{
	q->poll_ns = q->poll_max_ns;
	for (;;) {
		unsigned int n = blk_queue_drain(q);
		uint64_t t0;

		if (blk_queue_stopping(q))
			return;
		n += blk_queue_reap(q);
		blk_queue_flush_used(q);
		if (q->gated) {
			if (!blk_queue_wait_gate(q))
				return;
			continue;
		}
		if (n)
			continue;
		t0 = q->poll_max_ns ? mono_ns() : 0;
		if (blk_queue_poll(q, t0))
			continue;
		/* Idle: ask for a kick, then look once more before sleeping. */
		if (!q->vq.broken && !q->backend_full &&
		    virtq_enable_kick(&q->vq))
			continue;
		if (!blk_queue_sleep(q, q->kick_fd, q->ops->wait_fd(q->bq),
				     NULL))
			return;
		virtq_disable_kick(&q->vq);
		if (q->poll_max_ns)
			blk_queue_poll_adapt(q, mono_ns() - t0);
	}
}

/* After stop: let in-flight I/O finish and give every head back, with
 * no interrupt until the end. */
static void blk_queue_drain_inflight(struct blk_queue *q)
{
	int fd = q->ops->wait_fd(q->bq);

	while (q->ops->inflight(q->bq)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (!blk_queue_push_reaped(q) && fd >= 0 &&
		    poll(&p, 1, 100) > 0)
			blk_fd_clear(fd);
	}
	while (blk_queue_push_reaped(q))
		;
	/* Publish, with no interrupt: the driver is resetting, or bus
	 * mastering is off (an MSI is a write to guest memory too). */
	q->pushed = false;
	q->n_unpublished = 0;
	virtq_publish(&q->vq);
}

/* Under q->lock: move to state st and tell whoever waits. */
static void blk_queue_set_state(struct blk_queue *q, enum blk_qstate st)
{
	q->state = st;
	pthread_cond_broadcast(&q->cond);
}

/* The backend queue (an io_uring), opened and closed by the thread that
 * serves the queue: it belongs to that thread. */
static int blk_queue_open_backend(struct blk_queue *q)
{
	return q->ops->queue_open(q->backend, q->vq.size, q->write_through,
				  q->vq.mem, &q->bq);
}

static void blk_queue_close_backend(struct blk_queue *q)
{
	blk_queue_drain_inflight(q);
	q->ops->queue_close(q->bq);
	q->bq = NULL;
}

/* One run of the queue, from DRIVER_OK (or Bus Master Enable) to stop. */
static void blk_queue_run(struct blk_queue *q)
{
	int ret = blk_queue_open_backend(q);

	pthread_mutex_lock(&q->lock);
	q->start_err = ret;
	blk_queue_set_state(q, ret ? BLK_Q_IDLE : BLK_Q_RUNNING);
	pthread_mutex_unlock(&q->lock);
	if (ret)
		return;
	blk_queue_loop(q);
	blk_queue_close_backend(q);
	pthread_mutex_lock(&q->lock);
	blk_queue_set_state(q, BLK_Q_IDLE);
	pthread_mutex_unlock(&q->lock);
}

/* The thread lives as long as the disk: created at start-up, before the
 * sandbox, it takes its own filter and is never re-created by a vCPU
 * (whose filter a new thread would inherit; host/sandbox.h). */
static void *blk_queue_thread(void *arg)
{
	struct blk_queue *q = arg;
	struct sched_param sp = { 0 };
	char name[16];

	snprintf(name, sizeof(name), "iothread-q%u", q->index);
	pthread_setname_np(pthread_self(), name);
	__atomic_store_n(&q->tid, gettid(), __ATOMIC_RELAXED);
	/* SCHED_BATCH: a kick that wakes this thread does not preempt the
	 * vCPU that sent it.  Where a CPU is idle the thread runs at once, as
	 * before; where every CPU is busy (vCPUs and iothreads outnumber the
	 * host's CPUs) the vCPU keeps running until the scheduler's next
	 * decision instead of being switched out for every request: measured
	 * in the test host (bench/JOURNAL.md), preempting it cost one kick,
	 * one interrupt and one iothread wake-up per request.  Nothing in the
	 * device waits: each request is still served as soon as this thread
	 * runs and each completion published at once. */
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
	affinity_pin_thread(q->cpu, name);
	sandbox_enter(SANDBOX_IOTHREAD);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (q->state == BLK_Q_IDLE)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->state == BLK_Q_EXIT)
			break;
		pthread_mutex_unlock(&q->lock);
		blk_queue_run(q);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int blk_queue_spawn(struct blk_queue *q, unsigned int index)
{
	int ret;

	q->index = index;
	q->state = BLK_Q_IDLE;
	q->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (q->stop_fd < 0)
		return -errno;
	q->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->wake_fd < 0) {
		ret = -errno;
		close(q->stop_fd);
		q->stop_fd = -1;
		return ret;
	}
	ret = -pthread_create(&q->thread, NULL, blk_queue_thread, q);
	if (ret) {
		close(q->stop_fd);
		close(q->wake_fd);
		q->stop_fd = q->wake_fd = -1;
	}
	return ret;
}

void blk_queue_exit(struct blk_queue *q)
{
	if (q->stop_fd < 0)
		return; /* never spawned */
	pthread_mutex_lock(&q->lock);
	blk_queue_set_state(q, BLK_Q_EXIT);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	close(q->stop_fd);
	close(q->wake_fd);
	q->stop_fd = q->wake_fd = -1;
}

int blk_queue_start(struct blk_queue *q)
{
	int ret;

	q->reset_sent = false;
	if (q->sync) {
		ret = blk_queue_open_backend(q);
		q->started = !ret;
		return ret;
	}
	pthread_mutex_lock(&q->lock);
	blk_queue_set_state(q, BLK_Q_STARTING);
	while (q->state == BLK_Q_STARTING)
		pthread_cond_wait(&q->cond, &q->lock);
	ret = q->start_err;
	pthread_mutex_unlock(&q->lock);
	if (ret)
		return ret;
	q->started = true;
	return 0;
}

void blk_queue_stop(struct blk_queue *q)
{
	if (!q->started)
		return;
	if (q->sync) {
		blk_queue_close_backend(q);
		q->started = false;
		return;
	}
	__atomic_store_n(&q->stopping, true, __ATOMIC_RELAXED);
	blk_fd_signal(q->stop_fd);
	pthread_mutex_lock(&q->lock);
	while (q->state == BLK_Q_RUNNING)
		pthread_cond_wait(&q->cond, &q->lock);
	pthread_mutex_unlock(&q->lock);
	blk_fd_clear(q->stop_fd);
	q->stopping = false;
	q->started = false;
}

unsigned int blk_queue_serve(struct blk_queue *q)
{
	unsigned int n, total = 0;

	if (!q->sync || !q->started)
		return 0;
	do {
		n = blk_queue_drain(q);
		n += blk_queue_reap(q);
		blk_queue_flush_used(q);
		total += n;
	} while (n && !q->gated);
	return total;
}
