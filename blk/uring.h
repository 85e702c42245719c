/* The file backend's io_uring, set up restricted: created disabled, its
 * eventfd and file registered, io-wq capped, only the opcodes the backend
 * submits allowed (IORING_REGISTER_RESTRICTIONS), then enabled.  A guest
 * that somehow steered a submission elsewhere could open or read nothing
 * else through it. */
#ifndef BLK_URING_H
#define BLK_URING_H

#include <liburing.h>
#include <stdbool.h>

/* At most this many io-wq workers per ring and kind (bounded and
 * unbounded): blocking buffered I/O on a file falls back to them. */
#define BLK_URING_MAX_WORKERS 8

/* A ring of at least entries SQEs whose completions signal efd; fd is
 * registered when the kernel allows (*fixed then true: use index 0 with
 * IOSQE_FIXED_FILE).  0 or -errno (the ring is not left open). */
int blk_uring_open(struct io_uring *ring, unsigned int entries, int efd,
		   int fd, bool *fixed);

#endif
