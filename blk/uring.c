/* The file backend's restricted io_uring; see uring.h. */
#include "blk/uring.h"

#include "virtio/gmem.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Debian's liburing 2.3 declares io_uring_register_restrictions() and
 * io_uring_enable_rings() but does not export them: the system call. */
static int blk_uring_register(struct io_uring *ring, unsigned int op,
			      const void *arg, unsigned int n)
{
	long r = syscall(__NR_io_uring_register, ring->ring_fd, op, arg, n);

	return r < 0 ? -errno : 0;
}

/* What be_file.c submits: reads and writes (plain and vectored), fsync,
 * fallocate, and NOP for what it answers itself. */
static const unsigned char blk_uring_ops[] = {
	IORING_OP_READ, IORING_OP_READV, IORING_OP_WRITE, IORING_OP_WRITEV,
	IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED,
	IORING_OP_FSYNC, IORING_OP_FALLOCATE, IORING_OP_NOP,
};

static int blk_uring_init(struct io_uring *ring, unsigned int entries)
{
	/* DEFER_TASKRUN (Linux 6.1, with SINGLE_ISSUER: only the iothread
	 * that enables the ring uses it): completions wait, as task work
	 * of the ring's own, until this thread asks for them; TASKRUN_FLAG
	 * tells reap() when to ask (io_uring_get_events), and the eventfd
	 * still wakes the thread.  Together with the fixed buffers, 0.84x
	 * the device's CPU per request at QD32 (devbench on a loop device
	 * with direct I/O, 12 paired rounds; neither alone was
	 * significant).  COOP_TASKRUN, where it is not known: completions
	 * are not pushed into this thread with an IPI while it runs, only
	 * at its next kernel entry.  SUBMIT_ALL: one bad SQE must not
	 * leave the others unsubmitted.  Older kernels refuse flags they
	 * do not know with -EINVAL: retry with fewer. */
	static const unsigned int try[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SUBMIT_ALL,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
			IORING_SETUP_SUBMIT_ALL,
		IORING_SETUP_SUBMIT_ALL,
		0,
	};
	int ret = -EINVAL;

	for (size_t i = 0; i < sizeof(try) / sizeof(try[0]) && ret == -EINVAL;
	     i++) {
		/* The default CQ is twice the SQ: with at most depth
		 * requests in flight it never overflows. */
		struct io_uring_params p = {
			.flags = try[i] | IORING_SETUP_R_DISABLED,
		};

		ret = io_uring_queue_init_params(entries, ring, &p);
	}
	return ret;
}

static int blk_uring_restrict(struct io_uring *ring, bool fixed)
{
	struct io_uring_restriction r[sizeof(blk_uring_ops) + 1];
	unsigned int n = 0;

	memset(r, 0, sizeof(r));
	for (unsigned int i = 0; i < sizeof(blk_uring_ops); i++) {
		r[n].opcode = IORING_RESTRICTION_SQE_OP;
		r[n++].sqe_op = blk_uring_ops[i];
	}
	r[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	r[n++].sqe_flags = fixed ? IOSQE_FIXED_FILE : 0;
	return blk_uring_register(ring, IORING_REGISTER_RESTRICTIONS, r, n);
}

/* Guest memory as fixed buffers: the kernel pins it once here, instead
 * of pinning each O_DIRECT request's pages as it is issued (and
 * unpinning them at its completion).  The price: all of guest RAM is
 * pinned (faulted in) while the queue runs, and the kernel keeps a page
 * table of 16 bytes per page per ring.  Refused (RLIMIT_MEMLOCK for a
 * user without CAP_IPC_LOCK, memory not pinnable): none, and every
 * request goes as a plain read or write, as before. */
static void blk_uring_register_mem(struct io_uring *ring,
				   const struct gmem *mem,
				   struct blk_uring_bufs *bufs)
{
	struct iovec iov[BLK_URING_MAX_BUFS];
	unsigned int n = 0;

	if (!bufs)
		return;
	bufs->n = 0;
	for (unsigned int r = 0; mem && r < mem->nr; r++) {
		for (uint64_t off = 0; off < mem->r[r].size;
		     off += BLK_URING_BUF_MAX) {
			uint64_t left = mem->r[r].size - off;

			if (n == BLK_URING_MAX_BUFS)
				return; /* a guest this large: none */
			bufs->base[n] = mem->r[r].hva + off;
			bufs->len[n] = left < BLK_URING_BUF_MAX ?
					       left : BLK_URING_BUF_MAX;
			iov[n].iov_base = bufs->base[n];
			iov[n].iov_len = bufs->len[n];
			n++;
		}
	}
	if (n && !io_uring_register_buffers(ring, iov, n))
		bufs->n = n;
}

int blk_uring_open(struct io_uring *ring, unsigned int entries, int efd,
		   int fd, const struct gmem *mem, bool *fixed,
		   struct blk_uring_bufs *bufs)
{
	unsigned int workers[2] = { BLK_URING_MAX_WORKERS,
				    BLK_URING_MAX_WORKERS };
	int ret = blk_uring_init(ring, entries);

	if (ret)
		return ret;
	ret = io_uring_register_eventfd(ring, efd);
	if (ret)
		goto fail;
	/* A registered file saves an fget/fput per request; optional. */
	*fixed = io_uring_register_files(ring, &fd, 1) == 0;
	blk_uring_register_mem(ring, mem, bufs);
	ret = io_uring_register_iowq_max_workers(ring, workers);
	if (ret < 0)
		goto fail;
	ret = blk_uring_restrict(ring, *fixed);
	if (!ret)
		ret = blk_uring_register(ring, IORING_REGISTER_ENABLE_RINGS,
					 NULL, 0);
	if (!ret)
		return 0;
fail:
	io_uring_queue_exit(ring);
	return ret;
}
