/* File and block-device backend: one io_uring per virtqueue.
 *
 * Datapath: submit() preps one SQE per request (no allocation, no lock,
 * no syscall), kick() hands everything prepped to the kernel with one
 * io_uring_enter, reap() walks the CQ ring without a syscall.  The only
 * syscalls outside kick() are rare: a resubmission after short or
 * interrupted I/O, or a task-work flush when the CQ ring is empty but
 * the kernel says completions are pending.
 *
 * Invariant: a queue never has more than depth requests queued and not
 * reaped, and its SQ ring has at least depth entries, so a request that
 * has to be resubmitted from reap() always finds a free SQE.
 *
 * Files on tmpfs are the exception for reads and writes: those run
 * inside submit(), which says they are finished (BLK_SUBMIT_DONE), as
 * the RAM disk does (see probe_sync_rw() for why).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "blk/backend.h"
#include "blk/blk.h"
#include "blk/uring.h"

#define PUNCH (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
#define ZERO (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)
/* On a block device: a real discard (kernels that still accept it). */
#define BDEV_DISCARD (PUNCH | FALLOC_FL_NO_HIDE_STALE)

struct blk_backend {
	int fd;
	/* The largest size the disk has had (atomic): submit()'s check of
	 * the parser's range.  A shrink leaves it, so that a request parsed
	 * against the old end still passes it, and fails on the file's
	 * short read or write instead. */
	uint64_t size;
	bool bdev;         /* a block device: its size is its own */
	/* fallocate modes; 0: not supported (never passed to the kernel,
	 * where mode 0 would allocate). */
	int discard_mode;
	int wz_mode;       /* WRITE_ZEROES, unmap clear */
	int wz_unmap_mode; /* WRITE_ZEROES, unmap set */
	bool sync_rw;      /* IN/OUT served in submit(): see probe_sync_rw() */
	bool sync_all;     /* engine=sync, or no io_uring: no ring at all */
	/* A block device's queue/nr_requests (0: a file, or unknown): the
	 * most requests a queue has in flight.  Past the device's tags a
	 * non-blocking submit gets EAGAIN and io_uring hands the request to
	 * an io-wq worker, a thread switch per request (seen on null_blk
	 * with 64 tags under a guest with deep queues); the requests beyond
	 * wait in the guest's ring instead.  nr_requests counts one hardware
	 * queue's tags and the cap is per virtqueue: iothreads whose
	 * requests meet on one hardware queue can still exceed it. */
	unsigned int max_inflight;
};

struct blk_bq {
	struct io_uring ring;
	const struct blk_backend *b;
	int fd;            /* b->fd, or 0: the registered file */
	uint8_t sqe_flags; /* IOSQE_FIXED_FILE when registered */
	struct blk_uring_bufs bufs; /* guest memory, registered */
	int wflags;        /* RWF_DSYNC when write-through */
	int efd;
	unsigned int depth;
	unsigned int inflight; /* in the ring: prepped and not reaped */
	bool need_kick;    /* SQEs prepped outside submit() */
	bool sync_rw;      /* b->sync_rw or b->sync_all */
	bool sync_all;     /* b->sync_all: every request finished in submit() */
};

