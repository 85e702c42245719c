/* devbench: the virtio-blk device without a guest.
 *
 * A host-side driver plays the guest against the real device (blk_dev_*,
 * real iothreads, real io_uring): rings and buffers live in fake guest
 * memory, one driver thread per virtqueue adds 4 KiB requests, kicks the
 * kick eventfd only when the device asks for kicks (drv_vq_kick_needed),
 * and waits on the call eventfd like an interrupt handler: callbacks stay
 * disabled while it processes, and before it sleeps it enables them and
 * looks once more (Linux virtio_ring / NAPI).  Every request goes through
 * one indirect descriptor (header, 4 KiB, status), as Linux virtio-blk
 * does when VIRTIO_RING_F_INDIRECT_DESC is negotiated.
 *
 * Per point it measures IOPS, p50/p99/mean latency (add to used, one
 * histogram per driver thread), CPU time per request (RUSAGE_SELF of the
 * process; the driver threads' own RUSAGE_THREAD is subtracted to give
 * the device's share: iothreads and io_uring workers), kicks and
 * interrupts per request.  In the same run the host does the same I/O
 * with fio as the baseline; see usage().
 *
 * The iothreads run with poll=0 (they sleep as soon as their ring is
 * empty), as all the figures in bench/JOURNAL.md were taken before idle
 * polling existed, and so that callgrind counts stay deterministic; the
 * VMM's default is poll=32.
 *
 * Raw mode (rows ending in -raw): the device's own capacity without any
 * thread wake-up.  The driver never sleeps: it spins on the used ring with
 * callbacks off (so the device never interrupts), and the iothreads poll
 * with a 1 s window (so they never ask for a kick while the driver runs).
 * Batch is off, as in the VMM's default.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/fiojson.h"
#include "blk/blk.h"
#include "host/clock.h"
#include "tests/support/blkdrv.h"
#include "tests/support/fakemem.h"
#include "tests/support/rng.h"

extern char **environ;

#define BS 4096u
#define QSIZE BLK_QUEUE_SIZE
#define MAXQ 2
#define FM_SIZE (40ull << 20)
#define FILL_CHUNK (512u << 10)

/* ---- options ------------------------------------------------------------ */

/* loop: a loop device with direct I/O over a file on tmpfs, opened with
 * O_DIRECT: a block device the device reaches through io_uring, as a
 * user's NVMe would be (the files on tmpfs are served synchronously). */
enum be { BE_TMPFS, BE_DISK, BE_LOOP, BE_RAM, BE_N };
static const char *const be_name[BE_N] = { "tmpfs", "disk", "loop", "ram" };

static struct {
	double seconds, warmup;
	unsigned int repeat;
	double quiet_wait;  /* seconds to wait for an idle machine */
	uint64_t size;
	uint64_t requests; /* fixed work per point instead of time */
	uint64_t seed;
	const char *filter, *json, *tmpfs_dir, *disk_dir;
	bool quick, no_fio, list, no_prefill, latency, limit;
	char cmdline[1024];
} opt = {
	.seconds = 1.0,
	.warmup = 0.25,
	.repeat = 1,
	.size = 512ull << 20,
	.seed = 1,
	.tmpfs_dir = "/dev/shm",
	.disk_dir = "/var/tmp",
};

static char path_of[BE_N][512]; /* what the device opens */
static char file_of[BE_N][512]; /* files created (the loop's backing) */
static int loop_fd = -1;        /* held open: the loop detaches on close */

/* ---- one measured point --------------------------------------------------- */

struct result {
	bool ran, failed;
	double iops, p50_us, p99_us, mean_us;
	double cpu_us, dev_cpu_us; /* per request; dev < 0: unknown */
	double fio_thread_cpu_us;  /* fio: its own threads only */
	double kicks, irqs, notifies; /* per request */
	double bg_cores;           /* other processes' CPU meanwhile */
	uint64_t requests, errors;
	unsigned int nruns;        /* --repeat: the IOPS of each run */
	double runs[8];
};

struct point {
	enum be be;
	bool write;
	unsigned int qd, nq;
	bool batch;
	bool raw;     /* see the top of this file */
	char name[64];
	struct result r;
	int base;     /* index into baselines, -1 if none */
	int base_alt; /* RAM rows: fio io_uring on tmpfs, same depth */
};

enum fio_kind { FIO_URING_TMPFS, FIO_URING_DISK, FIO_URING_LOOP,
		FIO_PSYNC_TMPFS };
static const char *const fio_kind_name[] = { "fio-uring-tmpfs",
					     "fio-uring-disk",
					     "fio-uring-loop",
					     "fio-psync-tmpfs" };
/* The backing each fio baseline runs on. */
static const enum be fio_kind_be[] = { BE_TMPFS, BE_DISK, BE_LOOP, BE_TMPFS };

struct baseline {
	enum fio_kind kind;
	bool write;
	unsigned int qd, nq;
	char name[64];
	char cmd[1024];
	struct result r;
};

#define MAX_POINTS 128
static struct point points[MAX_POINTS];
static unsigned int npoints;
static struct baseline bases[MAX_POINTS];
static unsigned int nbases;

static double ru_sec(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* ---- latency histogram: 64 sub-buckets per power of two (~1.5 %) --------- */

#define H_SUB 64u
#define H_LIN 128u
#define H_N (H_LIN + 40u * H_SUB)

struct hist {
	uint64_t b[H_N];
	uint64_t n, sum;
};

static unsigned int hist_idx(uint64_t v)
{
	unsigned int e, i;

	if (v < H_LIN)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v); /* >= 7 */
	i = H_LIN + (e - 7u) * H_SUB + (unsigned int)((v >> (e - 6u)) & 63u);
	return i < H_N ? i : H_N - 1;
}

static double hist_val(unsigned int i)
{
	unsigned int e, sub;

	if (i < H_LIN)
		return i;
	e = (i - H_LIN) / H_SUB + 7u;
	sub = (i - H_LIN) % H_SUB;
	/* middle of the bucket */
	return ldexp(64.0 + sub + 0.5, (int)e - 6);
}

static void hist_add(struct hist *h, uint64_t v)
{
	h->b[hist_idx(v)]++;
	h->n++;
	h->sum += v;
}

static void hist_merge(struct hist *to, const struct hist *from)
{
	for (unsigned int i = 0; i < H_N; i++)
		to->b[i] += from->b[i];
	to->n += from->n;
	to->sum += from->sum;
}

