/* blk/uring: the backend's ring serves the opcodes it needs and refuses
 * any other, and cannot be re-registered after it is enabled. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "blk/uring.h"
#include "virtio/gmem.h"

struct u {
	struct io_uring ring;
	int efd, fd;
	bool fixed;
	char path[64];
	uint8_t *mem;               /* registered as guest memory */
	struct gmem gm;
	struct blk_uring_bufs bufs;
};

#define MEM_SIZE (64u << 10)

static int setup(void **state)
{
	struct u *u = calloc(1, sizeof(*u));
	char buf[4096];

	snprintf(u->path, sizeof(u->path), "/tmp/test_uring.XXXXXX");
	u->fd = mkstemp(u->path);
	memset(buf, 0x3c, sizeof(buf));
	if (u->fd < 0 || pwrite(u->fd, buf, sizeof(buf), 0) != sizeof(buf))
		return -1;
	u->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	u->mem = aligned_alloc(4096, MEM_SIZE);
	if (!u->mem || gmem_add(&u->gm, 1ull << 32, MEM_SIZE, u->mem))
		return -1;
	if (blk_uring_open(&u->ring, 8, u->efd, u->fd, &u->gm, &u->fixed,
			   &u->bufs))
		return -1;
	*state = u;
	return 0;
}

static int teardown(void **state)
{
	struct u *u = *state;

	io_uring_queue_exit(&u->ring);
	close(u->efd);
	close(u->fd);
	unlink(u->path);
	free(u->mem);
	free(u);
	return 0;
}

/* Submit one SQE prepared by the caller; the CQE's result. */
static int run1(struct u *u, struct io_uring_sqe *sqe)
{
	struct io_uring_cqe *cqe;
	int res;

	(void)sqe;
	assert_int_equal(io_uring_submit(&u->ring), 1);
	assert_int_equal(io_uring_wait_cqe(&u->ring, &cqe), 0);
	res = cqe->res;
	io_uring_cqe_seen(&u->ring, cqe);
	return res;
}

static void test_allowed_ops(void **state)
{
	struct u *u = *state;
	char buf[4096];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	memset(buf, 0, sizeof(buf));
	io_uring_prep_read(sqe, u->fixed ? 0 : u->fd, buf, sizeof(buf), 0);
	if (u->fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	assert_int_equal(run1(u, sqe), sizeof(buf));
	assert_int_equal(buf[100], 0x3c);
	sqe = io_uring_get_sqe(&u->ring);
	io_uring_prep_fsync(sqe, u->fixed ? 0 : u->fd, IORING_FSYNC_DATASYNC);
	if (u->fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	assert_int_equal(run1(u, sqe), 0);
	sqe = io_uring_get_sqe(&u->ring);
	io_uring_prep_nop(sqe);
	assert_int_equal(run1(u, sqe), 0);
}

/* Guest memory is registered (as root here, no memlock limit applies):
 * a read into it as READ_FIXED lands there; the lookup finds only
 * ranges wholly inside it. */
static void test_fixed_buffers(void **state)
{
	struct u *u = *state;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	uint8_t *p = u->mem + MEM_SIZE - 4096;

	assert_int_equal(u->bufs.n, 1);
	assert_int_equal(blk_uring_buf_index(&u->bufs, p, 4096), 0);
	assert_int_equal(blk_uring_buf_index(&u->bufs, p, 4097), -1);
	assert_int_equal(blk_uring_buf_index(&u->bufs, u->mem - 1, 2), -1);
	assert_int_equal(blk_uring_buf_index(&u->bufs, u->mem, 0), 0);
	memset(p, 0, 4096);
	io_uring_prep_read_fixed(sqe, u->fixed ? 0 : u->fd, p, 4096, 0, 0);
	if (u->fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	assert_int_equal(run1(u, sqe), 4096);
	assert_int_equal(p[4095], 0x3c);
	/* Outside the registered buffer: the kernel refuses it. */
	sqe = io_uring_get_sqe(&u->ring);
	io_uring_prep_read_fixed(sqe, u->fixed ? 0 : u->fd, p + 1, 4096, 0, 0);
	if (u->fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	assert_int_equal(run1(u, sqe), -EFAULT);
}

/* Opening a file, or reading with the plain fd when the file is
 * registered: refused by the ring itself. */
static void test_other_ops_refused(void **state)
{
	struct u *u = *state;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	char buf[64];

	io_uring_prep_openat(sqe, AT_FDCWD, "/etc/hostname", O_RDONLY, 0);
	assert_int_equal(run1(u, sqe), -EACCES);
	sqe = io_uring_get_sqe(&u->ring);
	io_uring_prep_close(sqe, u->fd);
	assert_int_equal(run1(u, sqe), -EACCES);
	if (u->fixed) {
		sqe = io_uring_get_sqe(&u->ring);
		io_uring_prep_read(sqe, u->fd, buf, sizeof(buf), 0);
		sqe->flags |= IOSQE_IO_LINK | IOSQE_FIXED_FILE;
		assert_int_equal(run1(u, sqe), -EACCES); /* flag not allowed */
	}
	/* No registration once enabled. */
	assert_int_equal(io_uring_register_files(&u->ring, &u->fd, 1), -EACCES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowed_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_ops_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fixed_buffers, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
