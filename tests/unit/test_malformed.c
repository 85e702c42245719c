/* The malformed-input suite over the real device: blk_dev_create with a
 * RAM disk and with a file, blk_dev_ops.activate over driver-side rings in fake
 * guest RAM (guard pages on both sides), real iothreads.  Each test runs
 * three times: on a RAM disk, on a file in /tmp (io_uring) and on a file
 * in /dev/shm (tmpfs: served synchronously by the file backend).  Every
 * row of
 * ARCHITECTURE.md "Guest input":
 *
 *  - a bad request: status UNSUPP or IOERR, the disk is unchanged;
 *  - a bad chain: the head comes back with used.len = 0, its status byte
 *    untouched, and the device serves the next request;
 *  - a bad ring: that queue stops, the reset hook runs once, nothing more
 *    is served on it, the other queue goes on;
 *  - a host I/O error: status IOERR, the device goes on.
 *
 * After every test: the device is stopped and every popped head was
 * pushed, the counters match, a canary in guest RAM is intact, and the
 * disk holds exactly what the valid writes put there (read back through a
 * restarted device, and for a file also with pread).
 *
 * The rings are written by hand here (not with drv_vq_add) so that any
 * chain can be built; a request is published, the device is kicked, and
 * the test polls used->idx. */
#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_config.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "blk/blk.h"
#include "tests/support/blkdrv.h"
#include "tests/support/syncrw.h"

#define QSIZE 16
#define NQ 2
#define RAM_BYTES (1u << 20)
#define DISK_BYTES (1u << 20)
#define CAP (DISK_BYTES / 512)

/* Per-queue scratch area in guest RAM. */
#define SCR_HDR 0x0u      /* 16 bytes per slot */
#define SCR_STATUS 0x400u /* 1 byte per slot */
#define SCR_TABLE 0x1000u /* indirect tables */
#define SCR_WDATA 0x10000u
#define SCR_RDATA 0x20000u
#define SCR_SIZE 0x30000u
#define CANARY_BYTES 0x10000u

#define WAIT_MS 10000
#define LOAD_S 60   /* busy processes live this long at most */
#define LOAD_MAX 16
#define QUIET_MS 200

struct mt {
	struct fakemem fm;
	struct blkdrv_q q[NQ];
	struct blk_dev *d;
	bool file;
	bool sync;           /* engine=sync */
	const char *dir;
	char path[64];
	uint8_t *shadow;     /* what the disk must hold */
	uint64_t scr[NQ];    /* scratch areas */
	uint64_t canary;     /* gpa of the canary */
	uint16_t avail[NQ];  /* our avail->idx */
	uint16_t used[NQ];   /* used entries consumed */
	uint16_t used0[NQ];  /* used->idx at start */
	unsigned int nq;     /* queues started */
	int reset_fd;
	unsigned int resets; /* reset hook calls */
	unsigned int serial; /* serve_check counter */
	struct blk_stats base;
	struct blk_stats want; /* expected deltas */
	pid_t load[LOAD_MAX]; /* busy processes (load_start) */
	unsigned int nload;
};

/* --- setup ------------------------------------------------------------ */

static uint8_t pattern(uint64_t i, unsigned int seed)
{
	return (uint8_t)((i * 131 + seed * 7 + (i >> 9)) ^ 0x5c);
}

static int backing_file(struct mt *t)
{
	int fd;

	snprintf(t->path, sizeof(t->path), "%s/test_malformed.XXXXXX",
		 t->dir);
	fd = mkstemp(t->path);
	if (fd < 0)
		return -1;
	for (uint64_t i = 0; i < DISK_BYTES; i++)
		t->shadow[i] = pattern(i, 1);
	if (pwrite(fd, t->shadow, DISK_BYTES, 0) != DISK_BYTES) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int mt_setup(void **state, const char *dir)
{
	struct mt *t = calloc(1, sizeof(*t));

	if (!t || fakemem_create(&t->fm, 0x80000000ull, RAM_BYTES))
		return -1;
	t->file = dir != NULL;
	t->dir = dir;
	t->shadow = calloc(1, DISK_BYTES);
	t->reset_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!t->shadow || t->reset_fd < 0 || (dir && backing_file(t)))
		return -1;
	for (unsigned int i = 0; i < NQ; i++) {
		if (blkdrv_q_init(&t->q[i], &t->fm, QSIZE, true))
			return -1;
	}
	t->scr[0] = fakemem_alloc(&t->fm, SCR_SIZE, 4096);
	t->canary = fakemem_alloc(&t->fm, CANARY_BYTES, 4096);
	t->scr[1] = fakemem_alloc(&t->fm, SCR_SIZE, 4096);
	if (!t->scr[0] || !t->canary || !t->scr[1])
		return -1;
	for (uint64_t i = 0; i < CANARY_BYTES; i++)
		*(uint8_t *)fakemem_hva(&t->fm, t->canary + i) = pattern(i, 9);
	*state = t;
	return 0;
}

static int setup_ram(void **state)
{
	return mt_setup(state, NULL);
}

static int setup_file(void **state)
{
	return mt_setup(state, "/tmp");
}

static int setup_tmpfs(void **state)
{
	return mt_setup(state, "/dev/shm");
}

/* The file backend with engine=sync: no io_uring at all. */
static int setup_sync(void **state)
{
	int ret = mt_setup(state, "/tmp");

	if (!ret)
		((struct mt *)*state)->sync = true;
	return ret;
}

/* Busy processes, one per CPU this test may use (LOAD_MAX at most),
 * each ended by load_stop, by SIGALRM after LOAD_S or when the test
 * process dies: the iothreads get preempted anywhere, as on a busy
 * host.  Forked before the device exists: no thread but this one. */
static void load_start(struct mt *t)
{
	cpu_set_t set;
	int n = LOAD_MAX;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) < n)
		n = CPU_COUNT(&set);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			signal(SIGALRM, SIG_DFL);
			alarm(LOAD_S);
			for (volatile unsigned long spin = 0;; spin++)
				;
		}
		t->load[t->nload++] = pid;
	}
}

