/* The file backend's io_uring, set up restricted: created disabled, its
 * eventfd, file and guest memory registered, io-wq capped, only the
 * opcodes the backend submits allowed (IORING_REGISTER_RESTRICTIONS),
 * then enabled.  A guest
 * that somehow steered a submission elsewhere could open or read nothing
 * else through it. */
#ifndef BLK_URING_H
#define BLK_URING_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

struct gmem;

/* At most this many io-wq workers per ring and kind (bounded and
 * unbounded): blocking buffered I/O on a file falls back to them. */
#define BLK_URING_MAX_WORKERS 8

/* The kernel's largest registered buffer: guest memory is registered in
 * pieces of this size. */
#define BLK_URING_BUF_MAX (1ull << 30)
#define BLK_URING_MAX_BUFS 64

/* Guest memory registered as the ring's fixed buffers: buffer i is
 * [base[i], base[i] + len[i]).  n = 0: none (not asked, or refused). */
struct blk_uring_bufs {
	unsigned int n;
	uint8_t *base[BLK_URING_MAX_BUFS];
	uint64_t len[BLK_URING_MAX_BUFS];
};

/* A ring of at least entries SQEs whose completions signal efd; fd is
 * registered when the kernel allows (*fixed then true: use index 0 with
 * IOSQE_FIXED_FILE), and so is mem (may be NULL) into *bufs (may be
 * NULL: none asked) where the kernel allows (a memlock limit may refuse
 * it: plain reads and writes then).  0 or -errno (the ring is not left
 * open). */
int blk_uring_open(struct io_uring *ring, unsigned int entries, int efd,
		   int fd, const struct gmem *mem, bool *fixed,
		   struct blk_uring_bufs *bufs);

/* The fixed buffer holding [p, p + len), or -1. */
static inline int blk_uring_buf_index(const struct blk_uring_bufs *bufs,
				      const void *p, uint64_t len)
{
	const uint8_t *a = p;

	for (unsigned int i = 0; i < bufs->n; i++) {
		uint64_t off = (uint64_t)(a - bufs->base[i]);

		/* off wraps for p below the buffer: one test covers both. */
		if (off < bufs->len[i] && len <= bufs->len[i] - off)
			return (int)i;
	}
	return -1;
}

#endif