static double hist_pct(const struct hist *h, double p)
{
	uint64_t want = (uint64_t)ceil(p / 100.0 * (double)h->n), seen = 0;

	if (!h->n)
		return 0;
	if (!want)
		want = 1;
	for (unsigned int i = 0; i < H_N; i++) {
		seen += h->b[i];
		if (seen >= want)
			return hist_val(i);
	}
	return hist_val(H_N - 1);
}

/* ---- driver threads ---------------------------------------------------------- */

struct drv {
	struct blkdrv_q q;
	uint64_t buf_gpa;          /* BS per head */
	unsigned int qd;
	uint32_t type;
	uint64_t nblocks;
	uint64_t rng;
	uint64_t t_warm, t_end;    /* time mode: measure [t_warm, t_end) */
	uint64_t quota;            /* requests mode: requests to complete */
	bool raw;                  /* spin on the used ring, never sleep */
	uint64_t t_sub[QSIZE];
	/* results */
	struct hist h;
	uint64_t measured, kicks, irqs, errors;
	double cpu0, cpu1;         /* RUSAGE_THREAD at the window's ends */
	int err;
	pthread_t thread;
};

static double thread_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru_sec(&ru);
}

static void drv_submit(struct drv *d, unsigned int *inflight, uint64_t t,
		       uint64_t *left)
{
	while (*inflight < d->qd && *left) {
		uint16_t head = drv_vq_peek_head(&d->q.vq);
		struct drv_buf b = {
			.gpa = d->buf_gpa + (uint64_t)head * BS,
			.len = BS,
			.write = d->type == VIRTIO_BLK_T_IN,
		};
		uint64_t blk = rng_next(&d->rng) % d->nblocks;
		int h = blkdrv_add(&d->q, d->type, blk * (BS / 512), &b, 1,
				   true);

		if (h < 0) {
			d->err = h;
			return;
		}
		d->t_sub[h] = t;
		(*inflight)++;
		(*left)--;
	}
	if (drv_vq_kick_needed(&d->q.vq)) {
		uint64_t one = 1;

		(void)!write(d->q.kick_fd, &one, sizeof(one));
		d->kicks++;
	}
}

/* Take every used entry.  Returns how many. */
static unsigned int drv_reap(struct drv *d, unsigned int *inflight,
			     uint64_t *t)
{
	unsigned int n = 0;
	uint16_t head;
	uint32_t len;

	while (drv_vq_get_used(&d->q.vq, &head, &len)) {
		uint64_t st = d->t_sub[head];

		if (!n)
			*t = mono_ns(); /* one timestamp per batch */
		n++;
		(*inflight)--;
		if (blkdrv_status(&d->q, head) != VIRTIO_BLK_S_OK)
			d->errors++;
		if (d->quota || (st >= d->t_warm && *t < d->t_end)) {
			hist_add(&d->h, *t - st);
			d->measured++;
		}
	}
	return n;
}

/* Sleep until the device interrupts.  0, or -ETIMEDOUT. */
static int drv_wait_irq(struct drv *d)
{
	struct pollfd p = { .fd = d->q.call_fd, .events = POLLIN };
	uint64_t v;
	int ret;

	do
		ret = poll(&p, 1, 10000);
	while (ret < 0 && errno == EINTR);
	if (ret <= 0)
		return -ETIMEDOUT;
	(void)!read(d->q.call_fd, &v, sizeof(v));
	d->irqs++;
	return 0;
}

static void drv_window(struct drv *d, uint64_t t, bool *in_warm, bool *in_run)
{
	if (*in_warm && t >= d->t_warm) {
		*in_warm = false;
		d->cpu0 = thread_cpu();
	}
	if (*in_run && t >= d->t_end) {
		*in_run = false;
		d->cpu1 = thread_cpu();
	}
}

static void *drv_thread(void *arg)
{
	struct drv *d = arg;
	unsigned int inflight = 0;
	uint64_t left = d->quota ? d->quota : UINT64_MAX;
	uint64_t t = mono_ns();
	bool in_warm = !d->quota, in_run = !d->quota;

	if (d->quota)
		d->cpu0 = thread_cpu();
	drv_vq_disable_cb(&d->q.vq);
	while (!d->err) {
		if (!d->quota) {
			drv_window(d, t, &in_warm, &in_run);
			if (!in_run)
				left = 0;
		}
		drv_submit(d, &inflight, t, &left);
		if (!left && !inflight)
			break;
		if (drv_reap(d, &inflight, &t))
			continue;
		if (d->raw) {
			/* Spin: callbacks stay off, nothing sleeps. */
			__builtin_ia32_pause();
			t = mono_ns();
			continue;
		}
		/* Nothing used: ask for an interrupt, look again, sleep. */
		if (drv_vq_enable_cb(&d->q.vq)) {
			drv_vq_disable_cb(&d->q.vq);
			continue;
		}
		d->err = drv_wait_irq(d);
		drv_vq_disable_cb(&d->q.vq);
		t = mono_ns();
	}
	if (d->quota)
		d->cpu1 = thread_cpu();
	return NULL;
}

/* ---- the device under test ------------------------------------------------- */

struct dut {
	struct blk_dev *d;
	struct blk_stats seen; /* stats already accounted */
};

static struct dut duts[BE_N][3]; /* [be][off, batch, raw] */

static int ram_prefill(struct blk_dev *d);

static int dut_get(enum be be, bool batch, bool raw, struct dut **out)
{
	struct dut *u = &duts[be][raw ? 2 : batch];
	struct blk_opts o = { 0 };
	char msg[256] = "";
	int ret;

	if (u->d) {
		*out = u;
		return 0;
	}
	o.path = be == BE_RAM ? NULL : path_of[be];
	o.ram_size = opt.size;
	o.direct = be == BE_DISK || be == BE_LOOP;
	o.batch = batch;
	o.latency = opt.latency;
	if (opt.limit) { /* far above any rate here: the limited path's cost */
		o.iops = 100000000;
		o.bw = 1000ull << 30;
	}
	o.poll_us = raw ? BLK_POLL_US_MAX : 0; /* see the top of this file */
	o.queues = MAXQ;
	snprintf(o.serial, sizeof(o.serial), "devbench");
	ret = blk_dev_create(&o, &u->d, msg, sizeof(msg));
	if (ret) {
		fprintf(stderr, "devbench: %s: %s\n", be_name[be], msg);
		return ret;
	}
	if (be == BE_RAM && !opt.no_prefill && (ret = ram_prefill(u->d))) {
		fprintf(stderr, "devbench: RAM disk prefill failed (%d)\n",
			ret);
		blk_dev_destroy(u->d);
		u->d = NULL;
		return ret;
	}
	blk_dev_stats(u->d, &u->seen);
	*out = u;
	return 0;
}

