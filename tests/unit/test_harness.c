/* The device as a whole: real iothreads, real backends (io_uring on a
 * file, the RAM disk), a driver playing the guest.
 *
 * The harness runs 4 queues, each from its own driver thread, with a
 * random mix of reads, writes, flushes, discards, write-zeroes (with and
 * without unmap) and GET_ID, checked against a host-side model of the
 * disk.  Each queue works on its own disjoint sector range and never has
 * two overlapping requests in flight, so the outcome is deterministic:
 * every read must equal the model, at the end the whole disk is read
 * back through the device and compared, and for the file backend the
 * file itself is read with pread() after blk_dev_ops.reset().  Discarded
 * sectors may read back as zeroes or as what they held before.
 *
 * The functional tests exercise each request type on both backends:
 * GET_ID, FLUSH, read/write with direct and indirect chains, discard,
 * write-zeroes, out-of-range and unknown requests, a read-only disk, and
 * interrupt suppression with and without EVENT_IDX.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "blk/blk.h"
#include "host/clock.h"
#include "tests/support/blkdrv.h"
#include "tests/support/fakemem.h"
#include "tests/support/rng.h"
#include "tests/support/nouring.h"

#define SECTOR 512u
#define HQ 4                        /* queues */
#define HQSIZE 128                  /* queue size */
#define HMAXSEC 64                  /* sectors per request, at most */
#define HBUF (HMAXSEC * SECTOR)     /* data buffer per head */
#define HDISK (8u << 20)            /* disk bytes */
#define HSECTORS (HDISK / SECTOR)
#define HQSECTORS (HSECTORS / HQ)   /* each queue's own range */
#define HOPS 1000                   /* requests per queue per run */
#define SERIAL "harness-serial-0123" /* 19 chars */
#define FEAT_EVENT_IDX (1ull << VIRTIO_RING_F_EVENT_IDX)
#define WAIT_NS (10 * 1000000000ull) /* a wait for a condition, at most */

enum be { BE_FILE, BE_RAM, BE_FILE_SYNC }; /* FILE_SYNC: engine=sync */

struct cfg {
	const char *name;
	enum be be;
};

static const struct cfg *cfg;
static unsigned int fx_poll_us; /* poll= of the next fx_open */
static bool fx_latency;         /* blk_opts.latency of the next fx_open */

/* ---- a device with its driver queues ------------------------------------ */

struct fx {
	enum be be;
	char path[64];
	struct fakemem fm;
	struct blk_dev *d;
	struct blkdrv_q q[HQ];
	uint64_t buf[HQ];   /* HQSIZE * HBUF per queue */
	unsigned int nq;
	bool started;
};

static void fill_random(void *p, size_t len, uint64_t *seed)
{
	uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(rng_next(seed) >> 56);
}

/* A disk file of size bytes filled from seed (or zeroes if seed is 0). */
static void make_file(struct fx *f, size_t size, uint64_t seed)
{
	uint8_t *buf = calloc(1, size);
	int fd;

	snprintf(f->path, sizeof(f->path), "/tmp/test_harness.XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0 && buf);
	if (seed)
		fill_random(buf, size, &seed);
	assert_int_equal(pwrite(fd, buf, size, 0), (ssize_t)size);
	close(fd);
	free(buf);
}

static void read_file(const char *path, void *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, (off_t)size);
	assert_int_equal(pread(fd, buf, size, 0), (ssize_t)size);
	close(fd);
}

static int fx_open(struct fx *f, enum be be, bool ro, bool batch,
		   uint64_t seed)
{
	struct blk_opts o = { 0 };
	char msg[256] = "";
	int ret;

	f->be = be;
	if (be != BE_RAM)
		make_file(f, HDISK, seed);
	o.path = be != BE_RAM ? f->path : NULL;
	o.engine = be == BE_FILE_SYNC ? BLK_ENGINE_SYNC : BLK_ENGINE_AUTO;
	o.ram_size = HDISK;
	o.ro = ro;
	o.batch = batch;
	o.queues = HQ;
	o.poll_us = fx_poll_us;
	o.latency = fx_latency;
	snprintf(o.serial, sizeof(o.serial), "%s", SERIAL);
	ret = blk_dev_create(&o, &f->d, msg, sizeof(msg));
	if (ret)
		print_error("blk_dev_create: %s\n", msg);
	return ret;
}

static uint16_t fx_qsize = HQSIZE; /* the rings fx_start sets up */

/* Start nq queues with the device's features minus drop. */
static void fx_start(struct fx *f, unsigned int nq, uint64_t drop)
{
	struct vdev_queue c[HQ];
	bool evidx = !(drop & FEAT_EVENT_IDX);

	assert_int_equal(fakemem_create(&f->fm, 1ull << 32, 40u << 20), 0);
	for (unsigned int i = 0; i < nq; i++) {
		assert_int_equal(blkdrv_q_init(&f->q[i], &f->fm, fx_qsize,
					       evidx), 0);
		f->buf[i] = fakemem_alloc(&f->fm, (size_t)HQSIZE * HBUF, 4096);
		assert_true(f->buf[i] != 0);
		/* The driver threads share the allocator. */
		assert_int_equal(drv_vq_alloc_indirect(&f->q[i].vq), 0);
		c[i] = blkdrv_q_vdev(&f->q[i]);
	}
	f->nq = nq;
	assert_int_equal(blkdrv_activate(f->d, &f->fm.gm,
					 blk_dev_ops.features(f->d) & ~drop, c,
					 nq, NULL, NULL),
			 0);
	f->started = true;
}

static void fx_stop(struct fx *f)
{
	if (!f->started)
		return;
	blk_dev_ops.reset(f->d);
	for (unsigned int i = 0; i < f->nq; i++)
		blkdrv_q_close(&f->q[i]);
	fakemem_destroy(&f->fm);
	f->started = false;
}

static void fx_close(struct fx *f)
{
	fx_stop(f);
	blk_dev_destroy(f->d);
	f->d = NULL;
	if (f->path[0])
		unlink(f->path);
	f->path[0] = '\0';
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	*state = f;
	fx_poll_us = BLK_POLL_US_DEFAULT;
	fx_latency = false; /* as vmm run without -v or --stats */
	fx_qsize = HQSIZE;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->d)
		fx_close(f);
	free(f);
	return 0;
}