static int __attribute__((format(printf, 4, 5)))
fail(char *msg, unsigned int msglen, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- open: probes ---------------------------------------------------- */

static bool read_queue_attr(dev_t rdev, const char *name, uint64_t *val)
{
	char path[128];
	unsigned long long v;

	/* The disk's queue/, or for a partition its parent's. */
	for (unsigned int i = 0; i < 2; i++) {
		FILE *f;
		int n;

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%squeue/%s",
			 major(rdev), minor(rdev), i ? "../" : "", name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fscanf(f, "%llu", &v);
		fclose(f);
		if (n == 1) {
			*val = v;
			return true;
		}
	}
	return false;
}

/* A block device refuses a range at or beyond its end with -EINVAL, but
 * only after it refused an unknown mode with -EOPNOTSUPP: so a call at
 * offset = size tells which modes exist and changes nothing. */
static bool bdev_mode_ok(int fd, uint64_t size, int mode)
{
	return fallocate(fd, mode, (off_t)size, 4096) == 0 ||
	       errno != EOPNOTSUPP;
}

static void probe_bdev(struct blk_backend *b, dev_t rdev)
{
	uint64_t dmax = 0, wzmax = 0;

	read_queue_attr(rdev, "discard_max_bytes", &dmax);
	read_queue_attr(rdev, "write_zeroes_max_bytes", &wzmax);
	/* PUNCH on a block device is a write-zeroes with unmap and no
	 * fallback: it needs the device's write-zeroes support. */
	if (dmax && bdev_mode_ok(b->fd, b->size, BDEV_DISCARD))
		b->discard_mode = BDEV_DISCARD;
	else if (wzmax && bdev_mode_ok(b->fd, b->size, PUNCH))
		b->discard_mode = PUNCH;
	/* ZERO_RANGE falls back to writing zeroes: works on any device. */
	if (bdev_mode_ok(b->fd, b->size, ZERO))
		b->wz_mode = ZERO;
	if (wzmax && bdev_mode_ok(b->fd, b->size, PUNCH))
		b->wz_unmap_mode = PUNCH;
	else
		b->wz_unmap_mode = b->wz_mode;
}

/* A regular file is probed through an unnamed O_TMPFILE inode in its
 * directory (same filesystem, checked by st_dev), never the file itself:
 * measured on ext4 and tmpfs, even a PUNCH_HOLE beyond EOF updates the
 * file's mtime and ctime, and a ZERO_RANGE|KEEP_SIZE beyond EOF also
 * allocates blocks.  Where O_TMPFILE is refused (NFS, 9p, a read-only
 * directory) both features stay off; the file is never touched. */
static void probe_file(struct blk_backend *b, const char *path, dev_t dev)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path),
			  path) >= (int)sizeof(dir))
		return;
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_dev == dev &&
	    ftruncate(fd, 16384) == 0) {
		if (fallocate(fd, PUNCH, 0, 4096) == 0)
			b->discard_mode = PUNCH;
		if (fallocate(fd, ZERO, 4096, 4096) == 0)
			b->wz_mode = ZERO;
	}
	close(fd);
	/* WRITE_ZEROES with unmap deallocates.  Without unmap we keep the
	 * blocks allocated (ZERO_RANGE) where the filesystem can, else fall
	 * back to PUNCH_HOLE, which reads back as zeroes just the same. */
	b->wz_unmap_mode = b->discard_mode ? b->discard_mode : b->wz_mode;
	if (!b->wz_mode)
		b->wz_mode = b->discard_mode;
}

/* Serve reads and writes of this file in the iothread itself?
 *
 * tmpfs has no non-blocking reads on some kernels (preadv2 with
 * RWF_NOWAIT fails with EOPNOTSUPP; 6.18 measured), so io_uring hands
 * every read to an io-wq worker thread: one more busy thread and one
 * more wake-up per request, 0.44-0.77x of host fio at QD32 on 2 CPUs.
 * A page-cache copy from tmpfs never blocks on I/O, so doing it right
 * away in the iothread costs no more than the copy; the price is that a
 * swapped-out tmpfs page blocks the iothread for the swap-in.  Only for
 * memory filesystems: elsewhere (NFS, FUSE) a read could wait on the
 * network or a disk and would serialise the queue.  Where the kernel
 * can read tmpfs without blocking, io_uring does it inline and stays.
 * Reads one block at offset 0 (nothing at all once EOPNOTSUPP). */