static void load_stop(struct mt *t)
{
	while (t->nload) {
		pid_t pid = t->load[--t->nload];

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static struct rlimit fsize_limit; /* as the test started */

static int mt_teardown(void **state)
{
	struct mt *t = *state;

	/* A failed test_host_io_error may have left a limit behind. */
	setrlimit(RLIMIT_FSIZE, &fsize_limit);
	signal(SIGXFSZ, SIG_DFL);

	load_stop(t);
	blk_dev_destroy(t->d);
	for (unsigned int i = 0; i < NQ; i++)
		blkdrv_q_close(&t->q[i]);
	if (t->file)
		unlink(t->path);
	close(t->reset_fd);
	fakemem_destroy(&t->fm);
	free(t->shadow);
	free(t);
	return 0;
}

static void reset_hook(void *opaque)
{
	struct mt *t = opaque;
	uint64_t one = 1;

	__atomic_add_fetch(&t->resets, 1, __ATOMIC_SEQ_CST);
	(void)!write(t->reset_fd, &one, sizeof(one));
}

static void mt_create(struct mt *t, bool ro, bool batch)
{
	struct blk_opts o = { .ro = ro, .batch = batch, .queues = NQ };
	char msg[256] = "";

	if (t->sync)
		o.engine = BLK_ENGINE_SYNC;
	if (t->file)
		o.path = t->path;
	else
		o.ram_size = DISK_BYTES;
	blk_dev_destroy(t->d);
	t->d = NULL;
	/* A new RAM disk starts zeroed, and so does what it must hold; a
	 * file keeps its content from one device to the next. */
	if (!t->file)
		memset(t->shadow, 0, DISK_BYTES);
	if (blk_dev_create(&o, &t->d, msg, sizeof(msg)))
		fail_msg("blk_dev_create: %s", msg);
}

static void rings_reset(struct mt *t, unsigned int qi)
{
	struct drv_vq *v = &t->q[qi].vq;

	memset(v->desc, 0, 16u * QSIZE);
	memset(v->avail, 0, 6u + 2u * QSIZE);
	memset(v->used, 0, 6u + 8u * QSIZE);
	t->avail[qi] = t->used[qi] = t->used0[qi] = 0;
}

static int mt_try_start(struct mt *t, unsigned int nq, uint64_t clear,
			struct vdev_queue *c)
{
	uint64_t f = blk_dev_ops.features(t->d) & ~clear;

	blk_dev_stats(t->d, &t->base);
	return blkdrv_activate(t->d, &t->fm.gm, f, c, nq, reset_hook, t);
}

/* Fresh rings on nq queues, started with the offered features less
 * clear. */
static void mt_start(struct mt *t, unsigned int nq, uint64_t clear)
{
	struct vdev_queue c[NQ];

	for (unsigned int i = 0; i < nq; i++) {
		rings_reset(t, i);
		c[i] = blkdrv_q_vdev(&t->q[i]);
	}
	assert_int_equal(mt_try_start(t, nq, clear, c), 0);
	t->nq = nq;
}

static void mt_up(struct mt *t, bool ro, uint64_t clear)
{
	mt_create(t, ro, false);
	mt_start(t, NQ, clear);
}

/* --- the raw driver ----------------------------------------------------- */

static void *hva(struct mt *t, uint64_t gpa)
{
	return fakemem_hva(&t->fm, gpa);
}

static uint64_t scr(struct mt *t, unsigned int qi, uint64_t off)
{
	return t->scr[qi] + off;
}

static void desc(struct mt *t, unsigned int qi, uint16_t i, uint64_t addr,
		 uint32_t len, uint16_t flags, uint16_t next)
{
	t->q[qi].vq.desc[i] = (struct vring_desc){ addr, len, flags, next };
}

static struct vring_desc *table(struct mt *t, unsigned int qi, unsigned int n)
{
	return hva(t, scr(t, qi, SCR_TABLE + 64u * n));
}

/* Header for slot s; returns its gpa. */
static uint64_t hdr(struct mt *t, unsigned int qi, uint16_t s, uint32_t type,
		    uint64_t sector)
{
	uint64_t gpa = scr(t, qi, SCR_HDR + 16u * s);
	uint32_t *h = hva(t, gpa);

	h[0] = type;
	h[1] = 0;
	memcpy(&h[2], &sector, 8);
	return gpa;
}

/* Status byte for slot s, preset to 0xff; returns its gpa. */
static uint64_t status_at(struct mt *t, unsigned int qi, uint16_t s)
{
	uint64_t gpa = scr(t, qi, SCR_STATUS + s);

	*(uint8_t *)hva(t, gpa) = 0xff;
	return gpa;
}

static uint8_t status_of(struct mt *t, unsigned int qi, uint16_t s)
{
	return *(uint8_t *)hva(t, scr(t, qi, SCR_STATUS + s));
}

static void kick(struct mt *t, unsigned int qi)
{
	uint64_t one = 1;

	(void)!write(t->q[qi].kick_fd, &one, sizeof(one));
}

static void put_avail(struct mt *t, unsigned int qi, uint16_t head)
{
	struct drv_vq *v = &t->q[qi].vq;

	v->avail->ring[t->avail[qi]++ % QSIZE] = head;
}

static void publish(struct mt *t, unsigned int qi)
{
	/* Release: descriptors and ring entries before the index. */
	__atomic_store_n(&t->q[qi].vq.avail->idx, t->avail[qi],
			 __ATOMIC_RELEASE);
	kick(t, qi);
}

static uint16_t used_idx(struct mt *t, unsigned int qi)
{
	/* Acquire: the used elements (and status bytes) after the index. */
	return __atomic_load_n(&t->q[qi].vq.used->idx, __ATOMIC_ACQUIRE);
}

static bool wait_used(struct mt *t, unsigned int qi, uint16_t target, int ms)
{
	struct timespec ts = { 0, 100 * 1000 };

	for (int i = 0; i < ms * 10; i++) {
		if (used_idx(t, qi) == target)
			return true;
		nanosleep(&ts, NULL);
	}
	return used_idx(t, qi) == target;
}

/* The next used element; fails the test if none comes. */
static struct vring_used_elem take_used(struct mt *t, unsigned int qi)
{
	uint16_t want = (uint16_t)(t->used[qi] + 1);

	if (!wait_used(t, qi, want, WAIT_MS))
		fail_msg("queue %u: no used entry %u (used->idx %u)", qi,
			 (unsigned int)want, (unsigned int)used_idx(t, qi));
	return t->q[qi].vq.used->ring[t->used[qi]++ % QSIZE];
}

/* Publish head and wait for it to come back; returns used.len. */
static uint32_t run_head(struct mt *t, unsigned int qi, uint16_t head)
{
	struct vring_used_elem u;

	put_avail(t, qi, head);
	publish(t, qi);
	u = take_used(t, qi);
	assert_int_equal(u.id, head);
	return u.len;
}

/* A direct header / data / status chain in descriptors base..base+2. */
static uint16_t build_rw(struct mt *t, unsigned int qi, uint16_t base,
			 uint32_t type, uint64_t sector, uint64_t data,
			 uint32_t len)
{
	uint16_t w = type == VIRTIO_BLK_T_IN ? VRING_DESC_F_WRITE : 0;
	uint16_t n = (uint16_t)(base + 1);

	desc(t, qi, base, hdr(t, qi, base, type, sector), 16,
	     VRING_DESC_F_NEXT, len ? n : (uint16_t)(n + 1));
	desc(t, qi, n, data, len, w | VRING_DESC_F_NEXT, (uint16_t)(n + 1));
	desc(t, qi, (uint16_t)(n + 1), status_at(t, qi, base), 1,
	     VRING_DESC_F_WRITE, 0);
	return base;
}

/* Run one request; returns its status byte, *used_len its used.len. */
static uint8_t do_req(struct mt *t, unsigned int qi, uint32_t type,
		      uint64_t sector, uint64_t data, uint32_t len,
		      uint32_t *used_len)
{
	uint16_t head = build_rw(t, qi, 0, type, sector, data, len);

	*used_len = run_head(t, qi, head);
	return status_of(t, qi, head);
}

static void fill(struct mt *t, uint64_t gpa, uint32_t len, unsigned int seed)
{
	uint8_t *p = hva(t, gpa);

	for (uint32_t i = 0; i < len; i++)
		p[i] = pattern(i, seed);
}

/* The device still works on this queue: write, read back, compare. */
static void serve_check(struct mt *t, unsigned int qi)
{
	uint64_t sector = (t->serial * 8u + 64u) % (CAP - 8);
	uint64_t w = scr(t, qi, SCR_WDATA), r = scr(t, qi, SCR_RDATA);
	uint32_t len;

	fill(t, w, 4096, 100 + t->serial++);
	assert_int_equal(do_req(t, qi, VIRTIO_BLK_T_OUT, sector, w, 4096,
				&len), VIRTIO_BLK_S_OK);
	assert_int_equal(len, 1);
	memcpy(t->shadow + sector * 512, hva(t, w), 4096);
	memset(hva(t, r), 0, 4096);
	assert_int_equal(do_req(t, qi, VIRTIO_BLK_T_IN, sector, r, 4096,
				&len), VIRTIO_BLK_S_OK);
	assert_int_equal(len, 4097);
	assert_memory_equal(hva(t, r), hva(t, w), 4096);
}

/* --- after every test --------------------------------------------------- */

static void check_stats(struct mt *t)
{
	struct blk_stats s;
	uint64_t pushed = 0;

	blk_dev_stats(t->d, &s);
	/* Never loses a head: every popped head is in the used ring. */
	for (unsigned int i = 0; i < t->nq; i++)
		pushed += (uint16_t)(used_idx(t, i) - t->used0[i]);
	assert_int_equal(s.requests - t->base.requests, pushed);
	assert_int_equal(s.bad_chains - t->base.bad_chains, t->want.bad_chains);
	assert_int_equal(s.ring_errors - t->base.ring_errors,
			 t->want.ring_errors);
	assert_int_equal(s.io_errors - t->base.io_errors, t->want.io_errors);
}

static void check_canary(struct mt *t)
{
	const uint8_t *c = hva(t, t->canary);

	for (uint64_t i = 0; i < CANARY_BYTES; i++)
		if (c[i] != pattern(i, 9))
			fail_msg("canary byte %llu changed",
				 (unsigned long long)i);
}

static void check_file(struct mt *t)
{
	uint8_t *buf = malloc(DISK_BYTES);
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);

	assert_non_null(buf);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, DISK_BYTES, 0), DISK_BYTES);
	close(fd);
	assert_memory_equal(buf, t->shadow, DISK_BYTES);
	free(buf);
}

