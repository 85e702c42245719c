/* Storage backends, driven through the ops table with hand-built
 * requests (no virtqueue).  Every test runs once per configuration:
 * the RAM disk, files in /tmp, /var/tmp and /dev/shm, an O_DIRECT file,
 * and (as root, where loop devices work) a block device.
 *
 * Usage: test_backend [FILTER]   (a cmocka test-name filter, e.g. "*eagain*")
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blk/backend.h"
#include "blk/blk.h"
#include "tests/support/syncrw.h"
#include "virtio/gmem.h"

#define DISK_SIZE (4u << 20)
#define BUF_SIZE (1u << 20)
#define MAX_REQS 64

struct cfg {
	const char *name;
	const struct blk_backend_ops *ops;
	const char *dir; /* NULL: the RAM disk */
	bool direct;
	bool bdev;       /* a loop device over a file in dir */
	enum blk_engine engine;
};

static const struct cfg *cfg;

struct t {
	char path[PATH_MAX];    /* what the backend opens */
	char backing[PATH_MAX]; /* the file we made, or "" */
	int loop_fd;
	struct blk_opts o;
	struct blk_backend *b;
	struct blk_backend_info info;
	struct blk_bq *q;
	uint8_t *wbuf, *rbuf;
	/* wbuf and rbuf as the guest's memory, which a backend may register
	 * (the file backend's fixed buffers: one-segment requests in it go
	 * as READ_FIXED and WRITE_FIXED). */
	struct gmem mem;
	uint8_t *mapped; /* MAPPED bytes of its own mapping, in mem too */
	struct iovec iov[2][16];
	/* A loop device's queue/nr_requests a test changed, and its value
	 * before: teardown puts it back (the next test may get the same
	 * loop device). */
	char nr_requests[PATH_MAX];
	unsigned int nr_requests_was;
};

#define MAPPED 8192u

/* ---- helpers --------------------------------------------------------- */

static void *xalloc(size_t n)
{
	void *p = aligned_alloc(4096, n);

	assert_non_null(p);
	memset(p, 0, n);
	return p;
}

static void pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 31 + seed * 7 + (i >> 9)) ^ seed);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* A file of size bytes in dir (made with mode 0600). */
static void make_file(const char *dir, uint64_t size, char *path)
{
	int fd;

	snprintf(path, PATH_MAX, "%s/test_backend.XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

/* A loop device over backing, gone when loop_fd (and the backend's fd)
 * are closed.  -errno if loop devices cannot be used here. */
static int loop_attach(const char *backing, char *dev, int *loop_fd)
{
	struct loop_config lc = { .info.lo_flags = LO_FLAGS_AUTOCLEAR };
	int ctl, n, fd, bfd, ret = -ENODEV;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	bfd = open(backing, O_RDWR | O_CLOEXEC);
	for (int tries = 0; bfd >= 0 && tries < 20 && ret; tries++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0)
			break;
		snprintf(dev, PATH_MAX, "/dev/loop%d", n);
		fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			break;
		lc.fd = (uint32_t)bfd;
		ret = ioctl(fd, LOOP_CONFIGURE, &lc) ? -errno : 0;
		if (ret)
			close(fd);
		else
			*loop_fd = fd;
	}
	if (bfd >= 0)
		close(bfd);
	close(ctl);
	return ret;
}

static void disk_open(struct t *t, bool ro)
{
	char msg[256] = "";
	int ret;

	t->o = (struct blk_opts){
		.path = cfg->dir ? t->path : NULL,
		.ram_size = DISK_SIZE,
		.ro = ro,
		.direct = cfg->direct,
		.queues = 1,
		.engine = cfg->engine,
	};
	ret = cfg->ops->open(&t->o, &t->b, &t->info, msg, sizeof(msg));
	if (ret)
		fail_msg("open %s: %d %s", t->path, ret, msg);
	assert_int_equal(t->info.size, DISK_SIZE);
	assert_int_equal(t->info.ro, ro);
}

static void queue_open(struct t *t, unsigned int depth, bool write_through)
{
	assert_int_equal(cfg->ops->queue_open(t->b, depth, write_through,
					      &t->mem, &t->q), 0);
}

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));
	int ret;

	assert_non_null(t);
	t->loop_fd = -1;
	t->wbuf = xalloc(BUF_SIZE);
	t->rbuf = xalloc(BUF_SIZE);
	assert_int_equal(gmem_add(&t->mem, 0, BUF_SIZE, t->wbuf), 0);
	assert_int_equal(gmem_add(&t->mem, 1ull << 32, BUF_SIZE, t->rbuf), 0);
	t->mapped = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(t->mapped != MAP_FAILED);
	assert_int_equal(gmem_add(&t->mem, 2ull << 32, MAPPED, t->mapped), 0);
	if (cfg->dir) {
		make_file(cfg->dir, DISK_SIZE, t->backing);
		snprintf(t->path, sizeof(t->path), "%s", t->backing);
	}
	if (cfg->bdev) {
		ret = loop_attach(t->backing, t->path, &t->loop_fd);
		assert_int_equal(ret, 0);
	}
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	if (t->q)
		cfg->ops->queue_close(t->q);
	if (t->b)
		cfg->ops->close(t->b);
	if (t->nr_requests[0]) {
		FILE *f = fopen(t->nr_requests, "w");

		assert_non_null(f);
		fprintf(f, "%u\n", t->nr_requests_was);
		assert_int_equal(fclose(f), 0);
	}
	if (t->loop_fd >= 0)
		close(t->loop_fd);
	if (t->backing[0])
		unlink(t->backing);
	free(t->wbuf);
	free(t->rbuf);
	munmap(t->mapped, MAPPED);
	free(t);
	return 0;
}

/* Wait for the backend's completion fd (no-op for the RAM disk). */
static void wait_cq(struct t *t)
{
	int fd = cfg->ops->wait_fd(t->q);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;

	if (fd < 0)
		return;
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
}

/* Submit all of rs (reaping when the backend is full), wait for all.
 * Checks every request finishes exactly once: in submit() or by a
 * reap(), never both. */