/* Write the whole RAM disk once through the device, so no page is first
 * touched (faulted in) during a measurement. */
static int ram_prefill(struct blk_dev *d)
{
	struct fakemem fm;
	struct blkdrv_q q;
	struct vdev_queue c;
	uint64_t buf;
	int ret = fakemem_create(&fm, 1ull << 32, 8u << 20);

	if (ret)
		return ret;
	ret = blkdrv_q_init(&q, &fm, 16, true);
	buf = fakemem_alloc(&fm, FILL_CHUNK, BS);
	if (ret || !buf) {
		fakemem_destroy(&fm);
		return ret ? ret : -ENOMEM;
	}
	memset(fakemem_hva(&fm, buf), 0x5a, FILL_CHUNK);
	c = blkdrv_q_vdev(&q);
	ret = blkdrv_activate(d, &fm.gm, blk_dev_ops.features(d), &c, 1, NULL,
			      NULL);
	for (uint64_t off = 0; !ret && off < opt.size; off += FILL_CHUNK) {
		uint64_t len = opt.size - off < FILL_CHUNK ? opt.size - off
							   : FILL_CHUNK;
		struct drv_buf b = { buf, (uint32_t)len, false };

		ret = blkdrv_sync(&q, VIRTIO_BLK_T_OUT, off / 512, &b, 1, true,
				  NULL);
	}
	blk_dev_ops.reset(d);
	blkdrv_q_close(&q);
	fakemem_destroy(&fm);
	return ret > 0 ? -EIO : ret;
}

static int drv_setup(struct drv *d, struct fakemem *fm, const struct point *p,
		     unsigned int i)
{
	int ret = blkdrv_q_init(&d->q, fm, QSIZE, true);

	if (ret)
		return ret;
	d->buf_gpa = fakemem_alloc(fm, (size_t)QSIZE * BS, BS);
	if (!d->buf_gpa)
		return -ENOMEM;
	/* The driver threads share the allocator. */
	if (drv_vq_alloc_indirect(&d->q.vq))
		return -ENOMEM;
	/* Touch the buffers now, not during the measurement. */
	memset(fakemem_hva(fm, d->buf_gpa), 0xa5, (size_t)QSIZE * BS);
	d->qd = p->qd;
	d->raw = p->raw;
	d->type = p->write ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN;
	d->nblocks = opt.size / BS;
	d->rng = opt.seed * 0x9e3779b97f4a7c15ull + i + 1;
	return 0;
}

static void drv_collect(struct result *r, struct drv *dv, unsigned int nq,
			double wall, double cpu_all)
{
	struct hist *h = calloc(1, sizeof(*h));
	double drv_cpu = 0;
	uint64_t kicks = 0, irqs = 0;

	for (unsigned int i = 0; h && i < nq; i++) {
		hist_merge(h, &dv[i].h);
		kicks += dv[i].kicks;
		irqs += dv[i].irqs;
		r->errors += dv[i].errors;
		drv_cpu += dv[i].cpu1 - dv[i].cpu0;
		if (dv[i].err)
			r->failed = true;
	}
	if (!h || !h->n) {
		r->failed = true;
		free(h);
		return;
	}
	r->requests = h->n;
	r->iops = (double)h->n / wall;
	r->p50_us = hist_pct(h, 50) / 1e3;
	r->p99_us = hist_pct(h, 99) / 1e3;
	r->mean_us = (double)h->sum / (double)h->n / 1e3;
	r->cpu_us = cpu_all / (double)h->n * 1e6;
	r->dev_cpu_us = (cpu_all - drv_cpu) / (double)h->n * 1e6;
	/* kicks/irqs were counted over the whole run, warm-up included */
	r->kicks = (double)kicks / (double)h->n;
	r->irqs = (double)irqs / (double)h->n;
	if (r->errors)
		r->failed = true;
	free(h);
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull),
			       (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* Busy CPU time of the whole machine, seconds (/proc/stat). */
static double sys_busy(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int n = 0;

	if (f) {
		n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]);
		fclose(f);
	}
	if (n < 8)
		return NAN;
	/* user nice system [idle iowait] irq softirq steal */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
	       (double)sysconf(_SC_CLK_TCK);
}

/* Start the drivers, measure, join.  0 or -errno. */
static int run_drivers(const struct point *p, struct drv *dv,
		       struct result *r)
{
	struct rusage ru0, ru1;
	double busy0 = 0, busy1 = 0, wall;
	uint64_t t0 = mono_ns(), tw, te, w0;
	unsigned int started = 0;
	int ret = 0;

