/* RAM disk backend: an anonymous mapping served inside the iothread.
 *
 * submit() does the copy at once and says so (BLK_SUBMIT_DONE): nothing
 * is ever queued, so there is no list, no syscall, no lock and no
 * allocation per request.  Queues share the disk without a lock; like a
 * real disk, overlapping concurrent writes from different queues are
 * the guest's problem.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "blk/backend.h"
#include "blk/blk.h"

/* A RAM disk may grow (blk_dev_resize) to this many times its size at
 * start: the address space for it is kept from the start, so growing
 * never moves the disk under the iothreads. */
#define RAM_GROW_MAX 4

/* Zeroing at least this much gives whole pages back with madvise()
 * instead of writing zeroes over them. */
#define RAM_MADV_MIN (256u * 1024)

struct blk_backend {
	uint8_t *base;
	uint64_t size;    /* changed only by ram_resize */
	uint64_t sectors; /* size in sectors (atomic: grows while served) */
	uint64_t reserved; /* address space kept at base */
	uint64_t page;
};

struct blk_bq {
	const struct blk_backend *b;
};

static int ram_open(const struct blk_opts *o, struct blk_backend **out,
		    struct blk_backend_info *info, char *msg,
		    unsigned int msglen)
{
	unsigned long long size = o->ram_size;
	struct blk_backend *b;
	int err;

	if (!size || size % BLK_SECTOR_SIZE) {
		if (msg && msglen)
			snprintf(msg, msglen, "ram: size %llu %s", size,
				 size ? "is not a multiple of 512" : "(empty)");
		return -EINVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->size = size;
	b->sectors = size >> BLK_SECTOR_SHIFT;
	b->page = (uint64_t)sysconf(_SC_PAGESIZE);
	b->reserved = size <= UINT64_MAX / RAM_GROW_MAX ? size * RAM_GROW_MAX
							 : size;
	b->base = mmap(NULL, b->reserved, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->base == MAP_FAILED) {
		/* Not that much address space: this size, and no growing. */
		b->reserved = size;
		b->base = mmap(NULL, size, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
	}
	if (b->base != MAP_FAILED &&
	    mprotect(b->base, size, PROT_READ | PROT_WRITE) < 0) {
		munmap(b->base, b->reserved);
		b->base = MAP_FAILED;
	}
	if (b->base == MAP_FAILED) {
		err = errno;
		free(b);
		if (msg && msglen)
			snprintf(msg, msglen, "ram: cannot map %llu bytes: %s",
				 size, strerror(err));
		return -err;
	}
	/* No transparent huge pages: the first write into each 2 MiB would
	 * zero all of it (measured: 30x slower random writes in the test
	 * host on a fresh disk). */
	(void)madvise(b->base, b->reserved, MADV_NOHUGEPAGE);
	*info = (struct blk_backend_info){
		.size = size,
		.blk_size = BLK_SECTOR_SIZE,
		.ro = o->ro,
		.discard = !o->ro,
		.write_zeroes = !o->ro,
	};
	*out = b;
	return 0;
}

static void ram_close(struct blk_backend *b)
{
	if (!b)
		return;
	munmap(b->base, b->reserved);
	free(b);
}

static int ram_resize(struct blk_backend *b, uint64_t size, char *msg,
		      unsigned int msglen)
{
	if (size < b->size) {
		snprintf(msg, msglen, "a RAM disk does not shrink");
		return -EOPNOTSUPP;
	}
	if (size > b->reserved) {
		snprintf(msg, msglen, "a RAM disk grows to at most %llu bytes "
			 "(%ux its size at start)",
			 (unsigned long long)b->reserved, RAM_GROW_MAX);
		return -ENOSPC;
	}
	uint64_t from = b->size & ~(b->page - 1); /* mprotect's alignment */

	if (mprotect(b->base + from, size - from, PROT_READ | PROT_WRITE) < 0) {
		int e = errno;

		snprintf(msg, msglen, "cannot grow the RAM disk: %s",
			 strerror(e));
		return -e;
	}
	b->size = size;
	__atomic_store_n(&b->sectors, size >> BLK_SECTOR_SHIFT,
			 __ATOMIC_RELAXED);
	return 0;
}

static int ram_queue_open(struct blk_backend *b, unsigned int depth,
			  bool write_through, const struct gmem *mem,
			  struct blk_bq **out)
{
	struct blk_bq *q;

	(void)write_through; /* RAM: nothing is ever more durable */
	(void)mem;           /* memcpy needs nothing registered */
	if (!depth || depth > 65536)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->b = b;
	*out = q;
	return 0;
}

static void ram_queue_close(struct blk_bq *q)
{
	free(q); /* nothing is ever in flight */
}

/* Host invariant (blk_req_parse() checked it): r's sectors are on the
 * disk.  The sector is compared before any shift can wrap it. */
static inline bool ram_in_range(const struct blk_backend *b,
				const struct blk_req *r)
{
	uint64_t sectors = __atomic_load_n(&b->sectors, __ATOMIC_RELAXED);

	return r->sector <= sectors &&
	       r->len >> BLK_SECTOR_SHIFT <= sectors - r->sector;
}

/* Copy between the request's iovecs and the disk.  OK, or IOERR if the
 * iovecs hold less than r->len (a host bug: the parser sized them). */
static __attribute__((noinline)) uint8_t
ram_copy(const struct blk_backend *b, struct blk_req *r, bool to_disk)
{
	uint8_t *disk = b->base + (r->sector << BLK_SECTOR_SHIFT);
	uint64_t left = r->len;

	for (unsigned int i = 0; i < r->niov && left; i++) {
		size_t n = r->iov[i].iov_len < left ? r->iov[i].iov_len
						    : (size_t)left;

		if (to_disk)
			memcpy(disk, r->iov[i].iov_base, n);
		else
			memcpy(r->iov[i].iov_base, disk, n);
		disk += n;
		left -= n;
	}
	assert(!left);
	return left ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
}

static uint8_t ram_zero(const struct blk_backend *b, uint64_t off,
		       uint64_t len)
{
	uint8_t *p = b->base + off;
	uint64_t start, end;

	if (len < RAM_MADV_MIN) {
		memset(p, 0, len);
		return VIRTIO_BLK_S_OK;
	}
	/* The mapping is page-aligned: so are offsets rounded to pages. */
	start = (off + b->page - 1) & ~(b->page - 1);
	end = (off + len) & ~(b->page - 1);
	memset(p, 0, start - off);
	/* Private anonymous pages read back as zeroes after DONTNEED. */
	if (madvise(b->base + start, end - start, MADV_DONTNEED) < 0)
		memset(b->base + start, 0, end - start);
	memset(b->base + end, 0, off + len - end);
	return VIRTIO_BLK_S_OK;
}

/* Anything but a read or a write.  Not inlined: it would cost
 * ram_submit's reads and writes register saves. */
static __attribute__((noinline)) uint8_t
ram_other(const struct blk_backend *b, struct blk_req *r)
{
	switch (r->type) {
	case VIRTIO_BLK_T_FLUSH:
		return VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		assert(ram_in_range(b, r));
		return ram_zero(b, r->sector << BLK_SECTOR_SHIFT, r->len);
	default:
		return VIRTIO_BLK_S_UNSUPP;
	}
}

static int ram_submit(struct blk_bq *q, struct blk_req *r)
{
	const struct blk_backend *b = q->b;
	struct iovec *v = r->iov;
	uint8_t *disk;

	r->transferred = r->len;
	if (r->type != VIRTIO_BLK_T_IN && r->type != VIRTIO_BLK_T_OUT) {
		r->result = ram_other(b, r);
		return BLK_SUBMIT_DONE;
	}
	assert(ram_in_range(b, r));
	if (r->niov != 1) {
		r->result = ram_copy(b, r, r->type == VIRTIO_BLK_T_OUT);
		return BLK_SUBMIT_DONE;
	}
	/* The usual request: one buffer (the parser sized it).  Nothing is
	 * left to do after the copy, so this path saves no registers. */
	assert(v->iov_len == r->len);
	r->result = VIRTIO_BLK_S_OK;
	disk = b->base + (r->sector << BLK_SECTOR_SHIFT);
	if (r->type == VIRTIO_BLK_T_OUT)
		memcpy(disk, v->iov_base, r->len);
	else
		memcpy(v->iov_base, disk, r->len);
	return BLK_SUBMIT_DONE;
}

static void ram_kick(struct blk_bq *q)
{
	(void)q;
}

static unsigned int ram_reap(struct blk_bq *q, struct blk_req **out,
			     unsigned int max)
{
	(void)q;
	(void)out;
	(void)max;
	return 0;
}

static int ram_wait_fd(struct blk_bq *q)
{
	(void)q;
	return -1;
}

static unsigned int ram_inflight(struct blk_bq *q)
{
	(void)q;
	return 0;
}

const struct blk_backend_ops blk_backend_ram = {
	.name = "ram",
	.open = ram_open,
	.close = ram_close,
	.resize = ram_resize,
	.queue_open = ram_queue_open,
	.queue_close = ram_queue_close,
	.submit = ram_submit,
	.kick = ram_kick,
	.reap = ram_reap,
	.wait_fd = ram_wait_fd,
	.inflight = ram_inflight,
};