/* Read the whole disk through a freshly reset device. */
static void check_disk(struct mt *t)
{
	uint64_t r = scr(t, 0, SCR_RDATA);
	const uint32_t chunk = 0x10000;
	uint32_t len;

	mt_start(t, 1, 0);
	for (uint64_t off = 0; off < DISK_BYTES; off += chunk) {
		assert_int_equal(do_req(t, 0, VIRTIO_BLK_T_IN, off / 512, r,
					chunk, &len), VIRTIO_BLK_S_OK);
		if (memcmp(hva(t, r), t->shadow + off, chunk))
			fail_msg("disk differs in [%llu, +%u)",
				 (unsigned long long)off, chunk);
	}
	blk_dev_ops.reset(t->d);
	if (t->file)
		check_file(t);
}

static void mt_finish(struct mt *t)
{
	blk_dev_ops.reset(t->d);
	check_stats(t);
	check_canary(t);
	t->want = (struct blk_stats){ 0 };
	check_disk(t);
	check_stats(t);
}

/* --- bad requests: status byte, the backend never called -------------- */

/* Run a request carrying data the disk must never see. */
static void expect_status(struct mt *t, uint32_t type, uint64_t sector,
			  uint32_t len, uint8_t want)
{
	uint64_t w = scr(t, 0, SCR_WDATA);
	uint32_t used;

	fill(t, w, len, 77);
	assert_int_equal(do_req(t, 0, type, sector, w, len, &used), want);
	/* Only the status byte was written: used.len counts it only when no
	 * writable data buffer comes before it (the written prefix). */
	assert_int_equal(used, type == VIRTIO_BLK_T_IN && len ? 0 : 1);
}