	tw = t0 + (uint64_t)(opt.warmup * 1e9);
	te = tw + (uint64_t)(opt.seconds * 1e9);
	for (unsigned int i = 0; i < p->nq; i++) {
		dv[i].t_warm = tw;
		dv[i].t_end = te;
		dv[i].quota = opt.requests ? (opt.requests + i) / p->nq : 0;
	}
	if (opt.requests) {
		getrusage(RUSAGE_SELF, &ru0);
		busy0 = sys_busy();
	}
	w0 = mono_ns();
	for (; started < p->nq; started++) {
		ret = -pthread_create(&dv[started].thread, NULL, drv_thread,
				      &dv[started]);
		if (ret)
			break;
	}
	if (!opt.requests) {
		sleep_until(tw);
		getrusage(RUSAGE_SELF, &ru0);
		busy0 = sys_busy();
		sleep_until(te);
		getrusage(RUSAGE_SELF, &ru1);
		busy1 = sys_busy();
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(dv[i].thread, NULL);
	if (opt.requests) {
		getrusage(RUSAGE_SELF, &ru1);
		busy1 = sys_busy();
	}
	wall = opt.requests ? (mono_ns() - w0) / 1e9 : opt.seconds;
	if (!ret)
		drv_collect(r, dv, p->nq, wall, ru_sec(&ru1) - ru_sec(&ru0));
	r->bg_cores = (busy1 - busy0 - (ru_sec(&ru1) - ru_sec(&ru0))) / wall;
	return ret;
}

static void dut_stats(struct dut *u, struct result *r)
{
	struct blk_stats s;

	blk_dev_stats(u->d, &s);
	if (r->requests)
		r->notifies = (double)(s.notifies - u->seen.notifies) /
			      (double)r->requests;
	if (s.io_errors != u->seen.io_errors || s.bad_chains != u->seen.bad_chains)
		r->failed = true;
	u->seen = s;
}

static int run_point(const struct point *p, struct result *r)
{
	struct vdev_queue cfg[MAXQ];
	struct fakemem fm;
	struct drv *dv;
	struct dut *u;
	int ret;

	ret = dut_get(p->be, p->batch, p->raw, &u);
	if (ret)
		return ret;
	dv = calloc(MAXQ, sizeof(*dv));
	if (!dv)
		return -ENOMEM;
	ret = fakemem_create(&fm, 1ull << 32, FM_SIZE);
	for (unsigned int i = 0; !ret && i < p->nq; i++) {
		ret = drv_setup(&dv[i], &fm, p, i);
		cfg[i] = blkdrv_q_vdev(&dv[i].q);
	}
	if (!ret)
		ret = blkdrv_activate(u->d, &fm.gm, blk_dev_ops.features(u->d),
				      cfg, p->nq, NULL, NULL);
	if (!ret) {
		ret = run_drivers(p, dv, r);
		blk_dev_ops.reset(u->d);
		dut_stats(u, r);
	}
	for (unsigned int i = 0; i < p->nq; i++)
		if (dv[i].q.kick_fd > 0)
			blkdrv_q_close(&dv[i].q);
	fakemem_destroy(&fm);
	free(dv);
	r->ran = true;
	if (ret)
		r->failed = true;
	return ret;
}

/* ---- fio baselines ------------------------------------------------------- */

/* fio's JSON output (one job: --group_reporting; bench/fiojson.h). */
static int fio_parse(const char *js, bool write, struct result *r)
{
	struct fiojson_error err;
	struct fiojson f;
	int ret = fiojson_read(js, write, &f, &err);

	if (err.msg)
		fprintf(stderr, "devbench: fio's JSON, byte %zu: %s\n",
			err.offset, err.msg);
	if (ret)
		return ret;
	r->iops = f.iops;
	r->mean_us = f.mean_ns / 1e3;
	r->p50_us = f.p50_ns / 1e3;
	r->p99_us = f.p99_ns / 1e3;
	/* job level: CPU in % of the (summed) job runtime */
	r->fio_thread_cpu_us = (f.usr_cpu + f.sys_cpu) / 100.0 *
			       f.job_runtime_ms / 1e3 / f.total_ios * 1e6;
	r->dev_cpu_us = -1;
	r->requests = (uint64_t)f.total_ios;
	r->kicks = r->irqs = r->notifies = NAN;
	return 0;
}

static void fio_cmd(struct baseline *b, char *out_path, char **argv,
		    char args[][700], unsigned int max)
{
	bool uring = b->kind != FIO_PSYNC_TMPFS;
	const char *file = path_of[fio_kind_be[b->kind]];
	unsigned int n = 0;
	size_t len = 0;

#define ARG(...) snprintf(args[n++], 700, __VA_ARGS__)
	ARG("fio");
	ARG("--name=devbench");
	ARG("--filename=%s", file);
	ARG("--size=%" PRIu64, opt.size);
	ARG("--ioengine=%s", uring ? "io_uring" : "psync");
	ARG("--rw=%s", b->write ? "randwrite" : "randread");
	ARG("--bs=%u", BS);
	ARG("--iodepth=%u", uring ? b->qd : 1);
	ARG("--numjobs=%u", b->nq);
	ARG("--direct=%d", fio_kind_be[b->kind] != BE_TMPFS);
	ARG("--thread");
	ARG("--group_reporting");
	ARG("--time_based");
	ARG("--runtime=%ums", (unsigned int)(opt.seconds * 1000));
	ARG("--ramp_time=%ums", (unsigned int)(opt.warmup * 1000));
	ARG("--norandommap");
	ARG("--randrepeat=0");
	ARG("--invalidate=0");
	ARG("--allow_file_create=0");
	ARG("--lat_percentiles=1");
	ARG("--output-format=json");
	ARG("--output=%s", out_path);
#undef ARG
	for (unsigned int i = 0; i < n && i < max - 1; i++) {
		argv[i] = args[i];
		/* the command as printed: without the private output path */
		if (i + 1 < n)
			len += (size_t)snprintf(b->cmd + len,
						len < sizeof(b->cmd)
							? sizeof(b->cmd) - len
							: 0,
						"%s%s", i ? " " : "", args[i]);
		if (len >= sizeof(b->cmd))
			len = sizeof(b->cmd) - 1;
	}
	argv[n] = NULL;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)len + 1))) {
		size_t got = fread(buf, 1, (size_t)len, f);

		buf[got] = '\0';
	}
	fclose(f);
	return buf;
}

/* Run fio; *cpu gets the CPU time of the whole fio process (its job
 * threads and their io_uring workers: wait4), *json its output. */
static int fio_exec(char **argv, const char *out, double *cpu, char **json,
		    double *bg)
{
	double busy0 = sys_busy(), wall;
	uint64_t t0 = mono_ns();
	struct rusage ru;
	pid_t pid;
	int st, ret;

	ret = posix_spawnp(&pid, "fio", NULL, NULL, argv, environ);
	if (ret) {
		fprintf(stderr, "devbench: cannot run fio: %s\n", strerror(ret));
		return -ret;
	}
	while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	*cpu = ru_sec(&ru);
	wall = (mono_ns() - t0) / 1e9;
	if (bg)
		*bg = (sys_busy() - busy0 - *cpu) / wall;
	*json = slurp(out);
	unlink(out);
	return WIFEXITED(st) && !WEXITSTATUS(st) && *json ? 0 : -EINVAL;
}

/* CPU time fio spends on anything but the measured I/O (start-up,
 * file checks, output): a run that does a single 4 KiB read. */