static void run(struct t *t, struct blk_req **rs, unsigned int n)
{
	struct blk_req *done[MAX_REQS];
	bool seen[MAX_REQS] = { false };
	unsigned int sub = 0, got = 0;

	assert_true(n <= MAX_REQS);
	for (unsigned int i = 0; i < n; i++)
		rs[i]->head = (uint16_t)i;
	while (got < n) {
		while (sub < n) {
			int ret = cfg->ops->submit(t->q, rs[sub]);

			if (ret == -EAGAIN)
				break;
			if (ret == BLK_SUBMIT_DONE) {
				seen[sub] = true;
				got++;
			} else {
				assert_int_equal(ret, 0);
			}
			sub++;
		}
		cfg->ops->kick(t->q);
		unsigned int k = cfg->ops->reap(t->q, done, MAX_REQS);

		for (unsigned int i = 0; i < k; i++) {
			assert_true(done[i]->head < n);
			assert_false(seen[done[i]->head]);
			seen[done[i]->head] = true;
		}
		got += k;
		if (!k && got < n) {
			/* Nothing finished: something must be in flight. */
			assert_true(cfg->ops->inflight(t->q));
			wait_cq(t);
		}
	}
	assert_int_equal(cfg->ops->inflight(t->q), 0);
	assert_int_equal(cfg->ops->reap(t->q, done, MAX_REQS), 0);
}

/* Split len bytes of buf into iovecs of the given sizes (the last one
 * takes the rest). */
static unsigned int split(struct iovec *iov, uint8_t *buf, size_t len,
			  const size_t *sizes, unsigned int n)
{
	unsigned int i = 0;

	while (len) {
		size_t s = i + 1 < n && sizes[i] < len ? sizes[i] : len;

		iov[i].iov_base = buf;
		iov[i].iov_len = s;
		buf += s;
		len -= s;
		i++;
	}
	return i;
}

static void req_set(struct blk_req *r, uint32_t type, uint64_t sector,
		    uint64_t len, struct iovec *iov, unsigned int niov)
{
	/* The backend's scratch holds junk, as a request's does when the
	 * parser leaves it (blk/req.h): the backend must set it. */
	*r = (struct blk_req){ .type = type, .sector = sector, .len = len,
			       .iov = iov, .niov = niov, .result = 0xff,
			       .transferred = 0x5a5a5a5a5a5a, .err = 0x5a5a };
}

/* One read or write through nsz iovecs of the given sizes. */
static uint8_t rw(struct t *t, uint32_t type, uint64_t sector, uint8_t *buf,
		  size_t len, const size_t *sizes, unsigned int nsz)
{
	struct blk_req r, *rp = &r;
	unsigned int n = split(t->iov[0], buf, len, sizes, nsz);

	req_set(&r, type, sector, len, t->iov[0], n);
	run(t, &rp, 1);
	return r.result;
}

static uint8_t wr(struct t *t, uint64_t sector, uint8_t *buf, size_t len)
{
	return rw(t, VIRTIO_BLK_T_OUT, sector, buf, len, NULL, 1);
}

static uint8_t rd(struct t *t, uint64_t sector, uint8_t *buf, size_t len)
{
	return rw(t, VIRTIO_BLK_T_IN, sector, buf, len, NULL, 1);
}

/* DISCARD / WRITE_ZEROES of [sector, +len) */
static uint8_t zap(struct t *t, uint32_t type, uint64_t sector, uint64_t len,
		   bool unmap)
{
	struct blk_req r, *rp = &r;

	req_set(&r, type, sector, len, NULL, 0);
	r.unmap = unmap;
	run(t, &rp, 1);
	return r.result;
}

static void open_rw(void **state, unsigned int depth, bool write_through)
{
	struct t *t = *state;

	disk_open(t, false);
	queue_open(t, depth, write_through);
}

/* The rule be_file.c follows, checked here independently: reads and
 * writes of a file on tmpfs may be served inside submit()
 * (tests/support/syncrw.h); everything else goes through io_uring.  The
 * RAM disk and engine=sync serve everything inside submit(). */
static bool expect_sync(const struct t *t)
{
	if (!cfg->dir || cfg->engine == BLK_ENGINE_SYNC)
		return true;
	return !cfg->bdev && file_rw_in_submit(t->path);
}

/* Submit r: true if submit() served it (BLK_SUBMIT_DONE), in which case
 * nothing is in flight and reap() never hands it back; false if it was
 * queued, in which case it stays queued until kick() and a reap()
 * returns it.  Either way r is finished on return. */