static void test_req_unknown_type(void **state)
{
	static const uint32_t types[] = { 2, 3, 5, 9, 10, 14, 0xdeadbeef };
	struct mt *t = *state;

	mt_up(t, false, 0);
	for (unsigned int i = 0; i < sizeof(types) / sizeof(*types); i++)
		expect_status(t, types[i], 0, 4096, VIRTIO_BLK_S_UNSUPP);
	serve_check(t, 0);
	mt_finish(t);
}

static void test_req_bad_length(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	expect_status(t, VIRTIO_BLK_T_OUT, 0, 1000, VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_OUT, 8, 513, VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_OUT, 8, 4095, VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_IN, 8, 100, VIRTIO_BLK_S_IOERR);
	serve_check(t, 0);
	mt_finish(t);
}

static void test_req_past_capacity(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	expect_status(t, VIRTIO_BLK_T_OUT, CAP - 1, 1024, VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_OUT, CAP, 512, VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_OUT, UINT64_MAX, 512,
		      VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_OUT, UINT64_MAX - 3, 4096,
		      VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_OUT, 1ull << 55, 512,
		      VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_IN, CAP - 7, 4096, VIRTIO_BLK_S_IOERR);
	serve_check(t, 0);
	mt_finish(t);
}

static void test_req_read_only(void **state)
{
	struct mt *t = *state;
	uint64_t r = scr(t, 0, SCR_RDATA);
	uint32_t used;

	mt_up(t, true, 0);
	assert_true(blk_dev_ops.features(t->d) & (1ull << VIRTIO_BLK_F_RO));
	expect_status(t, VIRTIO_BLK_T_OUT, 0, 4096, VIRTIO_BLK_S_IOERR);
	expect_status(t, VIRTIO_BLK_T_OUT, 100, 512, VIRTIO_BLK_S_IOERR);
	/* Not offered on a read-only disk, so not negotiated. */
	expect_status(t, VIRTIO_BLK_T_DISCARD, 0, 16, VIRTIO_BLK_S_UNSUPP);
	expect_status(t, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16,
		      VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(do_req(t, 0, VIRTIO_BLK_T_IN, 0, r, 4096, &used),
			 VIRTIO_BLK_S_OK);
	assert_memory_equal(hva(t, r), t->shadow, 4096);
	mt_finish(t);
}

/* A one-segment discard / write-zeroes payload at w. */
static void dwz_seg(struct mt *t, uint64_t sector, uint32_t num,
		    uint32_t flags)
{
	uint8_t *p = hva(t, scr(t, 0, SCR_WDATA));

	memcpy(p, &sector, 8);
	memcpy(p + 8, &num, 4);
	memcpy(p + 12, &flags, 4);
}

static void dwz_expect(struct mt *t, uint32_t type, uint32_t len, uint8_t st)
{
	uint32_t used;

	assert_int_equal(do_req(t, 0, type, 0, scr(t, 0, SCR_WDATA), len,
				&used), st);
	assert_int_equal(used, 1);
}

static void test_req_dwz_refused(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 1ull << VIRTIO_BLK_F_DISCARD);
	dwz_seg(t, 0, 8, 0);
	dwz_expect(t, VIRTIO_BLK_T_DISCARD, 16, VIRTIO_BLK_S_UNSUPP);
	dwz_seg(t, 0, 8, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP << 1);
	dwz_expect(t, VIRTIO_BLK_T_WRITE_ZEROES, 16, VIRTIO_BLK_S_UNSUPP);
	dwz_seg(t, 0, 8, 0);
	dwz_expect(t, VIRTIO_BLK_T_WRITE_ZEROES, 32, VIRTIO_BLK_S_UNSUPP);
	dwz_expect(t, VIRTIO_BLK_T_WRITE_ZEROES, 24, VIRTIO_BLK_S_IOERR);
	dwz_seg(t, CAP - 4, 8, 0);
	dwz_expect(t, VIRTIO_BLK_T_WRITE_ZEROES, 16, VIRTIO_BLK_S_IOERR);
	dwz_seg(t, UINT64_MAX, 2, 0);
	dwz_expect(t, VIRTIO_BLK_T_WRITE_ZEROES, 16, VIRTIO_BLK_S_IOERR);
	serve_check(t, 0);
	mt_finish(t);
}

/* --- bad chains: used.len 0, the queue goes on --------------------------- */

/* Run the chain at head; it must come back with 0 and leave its status
 * byte (slot head) alone; then the device serves a good request. */
static void expect_bad_chain(struct mt *t, uint16_t head)
{
	status_at(t, 0, head);
	assert_int_equal(run_head(t, 0, head), 0);
	assert_int_equal(status_of(t, 0, head), 0xff);
	t->want.bad_chains++;
	serve_check(t, 0);
}

/* Header and status in descriptors 4 and 6 around a middle one. */
static void three(struct mt *t, uint64_t mid, uint32_t len, uint16_t flags)
{
	desc(t, 0, 4, hdr(t, 0, 4, VIRTIO_BLK_T_IN, 0), 16, VRING_DESC_F_NEXT,
	     5);
	desc(t, 0, 5, mid, len, flags | VRING_DESC_F_NEXT, 6);
	desc(t, 0, 6, status_at(t, 0, 4), 1, VRING_DESC_F_WRITE, 0);
}

static void test_chain_next_out_of_range(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	three(t, scr(t, 0, SCR_RDATA), 512, VRING_DESC_F_WRITE);
	desc(t, 0, 5, scr(t, 0, SCR_RDATA), 512,
	     VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, QSIZE);
	expect_bad_chain(t, 4);
	desc(t, 0, 5, scr(t, 0, SCR_RDATA), 512,
	     VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 0xffff);
	expect_bad_chain(t, 4);
	mt_finish(t);
}