static double fio_overhead(const char *out)
{
	static double cost = -1;
	char file[600], *js = NULL;
	char *argv[] = { "fio", "--name=overhead", file, "--rw=read",
			 "--bs=4k", "--io_size=4k", "--ioengine=psync",
			 "--thread", "--invalidate=0", "--allow_file_create=0",
			 "--output-format=json", NULL, NULL };
	char outarg[620];
	double cpu = 0;

	if (cost >= 0)
		return cost;
	snprintf(file, sizeof(file), "--filename=%s", path_of[BE_TMPFS]);
	snprintf(outarg, sizeof(outarg), "--output=%s", out);
	argv[11] = outarg;
	cost = 0;
	/* the cheapest of three */
	for (unsigned int i = 0; i < 3; i++) {
		if (fio_exec(argv, out, &cpu, &js, NULL) == 0 &&
		    (cost == 0 || cpu < cost))
			cost = cpu;
		free(js);
		js = NULL;
	}
	return cost;
}

static int run_fio(struct baseline *b, struct result *r)
{
	char out[600], args[32][700], *argv[32], *js = NULL;
	double cpu = 0, over;
	int ret;

	snprintf(out, sizeof(out), "%s/devbench.%d.fio.json", opt.tmpfs_dir,
		 (int)getpid());
	over = fio_overhead(out);
	fio_cmd(b, out, argv, args, 32);
	r->ran = true;
	ret = fio_exec(argv, out, &cpu, &js, &r->bg_cores);
	if (!ret)
		ret = fio_parse(js, b->write, r);
	if (ret) {
		fprintf(stderr, "devbench: %s failed\n", b->name);
		r->failed = true;
	} else {
		/* I/O over ramp and runtime, at the measured rate */
		r->cpu_us = (cpu - over) /
			    (r->iops * (opt.seconds + opt.warmup)) * 1e6;
	}
	free(js);
	return ret;
}

/* ---- the matrix ------------------------------------------------------------ */

static bool filter_match(const char *name)
{
	char buf[512], *save = NULL, *pat;

	if (!opt.filter)
		return true;
	snprintf(buf, sizeof(buf), "%s", opt.filter);
	for (pat = strtok_r(buf, ",", &save); pat;
	     pat = strtok_r(NULL, ",", &save)) {
		if (strpbrk(pat, "*?[") ? !fnmatch(pat, name, 0)
					: strstr(name, pat) != NULL)
			return true;
	}
	return false;
}

static int base_get(enum fio_kind kind, bool write, unsigned int qd,
		    unsigned int nq)
{
	struct baseline *b;

	if (kind == FIO_PSYNC_TMPFS)
		qd = 1;
	for (unsigned int i = 0; i < nbases; i++)
		if (bases[i].kind == kind && bases[i].write == write &&
		    bases[i].qd == qd && bases[i].nq == nq)
			return (int)i;
	b = &bases[nbases];
	b->kind = kind;
	b->write = write;
	b->qd = qd;
	b->nq = nq;
	if (kind == FIO_PSYNC_TMPFS)
		snprintf(b->name, sizeof(b->name), "%s-%s-%uj",
			 fio_kind_name[kind], write ? "randwrite" : "randread",
			 nq);
	else
		snprintf(b->name, sizeof(b->name), "%s-%s-qd%u-%uj",
			 fio_kind_name[kind], write ? "randwrite" : "randread",
			 qd, nq);
	return (int)nbases++;
}

static const unsigned int qds[] = { 1, 32, 128 };

/* mode: 0 off, 1 batch, 2 raw */
static void add_point(enum be be, bool w, unsigned int qd, unsigned int nq,
		      unsigned int mode)
{
	static const char *const mode_name[] = { "off", "batch", "raw" };
	bool bt = mode == 1;
	static const char *const quick[] = { "tmpfs-randread-qd32-1q-off",
					     "ram-randread-qd32-1q-off" };
	struct point *p = &points[npoints];
	bool keep;

	p->be = be;
	p->write = w;
	p->qd = qd;
	p->nq = nq;
	p->batch = bt;
	p->raw = mode == 2;
	snprintf(p->name, sizeof(p->name), "%s-%s-qd%u-%uq-%s", be_name[be],
		 w ? "randwrite" : "randread", qd, nq, mode_name[mode]);
	keep = filter_match(p->name);
	if (opt.quick && !opt.filter)
		keep = !strcmp(p->name, quick[0]) || !strcmp(p->name, quick[1]);
	if (!keep)
		return;
	p->base = p->base_alt = -1;
	if (!opt.no_fio) {
		p->base = base_get(be == BE_TMPFS  ? FIO_URING_TMPFS
				   : be == BE_DISK ? FIO_URING_DISK
				   : be == BE_LOOP ? FIO_URING_LOOP
						   : FIO_PSYNC_TMPFS,
				   w, qd, nq);
		if (be == BE_RAM)
			p->base_alt = base_get(FIO_URING_TMPFS, w, qd, nq);
	}
	npoints++;
}

/* backend x rw x depth x queues x mode (off, batch, raw), in that order */
static void build_matrix(void)
{
	unsigned int n = BE_N * 2 * 3 * MAXQ * 3;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int mode = i % 3, nq = i / 3 % MAXQ + 1;
		unsigned int qi = i / (3 * MAXQ) % 3, w = i / (9 * MAXQ) % 2;
		unsigned int be = i / (18 * MAXQ);

		add_point((enum be)be, w, qds[qi], nq, mode);
	}
}

/* ---- backing files ----------------------------------------------------------- */

static void cleanup_files(void)
{
	if (loop_fd >= 0)
		close(loop_fd);
	loop_fd = -1;
	for (unsigned int i = 0; i < BE_N; i++)
		if (file_of[i][0])
			unlink(file_of[i]);
}