/* ---- single requests ---------------------------------------------------------- */

static uint8_t *hva(struct fx *f, uint64_t gpa)
{
	return fakemem_hva(&f->fm, gpa);
}

/* One request on queue qi with its data in nseg equal pieces of the
 * head's buffer; returns the status byte. */
static int req(struct fx *f, unsigned int qi, uint32_t type, uint64_t sector,
	       uint32_t len, bool write_dir, unsigned int nseg, bool indirect,
	       uint32_t *used_len)
{
	struct drv_buf b[8];
	uint64_t base = f->buf[qi];

	assert_true(nseg >= 1 && nseg <= 8 && len <= HBUF);
	for (unsigned int i = 0; i < nseg; i++) {
		uint32_t from = len * i / nseg, to = len * (i + 1) / nseg;

		b[i] = (struct drv_buf){ base + from, to - from, write_dir };
	}
	return blkdrv_sync(&f->q[qi], type, sector, b, len ? nseg : 0,
			   indirect, used_len);
}

static int rd(struct fx *f, uint64_t sector, uint32_t len, unsigned int nseg,
	      bool indirect)
{
	uint32_t used = 0;
	int st = req(f, 0, VIRTIO_BLK_T_IN, sector, len, true, nseg, indirect,
		     &used);

	if (st == VIRTIO_BLK_S_OK)
		assert_int_equal(used, len + 1);
	return st;
}

static int wr(struct fx *f, uint64_t sector, uint32_t len, unsigned int nseg,
	      bool indirect)
{
	return req(f, 0, VIRTIO_BLK_T_OUT, sector, len, false, nseg, indirect,
		   NULL);
}

/* DISCARD or WRITE_ZEROES of one segment. */
static int dwz(struct fx *f, uint32_t type, uint64_t sector, uint32_t n,
	       bool unmap)
{
	struct {
		uint64_t sector;
		uint32_t num_sectors, flags;
	} seg = { sector, n, unmap ? VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP : 0 };

	memcpy(hva(f, f->buf[0]), &seg, sizeof(seg));
	return req(f, 0, type, 0, sizeof(seg), false, 1, false, NULL);
}

/* ---- functional tests ------------------------------------------------------------- */

static void test_get_id(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	uint8_t *p;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	p = hva(f, f->buf[0]);
	memset(p, 0xee, 64);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_GET_ID, 0, BLK_ID_BYTES, true,
			     1, false, &used),
			 VIRTIO_BLK_S_OK);
	assert_memory_equal(p, SERIAL, sizeof(SERIAL)); /* NUL-padded */
	assert_int_equal(used, BLK_ID_BYTES + 1);
	/* Split over two descriptors, indirect. */
	memset(p, 0xee, 64);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_GET_ID, 0, BLK_ID_BYTES, true,
			     2, true, &used),
			 VIRTIO_BLK_S_OK);
	assert_memory_equal(p, SERIAL, sizeof(SERIAL));
}

/* The latency breakdown where it is asked for (blk_opts.latency: vmm
 * run -v or --stats): one sample per submitted request in each stage,
 * none for a request the device answers itself. */
static void test_latency(void **state)
{
	struct fx *f = *state;
	const struct lat_queue *l;
	uint64_t t0, elapsed;
	uint32_t used;

	fx_latency = true;
	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 2, 0);
	t0 = lat_now(); /* the device's clock: blk_dev_create set it up */
	for (unsigned int i = 0; i < 10; i++)
		assert_int_equal(rd(f, i * 8, 4096, 1, i % 2), VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_GET_ID, 0, BLK_ID_BYTES, true,
			     1, false, &used),
			 VIRTIO_BLK_S_OK);
	fx_stop(f); /* the figures are final after a reset */
	elapsed = lat_now() - t0;
	l = blk_dev_latency(f->d, 0);
	assert_non_null(l);
	/* Every sample lies within the test's own span: a stage measured
	 * from a stamp never taken would not. */
	for (unsigned int s = 0; s < LAT_STAGES; s++) {
		assert_int_equal(l->stage[s].count, 10);
		assert_true(l->stage[s].max <= elapsed);
	}
	l = blk_dev_latency(f->d, 1); /* started, never used */
	assert_non_null(l);
	for (unsigned int s = 0; s < LAT_STAGES; s++)
		assert_int_equal(l->stage[s].count, 0);
	assert_null(blk_dev_latency(f->d, HQ)); /* no such queue */
}

/* Not asked for (the default): no breakdown at all. */
static void test_latency_not_kept(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	fx_stop(f);
	assert_null(blk_dev_latency(f->d, 0));
}

static void test_flush(void **state)
{
	struct fx *f = *state;
	uint32_t used = 0;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	assert_true(blk_dev_ops.features(f->d) & (1ull << VIRTIO_BLK_F_FLUSH));
	assert_int_equal(wr(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, false, 1, false,
			     &used),
			 VIRTIO_BLK_S_OK);
	assert_int_equal(used, 1);
	/* Without FLUSH negotiated (write-through) writes still work. */
	fx_stop(f);
	fx_start(f, 1, 1ull << VIRTIO_BLK_F_FLUSH);
	assert_int_equal(wr(f, 8, 4096, 1, false), VIRTIO_BLK_S_OK);
}

/* Write a pattern with one chain layout, read it back with another. */
static void rw_roundtrip(struct fx *f, bool ind_w, bool ind_r)
{
	uint64_t seed = 99;
	uint8_t *p = hva(f, f->buf[0]), *pat = malloc(HBUF);
	static const unsigned int segs[] = { 1, 2, 3, 8 };

	assert_non_null(pat);
	for (unsigned int i = 0; i < 4; i++) {
		uint64_t sector = 17 + 200 * i;

		fill_random(pat, HBUF, &seed);
		memcpy(p, pat, HBUF);
		assert_int_equal(wr(f, sector, HBUF, segs[i], ind_w),
				 VIRTIO_BLK_S_OK);
		memset(p, 0, HBUF);
		assert_int_equal(rd(f, sector, HBUF, segs[3 - i], ind_r),
				 VIRTIO_BLK_S_OK);
		assert_memory_equal(p, pat, HBUF);
	}
	free(pat);
}