static void test_chain_loop(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	three(t, scr(t, 0, SCR_RDATA), 512, VRING_DESC_F_WRITE);
	t->q[0].vq.desc[6].flags |= VRING_DESC_F_NEXT;
	t->q[0].vq.desc[6].next = 5; /* 4 -> 5 -> 6 -> 5 ... */
	expect_bad_chain(t, 4);
	desc(t, 0, 7, hdr(t, 0, 7, VIRTIO_BLK_T_IN, 0), 16,
	     VRING_DESC_F_NEXT, 7); /* itself */
	expect_bad_chain(t, 7);
	mt_finish(t);
}

/* Every descriptor in one chain is fine; one more visit is a loop. */
static void test_chain_longer_than_queue(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	desc(t, 0, 0, hdr(t, 0, 0, VIRTIO_BLK_T_IN, 0), 16, VRING_DESC_F_NEXT,
	     1);
	for (uint16_t i = 1; i < QSIZE; i++)
		desc(t, 0, i, scr(t, 0, SCR_RDATA) + 512u * i, 512,
		     VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		     (uint16_t)(i + 1));
	/* The last one carries data and status: a valid 15-segment read. */
	t->q[0].vq.desc[QSIZE - 1].len = 513;
	t->q[0].vq.desc[QSIZE - 1].flags = VRING_DESC_F_WRITE;
	assert_int_equal(run_head(t, 0, 0), 15 * 512 + 1);
	/* Now the last one points back to the second. */
	t->q[0].vq.desc[QSIZE - 1].flags |= VRING_DESC_F_NEXT;
	t->q[0].vq.desc[QSIZE - 1].next = 1;
	desc(t, 0, 0, hdr(t, 0, 0, VIRTIO_BLK_T_IN, 0), 16, VRING_DESC_F_NEXT,
	     1);
	assert_int_equal(run_head(t, 0, 0), 0);
	t->want.bad_chains++;
	serve_check(t, 0);
	mt_finish(t);
}

static void test_chain_outside_ram(void **state)
{
	struct mt *t = *state;
	uint64_t end = t->fm.gpa + t->fm.size;

	mt_up(t, false, 0);
	three(t, 0x1000, 512, VRING_DESC_F_WRITE); /* far below RAM */
	expect_bad_chain(t, 4);
	three(t, end - 256, 512, VRING_DESC_F_WRITE); /* runs past the end */
	expect_bad_chain(t, 4);
	three(t, end - 256, 512, 0); /* readable, for a write */
	hdr(t, 0, 4, VIRTIO_BLK_T_OUT, 0);
	expect_bad_chain(t, 4);
	three(t, UINT64_MAX - 255, 512, VRING_DESC_F_WRITE); /* wraps */
	expect_bad_chain(t, 4);
	/* The status byte itself outside RAM. */
	three(t, scr(t, 0, SCR_RDATA), 512, VRING_DESC_F_WRITE);
	desc(t, 0, 6, end + 4096, 1, VRING_DESC_F_WRITE, 0);
	expect_bad_chain(t, 4);
	mt_finish(t);
}

static void test_chain_guard_page(void **state)
{
	struct mt *t = *state;
	uint64_t lo = t->fm.gpa, hi = t->fm.gpa + t->fm.size;

	mt_up(t, false, 0);
	three(t, lo - 512, 512, VRING_DESC_F_WRITE);
	expect_bad_chain(t, 4);
	three(t, hi, 512, VRING_DESC_F_WRITE);
	expect_bad_chain(t, 4);
	three(t, lo - 1, 2, VRING_DESC_F_WRITE);
	expect_bad_chain(t, 4);
	/* A header in the guard page. */
	three(t, scr(t, 0, SCR_RDATA), 512, VRING_DESC_F_WRITE);
	desc(t, 0, 4, hi, 16, VRING_DESC_F_NEXT, 5);
	expect_bad_chain(t, 4);
	mt_finish(t);
}

/* Head 8: an indirect descriptor for a header / 512-byte read / status
 * table with n entries (3 valid ones, the rest zero-length). */
static struct vring_desc *indirect_req(struct mt *t, uint32_t len,
				       uint16_t flags)
{
	struct vring_desc *d = table(t, 0, 0);
	uint64_t tbl = scr(t, 0, SCR_TABLE);

	memset(d, 0, 3 * 16);
	d[0] = (struct vring_desc){ hdr(t, 0, 8, VIRTIO_BLK_T_IN, 0), 16,
				    VRING_DESC_F_NEXT, 1 };
	d[1] = (struct vring_desc){ scr(t, 0, SCR_RDATA), 512,
				    VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2 };
	d[2] = (struct vring_desc){ status_at(t, 0, 8), 1, VRING_DESC_F_WRITE,
				    0 };
	desc(t, 0, 8, tbl, len, VRING_DESC_F_INDIRECT | flags, 9);
	desc(t, 0, 9, status_at(t, 0, 8), 1, VRING_DESC_F_WRITE, 0);
	return d;
}

static void test_chain_indirect_good(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	indirect_req(t, 48, 0);
	assert_int_equal(run_head(t, 0, 8), 513);
	assert_int_equal(status_of(t, 0, 8), VIRTIO_BLK_S_OK);
	assert_memory_equal(hva(t, scr(t, 0, SCR_RDATA)), t->shadow, 512);
	mt_finish(t);
}

static void test_chain_indirect_bad_len(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	indirect_req(t, 0, 0);
	expect_bad_chain(t, 8);
	indirect_req(t, 40, 0);
	expect_bad_chain(t, 8);
	indirect_req(t, 47, 0);
	expect_bad_chain(t, 8);
	indirect_req(t, 16u * 1025, 0); /* more than any chain may be */
	expect_bad_chain(t, 8);
	indirect_req(t, UINT32_MAX & ~15u, 0); /* far too long */
	expect_bad_chain(t, 8);
	indirect_req(t, 48, 0); /* the table runs out of RAM */
	desc(t, 0, 8, t->fm.gpa + t->fm.size - 32, 48, VRING_DESC_F_INDIRECT,
	     0);
	expect_bad_chain(t, 8);
	mt_finish(t);
}