static bool done_in_submit(struct t *t, struct blk_req *r)
{
	struct blk_req *done[1];
	unsigned int k;
	int ret = cfg->ops->submit(t->q, r);

	if (ret == BLK_SUBMIT_DONE) {
		assert_int_equal(cfg->ops->inflight(t->q), 0);
		cfg->ops->kick(t->q);
		assert_int_equal(cfg->ops->reap(t->q, done, 1), 0);
		return true;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(cfg->ops->inflight(t->q), 1);
	assert_int_equal(cfg->ops->reap(t->q, done, 1), 0); /* not kicked */
	cfg->ops->kick(t->q);
	while (!(k = cfg->ops->reap(t->q, done, 1)))
		wait_cq(t);
	assert_ptr_equal(done[0], r);
	assert_int_equal(cfg->ops->inflight(t->q), 0);
	return false;
}

/* A 4 KiB read at sector 0 takes the path expect_sync() says. */
static void check_path(struct t *t)
{
	struct iovec iov = { t->rbuf, 4096 };
	struct blk_req r;

	req_set(&r, VIRTIO_BLK_T_IN, 0, 4096, &iov, 1);
	assert_int_equal(done_in_submit(t, &r), expect_sync(t));
	assert_int_equal(r.result, VIRTIO_BLK_S_OK);
}

/* ---- tests: data --------------------------------------------------- */

static void test_write_read(void **state)
{
	struct t *t = *state;

	open_rw(state, 8, false);
	pattern(t->wbuf, 8192, 1);
	assert_int_equal(wr(t, 24, t->wbuf, 8192), VIRTIO_BLK_S_OK);
	assert_int_equal(rd(t, 24, t->rbuf, 8192), VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 8192);
	/* The last sectors of the disk. */
	pattern(t->wbuf, 4096, 2);
	assert_int_equal(wr(t, DISK_SIZE / 512 - 8, t->wbuf, 4096),
			 VIRTIO_BLK_S_OK);
	assert_int_equal(rd(t, DISK_SIZE / 512 - 8, t->rbuf, 4096),
			 VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 4096);
	/* Never written: zeroes. */
	assert_int_equal(rd(t, 1024, t->rbuf, 4096), VIRTIO_BLK_S_OK);
	assert_true(all_zero(t->rbuf, 4096));
}

static void test_multi_iov(void **state)
{
	/* O_DIRECT needs block-aligned segments; buffered I/O takes any. */
	static const size_t odd[] = { 100, 1000, 3000, 7, 20000 };
	static const size_t odd2[] = { 4000, 1, 511, 9000 };
	static const size_t al[] = { 512, 1536, 4096, 2048, 8192 };
	static const size_t al2[] = { 4096, 512, 10240, 1024 };
	struct t *t = *state;
	const size_t *w = cfg->direct ? al : odd, *r = cfg->direct ? al2 : odd2;
	size_t len = 64 * 1024;

	open_rw(state, 8, false);
	pattern(t->wbuf, len, 3);
	assert_int_equal(rw(t, VIRTIO_BLK_T_OUT, 8, t->wbuf, len, w, 5),
			 VIRTIO_BLK_S_OK);
	assert_int_equal(rw(t, VIRTIO_BLK_T_IN, 8, t->rbuf, len, r, 4),
			 VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, len);
	/* 16 iovecs of one sector each, read back as one. */
	pattern(t->wbuf, 8192, 4);
	{
		static const size_t s512[16] = {
			512, 512, 512, 512, 512, 512, 512, 512,
			512, 512, 512, 512, 512, 512, 512, 512,
		};

		assert_int_equal(rw(t, VIRTIO_BLK_T_OUT, 4000, t->wbuf, 8192,
				    s512, 16),
				 VIRTIO_BLK_S_OK);
	}
	assert_int_equal(rd(t, 4000, t->rbuf, 8192), VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 8192);
}

/* Segments apart in memory, not one run cut up: each iovec's own
 * address is used (a copy that ran on from the first segment, as one
 * over the contiguous buffers above would, shows here). */
static void test_scattered_iov(void **state)
{
	enum { SEG = 1024, GAP = 1024, N = 4 };
	struct t *t = *state;
	struct iovec iov[N];
	struct blk_req r, *rp = &r;

	open_rw(state, 8, false);
	pattern(t->wbuf, N * (SEG + GAP), 5);
	for (int i = 0; i < N; i++)
		iov[i] = (struct iovec){ t->wbuf + i * (SEG + GAP), SEG };
	req_set(&r, VIRTIO_BLK_T_OUT, 16, N * SEG, iov, N);
	run(t, &rp, 1);
	assert_int_equal(r.result, VIRTIO_BLK_S_OK);
	assert_int_equal(rd(t, 16, t->rbuf, N * SEG), VIRTIO_BLK_S_OK);
	for (int i = 0; i < N; i++)
		assert_memory_equal(t->rbuf + i * SEG, iov[i].iov_base, SEG);
	/* Read back scattered: the gaps keep what they held. */
	memset(t->rbuf, 0xa5, N * (SEG + GAP));
	for (int i = 0; i < N; i++)
		iov[i] = (struct iovec){ t->rbuf + i * (SEG + GAP), SEG };
	req_set(&r, VIRTIO_BLK_T_IN, 16, N * SEG, iov, N);
	run(t, &rp, 1);
	assert_int_equal(r.result, VIRTIO_BLK_S_OK);
	for (int i = 0; i < N; i++) {
		uint8_t *g = t->rbuf + i * (SEG + GAP) + SEG;

		assert_memory_equal(iov[i].iov_base,
				    t->wbuf + i * (SEG + GAP), SEG);
		for (int k = 0; k < GAP; k++)
			assert_int_equal(g[k], 0xa5);
	}
}

/* Flush requests the block layer completed for the loop device under
 * test (/sys/block/loopN/stat, field 16: Documentation/block/stat.rst);
 * -1 when the test's disk is not a loop device. */
static long long loop_flushes(const struct t *t)
{
	char path[PATH_MAX];
	long long f[17];
	FILE *fp;
	int n;

	if (!cfg->bdev)
		return -1;
	snprintf(path, sizeof(path), "/sys/block/%s/stat",
		 strrchr(t->path, '/') + 1);
	fp = fopen(path, "r");
	assert_non_null(fp);
	n = fscanf(fp, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
		   "%lld %lld %lld %lld %lld %lld %lld", &f[0], &f[1], &f[2],
		   &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
		   &f[11], &f[12], &f[13], &f[14], &f[15], &f[16]);
	fclose(fp);
	assert_int_equal(n, 17);
	return f[15];
}

static void test_flush(void **state)
{
	struct t *t = *state;
	long long f0, f1;

	open_rw(state, 8, false);
	pattern(t->wbuf, 4096, 5);
	f0 = loop_flushes(t);
	assert_int_equal(wr(t, 0, t->wbuf, 4096), VIRTIO_BLK_S_OK);
	/* Not write-through: a plain write asks the device for no flush. */
	assert_int_equal(loop_flushes(t), f0);
	assert_int_equal(zap(t, VIRTIO_BLK_T_FLUSH, 0, 0, false),
			 VIRTIO_BLK_S_OK);
	/* A FLUSH reaches the kernel (a FLUSH made a no-op fails here). */
	f1 = loop_flushes(t);
	if (cfg->bdev)
		assert_true(f1 > f0);
	assert_int_equal(rd(t, 0, t->rbuf, 4096), VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 4096);
}

static void test_write_through(void **state)
{
	struct t *t = *state;

	long long f0;

	/* Writes carry RWF_DSYNC: durable on completion, no FLUSH. */
	open_rw(state, 8, true);
	check_path(t);
	pattern(t->wbuf, 65536, 6);
	f0 = loop_flushes(t);
	assert_int_equal(wr(t, 128, t->wbuf, 65536), VIRTIO_BLK_S_OK);
	/* The write itself made the loop device flush (dropping RWF_DSYNC
	 * fails here). */
	if (cfg->bdev)
		assert_true(loop_flushes(t) > f0);
	assert_int_equal(rd(t, 128, t->rbuf, 65536), VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 65536);
}

/* Fill [0, 2 MiB) with a pattern, zap a range, check it reads as zero
 * and its neighbours are intact. */
static void zap_check(struct t *t, uint32_t type, uint64_t sector,
		      uint64_t len, bool unmap, bool supported)
{
	const size_t all = 2u << 20;
	uint8_t *want = xalloc(all);

	for (size_t off = 0; off < all; off += BUF_SIZE) {
		pattern(t->wbuf, BUF_SIZE, 7 + (unsigned int)(off >> 20));
		memcpy(want + off, t->wbuf, BUF_SIZE);
		assert_int_equal(wr(t, off / 512, t->wbuf, BUF_SIZE),
				 VIRTIO_BLK_S_OK);
	}
	if (!supported) {
		assert_int_equal(zap(t, type, sector, len, unmap),
				 VIRTIO_BLK_S_UNSUPP);
		free(want);
		return;
	}
	assert_int_equal(zap(t, type, sector, len, unmap), VIRTIO_BLK_S_OK);
	memset(want + sector * 512, 0, len);
	for (size_t off = 0; off < all; off += BUF_SIZE) {
		assert_int_equal(rd(t, off / 512, t->rbuf, BUF_SIZE),
				 VIRTIO_BLK_S_OK);
		assert_memory_equal(want + off, t->rbuf, BUF_SIZE);
	}
	free(want);
}

static void test_discard(void **state)
{
	struct t *t = *state;

	open_rw(state, 8, false);
	if (cfg->dir)
		print_message("[ info ] %s: discard %s, write-zeroes %s\n",
			      cfg->name, t->info.discard ? "on" : "off",
			      t->info.write_zeroes ? "on" : "off");
	/* Small, then large and unaligned (the RAM disk's madvise path). */
	zap_check(t, VIRTIO_BLK_T_DISCARD, 9, 4096, false, t->info.discard);
	zap_check(t, VIRTIO_BLK_T_DISCARD, 3, 600 * 1024 + 512, false,
		  t->info.discard);
}

static void test_write_zeroes(void **state)
{
	struct t *t = *state;
	bool wz;

	open_rw(state, 8, false);
	wz = t->info.write_zeroes;
	zap_check(t, VIRTIO_BLK_T_WRITE_ZEROES, 17, 8192, false, wz);
	zap_check(t, VIRTIO_BLK_T_WRITE_ZEROES, 17, 8192, true, wz);
	zap_check(t, VIRTIO_BLK_T_WRITE_ZEROES, 1, 1024 * 1024 + 3072, true,
		  wz);
	zap_check(t, VIRTIO_BLK_T_WRITE_ZEROES, 1, 1024 * 1024 + 3072, false,
		  wz);
}

/* Many requests in flight at once, submitted in one batch (one kick). */
static void test_many_inflight(void **state)
{
	struct t *t = *state;
	struct blk_req reqs[32], *rs[32];
	const size_t sz = 4096;

	open_rw(state, 32, false);
	pattern(t->wbuf, 32 * sz, 8);
	for (unsigned int i = 0; i < 32; i++) {
		t->iov[0][i % 16] = (struct iovec){ t->wbuf + i * sz, sz };
		req_set(&reqs[i], VIRTIO_BLK_T_OUT, (i * 37 % 64) * 8, sz,
			&t->iov[0][i % 16], 1);
		rs[i] = &reqs[i];
		if (i % 16 == 15) {
			run(t, rs + i - 15, 16);
			for (unsigned int j = i - 15; j <= i; j++)
				assert_int_equal(reqs[j].result,
						 VIRTIO_BLK_S_OK);
		}
	}
	struct iovec riov[32];

	for (unsigned int i = 0; i < 32; i++) {
		riov[i] = (struct iovec){ t->rbuf + i * sz, sz };
		req_set(&reqs[i], VIRTIO_BLK_T_IN, (i * 37 % 64) * 8, sz,
			&riov[i], 1);
	}
	run(t, rs, 32);
	for (unsigned int i = 0; i < 32; i++)
		assert_int_equal(reqs[i].result, VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 32 * sz);
}

/* depth requests queued, then -EAGAIN until a reap frees a slot; a
 * backend that serves them inside submit() never fills. */
static void test_eagain(void **state)
{
	struct t *t = *state;
	struct blk_req reqs[5], *done[8];
	struct iovec iov[5];
	unsigned int got = 0;
	bool seen[5] = { false };

	open_rw(state, 4, false);
	for (unsigned int i = 0; i < 5; i++) {
		iov[i] = (struct iovec){ t->rbuf + i * 4096, 4096 };
		req_set(&reqs[i], VIRTIO_BLK_T_IN, i * 8, 4096, &iov[i], 1);
	}
	if (expect_sync(t)) {
		for (unsigned int i = 0; i < 5; i++) {
			assert_int_equal(cfg->ops->submit(t->q, &reqs[i]),
					 BLK_SUBMIT_DONE);
			assert_int_equal(reqs[i].result, VIRTIO_BLK_S_OK);
		}
		assert_int_equal(cfg->ops->inflight(t->q), 0);
		assert_int_equal(cfg->ops->reap(t->q, done, 8), 0);
		return;
	}
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(cfg->ops->submit(t->q, &reqs[i]), 0);
	assert_int_equal(cfg->ops->inflight(t->q), 4);
	assert_int_equal(cfg->ops->submit(t->q, &reqs[4]), -EAGAIN);
	cfg->ops->kick(t->q);
	/* Still full until reaped, even once the I/O has finished. */
	assert_int_equal(cfg->ops->submit(t->q, &reqs[4]), -EAGAIN);
	while (!got) {
		got = cfg->ops->reap(t->q, done, 1);
		if (!got)
			wait_cq(t);
	}
	assert_int_equal(got, 1);
	assert_int_equal(cfg->ops->inflight(t->q), 3);
	assert_int_equal(cfg->ops->submit(t->q, &reqs[4]), 0);
	cfg->ops->kick(t->q);
	/* One at a time: each comes back once. */
	seen[done[0] - reqs] = true;
	while (cfg->ops->inflight(t->q)) {
		unsigned int i;

		if (!cfg->ops->reap(t->q, done, 1)) {
			wait_cq(t);
			continue;
		}
		i = (unsigned int)(done[0] - reqs);
		assert_true(i < 5 && !seen[i]);
		seen[i] = true;
	}
	for (unsigned int i = 0; i < 5; i++) {
		assert_true(seen[i]);
		assert_int_equal(reqs[i].result, VIRTIO_BLK_S_OK);
	}
}

/* A block device's queue takes no more in flight than the device's
 * nr_requests, so that io_uring never meets a device out of tags (and
 * hands the request to an io-wq thread): past it, -EAGAIN, and the
 * request waits in the guest's ring.  The loop device is set to 8. */
static void test_depth_follows_the_device(void **state)
{
	struct t *t = *state;
	struct blk_req reqs[9], *done[9];
	struct iovec iov[9];
	unsigned int got = 0;
	FILE *f;

	if (!cfg->bdev || cfg->engine == BLK_ENGINE_SYNC)
		skip();
	snprintf(t->nr_requests, sizeof(t->nr_requests),
		 "/sys/block/%s/queue/nr_requests", strrchr(t->path, '/') + 1);
	f = fopen(t->nr_requests, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%u", &t->nr_requests_was), 1);
	fclose(f);
	f = fopen(t->nr_requests, "w");
	assert_non_null(f);
	assert_true(fprintf(f, "8\n") > 0);
	assert_int_equal(fclose(f), 0);
	open_rw(state, 32, false);
	for (unsigned int i = 0; i < 9; i++) {
		iov[i] = (struct iovec){ t->rbuf + i * 4096, 4096 };
		req_set(&reqs[i], VIRTIO_BLK_T_IN, i * 8, 4096, &iov[i], 1);
	}
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(cfg->ops->submit(t->q, &reqs[i]), 0);
	assert_int_equal(cfg->ops->submit(t->q, &reqs[8]), -EAGAIN);
	cfg->ops->kick(t->q);
	while (got < 8) {
		unsigned int k = cfg->ops->reap(t->q, done + got, 9 - got);

		if (!k)
			wait_cq(t);
		got += k;
	}
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(reqs[i].result, VIRTIO_BLK_S_OK);
	assert_int_equal(cfg->ops->submit(t->q, &reqs[8]), 0);
	cfg->ops->kick(t->q);
	while (!cfg->ops->reap(t->q, done, 1))
		wait_cq(t);
	assert_int_equal(reqs[8].result, VIRTIO_BLK_S_OK);
}

/* queue_close() with requests in flight waits for them. */
static void test_close_inflight(void **state)
{
	struct t *t = *state;
	struct blk_req reqs[16];
	struct iovec iov[16];
	bool sync;

	open_rw(state, 16, false);
	sync = expect_sync(t);
	pattern(t->wbuf, 16 * 4096, 21);
	for (unsigned int i = 0; i < 16; i++) {
		iov[i] = (struct iovec){ t->wbuf + i * 4096, 4096 };
		req_set(&reqs[i], VIRTIO_BLK_T_OUT, i * 8, 4096, &iov[i], 1);
		assert_int_equal(cfg->ops->submit(t->q, &reqs[i]),
				 sync ? BLK_SUBMIT_DONE : 0);
		if (i == 7)
			cfg->ops->kick(t->q);
	}
	/* Half kicked, half only prepped: close waits for all of them, so
	 * every write is on the disk once it returns. */
	cfg->ops->queue_close(t->q);
	t->q = NULL;
	queue_open(t, 16, false);
	assert_int_equal(rd(t, 0, t->rbuf, 16 * 4096), VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 16 * 4096);
}

static void test_wait_fd(void **state)
{
	struct t *t = *state;
	struct blk_req *done[1];
	struct pollfd p;
	int fd;

	open_rw(state, 8, false);
	fd = cfg->ops->wait_fd(t->q);
	if (!cfg->dir || cfg->engine == BLK_ENGINE_SYNC) {
		assert_int_equal(fd, -1); /* completions are synchronous */
		return;
	}
	assert_true(fd >= 0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(zap(t, VIRTIO_BLK_T_FLUSH, 0, 0, false),
			 VIRTIO_BLK_S_OK);
	assert_int_equal(cfg->ops->reap(t->q, done, 1), 0);
}

/* ---- tests: which path reads and writes take ------------------------- */

static void test_rw_path(void **state)
{
	struct t *t = *state;
	struct blk_req r[3], *rs[3] = { &r[0], &r[1], &r[2] };
	struct iovec wiov = { t->wbuf, 8192 }, riov = { t->rbuf, 8192 };
	bool sync;

	open_rw(state, 8, false);
	sync = expect_sync(t);
	if (cfg->dir)
		print_message("[ info ] %s: reads and writes %s\n", cfg->name,
			      sync ? "inside submit()" : "through io_uring");
	pattern(t->wbuf, 8192, 12);
	req_set(&r[0], VIRTIO_BLK_T_OUT, 40, 8192, &wiov, 1);
	assert_int_equal(done_in_submit(t, &r[0]), sync);
	assert_int_equal(r[0].result, VIRTIO_BLK_S_OK);
	req_set(&r[0], VIRTIO_BLK_T_IN, 40, 8192, &riov, 1);
	assert_int_equal(done_in_submit(t, &r[0]), sync);
	assert_int_equal(r[0].result, VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 8192);
	/* FLUSH goes through io_uring on every file (engine=sync: none). */
	req_set(&r[0], VIRTIO_BLK_T_FLUSH, 0, 0, NULL, 0);
	assert_int_equal(done_in_submit(t, &r[0]),
			 !cfg->dir || cfg->engine == BLK_ENGINE_SYNC);
	assert_int_equal(r[0].result, VIRTIO_BLK_S_OK);
	/* Both kinds in flight at once, each comes back exactly once. */
	memset(t->rbuf, 0, 8192);
	wiov = (struct iovec){ t->wbuf, 4096 };
	riov = (struct iovec){ t->rbuf, 8192 };
	req_set(&r[0], VIRTIO_BLK_T_OUT, 40, 4096, &wiov, 1);
	req_set(&r[1], VIRTIO_BLK_T_FLUSH, 0, 0, NULL, 0);
	req_set(&r[2], VIRTIO_BLK_T_IN, 40, 8192, &riov, 1);
	run(t, rs, 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(r[i].result, VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 8192);
}

/* A one-segment read into guest memory that the queue registered goes as
 * READ_FIXED: into the pages as they were registered (pinned).  Seen by
 * mapping a fresh page over the buffer after queue_open(): a fixed read
 * lands in the old page and the new one stays zero; a plain read (the
 * registration dropped, or never used) fills the new one. */
static void test_fixed_buffers(void **state)
{
	struct t *t = *state;
	struct blk_req r;
	struct iovec wiov = { t->wbuf, 4096 }, miov = { t->mapped, 4096 };
	static const uint8_t zero[4096];

	open_rw(state, 8, false);
	if (expect_sync(t))
		skip(); /* no io_uring: nothing to register */
	pattern(t->wbuf, 4096, 31);
	req_set(&r, VIRTIO_BLK_T_OUT, 80, 4096, &wiov, 1);
	assert_false(done_in_submit(t, &r));
	assert_int_equal(r.result, VIRTIO_BLK_S_OK);
	assert_true(mmap(t->mapped, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == t->mapped);
	req_set(&r, VIRTIO_BLK_T_IN, 80, 4096, &miov, 1);
	assert_false(done_in_submit(t, &r));
	assert_int_equal(r.result, VIRTIO_BLK_S_OK);
	if (memcmp(t->mapped, zero, sizeof(zero)))
		fail_msg("%s: the read reached the page mapped after "
			 "queue_open(): not a fixed buffer", cfg->name);
}

/* ---- tests: several queues on one disk ------------------------------ */

struct mq_arg {
	struct t *t;
	unsigned int idx;
	int err;
	bool ok;
};

static void *mq_thread(void *p)
{
	struct mq_arg *a = p;
	struct blk_bq *q;
	struct blk_req r, *done[1];
	int ret;
	uint8_t *buf = aligned_alloc(4096, 65536);
	uint8_t *rbuf = aligned_alloc(4096, 65536);
	struct iovec iov;

	/* Buffers outside any registered memory: plain reads and writes. */
	a->err = cfg->ops->queue_open(a->t->b, 8, false, NULL, &q);
	if (a->err || !buf || !rbuf)
		goto out;
	a->ok = true;
	for (unsigned int i = 0; i < 32 && a->ok; i++) {
		uint32_t type = i % 2 ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT;
		uint64_t sector = (a->idx * 16 + i / 2) * 128;

		if (type == VIRTIO_BLK_T_OUT)
			pattern(buf, 65536, a->idx * 100 + i);
		iov = (struct iovec){ type == VIRTIO_BLK_T_OUT ? buf : rbuf,
				      65536 };
		req_set(&r, type, sector, 65536, &iov, 1);
		ret = cfg->ops->submit(q, &r);
		a->ok = ret == 0 || ret == BLK_SUBMIT_DONE;
		cfg->ops->kick(q);
		while (a->ok && !ret && !cfg->ops->reap(q, done, 1)) {
			struct pollfd pf = { cfg->ops->wait_fd(q), POLLIN, 0 };

			a->ok = pf.fd >= 0 && poll(&pf, 1, 10000) == 1;
		}
		a->ok = a->ok && r.result == VIRTIO_BLK_S_OK &&
			(type == VIRTIO_BLK_T_OUT || !memcmp(buf, rbuf, 65536));
	}
	cfg->ops->queue_close(q);
out:
	free(buf);
	free(rbuf);
	return NULL;
}

static void test_multiqueue(void **state)
{
	struct t *t = *state;
	struct mq_arg a[4];
	pthread_t th[4];

	disk_open(t, false);
	for (unsigned int i = 0; i < 4; i++) {
		a[i] = (struct mq_arg){ .t = t, .idx = i };
		assert_int_equal(pthread_create(&th[i], NULL, mq_thread, &a[i]),
				 0);
	}
	for (unsigned int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].err, 0);
		assert_true(a[i].ok);
	}
}

/* ---- tests: host errors ----------------------------------------------- */

/* A file shrunk underneath us: reads past its new end are IOERR (a short
 * read is completed, then the 0-byte read ends it), never a loop. */
static void test_truncated(void **state)
{
	static const size_t sizes[] = { 1024, 512, 2560 };
	struct t *t = *state;

	if (!cfg->dir)
		skip();
	open_rw(state, 8, false);
	check_path(t);
	pattern(t->wbuf, 8192, 9);
	assert_int_equal(wr(t, 120, t->wbuf, 8192), VIRTIO_BLK_S_OK);
	assert_int_equal(truncate(t->backing, 62 * 1024), 0);
	if (cfg->bdev) {
		/* The loop device keeps its size; what it does past the end
		 * of its file is its business (zeroes, or EIO with O_DIRECT):
		 * either way the request completes. */
		uint8_t res = rd(t, 120, t->rbuf, 4096);

		assert_true(res == VIRTIO_BLK_S_OK ||
			    res == VIRTIO_BLK_S_IOERR);
		return;
	}
	/* [60K, 64K): 2K left in the file, across three iovecs. */
	assert_int_equal(rw(t, VIRTIO_BLK_T_IN, 120, t->rbuf, 4096, sizes, 3),
			 VIRTIO_BLK_S_IOERR);
	assert_memory_equal(t->wbuf, t->rbuf, 2048);
	assert_int_equal(rd(t, 256, t->rbuf, 4096), VIRTIO_BLK_S_IOERR);
	/* Writes still work (and grow the file back). */
	assert_int_equal(wr(t, 256, t->wbuf, 4096), VIRTIO_BLK_S_OK);
}

/* Writes the host refuses come back IOERR; the queue goes on.  The
 * error comes from RLIMIT_FSIZE (EFBIG), which needs no mount. */
static void test_write_error(void **state)
{
	struct t *t = *state;
	struct rlimit old, lim;
	uint8_t r1, r2, r3;

	if (!cfg->dir || cfg->bdev)
		skip();
	open_rw(state, 8, false);
	check_path(t);
	pattern(t->wbuf, 8192, 10);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 64 * 1024;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r1 = wr(t, 256, t->wbuf, 4096);       /* past the limit */
	r2 = wr(t, 120, t->wbuf, 8192);       /* straddles: short, then EFBIG */
	r3 = wr(t, 8, t->wbuf, 4096);         /* below: fine */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(r1, VIRTIO_BLK_S_IOERR);
	assert_int_equal(r2, VIRTIO_BLK_S_IOERR);
	assert_int_equal(r3, VIRTIO_BLK_S_OK);
	/* The part below the limit did land. */
	assert_int_equal(rd(t, 120, t->rbuf, 4096), VIRTIO_BLK_S_OK);
	assert_memory_equal(t->wbuf, t->rbuf, 4096);
}

/* A transfer that stops part-way (here: the second iovec is on a page
 * the kernel cannot touch, so it copies the first and returns short)
 * goes on from where it stopped, and fails there: IOERR, with the first
 * part done.  (A backend that restarted from the first iovec would
 * report OK.)  Not on the RAM disk: its memcpy would fault. */
static void test_short_fault(void **state)
{
	const size_t pg = 4096;
	struct t *t = *state;
	uint8_t *m;
	struct iovec iov[2];
	struct blk_req r, *rp = &r;

	if (!cfg->dir)
		skip();
	open_rw(state, 8, false);
	check_path(t);
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, pg, PROT_NONE), 0);
	/* Write: the first page lands, the second faults. */
	pattern(m, pg, 13);
	pattern(t->wbuf, 2 * pg, 14);
	assert_int_equal(wr(t, 64, t->wbuf, 2 * pg), VIRTIO_BLK_S_OK);
	iov[0] = (struct iovec){ m, pg };
	iov[1] = (struct iovec){ m + pg, pg };
	req_set(&r, VIRTIO_BLK_T_OUT, 64, 2 * pg, iov, 2);
	run(t, &rp, 1);
	assert_int_equal(r.result, VIRTIO_BLK_S_IOERR);
	assert_int_equal(rd(t, 64, t->rbuf, 2 * pg), VIRTIO_BLK_S_OK);
	/* O_DIRECT may refuse the whole transfer up front instead. */
	if (!cfg->direct)
		assert_memory_equal(t->rbuf, m, pg);
	assert_memory_equal(t->rbuf + pg, t->wbuf + pg, pg);
	/* Read: the first page is filled, the second faults. */
	memset(m, 0, pg);
	iov[0] = (struct iovec){ m, pg };
	iov[1] = (struct iovec){ m + pg, pg };
	req_set(&r, VIRTIO_BLK_T_IN, 64, 2 * pg, iov, 2);
	run(t, &rp, 1);
	assert_int_equal(r.result, VIRTIO_BLK_S_IOERR);
	if (!cfg->direct)
		assert_memory_equal(m, t->rbuf, pg);
	munmap(m, 2 * pg);
}

/* ---- tests: open ------------------------------------------------------ */

static void expect_refused(const struct blk_opts *o, int err, const char *in)
{
	struct blk_backend *b = NULL;
	struct blk_backend_info info;
	char msg[256] = "";
	int ret;

	ret = cfg->ops->open(o, &b, &info, msg, sizeof(msg));
	if (err)
		assert_int_equal(ret, err);
	else
		assert_true(ret < 0);
	assert_null(b);
	assert_true(msg[0] && !strchr(msg, '\n'));
	if (in && !strstr(msg, in))
		fail_msg("message \"%s\" lacks \"%s\"", msg, in);
}

static void test_open_errors_ram(void)
{
	struct blk_opts o = { .ram_size = 0 };

	expect_refused(&o, -EINVAL, "size 0");
	o.ram_size = 1000;
	expect_refused(&o, -EINVAL, "1000 is not a multiple of 512");
	o.ram_size = (4u << 20) + 1;
	expect_refused(&o, -EINVAL, "not a multiple of 512");
}

static void test_open_errors(void **state)
{
	struct t *t = *state;
	char p[PATH_MAX];
	struct blk_opts o = { .path = p, .direct = cfg->direct };

	if (!cfg->dir) {
		test_open_errors_ram();
		return;
	}
	snprintf(p, sizeof(p), "%s/test_backend.missing", cfg->dir);
	expect_refused(&o, -ENOENT, p);
	o.path = cfg->dir;
	expect_refused(&o, -EISDIR, cfg->dir);
	o.path = "/dev/null";
	expect_refused(&o, -EINVAL, "not a regular file or block device");
	o.path = p;
	snprintf(p, sizeof(p), "%s/test_backend.fifo", cfg->dir);
	unlink(p);
	if (mkfifo(p, 0600) == 0) {
		expect_refused(&o, -EINVAL, "not a regular file");
		o.ro = true; /* would block in open() if it were opened */
		expect_refused(&o, -EINVAL, "not a regular file");
		o.ro = false;
		unlink(p);
	}
	make_file(cfg->dir, 1000, p);
	expect_refused(&o, -EINVAL, "size 1000 is not a multiple of 512");
	unlink(p);
	make_file(cfg->dir, 0, p);
	expect_refused(&o, -EINVAL, "size 0");
	unlink(p);
	(void)t;
}

static void test_open_unreadable(void **state)
{
	char p[PATH_MAX];
	struct blk_opts o = { .path = p, .ro = true };

	pid_t pid;
	int st;

	(void)state;
	if (!cfg->dir)
		skip();
	make_file(cfg->dir, DISK_SIZE, p);
	assert_int_equal(chmod(p, 0), 0);
	if (geteuid() != 0) {
		expect_refused(&o, -EACCES, "Permission denied");
		unlink(p);
		return;
	}
	/* Root reads a mode-0 file: open it as nobody, in a child that
	 * reports with its exit status (no cmocka there). */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct blk_backend *b = NULL;
		struct blk_backend_info info;
		char msg[256] = "";
		int ret;

		if (setgid(65534) || setuid(65534))
			_exit(3);
		ret = cfg->ops->open(&o, &b, &info, msg, sizeof(msg));
		_exit(ret == -EACCES && !b && strstr(msg, "Permission denied") &&
		      !strchr(msg, '\n') ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

struct snap {
	struct stat st;
	uint8_t *data;
};

static void snap_take(const char *path, struct snap *s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &s->st), 0);
	s->data = xalloc(DISK_SIZE);
	assert_int_equal(pread(fd, s->data, DISK_SIZE, 0), DISK_SIZE);
	close(fd);
}

static void snap_same(const struct snap *a, const struct snap *b)
{
	assert_int_equal(a->st.st_size, b->st.st_size);
	assert_int_equal(a->st.st_blocks, b->st.st_blocks);
	assert_int_equal(a->st.st_mtim.tv_sec, b->st.st_mtim.tv_sec);
	assert_int_equal(a->st.st_mtim.tv_nsec, b->st.st_mtim.tv_nsec);
	assert_int_equal(a->st.st_ctim.tv_sec, b->st.st_ctim.tv_sec);
	assert_int_equal(a->st.st_ctim.tv_nsec, b->st.st_ctim.tv_nsec);
	assert_memory_equal(a->data, b->data, DISK_SIZE);
}

/* open() and queue_open() (with their probes) leave the file as it was:
 * size, allocation, mtime, ctime and content. */
static void test_open_unchanged(void **state)
{
	struct t *t = *state;
	struct snap before, after;
	int fd;

	if (!cfg->dir)
		skip();
	fd = open(t->backing, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	pattern(t->wbuf, BUF_SIZE, 11);
	assert_int_equal(pwrite(fd, t->wbuf, BUF_SIZE, 4096), BUF_SIZE);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	snap_take(t->backing, &before);
	/* Longer than a timestamp tick, so a change would show. */
	nanosleep(&(struct timespec){ .tv_nsec = 30 * 1000 * 1000 }, NULL);
	open_rw(state, 8, false);
	cfg->ops->queue_close(t->q);
	t->q = NULL;
	cfg->ops->close(t->b);
	t->b = NULL;
	snap_take(t->backing, &after);
	snap_same(&before, &after);
	free(before.data);
	free(after.data);
}

static void test_open_ro(void **state)
{
	struct t *t = *state;

	disk_open(t, true);
	assert_false(t->info.discard);
	assert_false(t->info.write_zeroes);
	queue_open(t, 4, false);
	assert_int_equal(rd(t, 0, t->rbuf, 4096), VIRTIO_BLK_S_OK);
}

/* ---- main ------------------------------------------------------------- */

static bool fs_usable(const char *dir, bool direct)
{
	char p[PATH_MAX];
	int fd;

	if (access(dir, W_OK))
		return false;
	if (!direct)
		return true;
	make_file(dir, 4096, p);
	fd = open(p, O_RDWR | O_DIRECT | O_CLOEXEC);
	unlink(p);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool bdev_usable(const char *dir)
{
	char backing[PATH_MAX], dev[PATH_MAX];
	int fd = -1, ret;

	if (geteuid() != 0)
		return false;
	make_file(dir, 1 << 20, backing);
	ret = loop_attach(backing, dev, &fd);
	if (!ret)
		close(fd);
	unlink(backing);
	return !ret;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
	static const struct cfg cfgs[] = {
		{ "backend:ram", &blk_backend_ram, NULL, false, false,
		  BLK_ENGINE_AUTO },
		{ "backend:file:/tmp", &blk_backend_file, "/tmp", false,
		  false, BLK_ENGINE_AUTO },
		{ "backend:file:/var/tmp", &blk_backend_file, "/var/tmp", false,
		  false, BLK_ENGINE_AUTO },
		{ "backend:file:/dev/shm", &blk_backend_file, "/dev/shm", false,
		  false, BLK_ENGINE_AUTO },
		{ "backend:file:/var/tmp,direct", &blk_backend_file, "/var/tmp",
		  true, false, BLK_ENGINE_AUTO },
		{ "backend:bdev:loop", &blk_backend_file, "/var/tmp", false,
		  true, BLK_ENGINE_AUTO },
		{ "backend:bdev:loop,direct", &blk_backend_file, "/var/tmp",
		  true, true, BLK_ENGINE_AUTO },
		{ "backend:file:/var/tmp,engine=sync", &blk_backend_file,
		  "/var/tmp", false, false, BLK_ENGINE_SYNC },
		{ "backend:file:/var/tmp,direct,engine=sync", &blk_backend_file,
		  "/var/tmp", true, false, BLK_ENGINE_SYNC },
		{ "backend:bdev:loop,engine=sync", &blk_backend_file, "/var/tmp",
		  false, true, BLK_ENGINE_SYNC },
	};
	const struct CMUnitTest tests[] = {
		T(test_write_read),    T(test_multi_iov),
		T(test_scattered_iov),
		T(test_flush),         T(test_write_through),
		T(test_discard),       T(test_write_zeroes),
		T(test_many_inflight), T(test_eagain),
		T(test_depth_follows_the_device),
		T(test_close_inflight), T(test_wait_fd),
		T(test_rw_path),       T(test_fixed_buffers),
		T(test_multiqueue),    T(test_truncated),
		T(test_write_error),   T(test_short_fault),
		T(test_open_errors),
		T(test_open_unreadable), T(test_open_unchanged),
		T(test_open_ro),
	};
	int fails = 0;

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		cfg = &cfgs[i];
		if (cfg->dir && !fs_usable(cfg->dir, cfg->direct)) {
			printf("[ SKIP     ] %s: %s not usable%s\n", cfg->name,
			       cfg->dir, cfg->direct ? " with O_DIRECT" : "");
			continue;
		}
		if (cfg->bdev && !bdev_usable(cfg->dir)) {
			printf("[ SKIP     ] %s: needs root and loop devices\n",
			       cfg->name);
			continue;
		}
		printf("[ GROUP    ] %s\n", cfg->name);
		fails += cmocka_run_group_tests_name(cfg->name, tests, NULL,
						     NULL);
	}
	return fails ? 1 : 0;
}