static void test_read_write(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	rw_roundtrip(f, false, false);
	rw_roundtrip(f, true, false);
	rw_roundtrip(f, false, true);
	rw_roundtrip(f, true, true);
}

static void test_indirect_only_negotiated(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	assert_true(blk_dev_ops.features(f->d) &
		    (1ull << VIRTIO_RING_F_INDIRECT_DESC));
	fx_start(f, 1, 0);
	rw_roundtrip(f, true, true);
	/* Not negotiated: an indirect chain is a bad chain (used.len 0). */
	fx_stop(f);
	fx_start(f, 1, 1ull << VIRTIO_RING_F_INDIRECT_DESC);
	{
		uint32_t used = 99;
		int st = req(f, 0, VIRTIO_BLK_T_IN, 0, 4096, true, 1, true,
			     &used);

		assert_int_equal(used, 0);
		assert_int_equal(st, 0xff); /* status byte untouched */
	}
	rw_roundtrip(f, false, false);
}

static void test_bad_requests(void **state)
{
	struct fx *f = *state;
	uint64_t cap = HSECTORS;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	assert_int_equal(rd(f, cap - 1, 1024, 1, false), VIRTIO_BLK_S_IOERR);
	assert_int_equal(wr(f, cap, 512, 1, false), VIRTIO_BLK_S_IOERR);
	assert_int_equal(rd(f, UINT64_MAX, 512, 1, false), VIRTIO_BLK_S_IOERR);
	assert_int_equal(rd(f, 0, 100, 1, false), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, 0x1234, 0, 512, true, 1, false, NULL),
			 VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(rd(f, cap - 1, 512, 1, false), VIRTIO_BLK_S_OK);
}

static bool is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void test_discard_write_zeroes(void **state)
{
	struct fx *f = *state;
	uint8_t *p, *pat = malloc(HBUF);
	uint64_t seed = 5;
	uint64_t feat;

	assert_non_null(pat);
	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	feat = blk_dev_ops.features(f->d);
	assert_true(feat & (1ull << VIRTIO_BLK_F_DISCARD));
	assert_true(feat & (1ull << VIRTIO_BLK_F_WRITE_ZEROES));
	fx_start(f, 1, 0);
	p = hva(f, f->buf[0]);
	for (unsigned int unmap = 0; unmap < 2; unmap++) {
		fill_random(pat, HBUF, &seed);
		memcpy(p, pat, HBUF);
		assert_int_equal(wr(f, 64, HBUF, 1, false), VIRTIO_BLK_S_OK);
		/* zero sectors 65..70, an unaligned range */
		assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 65, 6,
				     unmap),
				 VIRTIO_BLK_S_OK);
		assert_int_equal(rd(f, 64, HBUF, 1, false), VIRTIO_BLK_S_OK);
		assert_memory_equal(p, pat, SECTOR);
		assert_true(is_zero(p + SECTOR, 6 * SECTOR));
		assert_memory_equal(p + 7 * SECTOR, pat + 7 * SECTOR,
				    HBUF - 7 * SECTOR);
	}
	/* Discard: each sector reads zero or as before; OK either way. */
	fill_random(pat, HBUF, &seed);
	memcpy(p, pat, HBUF);
	assert_int_equal(wr(f, 128, HBUF, 1, false), VIRTIO_BLK_S_OK);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 136, 16, false),
			 VIRTIO_BLK_S_OK);
	assert_int_equal(rd(f, 128, HBUF, 1, false), VIRTIO_BLK_S_OK);
	for (unsigned int s = 0; s < HMAXSEC; s++) {
		bool same = !memcmp(p + s * SECTOR, pat + s * SECTOR, SECTOR);

		if (s < 8 || s >= 24)
			assert_true(same);
		else
			assert_true(same || is_zero(p + s * SECTOR, SECTOR));
	}
	/* Discard with flags, and past the end, are refused. */
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 0, 8, true),
			 VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, HSECTORS - 4, 8,
			     false),
			 VIRTIO_BLK_S_IOERR);
	free(pat);
}

/* Read the disk's first n bytes (through the device, queue 0). */
static void read_disk(struct fx *f, uint8_t *out, size_t n)
{
	for (size_t off = 0; off < n; off += HBUF) {
		assert_int_equal(rd(f, off / SECTOR, HBUF, 2, true),
				 VIRTIO_BLK_S_OK);
		memcpy(out + off, hva(f, f->buf[0]), HBUF);
	}
}

static void test_read_only(void **state)
{
	struct fx *f = *state;
	uint8_t *before = malloc(HDISK), *after = malloc(HDISK);
	uint64_t feat;

	assert_true(before && after);
	assert_int_equal(fx_open(f, cfg->be, true, false, 7), 0);
	feat = blk_dev_ops.features(f->d);
	assert_true(feat & (1ull << VIRTIO_BLK_F_RO));
	assert_false(feat & (1ull << VIRTIO_BLK_F_DISCARD));
	assert_false(feat & (1ull << VIRTIO_BLK_F_WRITE_ZEROES));
	fx_start(f, 1, 0);
	read_disk(f, before, HDISK);
	memset(hva(f, f->buf[0]), 0x77, HBUF);
	assert_int_equal(wr(f, 0, HBUF, 1, false), VIRTIO_BLK_S_IOERR);
	assert_int_equal(wr(f, 1000, 4096, 2, true), VIRTIO_BLK_S_IOERR);
	assert_int_not_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 8, false),
			     VIRTIO_BLK_S_OK);
	assert_int_not_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 0, 8, false),
			     VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, false, 1, false,
			     NULL),
			 VIRTIO_BLK_S_OK);
	read_disk(f, after, HDISK);
	assert_memory_equal(before, after, HDISK);
	fx_stop(f);
	if (f->be != BE_RAM) {
		uint64_t seed = 7;

		fill_random(before, HDISK, &seed); /* as make_file wrote it */
		read_file(f->path, after, HDISK);
		assert_memory_equal(before, after, HDISK);
	}
	free(before);
	free(after);
}

static uint64_t call_count(struct fx *f)
{
	uint64_t v = 0;

	/* The eventfd counter: how many times the device signalled. */
	if (read(f->q[0].call_fd, &v, sizeof(v)) != sizeof(v))
		v = 0;
	return v;
}