static void test_chain_indirect_nested(void **state)
{
	struct mt *t = *state;
	struct vring_desc *d;

	mt_up(t, false, 0);
	d = indirect_req(t, 48, 0);
	d[1].flags |= VRING_DESC_F_INDIRECT;
	expect_bad_chain(t, 8);
	d = indirect_req(t, 48, 0);
	d[1] = (struct vring_desc){ scr(t, 0, SCR_TABLE), 48,
				    VRING_DESC_F_INDIRECT, 0 };
	expect_bad_chain(t, 8);
	mt_finish(t);
}

static void test_chain_indirect_with_next(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	indirect_req(t, 48, VRING_DESC_F_NEXT);
	expect_bad_chain(t, 8);
	/* An indirect descriptor after a direct one is not malformed: the
	 * device MUST handle it (virtio 1.2, 2.7.5.3.2).  The chain reads
	 * as header (head 7's), 16 more readable bytes, 512 writable, and
	 * the table's status byte. */
	indirect_req(t, 48, 0);
	desc(t, 0, 7, hdr(t, 0, 7, VIRTIO_BLK_T_IN, 0), 16,
	     VRING_DESC_F_NEXT, 8);
	assert_int_equal(run_head(t, 0, 7), 513);
	assert_int_equal(status_of(t, 0, 8), VIRTIO_BLK_S_OK);
	serve_check(t, 0);
	mt_finish(t);
}

static void test_chain_indirect_not_negotiated(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 1ull << VIRTIO_RING_F_INDIRECT_DESC);
	indirect_req(t, 48, 0);
	expect_bad_chain(t, 8);
	mt_finish(t);
}

static void test_chain_indirect_bad_entries(void **state)
{
	struct mt *t = *state;
	struct vring_desc *d;

	mt_up(t, false, 0);
	d = indirect_req(t, 48, 0);
	d[1].next = 3; /* past the table */
	expect_bad_chain(t, 8);
	d = indirect_req(t, 48, 0);
	d[2].flags |= VRING_DESC_F_NEXT;
	d[2].next = 1; /* loop */
	expect_bad_chain(t, 8);
	d = indirect_req(t, 48, 0);
	d[1].addr = t->fm.gpa + t->fm.size; /* guard page */
	expect_bad_chain(t, 8);
	mt_finish(t);
}

static void test_chain_readable_after_writable(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	/* header, status (writable), then a readable data buffer */
	desc(t, 0, 4, hdr(t, 0, 4, VIRTIO_BLK_T_OUT, 0), 16, VRING_DESC_F_NEXT,
	     6);
	desc(t, 0, 6, status_at(t, 0, 4), 1,
	     VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 5);
	desc(t, 0, 5, scr(t, 0, SCR_WDATA), 512, 0, 0);
	fill(t, scr(t, 0, SCR_WDATA), 512, 5);
	expect_bad_chain(t, 4);
	mt_finish(t);
}

static void test_chain_no_status(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	three(t, scr(t, 0, SCR_WDATA), 512, 0);
	hdr(t, 0, 4, VIRTIO_BLK_T_OUT, 0);
	fill(t, scr(t, 0, SCR_WDATA), 512, 6);
	t->q[0].vq.desc[5].flags = 0; /* the chain ends with the data */
	expect_bad_chain(t, 4);
	/* A zero-length writable descriptor is no status byte either. */
	three(t, scr(t, 0, SCR_WDATA), 512, 0);
	hdr(t, 0, 4, VIRTIO_BLK_T_OUT, 0);
	t->q[0].vq.desc[6].len = 0;
	expect_bad_chain(t, 4);
	mt_finish(t);
}

static void test_chain_short_header(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	three(t, scr(t, 0, SCR_RDATA), 512, VRING_DESC_F_WRITE);
	t->q[0].vq.desc[4].len = 15;
	expect_bad_chain(t, 4);
	/* The header's 16th byte in a writable descriptor. */
	three(t, scr(t, 0, SCR_RDATA), 512, VRING_DESC_F_WRITE);
	t->q[0].vq.desc[4].len = 8;
	t->q[0].vq.desc[5].addr = scr(t, 0, SCR_HDR + 4 * 16 + 8);
	expect_bad_chain(t, 4);
	mt_finish(t);
}

/* More data segments than the device takes (seg_max). */
static void test_chain_too_many_segments(void **state)
{
	struct mt *t = *state;
	struct vring_desc *d;
	const unsigned int n = BLK_REQ_MAX_IOV + 10;

	mt_up(t, false, 0);
	d = indirect_req(t, 16 * n, 0);
	for (unsigned int i = 1; i + 1 < n; i++) {
		uint64_t buf = scr(t, 0, SCR_RDATA) + 512 * (i % 64);
		uint16_t fl = VRING_DESC_F_WRITE | VRING_DESC_F_NEXT;

		d[i] = (struct vring_desc){ buf, 512, fl, (uint16_t)(i + 1) };
	}
	d[n - 1] = (struct vring_desc){ status_at(t, 0, 8), 1,
					VRING_DESC_F_WRITE, 0 };
	expect_bad_chain(t, 8);
	mt_finish(t);
}

/* --- bad rings: the queue stops, the driver is told ------------------- */

static void wait_reset(struct mt *t)
{
	struct pollfd p = { .fd = t->reset_fd, .events = POLLIN };

	if (poll(&p, 1, WAIT_MS) != 1)
		fail_msg("reset hook not called");
	assert_int_equal(__atomic_load_n(&t->resets, __ATOMIC_SEQ_CST), 1);
}

/* Queue 0 is broken: a good request there is not served, queue 1 is. */
static void expect_queue_stopped(struct mt *t)
{
	uint16_t before = used_idx(t, 0);
	uint16_t head = build_rw(t, 0, 12, VIRTIO_BLK_T_OUT, 0,
				 scr(t, 0, SCR_WDATA), 4096);

	wait_reset(t);
	fill(t, scr(t, 0, SCR_WDATA), 4096, 3);
	t->avail[0] = (uint16_t)(t->q[0].vq.avail->idx);
	put_avail(t, 0, head);
	publish(t, 0);
	assert_false(wait_used(t, 0, (uint16_t)(before + 1), QUIET_MS));
	assert_int_equal(status_of(t, 0, head), 0xff);
	serve_check(t, 1);
	/* Kicks do not call the hook again. */
	kick(t, 0);
	serve_check(t, 1);
	assert_int_equal(__atomic_load_n(&t->resets, __ATOMIC_SEQ_CST), 1);
	t->want.ring_errors = 1;
	mt_finish(t);
}