static bool probe_sync_rw(int fd, uint32_t blk_size)
{
	struct statfs sfs;
	struct iovec iov = { .iov_len = blk_size };
	bool ret;

	if (fstatfs(fd, &sfs) < 0 ||
	    (sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC))
		return false;
	/* Aligned, and a whole block: right for O_DIRECT too. */
	iov.iov_base = aligned_alloc(blk_size, blk_size);
	if (!iov.iov_base)
		return false;
	ret = preadv2(fd, &iov, 1, 0, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP;
	free(iov.iov_base);
	return ret;
}

/* ---- open ------------------------------------------------------------ */

static const char no_direct[] = "O_DIRECT is not supported by this filesystem";

static int open_fd(const struct blk_opts *o, char *msg, unsigned int msglen)
{
	const char *p = o->path;
	/* O_NONBLOCK: a FIFO given by mistake must not hang the open. */
	int flags = (o->ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY |
		    O_NONBLOCK | (o->direct ? O_DIRECT : 0);
	struct stat st;
	int fd, err;

	if (stat(p, &st) < 0) {
		err = errno;
		return fail(msg, msglen, -err, "%s: %s", p, strerror(err));
	}
	if (S_ISDIR(st.st_mode))
		return fail(msg, msglen, -EISDIR, "%s: is a directory", p);
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return fail(msg, msglen, -EINVAL,
			    "%s: not a regular file or block device", p);
	fd = open(p, flags);
	if (fd < 0) {
		err = errno;
		if (err == EINVAL && o->direct)
			return fail(msg, msglen, -EINVAL, "%s: %s", p,
				    no_direct);
		return fail(msg, msglen, -err, "%s: %s", p, strerror(err));
	}
	/* io_uring would return -EAGAIN instead of waiting on an
	 * O_NONBLOCK file: clear it again. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		err = errno;
		close(fd);
		return fail(msg, msglen, -err, "%s: %s", p, strerror(err));
	}
	return fd;
}

/* Size and logical block size; checks the type again on the open fd. */
static int file_geometry(const struct blk_opts *o, int fd, struct stat *st,
			 uint64_t *size, uint32_t *blk_size, char *msg,
			 unsigned int msglen)
{
	const char *p = o->path;
	struct statx stx;
	int err, ssz;

	if (fstat(fd, st) < 0) {
		err = errno;
		return fail(msg, msglen, -err, "%s: %s", p, strerror(err));
	}
	*blk_size = 512;
	if (S_ISBLK(st->st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size) < 0 ||
		    ioctl(fd, BLKSSZGET, &ssz) < 0) {
			err = errno;
			return fail(msg, msglen, -err, "%s: %s", p,
				    strerror(err));
		}
		if (ssz >= 512 && ssz <= 65536)
			*blk_size = (uint32_t)ssz;
		return 0;
	}
	if (!S_ISREG(st->st_mode))
		return fail(msg, msglen, -EINVAL,
			    "%s: not a regular file or block device", p);
	*size = (uint64_t)st->st_size;
	if (!o->direct ||
	    statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) < 0 ||
	    !(stx.stx_mask & STATX_DIOALIGN))
		return 0;
	if (!stx.stx_dio_offset_align)
		return fail(msg, msglen, -EINVAL, "%s: %s", p, no_direct);
	/* O_DIRECT I/O must be aligned to what the filesystem needs. */
	if (stx.stx_dio_offset_align > 512 &&
	    stx.stx_dio_offset_align <= 65536)
		*blk_size = stx.stx_dio_offset_align;
	return 0;
}

static int size_check(const char *p, uint64_t size, uint32_t blk_size,
		      char *msg, unsigned int msglen)
{
	if (!size)
		return fail(msg, msglen, -EINVAL, "%s: size 0 (empty)", p);
	if (size % 512 || size % blk_size)
		return fail(msg, msglen, -EINVAL,
			    "%s: size %llu is not a multiple of %u", p,
			    (unsigned long long)size,
			    size % 512 ? 512 : blk_size);
	return 0;
}

/* engine=sync, or auto on a host where io_uring_setup fails (an old
 * kernel, kernel.io_uring_disabled, a container's seccomp profile):
 * every request is a synchronous call in its iothread. */
static int choose_engine(const struct blk_opts *o, struct blk_backend *b,
			 struct blk_backend_info *info, char *msg,
			 unsigned int msglen)
{
	struct io_uring ring;
	bool fixed;
	int efd, ret;

	if (o->engine == BLK_ENGINE_SYNC) {
		b->sync_all = true;
		return 0;
	}
	/* The very ring each queue will make: restricted, which needs a
	 * newer kernel than io_uring itself. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return fail(msg, msglen, -errno, "%s: eventfd: %s", o->path,
			    strerror(errno));
	ret = blk_uring_open(&ring, 1, efd, b->fd, NULL, &fixed, NULL);
	if (!ret)
		io_uring_queue_exit(&ring);
	close(efd);
	if (!ret)
		return 0;
	if (o->engine == BLK_ENGINE_URING)
		return fail(msg, msglen, ret, "%s: engine=uring: io_uring: %s",
			    o->path, strerror(-ret));
	b->sync_all = true;
	snprintf(info->note, sizeof(info->note),
		 "%s: io_uring unavailable (%s): serving it with synchronous "
		 "I/O in its iothreads", o->path, strerror(-ret));
	return 0;
}

static int file_open(const struct blk_opts *o, struct blk_backend **out,
		     struct blk_backend_info *info, char *msg,
		     unsigned int msglen)
{
	struct blk_backend *b;
	struct stat st;
	uint64_t size = 0;
	uint32_t blk_size;
	int fd, ret;

	if (!o->path)
		return fail(msg, msglen, -EINVAL, "file backend: no path");
	fd = open_fd(o, msg, msglen);
	if (fd < 0)
		return fd;
	ret = file_geometry(o, fd, &st, &size, &blk_size, msg, msglen);
	if (ret)
		goto err_close;
	ret = size_check(o->path, size, blk_size, msg, msglen);
	if (ret)
		goto err_close;
	ret = -ENOMEM;
	b = calloc(1, sizeof(*b));
	if (!b) {
		fail(msg, msglen, ret, "%s: out of memory", o->path);
		goto err_close;
	}
	b->fd = fd;
	b->size = size;
	b->bdev = S_ISBLK(st.st_mode);
	if (b->bdev) {
		uint64_t nr = 0;

		if (read_queue_attr(st.st_rdev, "nr_requests", &nr))
			b->max_inflight = nr < UINT_MAX ? (unsigned int)nr
							: UINT_MAX;
	}
	if (!o->ro && S_ISBLK(st.st_mode))
		probe_bdev(b, st.st_rdev);
	else if (!o->ro)
		probe_file(b, o->path, st.st_dev);
	if (S_ISREG(st.st_mode))
		b->sync_rw = probe_sync_rw(fd, blk_size);
	*info = (struct blk_backend_info){
		.size = size,
		.blk_size = blk_size,
		.ro = o->ro,
		.discard = b->discard_mode != 0,
		.write_zeroes = b->wz_mode != 0,
	};
	ret = choose_engine(o, b, info, msg, msglen);
	if (ret) {
		free(b);
		goto err_close;
	}
	*out = b;
	return 0;

err_close:
	close(fd);
	return ret;
}

static void file_close(struct blk_backend *b)
{
	if (!b)
		return;
	close(b->fd);
	free(b);
}

static int file_resize(struct blk_backend *b, uint64_t size, char *msg,
		       unsigned int msglen)
{
	if (b->bdev) {
		snprintf(msg, msglen, "a block device's size is the "
			 "device's own; resize it on the host");
		return -EOPNOTSUPP;
	}
	if (ftruncate(b->fd, (off_t)size) < 0) {
		int e = errno;

		snprintf(msg, msglen, "cannot resize the file: %s",
			 strerror(e));
		return -e;
	}
	if (size > __atomic_load_n(&b->size, __ATOMIC_RELAXED))
		__atomic_store_n(&b->size, size, __ATOMIC_RELAXED);
	return 0;
}

/* ---- queues ---------------------------------------------------------- */

static int file_queue_open(struct blk_backend *b, unsigned int depth,
			   bool write_through, const struct gmem *mem,
			   struct blk_bq **out)
{
	struct blk_bq *q;
	unsigned int entries = 1;
	bool fixed;
	int ret;

	if (!depth || depth > 32768)
		return -EINVAL;
	if (b->max_inflight && b->max_inflight < depth)
		depth = b->max_inflight;
	while (entries < depth)
		entries <<= 1;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->b = b;
	q->sync_rw = b->sync_rw || b->sync_all;
	q->sync_all = b->sync_all;
	q->depth = depth;
	q->wflags = write_through ? RWF_DSYNC : 0;
	if (q->sync_all) {
		q->efd = -1;
		*out = q;
		return 0;
	}
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = blk_uring_open(&q->ring, entries, q->efd, b->fd, mem, &fixed,
			     &q->bufs);
	if (ret)
		goto err_efd;
	q->fd = fixed ? 0 : b->fd;
	q->sqe_flags = fixed ? IOSQE_FIXED_FILE : 0;
	*out = q;
	return 0;

err_efd:
	close(q->efd);
err_free:
	free(q);
	return ret;
}

/* ---- datapath -------------------------------------------------------- */

/* fallocate mode for a DISCARD or WRITE_ZEROES; 0 if not supported. */
static int req_falloc_mode(const struct blk_backend *b,
			   const struct blk_req *r)
{
	if (r->type == VIRTIO_BLK_T_DISCARD)
		return b->discard_mode;
	return r->unmap ? b->wz_unmap_mode : b->wz_mode;
}

/* A read or write of one segment. */
static void req_prep_one(struct blk_bq *q, struct io_uring_sqe *sqe,
			 const struct blk_req *r, uint64_t off)
{
	void *p = r->iov[0].iov_base;
	unsigned int len = (unsigned int)r->iov[0].iov_len;
	int i = blk_uring_buf_index(&q->bufs, p, len);
	bool in = r->type == VIRTIO_BLK_T_IN;

	if (i >= 0 && in)
		io_uring_prep_read_fixed(sqe, q->fd, p, len, off, i);
	else if (i >= 0)
		io_uring_prep_write_fixed(sqe, q->fd, p, len, off, i);
	else if (in)
		io_uring_prep_read(sqe, q->fd, p, len, off);
	else
		io_uring_prep_write(sqe, q->fd, p, len, off);
}

static void req_prep(struct blk_bq *q, struct io_uring_sqe *sqe,
		     struct blk_req *r)
{
	uint64_t off = (r->sector << BLK_SECTOR_SHIFT) + r->transferred;
	int mode;

	/* One segment (the common case: a page) goes as a plain READ or
	 * WRITE, which saves the kernel importing an iovec array, and as
	 * READ_FIXED or WRITE_FIXED where it lies in registered memory,
	 * which saves pinning its pages. */
	switch (r->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		if (r->niov == 1)
			req_prep_one(q, sqe, r, off);
		else if (r->type == VIRTIO_BLK_T_IN)
			io_uring_prep_readv(sqe, q->fd, r->iov, r->niov, off);
		else
			io_uring_prep_writev(sqe, q->fd, r->iov, r->niov, off);
		if (r->type == VIRTIO_BLK_T_OUT)
			sqe->rw_flags = q->wflags;
		break;
	case VIRTIO_BLK_T_FLUSH:
		io_uring_prep_fsync(sqe, q->fd, IORING_FSYNC_DATASYNC);
		break;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		mode = req_falloc_mode(q->b, r);
		if (mode) {
			io_uring_prep_fallocate(sqe, q->fd, mode, (off_t)off,
						(off_t)r->len);
			break;
		}
		/* Not supported: a NOP, answered UNSUPP by req_complete(). */
		__attribute__((fallthrough));
	default:
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, r);
		return;
	}
	sqe->flags |= q->sqe_flags;
	io_uring_sqe_set_data(sqe, r);
}

/* Skip n bytes that completed: the request owns its iovecs. */
static void req_advance(struct blk_req *r, uint64_t n)
{
	while (n && r->niov) {
		if (n < r->iov[0].iov_len) {
			r->iov[0].iov_base = (uint8_t *)r->iov[0].iov_base + n;
			r->iov[0].iov_len -= n;
			return;
		}
		n -= r->iov[0].iov_len;
		r->iov++;
		r->niov--;
	}
}

/* Read or write r now, from r->transferred on, finishing short transfers. */
static uint8_t sync_rw(struct blk_bq *q, struct blk_req *r)
{
	while (r->transferred < r->len) {
		off_t off = (off_t)((r->sector << BLK_SECTOR_SHIFT) + r->transferred);
		int niov = (int)r->niov;
		ssize_t n;

		if (r->type == VIRTIO_BLK_T_IN)
			n = preadv2(q->b->fd, r->iov, niov, off, 0);
		else
			n = pwritev2(q->b->fd, r->iov, niov, off, q->wflags);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		/* An error, or end of file before the end of the request
		 * (truncated underneath us): IOERR, never a loop. */
		if (n <= 0) {
			r->err = n < 0 ? errno : 0;
			return VIRTIO_BLK_S_IOERR;
		}
		r->transferred += (uint64_t)n;
		req_advance(r, (uint64_t)n);
	}
	return VIRTIO_BLK_S_OK;
}

/* FLUSH, DISCARD, WRITE_ZEROES now (the sync engine). */
static uint8_t sync_other(struct blk_bq *q, struct blk_req *r)
{
	off_t off = (off_t)(r->sector << BLK_SECTOR_SHIFT);
	int mode, ret;

	switch (r->type) {
	case VIRTIO_BLK_T_FLUSH:
		do
			ret = fdatasync(q->b->fd);
		while (ret && errno == EINTR);
		r->err = ret ? errno : 0;
		return ret ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		mode = req_falloc_mode(q->b, r);
		if (!mode)
			return VIRTIO_BLK_S_UNSUPP;
		do
			ret = fallocate(q->b->fd, mode, off, (off_t)r->len);
		while (ret && errno == EINTR);
		if (ret && errno == EOPNOTSUPP)
			return VIRTIO_BLK_S_UNSUPP;
		r->err = ret ? errno : 0;
		return ret ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
	default:
		return VIRTIO_BLK_S_UNSUPP;
	}
}

static int file_submit(struct blk_bq *q, struct blk_req *r)
{
	struct io_uring_sqe *sqe;

	/* Host invariant: blk_req_parse() checked the range. */
#ifndef NDEBUG
	uint64_t size = __atomic_load_n(&q->b->size, __ATOMIC_RELAXED);

	assert(r->type == VIRTIO_BLK_T_FLUSH ||
	       (r->sector <= size >> BLK_SECTOR_SHIFT &&
		r->len <= size - (r->sector << BLK_SECTOR_SHIFT)));
#endif
	r->transferred = 0;
	if (q->sync_rw && (r->type == VIRTIO_BLK_T_IN ||
			   r->type == VIRTIO_BLK_T_OUT)) {
		r->result = sync_rw(q, r);
		return BLK_SUBMIT_DONE;
	}
	if (q->sync_all) {
		r->result = sync_other(q, r);
		return BLK_SUBMIT_DONE;
	}
	if (q->inflight >= q->depth)
		return -EAGAIN;
	sqe = io_uring_get_sqe(&q->ring);
	if (!sqe)
		return -EAGAIN;
	req_prep(q, sqe, r);
	q->inflight++;
	return 0;
}

static void file_kick(struct blk_bq *q)
{
	int ret = 0;

	if (q->sync_all)
		return;
	if (io_uring_sq_ready(&q->ring))
		ret = io_uring_submit(&q->ring);
	/* -EAGAIN/-EBUSY/-EINTR (or a partial submit): the SQEs stay in
	 * the ring; reap() (called when completions arrive, and while
	 * draining) tries again. */
	q->need_kick = ret < 0 || io_uring_sq_ready(&q->ring);
}

/* Prep r again, from r->transferred on.  The SQ always has room (see top). */
static void req_resubmit(struct blk_bq *q, struct blk_req *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (!sqe) {
		/* Cannot happen with the invariant above; if it somehow
		 * did, push what is queued and take the freed slot. */
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
	}
	assert(sqe);
	req_prep(q, sqe, r);
	q->need_kick = true;
}

/* Read or write finished with res.  true: r is finished, result set. */
static bool rw_complete(struct blk_bq *q, struct blk_req *r, int res)
{
	if (res == -EAGAIN || res == -EINTR) {
		req_resubmit(q, r);
		return false;
	}
	if (res < 0) {
		r->result = VIRTIO_BLK_S_IOERR;
		r->err = -res;
		return true;
	}
	r->transferred += (uint64_t)res;
	if (r->transferred >= r->len) {
		r->result = VIRTIO_BLK_S_OK;
		return true;
	}
	if (!res || !r->niov) {
		/* End of file before the end of the request (truncated
		 * underneath us): an error, never a loop. */
		r->result = VIRTIO_BLK_S_IOERR;
		r->err = 0;
		return true;
	}
	req_advance(r, (uint64_t)res);
	req_resubmit(q, r);
	return false;
}

static bool req_complete(struct blk_bq *q, struct blk_req *r, int res)
{
	switch (r->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		return rw_complete(q, r, res);
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		if (!req_falloc_mode(q->b, r) || res == -EOPNOTSUPP) {
			r->result = VIRTIO_BLK_S_UNSUPP;
			return true;
		}
		__attribute__((fallthrough));
	case VIRTIO_BLK_T_FLUSH:
		if (res == -EAGAIN || res == -EINTR) {
			req_resubmit(q, r);
			return false;
		}
		r->result = res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
		r->err = res < 0 ? -res : 0;
		return true;
	default:
		r->result = VIRTIO_BLK_S_UNSUPP;
		return true;
	}
}

static unsigned int file_reap(struct blk_bq *q, struct blk_req **out,
			      unsigned int max)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0, n = 0;

	if (q->sync_all)
		return 0;
	/* Completions may wait as task work (COOP_TASKRUN) until we enter
	 * the kernel: do so only when the ring is empty and they do. */
	if (!io_uring_cq_ready(&q->ring) &&
	    (IO_URING_READ_ONCE(*q->ring.sq.kflags) & IORING_SQ_TASKRUN))
		io_uring_get_events(&q->ring);
	io_uring_for_each_cqe(&q->ring, head, cqe) {
		struct blk_req *r = io_uring_cqe_get_data(cqe);

		if (n == max)
			break;
		seen++;
		if (req_complete(q, r, cqe->res)) {
			out[n++] = r;
			q->inflight--;
		}
	}
	io_uring_cq_advance(&q->ring, seen);
	if (q->need_kick)
		file_kick(q);
	return n;
}

static int file_wait_fd(struct blk_bq *q)
{
	return q->efd;
}

static unsigned int file_inflight(struct blk_bq *q)
{
	return q->inflight;
}

static void file_queue_close(struct blk_bq *q)
{
	struct blk_req *reaped[64];

	if (!q)
		return;
	if (q->sync_all) {
		free(q); /* nothing is ever in flight past submit() */
		return;
	}
	while (q->inflight) {
		/* Also pushes anything prepped and not yet submitted. */
		int ret = io_uring_submit_and_wait(&q->ring, 1);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY) {
			/* Should not happen; io_uring_queue_exit() below
			 * still cancels what is left. */
			break;
		}
		file_reap(q, reaped, 64);
	}
	io_uring_queue_exit(&q->ring);
	close(q->efd);
	free(q);
}

const struct blk_backend_ops blk_backend_file = {
	.name = "file",
	.open = file_open,
	.close = file_close,
	.resize = file_resize,
	.queue_open = file_queue_open,
	.queue_close = file_queue_close,
	.submit = file_submit,
	.kick = file_kick,
	.reap = file_reap,
	.wait_fd = file_wait_fd,
	.inflight = file_inflight,
};