/* Whether queue qi's iothread sleeps waiting for a kick: it is in state
 * S inside poll() (blk_queue_wait; nothing else of a running queue
 * polls).  A kernel without /proc/PID/syscall: the state alone. */
static bool iothread_asleep(struct fx *f, unsigned int qi)
{
	pid_t tid = blk_dev_queue_tid(f->d, qi);
	char path[64], buf[512], *p;
	long nr = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!tid || fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')'); /* the name may hold anything */
	if (!p || p[1] != ' ' || p[2] != 'S')
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%ld", &nr) != 1)
		return false;
#ifdef SYS_poll
	if (nr == SYS_poll)
		return true;
#endif
	return nr == SYS_ppoll;
}

/* Until queue qi's iothread sleeps waiting for a kick: it has nothing
 * left to do, every notification decision made.  Fails the test after
 * 10 s. */
static void wait_asleep(struct fx *f, unsigned int qi)
{
	uint64_t end = mono_ns() + WAIT_NS;

	while (!iothread_asleep(f, qi)) {
		if (mono_ns() > end)
			fail_msg("queue %u: the iothread is not asleep after 10 s",
				 qi);
		usleep(100);
	}
}

/* Add n reads in one go, kick, and poll (no interrupt) until all are
 * used.  Returns how many interrupts the device sent meanwhile: those
 * of the notification decisions made until it sleeps again. */
static uint64_t burst(struct fx *f, unsigned int n)
{
	struct drv_buf b = { f->buf[0], 4096, true };
	unsigned int got = 0;
	uint16_t head;
	uint32_t len;

	for (unsigned int i = 0; i < n; i++)
		assert_true(blkdrv_add(&f->q[0], VIRTIO_BLK_T_IN, 8 * i, &b, 1,
				       true) >= 0);
	blkdrv_kick(&f->q[0]);
	for (unsigned int spins = 0; got < n; spins++) {
		assert_true(spins < 500000);
		if (drv_vq_get_used(&f->q[0].vq, &head, &len)) {
			assert_int_equal(blkdrv_status(&f->q[0], head),
					 VIRTIO_BLK_S_OK);
			got++;
		} else {
			usleep(10);
		}
	}
	wait_asleep(f, 0); /* a late interrupt has been sent by now */
	return call_count(f);
}

/* The per-head arrays outlive a reset (blk_queue_arrays): rings set up
 * small, then larger, then small again, each after a reset, are served
 * at every head (indirect: one descriptor per request, so the heads run
 * from 0 to size - 1).  An array kept too small for the larger ring is
 * written past its end: ASan's report in the sanitizer builds. */
static void test_ring_size_across_resets(void **state)
{
	static const uint16_t sizes[] = { 4, HQSIZE, 16, HQSIZE };
	struct fx *f = *state;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fx_qsize = sizes[i];
		fx_start(f, 1, 0);
		(void)burst(f, sizes[i]);
		fx_stop(f);
	}
	fx_qsize = HQSIZE;
	fx_close(f);
}

static void test_event_idx(void **state)
{
	struct fx *f = *state;
	struct drv_vq *vq;

	assert_int_equal(fx_open(f, cfg->be, false, cfg->be == BE_RAM, 1), 0);
	fx_start(f, 1, 0);
	vq = &f->q[0].vq;
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	call_count(f);
	/* used_event = last_used + 9: exactly one interrupt for 16. */
	__atomic_store_n(&vq->avail->ring[vq->size],
			 (uint16_t)(vq->last_used + 9), __ATOMIC_SEQ_CST);
	assert_int_equal(burst(f, 16), 1);
	/* used_event far behind: no interrupt at all. */
	__atomic_store_n(&vq->avail->ring[vq->size],
			 (uint16_t)(vq->last_used - 100), __ATOMIC_SEQ_CST);
	assert_int_equal(burst(f, 16), 0);
	/* Back to normal operation. */
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
}

