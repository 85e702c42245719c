/* A driver that keeps the ring full cannot hold off the backend's own
 * completions.  A file on tmpfs has its reads served inside submit(),
 * so each frees its head at once, and a driver refilling the ring as
 * fast as the device serves it would keep the iothread in one drain pass
 * for ever; a FLUSH, which goes through io_uring, would wait for the
 * ring to go empty.  The iothread ends a pass after a ring's worth of
 * requests and reaps between passes.
 *
 * Deterministic: the driver's refill runs inside the device's own reads
 * (preadv2 is defined here, in front of libc's), so the ring never runs
 * dry until the FLUSH is used (or REFILL_NS have passed), however the
 * threads are scheduled.  The
 * same preadv2 says EOPNOTSUPP to RWF_NOWAIT, as tmpfs does on kernels
 * without non-blocking tmpfs reads, so that the backend serves the
 * reads inside submit() on any kernel.
 */
#include <errno.h>
#include <linux/virtio_ring.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "blk/blk.h"
#include "host/clock.h"
#include "tests/support/blkdrv.h"
#include "tests/support/fakemem.h"

#define QSIZE 16u        /* ring size: a drain pass's cap */
/* How long the driver keeps the ring full at most: far more than the
 * FLUSH needs (microseconds to milliseconds), even under sanitizers. */
#define REFILL_NS 5000000000ull
#define SECTOR 512u
#define DISK (1u << 20)

/* The driver, run by the iothread inside each read (see preadv2), and
 * by the test under lock at the start and the end. */
static struct {
	pthread_mutex_t lock;
	struct blkdrv_q q;
	uint64_t buf;           /* SECTOR bytes per head */
	int flush_head;         /* -1 once used */
	bool refill;            /* set once the first requests are added */
	bool stopped;           /* the driver adds no more */
	uint64_t deadline;      /* ns: stop refilling then */
	unsigned int added;     /* reads added */
	unsigned int reads_used;
	int reads_before_flush; /* reads used before the FLUSH; -1: not yet */
	bool flush_while_full;  /* the FLUSH was used while the driver
				 * still kept the ring full */
	bool bad_status;
	unsigned int preads;    /* reads the backend served by preadv2 */
} drv = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Take what the device used; then add one read, until the FLUSH is
 * used or the time is up. */
static void driver_step(void)
{
	uint16_t head;
	uint32_t len;

	while (drv_vq_get_used(&drv.q.vq, &head, &len)) {
		if (blkdrv_status(&drv.q, head) != VIRTIO_BLK_S_OK)
			drv.bad_status = true;
		if (head == drv.flush_head) {
			drv.reads_before_flush = (int)drv.reads_used;
			drv.flush_while_full = !drv.stopped;
			drv.flush_head = -1; /* the head is a read's next */
		} else {
			drv.reads_used++;
		}
	}
	if (drv.flush_head < 0 || mono_ns() > drv.deadline)
		drv.stopped = true;
	if (!drv.stopped && drv.q.vq.num_free) {
		uint16_t h = drv_vq_peek_head(&drv.q.vq);
		struct drv_buf b = { drv.buf + h * SECTOR, SECTOR, true };

		if (blkdrv_add(&drv.q, VIRTIO_BLK_T_IN,
			       drv.added % (DISK / SECTOR), &b, 1, true) >= 0)
			drv.added++;
	}
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off,
		int flags)
{
	ssize_t n;
	int err;

	if (flags & RWF_NOWAIT) {
		errno = EOPNOTSUPP;
		return -1;
	}
	/* The offset as low and high halves (a 64-bit kernel takes the
	 * whole of it from the low one). */
	n = syscall(SYS_preadv2, fd, iov, cnt, (unsigned long)off,
		    (unsigned long)((uint64_t)off >> 32), flags);
	err = errno;
	pthread_mutex_lock(&drv.lock);
	drv.preads++;
	if (drv.refill)
		driver_step();
	pthread_mutex_unlock(&drv.lock);
	errno = err;
	return n;
}

static void test_flush_not_held_off(void **state)
{
	char path[] = "/dev/shm/test_drain_cap.XXXXXX";
	struct blk_opts o = { 0 };
	struct fakemem fm;
	struct blk_dev *d = NULL;
	struct vdev_queue c;
	struct timespec nap = { 0, 1000000 };
	struct drv_buf none = { 0 };
	char msg[256] = "";
	int fd, waited = 0;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK), 0);
	close(fd);
	o.path = path;
	o.engine = BLK_ENGINE_URING; /* the FLUSH must go through it */
	o.queues = 1;
	o.poll_us = 0;
	if (blk_dev_create(&o, &d, msg, sizeof(msg)))
		fail_msg("blk_dev_create: %s", msg);
	unlink(path); /* the disk keeps it open; nothing left if we fail */
	assert_true(blk_dev_ops.features(d) & (1ull << VIRTIO_BLK_F_FLUSH));
	assert_int_equal(fakemem_create(&fm, 1ull << 32, 8u << 20), 0);
	assert_int_equal(blkdrv_q_init(&drv.q, &fm, QSIZE, true), 0);
	drv.buf = fakemem_alloc(&fm, QSIZE * SECTOR, 4096);
	assert_true(drv.buf != 0);
	assert_int_equal(drv_vq_alloc_indirect(&drv.q.vq), 0);
	c = blkdrv_q_vdev(&drv.q);
	assert_int_equal(blkdrv_activate(d, &fm.gm, blk_dev_ops.features(d),
					 &c, 1, NULL, NULL), 0);

	/* The FLUSH first, then a full ring of reads, then one kick.  The
	 * iothread may see them before the kick: its refills wait. */
	pthread_mutex_lock(&drv.lock);
	drv.reads_before_flush = -1;
	drv.deadline = mono_ns() + REFILL_NS;
	drv.flush_head = blkdrv_add(&drv.q, VIRTIO_BLK_T_FLUSH, 0, &none, 0,
				    true);
	assert_true(drv.flush_head >= 0);
	while (drv.q.vq.num_free)
		driver_step();
	drv.refill = true;
	blkdrv_kick(&drv.q);
	pthread_mutex_unlock(&drv.lock);

	/* Until the driver stopped and the device used every request (the
	 * iothread's last refill ran before the last read was pushed). */
	for (bool done = false; !done && waited++ < 30000;) {
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&drv.lock);
		driver_step();
		done = drv.stopped && drv.q.vq.num_free == QSIZE;
		pthread_mutex_unlock(&drv.lock);
	}
	print_message("%u reads; the FLUSH used after %d of them, %s\n",
		      drv.reads_used, drv.reads_before_flush,
		      drv.flush_while_full ? "the ring still full" :
		      "the driver done");
	/* The premise: the backend served the reads inside submit(). */
	assert_true(drv.preads >= drv.reads_used && drv.reads_used > QSIZE);
	assert_int_equal(drv.q.vq.num_free, QSIZE);
	assert_int_equal(drv.reads_used, drv.added);
	assert_false(drv.bad_status);
	/* The io-wq worker that runs the fsync needs microseconds to
	 * milliseconds; without the cap the FLUSH waits for the driver to
	 * stop (REFILL_NS). */
	assert_true(drv.reads_before_flush >= 0);
	assert_true(drv.flush_while_full);

	blk_dev_ops.reset(d);
	blkdrv_q_close(&drv.q);
	fakemem_destroy(&fm);
	blk_dev_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_not_held_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