static void test_ring_avail_jump(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	serve_check(t, 0);
	t->avail[0] = (uint16_t)(t->avail[0] + QSIZE + 1);
	publish(t, 0);
	expect_queue_stopped(t);
}

static void test_ring_avail_backwards(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	serve_check(t, 0);
	t->avail[0]--;
	publish(t, 0);
	expect_queue_stopped(t);
}

static void test_ring_head_out_of_range(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	serve_check(t, 0);
	put_avail(t, 0, QSIZE);
	publish(t, 0);
	expect_queue_stopped(t);
}

static void test_ring_head_huge(void **state)
{
	struct mt *t = *state;

	mt_up(t, false, 0);
	put_avail(t, 0, 0xffff);
	publish(t, 0);
	expect_queue_stopped(t);
}

/* Whether this disk serves a write inside submit() (blk/backend.h). */
static bool served_in_submit(const struct mt *t)
{
	return !t->file || t->sync || file_rw_in_submit(t->path);
}

/* The same head twice in one batch.  A write that goes through io_uring
 * is still in flight when the iothread pops the second (it reaps only
 * after the drain pass): a head reused while in flight, the ring is
 * broken.  A write served inside submit() is finished, pushed and
 * published by then, so the second is a request of its own and is
 * served too: the driver broke the rules, but nothing in flight can be
 * lost or answered twice. */
static void test_ring_head_reused(void **state)
{
	struct mt *t = *state;
	uint64_t w = scr(t, 0, SCR_WDATA);
	unsigned int n;
	uint16_t head;

	mt_up(t, false, 0);
	n = served_in_submit(t) ? 2 : 1;
	head = build_rw(t, 0, 0, VIRTIO_BLK_T_OUT, 16, w, 4096);
	fill(t, w, 4096, 42);
	put_avail(t, 0, head);
	put_avail(t, 0, head);
	publish(t, 0);
	/* The first one completes; so does the second if nothing was in
	 * flight. */
	assert_true(wait_used(t, 0, (uint16_t)(t->used[0] + n), WAIT_MS));
	for (unsigned int i = 0; i < n; i++) {
		struct vring_used_elem u =
			t->q[0].vq.used->ring[t->used[0]++ % QSIZE];

		assert_int_equal(u.id, head);
		assert_int_equal(u.len, 1);
	}
	assert_int_equal(status_of(t, 0, head), VIRTIO_BLK_S_OK);
	memcpy(t->shadow + 16 * 512, hva(t, w), 4096);
	if (n == 1) {
		expect_queue_stopped(t);
		return;
	}
	serve_check(t, 0);
	assert_int_equal(__atomic_load_n(&t->resets, __ATOMIC_SEQ_CST), 0);
	mt_finish(t);
}

/* Rings outside RAM or misaligned: start fails, nothing runs. */
static void bad_start(struct mt *t, unsigned int qi, size_t field,
		      uint64_t val)
{
	struct vdev_queue c[NQ];

	for (unsigned int i = 0; i < NQ; i++) {
		rings_reset(t, i);
		c[i] = blkdrv_q_vdev(&t->q[i]);
	}
	memcpy((char *)&c[qi] + field, &val, sizeof(val));
	assert_int_equal(mt_try_start(t, NQ, 0, c), -EFAULT);
}

#define DESC offsetof(struct vdev_queue, desc)
#define AVAIL offsetof(struct vdev_queue, avail)
#define USED offsetof(struct vdev_queue, used)

static void test_ring_outside_ram_at_start(void **state)
{
	struct mt *t = *state;
	uint64_t end = t->fm.gpa + t->fm.size;

	mt_create(t, false, false);
	for (unsigned int qi = 0; qi < NQ; qi++) {
		struct vdev_queue c = blkdrv_q_vdev(&t->q[qi]);

		bad_start(t, qi, DESC, end - 16 * QSIZE + 16);
		bad_start(t, qi, DESC, 0);
		bad_start(t, qi, DESC, c.desc + 8); /* misaligned */
		bad_start(t, qi, AVAIL, end - 2);
		bad_start(t, qi, AVAIL, c.avail + 1);
		bad_start(t, qi, USED, end);
		bad_start(t, qi, USED, c.used + 2);
		bad_start(t, qi, USED, t->fm.gpa - 4096); /* guard page */
	}
	assert_int_equal(__atomic_load_n(&t->resets, __ATOMIC_SEQ_CST), 0);
	/* Nothing was left running: a good start works. */
	mt_start(t, NQ, 0);
	serve_check(t, 0);
	serve_check(t, 1);
	mt_finish(t);
}

/* --- host I/O errors ------------------------------------------------------ */

/* A write beyond RLIMIT_FSIZE fails with EFBIG in the kernel: a real
 * host I/O error on an otherwise healthy file. */