/* The driver enables only its second queue: that one is served. */
static void test_queue_subset(void **state)
{
	struct fx *f = *state;
	struct vdev_queue c[2];
	uint32_t used = 0;

	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	assert_int_equal(fakemem_create(&f->fm, 1ull << 32, 40u << 20), 0);
	for (unsigned int i = 0; i < 2; i++) {
		assert_int_equal(blkdrv_q_init(&f->q[i], &f->fm, HQSIZE, true),
				 0);
		f->buf[i] = fakemem_alloc(&f->fm, (size_t)HQSIZE * HBUF, 4096);
		c[i] = blkdrv_q_vdev(&f->q[i]);
	}
	c[0].enabled = false;
	f->nq = 2;
	assert_int_equal(blkdrv_activate(f->d, &f->fm.gm,
					 blk_dev_ops.features(f->d), c, 2, NULL,
					 NULL), 0);
	f->started = true;
	assert_int_equal(req(f, 1, VIRTIO_BLK_T_IN, 0, 4096, true, 1, false,
			     &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 4097);
}

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)((int64_t)(t.tv_sec - t0->tv_sec) * 1000 +
			  (int64_t)(t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* In a child without io_uring: engine=uring is refused at open, the
 * default falls back to synchronous I/O with a note, and serves. */
static int no_uring_child(struct fx *f)
{
	struct blk_opts o = { .ram_size = HDISK, .queues = 1,
			      .poll_us = 0, .engine = BLK_ENGINE_URING };
	char msg[256] = "";
	uint32_t used = 0;

	if (forbid_io_uring())
		return 90;
	o.path = f->path;
	if (blk_dev_create(&o, &f->d, msg, sizeof(msg)) != -ENOSYS ||
	    !strstr(msg, "engine=uring"))
		return 91;
	o.engine = BLK_ENGINE_AUTO;
	if (blk_dev_create(&o, &f->d, msg, sizeof(msg)) ||
	    !strstr(blk_dev_note(f->d), "io_uring unavailable"))
		return 92;
	fx_start(f, 1, 0);
	memset(hva(f, f->buf[0]), 0x5a, 4096);
	if (req(f, 0, VIRTIO_BLK_T_OUT, 8, 4096, false, 1, false, &used) ||
	    req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, false, 1, false, &used))
		return 93;
	memset(hva(f, f->buf[0]), 0, 4096);
	if (req(f, 0, VIRTIO_BLK_T_IN, 8, 4096, true, 1, false, &used) ||
	    hva(f, f->buf[0])[4095] != 0x5a)
		return 94;
	fx_close(f);
	return 0;
}

static void test_no_io_uring(void **state)
{
	struct fx *f = *state;
	int st;
	pid_t pid;

	if (cfg->be != BE_FILE)
		skip();
	make_file(f, HDISK, 3);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(no_uring_child(f));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	unlink(f->path);
	f->path[0] = '\0';
}

/* Paused (bus mastering off): a request made available is neither
 * served nor written to, and no interrupt comes; resumed, it is served
 * and interrupted for, and the queue goes on where it was. */
static void test_pause_resume(void **state)
{
	struct fx *f = *state;
	struct drv_buf b;
	uint16_t head;
	uint32_t len;
	uint8_t *buf;
	int h;

	assert_int_equal(fx_open(f, cfg->be, false, false, 5), 0);
	fx_start(f, 1, 0);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	blk_dev_ops.pause(f->d);
	while (blkdrv_wait_irq(&f->q[0], 0))
		; /* forget interrupts from before the pause */
	buf = hva(f, f->buf[0]);
	memset(buf, 0xee, 4096);
	b = (struct drv_buf){ f->buf[0], 4096, true };
	h = blkdrv_add(&f->q[0], VIRTIO_BLK_T_IN, 0, &b, 1, false);
	assert_true(h >= 0);
	blkdrv_kick(&f->q[0]);
	assert_int_equal(blkdrv_wait_irq(&f->q[0], 100), 0);
	assert_int_equal(drv_vq_get_used(&f->q[0].vq, &head, &len), 0);
	assert_int_equal(blkdrv_status(&f->q[0], (uint16_t)h), 0xff);
	assert_int_equal(buf[0], 0xee);
	assert_int_equal(blk_dev_ops.resume(f->d), 0);
	assert_int_equal(blkdrv_wait_irq(&f->q[0], 2000), 1);
	assert_int_equal(drv_vq_get_used(&f->q[0].vq, &head, &len), 1);
	assert_int_equal(head, h);
	assert_int_equal(blkdrv_status(&f->q[0], head), VIRTIO_BLK_S_OK);
	assert_int_not_equal(buf[0], 0xee);
	assert_int_equal(rd(f, 8, 4096, 1, false), VIRTIO_BLK_S_OK);
}

/* A driver thread that keeps the queue full as fast as it can. */
struct refiller {
	struct fx *f;
	bool stop;
	uint64_t added;
};

static void *refill_main(void *arg)
{
	struct refiller *r = arg;
	struct blkdrv_q *q = &r->f->q[0];
	/* A safety stop, so that a device that never stops fails the test
	 * instead of hanging it. */
	uint64_t end = mono_ns() + 2 * WAIT_NS, spins = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint16_t head;
		uint32_t len;
		int h;

		while (drv_vq_get_used(&q->vq, &head, &len))
			;
		for (;;) {
			struct drv_buf b = {
				r->f->buf[0] + drv_vq_peek_head(&q->vq) * HBUF,
				SECTOR, true };

			/* Mostly GET_ID, which the device answers while it
			 * drains (no backend): the ring never runs dry. */
			bool id = r->added % 4;

			if (q->vq.num_free < 3)
				break;
			if (id)
				b.len = BLK_ID_BYTES;
			h = blkdrv_add(q, id ? VIRTIO_BLK_T_GET_ID :
				       VIRTIO_BLK_T_IN, 0, &b, 1, false);
			if (h < 0)
				break;
			r->added++;
		}
		blkdrv_kick(q);
		if (++spins % 1024 == 0 && mono_ns() > end)
			break;
	}
	return NULL;
}

/* A reset under load: while another thread keeps refilling the queue,
 * the reset returns within 100 ms and every head the device took is back
 * in the used ring.  (Whether the device stops taking heads at once is
 * pinned by test_reset_while_polling: this one also passes when the
 * refiller lets the ring run dry now and then.) */