static void on_signal(int sig)
{
	cleanup_files();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Create the file and write every byte once (no holes, no unwritten
 * extents), then make it durable. */
static int prealloc(const char *path, uint64_t size)
{
	uint64_t seed = 12345;
	uint64_t *buf = malloc(1u << 20);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int ret = 0;

	if (fd < 0 || !buf) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (uint64_t off = 0; off < size && !ret; off += 1u << 20) {
		size_t len = size - off < (1u << 20) ? size - off : 1u << 20;

		for (size_t i = 0; i < len / 8; i++)
			buf[i] = rng_next(&seed);
		if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
			ret = -EIO;
	}
	if (!ret && fsync(fd))
		ret = -errno;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/* Attach path to a free loop device with direct I/O (LOOP_CONFIGURE,
 * Linux 5.8; as `losetup --direct-io=on`); its name goes to dev.  The
 * device detaches itself when loop_fd, its last user, is closed. */
static int loop_attach(const char *path, char *dev, size_t len)
{
	struct loop_config c = { 0 };
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	int n = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	int e = errno;

	if (ctl >= 0)
		close(ctl);
	c.fd = (unsigned int)open(path, O_RDWR | O_CLOEXEC);
	if (n >= 0 && (int)c.fd >= 0) {
		snprintf(dev, len, "/dev/loop%d", n);
		loop_fd = open(dev, O_RDWR | O_CLOEXEC);
		c.block_size = 512;
		c.info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR;
		if (loop_fd < 0 || ioctl(loop_fd, LOOP_CONFIGURE, &c))
			n = -1;
		e = errno;
	}
	if ((int)c.fd >= 0)
		close((int)c.fd);
	if (n >= 0)
		return 0;
	fprintf(stderr, "devbench: no loop device with direct I/O over %s "
		"(%s; the loop rows need root and the loop module: leave "
		"them out with --filter)\n", path, strerror(e));
	if (loop_fd >= 0)
		close(loop_fd);
	loop_fd = -1;
	dev[0] = '\0';
	return -e;
}

static int make_files(void)
{
	bool need[BE_N] = { false };
	struct statfs sf;

	for (unsigned int i = 0; i < npoints; i++)
		need[points[i].be] = true;
	for (unsigned int i = 0; i < nbases; i++)
		need[fio_kind_be[bases[i].kind]] = true;
	for (unsigned int be = 0; be < BE_RAM; be++) {
		const char *dir = be == BE_DISK ? opt.disk_dir : opt.tmpfs_dir;

		if (!need[be])
			continue;
		if (be == BE_TMPFS &&
		    (statfs(dir, &sf) || sf.f_type != TMPFS_MAGIC))
			fprintf(stderr, "devbench: warning: %s is not tmpfs\n",
				dir);
		snprintf(file_of[be], sizeof(file_of[be]),
			 "%s/devbench.%d.%s.img", dir, (int)getpid(),
			 be_name[be]);
		if (prealloc(file_of[be], opt.size)) {
			fprintf(stderr, "devbench: cannot create %s\n",
				file_of[be]);
			return -EIO;
		}
		memcpy(path_of[be], file_of[be], sizeof(path_of[be]));
		if (be == BE_LOOP && loop_attach(file_of[be], path_of[be],
						 sizeof(path_of[be])))
			return -EIO;
	}
	return 0;
}

/* ---- output ---------------------------------------------------------------------- */

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];

	snprintf(buf, len, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
}

static const struct result *base_res(int i)
{
	return i >= 0 && bases[i].r.ran && !bases[i].r.failed ? &bases[i].r
							       : NULL;
}

static void fmt_ratio(char *buf, size_t len, double a, double b)
{
	if (b > 0 && !isnan(a) && !isnan(b))
		snprintf(buf, len, "%.2fx", a / b);
	else
		snprintf(buf, len, "-");
}

static void print_row(const struct point *p)
{
	const struct result *r = &p->r, *b = base_res(p->base);
	const struct result *a = base_res(p->base_alt);
	char ratio[16], alt[16];

	fmt_ratio(ratio, sizeof(ratio), r->iops, b ? b->iops : 0);
	fmt_ratio(alt, sizeof(alt), r->iops, a ? a->iops : 0);
	printf("| %s%s | %.0f | %.1f | %.1f | %.2f (%.2f) | %.3f | %.3f | ",
	       p->name, r->failed ? " (FAILED)" : "", r->iops, r->p50_us,
	       r->p99_us, r->cpu_us, r->dev_cpu_us, r->kicks, r->irqs);
	if (b)
		printf("%s | %.0f | %.1f | %.1f | %.2f | **%s** | %s | %.1f / %.1f |\n",
		       bases[p->base].name, b->iops, b->p50_us, b->p99_us,
		       b->cpu_us, ratio, alt, r->bg_cores, b->bg_cores);
	else
		printf("- | - | - | - | - | - | %s | %.1f |\n", alt,
		       r->bg_cores);
}

static void print_table(void)
{
	printf("\n| point | IOPS | p50 us | p99 us | CPU us/req (device) "
	       "| kicks/req | irqs/req | baseline | base IOPS | base p50 us "
	       "| base p99 us | base CPU us/IO | IOPS ratio "
	       "| vs fio-uring-tmpfs | other load, cores |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned int i = 0; i < npoints; i++)
		if (points[i].r.ran)
			print_row(&points[i]);
}

static void json_result(FILE *f, const struct result *r)
{
	fprintf(f, "\"ok\": %s, \"iops\": %.1f, \"p50_us\": %.3f, "
		   "\"p99_us\": %.3f, \"mean_us\": %.3f, \"cpu_us_per_req\": %.4f, ",
		r->failed ? "false" : "true", r->iops, r->p50_us, r->p99_us,
		r->mean_us, r->cpu_us);
	if (r->dev_cpu_us >= 0)
		fprintf(f, "\"device_cpu_us_per_req\": %.4f, "
			   "\"kicks_per_req\": %.4f, \"irqs_per_req\": %.4f, "
			   "\"notifies_per_req\": %.4f, ",
			r->dev_cpu_us, r->kicks, r->irqs, r->notifies);
	if (r->dev_cpu_us < 0)
		fprintf(f, "\"fio_threads_cpu_us_per_req\": %.4f, ",
			r->fio_thread_cpu_us);
	fprintf(f, "\"other_load_cores\": %.2f, \"runs_iops\": [",
		r->bg_cores);
	for (unsigned int i = 0; i < r->nruns; i++)
		fprintf(f, "%s%.0f", i ? ", " : "", r->runs[i]);
	fprintf(f, "], \"requests\": %" PRIu64, r->requests);
}

static void json_points(FILE *f)
{
	bool first = true;

	fprintf(f, "  \"points\": [\n");
	for (unsigned int i = 0; i < npoints; i++) {
		const struct point *p = &points[i];
		const struct result *b = base_res(p->base);
		const struct result *a = base_res(p->base_alt);

		if (!p->r.ran)
			continue;
		fprintf(f, "%s    {\"name\": \"%s\", \"backend\": \"%s\", "
			   "\"rw\": \"%s\", \"bs\": %u, \"qd\": %u, \"queues\": %u, "
			   "\"batch\": %s, \"raw\": %s, ",
			first ? "" : ",\n", p->name, be_name[p->be],
			p->write ? "randwrite" : "randread", BS, p->qd, p->nq,
			p->batch ? "true" : "false", p->raw ? "true" : "false");
		json_result(f, &p->r);
		if (b)
			fprintf(f, ", \"baseline\": \"%s\", \"ratio_iops\": %.4f",
				bases[p->base].name, p->r.iops / b->iops);
		if (a)
			fprintf(f, ", \"baseline_alt\": \"%s\", "
				   "\"ratio_iops_alt\": %.4f",
				bases[p->base_alt].name, p->r.iops / a->iops);
		fprintf(f, "}");
		first = false;
	}
	fprintf(f, "\n  ],\n");
}

static void json_bases(FILE *f)
{
	fprintf(f, "  \"baselines\": [\n");
	for (unsigned int i = 0; i < nbases; i++) {
		const struct baseline *b = &bases[i];

		fprintf(f, "    {\"name\": \"%s\", \"command\": \"%s\", ",
			b->name, b->cmd);
		json_result(f, &b->r);
		fprintf(f, "}%s\n", i + 1 < nbases ? "," : "");
	}
	fprintf(f, "  ]\n");
}

static int write_json(const char *path, const char *date)
{
	FILE *f = fopen(path, "we");
	struct utsname u;
	char cpu[256];

	if (!f)
		return -errno;
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	fprintf(f, "{\n  \"command\": \"%s\",\n  \"date\": \"%s\",\n"
		   "  \"machine\": {\"nproc\": %ld, \"cpu\": \"%s\", "
		   "\"kernel\": \"%s\"},\n",
		opt.cmdline, date, sysconf(_SC_NPROCESSORS_ONLN), cpu,
		u.release);
	fprintf(f, "  \"params\": {\"seconds\": %.3f, \"warmup\": %.3f, "
		   "\"size\": %" PRIu64 ", \"requests\": %" PRIu64
		   ", \"seed\": %" PRIu64 ", \"repeat\": %u, \"quiet_wait\": %.1f, \"queue_size\": %u, "
		   "\"tmpfs_dir\": \"%s\", \"disk_dir\": \"%s\"},\n",
		opt.seconds, opt.warmup, opt.size, opt.requests, opt.seed,
		opt.repeat, opt.quiet_wait, QSIZE, opt.tmpfs_dir, opt.disk_dir);
	json_points(f);
	json_bases(f);
	fprintf(f, "}\n");
	return fclose(f) ? -EIO : 0;
}

/* The two target figures, if their rows ran. */
static void print_targets(void)
{
	static const struct {
		const char *row;
		double want;
		const char *what;
	} t[] = {
		{ "tmpfs-randread-qd32-1q-off", 0.9, "file on tmpfs vs host fio io_uring" },
		{ "tmpfs-randread-qd32-1q-batch", 0.9, "file on tmpfs vs host fio io_uring" },
		{ "disk-randread-qd32-1q-off", 0.9, "file on disk (O_DIRECT) vs host fio io_uring" },
		{ "ram-randread-qd32-1q-off", 2.0, "RAM disk vs host fio psync on tmpfs" },
		{ "ram-randread-qd32-1q-batch", 2.0, "RAM disk vs host fio psync on tmpfs" },
		{ "tmpfs-randread-qd32-1q-raw", 1.0, "file on tmpfs vs host fio io_uring, raw" },
		{ "ram-randread-qd32-1q-raw", 2.0, "RAM disk vs host fio psync on tmpfs, raw" },
	};

	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		for (unsigned int k = 0; k < npoints; k++) {
			const struct point *p = &points[k];
			const struct result *b = base_res(p->base);

			if (strcmp(p->name, t[i].row) || !p->r.ran || !b)
				continue;
			printf("target %s (%s): %.2fx, want >= %.1fx: %s\n",
			       p->name, t[i].what, p->r.iops / b->iops,
			       t[i].want,
			       p->r.iops / b->iops >= t[i].want ? "met"
								: "MISSED");
		}
}

/* ---- main ---------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: devbench [options]\n"
"  4 KiB random read/write at queue depth 1, 32, 128 with 1 and 2 queues\n"
"  on four backends (file on tmpfs, file on disk with O_DIRECT, a loop\n"
"  device with direct I/O over a tmpfs file opened with O_DIRECT (root),\n"
"  RAM disk), batch off, batch on and raw; the host's own fio on the same\n"
"  file or device is the baseline: io_uring, same depth, numjobs = queues\n"
"  (direct=1 on disk and loop, direct=0 on tmpfs, which has no O_DIRECT);\n"
"  RAM rows: fio psync on a tmpfs file.\n"
"  --quick          a short subset (tmpfs and RAM, randread QD32 1 queue)\n"
"  --seconds N      measured seconds per point (default 1; quick 0.5)\n"
"  --warmup N       seconds before measuring (default 0.25; quick 0.1)\n"
"  --filter PAT,..  rows whose name contains PAT (or matches a glob)\n"
"                   names: BACKEND-RW-qdN-Nq-off|batch|raw, e.g.\n"
"                   ram-randread-qd32-1q-raw (raw: the driver spins on\n"
"                   the used ring and the iothreads poll; nothing sleeps)\n"
"                   ram-randread-qd32-1q-off\n"
"  --json PATH      also write the results as JSON\n"
"  --size SIZE      disk size (default 512M; quick 64M)\n"
"  --tmpfs-dir DIR  (default /dev/shm)   --disk-dir DIR (default /var/tmp)\n"
"  --requests N     fixed work: N requests per point, no warm-up\n"
"  --seed N         random offsets (default 1)\n"
"  --repeat N       run every point and baseline N times (1..8), keep\n"
"                   the run with the most IOPS (all are in the JSON)\n"
"  --quiet-wait N   before each run wait up to N s until other processes\n"
"                   use under 0.25 cores (the machine is shared)\n"
"  --no-fio         no baselines\n"
"  --no-prefill     do not write the RAM disk once before measuring (for\n"
"                   callgrind: the prefill's iothread would share the\n"
"                   measured iothread's profile)\n"
"  --latency        the disks keep their latency breakdown, as under\n"
"                   vmm run -v or --stats (default: not kept, as vmm run)\n"
"  --limit          the disks have a rate limit far above any rate here\n"
"                   (iops=100000000,bw=1000G): every request takes the\n"
"                   limited path, and none waits\n"
"  --list           print the selected rows and exit\n");
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "seconds", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "filter", required_argument, NULL, 'f' },
		{ "json", required_argument, NULL, 'j' },
		{ "size", required_argument, NULL, 'S' },
		{ "tmpfs-dir", required_argument, NULL, 'T' },
		{ "disk-dir", required_argument, NULL, 'D' },
		{ "requests", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'R' },
		{ "quiet-wait", required_argument, NULL, 'Q' },
		{ "no-fio", no_argument, NULL, 'N' },
		{ "no-prefill", no_argument, NULL, 'P' },
		{ "latency", no_argument, NULL, 'L' },
		{ "limit", no_argument, NULL, 'm' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool secs = false, warm = false, size = false;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q': opt.quick = true; break;
		case 's': opt.seconds = atof(optarg); secs = true; break;
		case 'w': opt.warmup = atof(optarg); warm = true; break;
		case 'f': opt.filter = optarg; break;
		case 'j': opt.json = optarg; break;
		case 'S':
			if (blk_parse_size(optarg, &opt.size) ||
			    opt.size % BS || opt.size < (1u << 20)) {
				fprintf(stderr, "devbench: bad --size '%s'\n",
					optarg);
				return -EINVAL;
			}
			size = true;
			break;
		case 'T': opt.tmpfs_dir = optarg; break;
		case 'D': opt.disk_dir = optarg; break;
		case 'n': opt.requests = strtoull(optarg, NULL, 0); break;
		case 'r': opt.seed = strtoull(optarg, NULL, 0); break;
		case 'R': opt.repeat = (unsigned int)atoi(optarg); break;
		case 'Q': opt.quiet_wait = atof(optarg); break;
		case 'N': opt.no_fio = true; break;
		case 'P': opt.no_prefill = true; break;
		case 'L': opt.latency = true; break;
		case 'm': opt.limit = true; break;
		case 'l': opt.list = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc || opt.seconds <= 0 || opt.warmup < 0 ||
	    opt.repeat < 1 || opt.repeat > 8) {
		usage(stderr);
		return -EINVAL;
	}
	if (opt.quick) {
		opt.seconds = secs ? opt.seconds : 0.5;
		opt.warmup = warm ? opt.warmup : 0.1;
		opt.size = size ? opt.size : 64ull << 20;
	}
	for (int i = 0, len = 0; i < argc && len < (int)sizeof(opt.cmdline);
	     i++)
		len += snprintf(opt.cmdline + len,
				sizeof(opt.cmdline) - (size_t)len, "%s%s",
				i ? " " : "", argv[i]);
	return 0;
}

/* --repeat: keep the run with the most IOPS (the machine is shared: a
 * run that other processes slowed down says little about the device),
 * and remember every run's IOPS. */
/* Other processes' CPU use now, in cores (sampled over 200 ms). */
static double other_load(void)
{
	struct rusage ru0, ru1;
	double b0, b1;

	getrusage(RUSAGE_SELF, &ru0);
	b0 = sys_busy();
	usleep(200000);
	getrusage(RUSAGE_SELF, &ru1);
	b1 = sys_busy();
	return (b1 - b0 - (ru_sec(&ru1) - ru_sec(&ru0))) / 0.2;
}

/* --quiet-wait: before a run, wait until other processes leave the
 * machine alone (under 0.25 cores), for at most opt.quiet_wait s. */
static void wait_quiet(void)
{
	uint64_t end = mono_ns() + (uint64_t)(opt.quiet_wait * 1e9);
	bool said = false;

	while (opt.quiet_wait > 0 && mono_ns() < end) {
		double l = other_load();

		if (l < 0.25)
			return;
		if (!said)
			fprintf(stderr, "devbench: waiting for a quiet machine "
					"(other load %.1f cores)\n", l);
		said = true;
		usleep(800000);
	}
}

static void keep_best(struct result *best, const struct result *r)
{
	double runs[8];
	unsigned int n = best->nruns;

	memcpy(runs, best->runs, sizeof(runs));
	if (!best->ran || (!r->failed && (best->failed || r->iops > best->iops)))
		*best = *r;
	memcpy(best->runs, runs, sizeof(runs));
	if (n < 8)
		best->runs[n++] = r->iops;
	best->nruns = n;
}

static void run_base(struct baseline *b)
{
	fprintf(stderr, "devbench: %s\n", b->name);
	for (unsigned int k = 0; k < opt.repeat; k++) {
		struct result r = { 0 };

		wait_quiet();
		run_fio(b, &r);
		keep_best(&b->r, &r);
	}
}

/* Baselines run right before the first row that needs them, so a row
 * and its baseline see the same machine. */
static void run_all(void)
{
	for (unsigned int i = 0; i < npoints; i++) {
		struct point *p = &points[i];
		int ids[2] = { p->base, p->base_alt };

		for (unsigned int k = 0; k < 2; k++)
			if (ids[k] >= 0 && !bases[ids[k]].r.ran)
				run_base(&bases[ids[k]]);
		fprintf(stderr, "devbench: %s\n", p->name);
		for (unsigned int k = 0; k < opt.repeat; k++) {
			struct result r = { 0 };

			wait_quiet();
			if (run_point(p, &r))
				fprintf(stderr, "devbench: %s failed\n",
					p->name);
			keep_best(&p->r, &r);
		}
	}
}

int main(int argc, char **argv)
{
	char date[64];
	time_t now = time(NULL);
	int failed = 0;

	if (parse_args(argc, argv))
		return 2;
	build_matrix();
	if (opt.list) {
		for (unsigned int i = 0; i < npoints; i++)
			printf("%s\n", points[i].name);
		return 0;
	}
	if (!npoints) {
		fprintf(stderr, "devbench: no row matches '%s'\n", opt.filter);
		return 2;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (make_files()) {
		cleanup_files();
		return 1;
	}
	run_all();
	for (unsigned int be = 0; be < BE_N; be++)
		for (unsigned int bt = 0; bt < 2; bt++)
			blk_dev_destroy(duts[be][bt].d);
	cleanup_files();
	print_table();
	printf("\n");
	print_targets();
	for (unsigned int i = 0; i < npoints; i++)
		failed |= points[i].r.failed;
	if (opt.json && write_json(opt.json, date))
		fprintf(stderr, "devbench: cannot write %s\n", opt.json);
	return failed ? 1 : 0;
}