static void test_host_io_error(void **state)
{
	struct mt *t = *state;
	struct rlimit old, lim;
	uint64_t w = scr(t, 0, SCR_WDATA);
	uint32_t used;

	mt_up(t, false, 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = DISK_BYTES / 2;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	fill(t, w, 4096, 11);
	assert_int_equal(do_req(t, 0, VIRTIO_BLK_T_OUT, CAP - 8, w, 4096,
				&used), VIRTIO_BLK_S_IOERR);
	assert_int_equal(used, 1);
	serve_check(t, 0); /* below the limit: works */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	t->want.io_errors = 1;
	serve_check(t, 0);
	mt_finish(t);
}

/* --- never loses a head -------------------------------------------------- */

/* n writes through indirect tables, published at once.  Each head's
 * 4 KiB starts with a tag of the round, the queue and the head: no two
 * rounds write the same bytes, so a write served in one round shows on
 * the disk even where an earlier round wrote the same sectors. */
static void publish_writes(struct mt *t, unsigned int qi, unsigned int n,
			   unsigned int round)
{
	for (uint16_t h = 0; h < n; h++) {
		struct vring_desc *d = table(t, qi, h);
		uint64_t data = scr(t, qi, SCR_WDATA) + 4096u * h;
		uint32_t tag = round << 16 | qi << 8 | h;

		fill(t, data, 4096, 200 + h);
		memcpy(hva(t, data), &tag, sizeof(tag));
		d[0] = (struct vring_desc){ hdr(t, qi, h, VIRTIO_BLK_T_OUT,
						8u * h + 8u * 16 * qi),
					    16, VRING_DESC_F_NEXT, 1 };
		d[1] = (struct vring_desc){ data, 4096, VRING_DESC_F_NEXT, 2 };
		d[2] = (struct vring_desc){ status_at(t, qi, h), 1,
					    VRING_DESC_F_WRITE, 0 };
		desc(t, qi, h, scr(t, qi, SCR_TABLE + 64u * h), 48,
		     VRING_DESC_F_INDIRECT, 0);
		put_avail(t, qi, h);
	}
	publish(t, qi);
}

/* Every used entry is a distinct head that did its write: its data goes
 * into the shadow.  A head not used keeps the shadow as it was.  Returns
 * how many were used. */
static unsigned int account_writes(struct mt *t, unsigned int qi)
{
	uint16_t n = used_idx(t, qi);
	uint32_t seen = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct vring_used_elem u = t->q[qi].vq.used->ring[i % QSIZE];
		uint64_t sector = 8u * u.id + 8u * 16 * qi;

		assert_true(u.id < QSIZE);
		assert_false(seen & (1u << u.id));
		seen |= 1u << u.id;
		assert_int_equal(u.len, 1);
		assert_int_equal(status_of(t, qi, (uint16_t)u.id),
				 VIRTIO_BLK_S_OK);
		memcpy(t->shadow + sector * 512,
		       hva(t, scr(t, qi, SCR_WDATA) + 4096u * u.id), 4096);
	}
	return n;
}

/* One race: both queues full of writes, then a reset after 0 to 80 us
 * (by round), while the iothreads are still taking them.  Every popped
 * head is used (check_stats); every used head has its data on the disk;
 * a head made available but never popped before the reset is never
 * served: its sectors hold what they held before.  The disk is read back
 * after every round.  Returns how many heads were used. */
static unsigned int stop_with_pending(struct mt *t, unsigned int round)
{
	struct timespec ts = { 0, (long)(round % 5) * 20000 };
	unsigned int used;

	mt_start(t, NQ, 0);
	publish_writes(t, 0, QSIZE - 1, round);
	publish_writes(t, 1, QSIZE, round);
	nanosleep(&ts, NULL); /* where the reset lands: not a wait */
	blk_dev_ops.reset(t->d);
	check_stats(t);
	used = account_writes(t, 0) + account_writes(t, 1);
	check_disk(t);
	return used;
}

/* rounds races, on a new device every 10 rounds, batch=off and on in
 * turn (batch=on publishes once per pass: the last pass is the one
 * blk_dev_ops.reset() makes). */
static void never_loses_a_head(struct mt *t, unsigned int rounds)
{
	unsigned int used = 0;

	for (unsigned int round = 0; round < rounds; round++) {
		if (round % 10 == 0)
			mt_create(t, false, round / 10 % 2);
		used += stop_with_pending(t, round);
	}
	print_message("%u of %u heads used before their reset\n", used,
		      rounds * (2 * QSIZE - 1));
	check_canary(t);
}

static void test_stop_never_loses_a_head(void **state)
{
	never_loses_a_head(*state, 20);
}

/* The races of test_stop_never_loses_a_head on a machine kept busy on
 * purpose: a test that passes only on a quiet machine would fail here. */
static void test_stop_never_loses_a_head_loaded(void **state)
{
	struct mt *t = *state;

	load_start(t);
	never_loses_a_head(t, 20);
	load_stop(t);
}

#define BOTH(fn)                                                   \
	{ "ram/" #fn, fn, setup_ram, mt_teardown, NULL },          \
	FILES(fn)
#define FILES(fn)                                                  \
	{ "file/" #fn, fn, setup_file, mt_teardown, NULL },        \
	{ "sync/" #fn, fn, setup_sync, mt_teardown, NULL },        \
	{ "tmpfs/" #fn, fn, setup_tmpfs, mt_teardown, NULL }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_req_unknown_type),
		BOTH(test_req_bad_length),
		BOTH(test_req_past_capacity),
		BOTH(test_req_read_only),
		BOTH(test_req_dwz_refused),
		BOTH(test_chain_next_out_of_range),
		BOTH(test_chain_loop),
		BOTH(test_chain_longer_than_queue),
		BOTH(test_chain_outside_ram),
		BOTH(test_chain_guard_page),
		BOTH(test_chain_indirect_good),
		BOTH(test_chain_indirect_bad_len),
		BOTH(test_chain_indirect_nested),
		BOTH(test_chain_indirect_with_next),
		BOTH(test_chain_indirect_not_negotiated),
		BOTH(test_chain_indirect_bad_entries),
		BOTH(test_chain_readable_after_writable),
		BOTH(test_chain_no_status),
		BOTH(test_chain_short_header),
		BOTH(test_chain_too_many_segments),
		BOTH(test_ring_avail_jump),
		BOTH(test_ring_avail_backwards),
		BOTH(test_ring_head_out_of_range),
		BOTH(test_ring_head_huge),
		BOTH(test_ring_head_reused),
		BOTH(test_ring_outside_ram_at_start),
		FILES(test_host_io_error),
		BOTH(test_stop_never_loses_a_head),
		BOTH(test_stop_never_loses_a_head_loaded),
	};

	getrlimit(RLIMIT_FSIZE, &fsize_limit);
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("malformed", tests, NULL, NULL);
}