static void test_reset_bounded(void **state)
{
	struct fx *f = *state;
	struct refiller r = { .f = f };
	struct timespec t0;
	struct blk_stats st;
	pthread_t th;
	uint64_t ms, end;

	fx_poll_us = 0;
	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	assert_int_equal(pthread_create(&th, NULL, refill_main, &r), 0);
	/* Until the device has used a ring's worth: it is busy. */
	end = mono_ns() + WAIT_NS;
	while (__atomic_load_n(&f->q[0].vq.used->idx, __ATOMIC_ACQUIRE) <
	       HQSIZE) {
		if (mono_ns() > end) {
			struct drv_vq *v = &f->q[0].vq;

			fail_msg("%s: the device used %u requests in 10 s "
				 "(avail idx %u, avail_event %u, "
				 "driver added %llu, %u descriptors free)",
				 cfg->name, (unsigned int)v->used->idx,
				 (unsigned int)v->avail->idx,
				 (unsigned int)__atomic_load_n(
					 (uint16_t *)&v->used->ring[v->size],
					 __ATOMIC_RELAXED),
				 (unsigned long long)__atomic_load_n(
					 &r.added, __ATOMIC_RELAXED),
				 (unsigned int)v->num_free);
		}
		usleep(100);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	blk_dev_ops.reset(f->d);
	ms = ms_since(&t0);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	print_message("reset took %llu ms with %llu requests added\n",
		      (unsigned long long)ms, (unsigned long long)r.added);
	assert_true(ms < 100);
	blk_dev_stats(f->d, &st);
	assert_true(st.requests > 0 && st.requests <= r.added);
	/* Every head the device took is back in the used ring. */
	assert_int_equal(__atomic_load_n(&f->q[0].vq.used->idx,
					 __ATOMIC_ACQUIRE),
			 (uint16_t)st.requests);
}

/* A reset is seen by an iothread in its idle-poll window too: with a
 * 1 s window it still returns at once. */
static void test_reset_while_polling(void **state)
{
	struct fx *f = *state;
	struct timespec t0;
	uint64_t ms;

	fx_poll_us = BLK_POLL_US_MAX;
	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	blk_dev_ops.reset(f->d);
	ms = ms_since(&t0);
	print_message("reset while polling took %llu ms\n",
		      (unsigned long long)ms);
	assert_true(ms < 100);
}

/* Add one read and do not kick; say whether the device asked for a kick
 * and whether the read completed within ms. */
static bool unkicked_read(struct fx *f, int ms, bool *kick_asked)
{
	struct drv_buf b = { f->buf[0], 4096, true };
	uint16_t head;
	uint32_t len;

	assert_true(blkdrv_add(&f->q[0], VIRTIO_BLK_T_IN, 8, &b, 1, false) >=
		    0);
	*kick_asked = drv_vq_kick_needed(&f->q[0].vq);
	for (int i = 0; i < ms * 10; i++) {
		if (drv_vq_get_used(&f->q[0].vq, &head, &len)) {
			assert_int_equal(blkdrv_status(&f->q[0], head),
					 VIRTIO_BLK_S_OK);
			return true;
		}
		usleep(100);
	}
	return false;
}

/* An idle iothread polls with kicks still off: a request added within
 * its window needs no kick and is served. */
static void test_poll(void **state)
{
	struct fx *f = *state;
	bool asked;

	fx_poll_us = BLK_POLL_US_MAX; /* 1 s: this test is well inside it */
	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	assert_true(unkicked_read(f, 500, &asked));
	assert_false(asked);
}

/* poll=0: once idle the device asks for a kick and waits for it. */
static void test_no_poll(void **state)
{
	struct fx *f = *state;
	uint64_t one = 1;
	uint16_t head;
	uint32_t len;
	bool asked;

	fx_poll_us = 0;
	assert_int_equal(fx_open(f, cfg->be, false, false, 1), 0);
	fx_start(f, 1, 0);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	wait_asleep(f, 0);
	assert_false(unkicked_read(f, 100, &asked));
	assert_true(asked);
	/* The kick it asked for (blkdrv_kick would see it as sent). */
	assert_int_equal(write(f->q[0].kick_fd, &one, sizeof(one)),
			 sizeof(one));
	for (int i = 0; !drv_vq_get_used(&f->q[0].vq, &head, &len); i++) {
		assert_true(i < 5000);
		usleep(100);
	}
}

static void test_no_event_idx(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_open(f, cfg->be, false, cfg->be == BE_RAM, 1), 0);
	fx_start(f, 1, FEAT_EVENT_IDX);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	rw_roundtrip(f, true, false);
	call_count(f);
	/* VRING_AVAIL_F_NO_INTERRUPT: no interrupt at all. */
	drv_vq_disable_cb(&f->q[0].vq);
	assert_int_equal(burst(f, 16), 0);
	/* Interrupts on: at least one. */
	assert_false(drv_vq_enable_cb(&f->q[0].vq));
	assert_true(burst(f, 16) >= 1);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
}

/* Sixteen reads added at once to a sleeping iothread (poll=0), without
 * EVENT_IDX and with interrupts on, so that the device interrupts at
 * every publish: how many interrupts they cost.  Returns that count. */
static uint64_t sleeping_burst(struct fx *f, bool batch)
{
	fx_poll_us = 0;
	assert_int_equal(fx_open(f, cfg->be, false, batch, 1), 0);
	fx_start(f, 1, FEAT_EVENT_IDX);
	assert_int_equal(rd(f, 0, 4096, 1, false), VIRTIO_BLK_S_OK);
	wait_asleep(f, 0);
	call_count(f);
	return burst(f, 16);
}

/* No completion batching: a request served inside submit() (the RAM
 * disk, engine=sync) is published as soon as it is served, with its own
 * notification decision, not when the drain pass ends.  Through
 * io_uring the count depends on when completions arrive. */
static void test_publish_at_once(void **state)
{
	uint64_t n = sleeping_burst(*state, false);

	if (cfg->be == BE_FILE)
		assert_true(n >= 1 && n <= 16);
	else
		assert_int_equal(n, 16);
}

/* batch=on: one publish and one interrupt for the drain pass. */
static void test_publish_batch_on(void **state)
{
	assert_int_equal(sleeping_burst(*state, true), 1);
}

/* ---- the harness --------------------------------------------------------------------- */

/* The host-side copy of the disk; queue i only touches its own range. */
struct model {
	uint8_t *data;
	uint8_t *maybe_zero; /* per sector: discarded, may read as zeroes */
};

struct flight {
	bool busy;
	uint32_t type;
	uint64_t sector, nsec;
	bool unmap;
};

struct hw { /* one harness worker: a queue and its driver thread */
	struct fx *f;
	struct model *m;
	unsigned int qi, depth;
	uint64_t lo;          /* first sector of its range */
	uint64_t rng;
	struct flight fl[HQSIZE];
	unsigned int inflight, issued, done;
	unsigned int count[16]; /* by type */
	uint64_t irqs;
	char err[200];
	pthread_t thread;
};

static void __attribute__((format(printf, 2, 3)))
hw_fail(struct hw *w, const char *fmt, ...)
{
	va_list ap;

	if (w->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
}

static bool hw_overlaps(const struct hw *w, uint64_t s, uint64_t n)
{
	for (unsigned int i = 0; i < HQSIZE; i++) {
		const struct flight *x = &w->fl[i];

		if (x->busy && x->nsec && s < x->sector + x->nsec &&
		    x->sector < s + n)
			return true;
	}
	return false;
}

/* Pick a request: type and range inside the worker's own sectors. */
static void hw_pick(struct hw *w, struct flight *x)
{
	unsigned int r = (unsigned int)(rng_next(&w->rng) % 100);
	uint64_t n = 1 + rng_next(&w->rng) % HMAXSEC;

	x->type = r < 40   ? VIRTIO_BLK_T_IN
		  : r < 75 ? VIRTIO_BLK_T_OUT
		  : r < 80 ? VIRTIO_BLK_T_FLUSH
		  : r < 88 ? VIRTIO_BLK_T_DISCARD
		  : r < 98 ? VIRTIO_BLK_T_WRITE_ZEROES
			   : VIRTIO_BLK_T_GET_ID;
	x->unmap = rng_next(&w->rng) & 1;
	if (x->type == VIRTIO_BLK_T_DISCARD)
		n = (n + 7) & ~7ull; /* discard_sector_alignment (4 KiB) */
	x->sector = w->lo + rng_next(&w->rng) % (HQSECTORS - n + 1);
	if (x->type == VIRTIO_BLK_T_DISCARD)
		x->sector &= ~7ull;
	x->nsec = n;
	if (x->type == VIRTIO_BLK_T_FLUSH || x->type == VIRTIO_BLK_T_GET_ID)
		x->nsec = 0;
}

/* Split len bytes at gpa into 1..4 pieces at random byte offsets. */
static unsigned int hw_split(struct hw *w, uint64_t gpa, uint32_t len,
			     bool wr_dir, struct drv_buf *b)
{
	unsigned int n = 1 + (unsigned int)(rng_next(&w->rng) % 4), k = 0;
	uint32_t at = 0;

	if (n > len)
		n = 1;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t left = len - at, piece = left;

		if (i + 1 < n)
			piece = 1 + (uint32_t)(rng_next(&w->rng) %
					       (left - (n - 1 - i)));
		b[k++] = (struct drv_buf){ gpa + at, piece, wr_dir };
		at += piece;
	}
	return k;
}

/* Build the data of x in the head's buffer; returns the buffers. */
static unsigned int hw_data(struct hw *w, struct flight *x, uint64_t gpa,
			    struct drv_buf *b)
{
	uint8_t *p = hva(w->f, gpa);
	struct {
		uint64_t sector;
		uint32_t num_sectors, flags;
	} seg = { x->sector, (uint32_t)x->nsec, 0 };

	switch (x->type) {
	case VIRTIO_BLK_T_IN:
		memset(p, 0xcc, x->nsec * SECTOR);
		return hw_split(w, gpa, (uint32_t)x->nsec * SECTOR, true, b);
	case VIRTIO_BLK_T_OUT:
		fill_random(p, x->nsec * SECTOR, &w->rng);
		return hw_split(w, gpa, (uint32_t)x->nsec * SECTOR, false, b);
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		if (x->type == VIRTIO_BLK_T_WRITE_ZEROES && x->unmap)
			seg.flags = VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;
		memcpy(p, &seg, sizeof(seg));
		return hw_split(w, gpa, sizeof(seg), false, b);
	case VIRTIO_BLK_T_GET_ID:
		memset(p, 0xcc, BLK_ID_BYTES);
		return hw_split(w, gpa, BLK_ID_BYTES, true, b);
	default:
		return 0;
	}
}

/* Try to add one request.  false: nothing added (conflict or full). */
static bool hw_add(struct hw *w)
{
	struct drv_buf b[4];
	struct flight x;
	uint16_t head = drv_vq_peek_head(&w->f->q[w->qi].vq);
	uint64_t gpa = w->f->buf[w->qi] + (uint64_t)head * HBUF;
	unsigned int n;
	int h;

	hw_pick(w, &x);
	if (x.nsec && hw_overlaps(w, x.sector, x.nsec))
		return false;
	n = hw_data(w, &x, gpa, b);
	h = blkdrv_add(&w->f->q[w->qi], x.type,
		       x.type == VIRTIO_BLK_T_IN || x.type == VIRTIO_BLK_T_OUT
			       ? x.sector
			       : 0,
		       b, n, rng_next(&w->rng) & 1);
	if (h < 0)
		return false; /* ring full: reap first */
	if (h != head)
		hw_fail(w, "q%u: head %d, expected %u", w->qi, h, head);
	x.busy = true;
	w->fl[head] = x;
	w->inflight++;
	w->issued++;
	return true;
}

static bool sector_ok(const struct model *m, uint64_t s, const uint8_t *got)
{
	const uint8_t *want = m->data + s * SECTOR;

	return !memcmp(got, want, SECTOR) ||
	       (m->maybe_zero[s] && is_zero(got, SECTOR));
}

/* Apply a completed request to the model, or check it against it. */
static void hw_complete(struct hw *w, const struct flight *x, uint16_t head,
			uint32_t len, uint8_t status)
{
	struct model *m = w->m;
	uint8_t *p = hva(w->f, w->f->buf[w->qi] + (uint64_t)head * HBUF);
	uint64_t bytes = x->nsec * SECTOR;

	if (status != VIRTIO_BLK_S_OK) {
		hw_fail(w, "q%u: type %u sector %llu: status %u", w->qi,
			x->type, (unsigned long long)x->sector, status);
		return;
	}
	switch (x->type) {
	case VIRTIO_BLK_T_IN:
		if (len != bytes + 1)
			hw_fail(w, "q%u: read used.len %u", w->qi, len);
		for (uint64_t s = 0; s < x->nsec; s++)
			if (!sector_ok(m, x->sector + s, p + s * SECTOR))
				hw_fail(w, "q%u: read sector %llu differs",
					w->qi,
					(unsigned long long)(x->sector + s));
		break;
	case VIRTIO_BLK_T_OUT:
		memcpy(m->data + x->sector * SECTOR, p, bytes);
		memset(m->maybe_zero + x->sector, 0, x->nsec);
		break;
	case VIRTIO_BLK_T_WRITE_ZEROES:
		memset(m->data + x->sector * SECTOR, 0, bytes);
		memset(m->maybe_zero + x->sector, 0, x->nsec);
		break;
	case VIRTIO_BLK_T_DISCARD:
		memset(m->maybe_zero + x->sector, 1, x->nsec);
		break;
	case VIRTIO_BLK_T_GET_ID:
		if (memcmp(p, SERIAL, sizeof(SERIAL)))
			hw_fail(w, "q%u: GET_ID returned a wrong serial",
				w->qi);
		break;
	default:
		break;
	}
}

static unsigned int hw_reap(struct hw *w)
{
	struct blkdrv_q *q = &w->f->q[w->qi];
	unsigned int n = 0;
	uint16_t head;
	uint32_t len;

	while (drv_vq_get_used(&q->vq, &head, &len)) {
		struct flight *x;

		if (head >= HQSIZE || !w->fl[head].busy) {
			hw_fail(w, "q%u: used head %u not in flight", w->qi,
				head);
			return n;
		}
		x = &w->fl[head];
		hw_complete(w, x, head, len, blkdrv_status(q, head));
		w->count[x->type & 15]++;
		x->busy = false;
		w->inflight--;
		w->done++;
		n++;
	}
	return n;
}

static void *hw_thread(void *arg)
{
	struct hw *w = arg;
	struct blkdrv_q *q = &w->f->q[w->qi];

	drv_vq_disable_cb(&q->vq);
	while (!w->err[0] && (w->issued < HOPS || w->inflight)) {
		for (unsigned int tries = 0; w->issued < HOPS &&
		     w->inflight < w->depth && tries < 4; tries++)
			if (hw_add(w))
				tries = 0;
		blkdrv_kick(q);
		if (hw_reap(w))
			continue;
		if (drv_vq_enable_cb(&q->vq)) {
			drv_vq_disable_cb(&q->vq);
			continue;
		}
		if (!blkdrv_wait_irq(q, 10000))
			hw_fail(w, "q%u: no interrupt for 10 s (%u in flight)",
				w->qi, w->inflight);
		w->irqs++;
		drv_vq_disable_cb(&q->vq);
	}
	return NULL;
}

/* Fill the RAM disk through the device, as the model says. */
static void prefill_ram(struct fx *f, const struct model *m)
{
	for (size_t off = 0; off < HDISK; off += HBUF) {
		memcpy(hva(f, f->buf[0]), m->data + off, HBUF);
		assert_int_equal(wr(f, off / SECTOR, HBUF, 3, false),
				 VIRTIO_BLK_S_OK);
	}
}

static void check_against_model(const struct model *m, const uint8_t *disk,
				const char *what)
{
	for (uint64_t s = 0; s < HSECTORS; s++)
		if (!sector_ok(m, s, disk + s * SECTOR)) {
			print_error("%s: sector %llu differs from the model\n",
				    what, (unsigned long long)s);
			fail();
		}
}

static void run_workers(struct fx *f, struct model *m, uint64_t seed)
{
	static const unsigned int depths[HQ] = { 1, 3, 8, 16 };
	struct hw *w = calloc(HQ, sizeof(*w));
	unsigned int total[16] = { 0 };

	assert_non_null(w);
	for (unsigned int i = 0; i < HQ; i++) {
		w[i] = (struct hw){ .f = f, .m = m, .qi = i,
				    .depth = depths[i],
				    .lo = (uint64_t)i * HQSECTORS,
				    .rng = seed * 1000003u + i };
		assert_int_equal(pthread_create(&w[i].thread, NULL, hw_thread,
						&w[i]),
				 0);
	}
	for (unsigned int i = 0; i < HQ; i++)
		pthread_join(w[i].thread, NULL);
	for (unsigned int i = 0; i < HQ; i++) {
		if (w[i].err[0])
			print_error("%s\n", w[i].err);
		assert_false(w[i].err[0]);
		assert_int_equal(w[i].done, HOPS);
		for (unsigned int t = 0; t < 16; t++)
			total[t] += w[i].count[t];
	}
	/* Every kind of request really ran. */
	assert_true(total[VIRTIO_BLK_T_IN] && total[VIRTIO_BLK_T_OUT] &&
		    total[VIRTIO_BLK_T_FLUSH] && total[VIRTIO_BLK_T_DISCARD] &&
		    total[VIRTIO_BLK_T_WRITE_ZEROES] &&
		    total[VIRTIO_BLK_T_GET_ID]);
	free(w);
}

static void harness(struct fx *f, bool batch, bool event_idx)
{
	struct model m = { malloc(HDISK), calloc(1, HSECTORS) };
	uint8_t *disk = malloc(HDISK);
	uint64_t seed = 42 + batch * 2 + event_idx;
	struct blk_stats st;

	assert_true(m.data && m.maybe_zero && disk);
	assert_int_equal(fx_open(f, cfg->be, false, batch, seed), 0);
	fill_random(m.data, HDISK, &seed); /* what make_file wrote */
	fx_start(f, HQ, event_idx ? 0 : FEAT_EVENT_IDX);
	if (f->be == BE_RAM)
		prefill_ram(f, &m);
	run_workers(f, &m, seed);
	/* The whole disk, through the device. */
	read_disk(f, disk, HDISK);
	check_against_model(&m, disk, "device read-back");
	fx_stop(f);
	blk_dev_stats(f->d, &st);
	assert_int_equal(st.bad_chains, 0);
	assert_int_equal(st.ring_errors, 0);
	assert_int_equal(st.io_errors, 0);
	assert_true(st.requests >= HQ * HOPS);
	if (f->be != BE_RAM) {
		/* And the file itself, once the device let go of it. */
		read_file(f->path, disk, HDISK);
		check_against_model(&m, disk, "file contents");
	}
	free(m.data);
	free(m.maybe_zero);
	free(disk);
}

static void test_harness_default(void **state)
{
	harness(*state, false, true);
}

static void test_harness_batch(void **state)
{
	harness(*state, true, true);
}

static void test_harness_no_event_idx(void **state)
{
	harness(*state, false, false);
}

static void test_harness_batch_no_event_idx(void **state)
{
	harness(*state, true, false);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
	static const struct cfg cfgs[] = {
		{ "harness:file", BE_FILE },
		{ "harness:ram", BE_RAM },
		{ "harness:file,engine=sync", BE_FILE_SYNC },
	};
	const struct CMUnitTest tests[] = {
		T(test_get_id),
		T(test_latency),
		T(test_latency_not_kept),
		T(test_flush),
		T(test_read_write),
		T(test_indirect_only_negotiated),
		T(test_bad_requests),
		T(test_discard_write_zeroes),
		T(test_read_only),
		T(test_ring_size_across_resets),
		T(test_event_idx),
		T(test_no_event_idx),
		T(test_publish_at_once),
		T(test_publish_batch_on),
		T(test_poll),
		T(test_queue_subset),
		T(test_reset_bounded),
		T(test_reset_while_polling),
		T(test_no_io_uring),
		T(test_pause_resume),
		T(test_no_poll),
		T(test_harness_default),
		T(test_harness_batch),
		T(test_harness_no_event_idx),
		T(test_harness_batch_no_event_idx),
	};
	int fails = 0;

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		cfg = &cfgs[i];
		fails += cmocka_run_group_tests_name(cfg->name, tests, NULL,
						     NULL);
	}
	return fails ? 1 : 0;
}
