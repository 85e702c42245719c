/* Guest memory accessors: every range that is empty, wraps, or is not
 * wholly inside RAM is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/fakemem.h"
#include "virtio/gmem.h"

#define PAGE 4096u

static uint8_t lo[2 * PAGE], hi[2 * PAGE];

/* Two adjacent regions [0x1000, 0x3000) and [0x3000, 0x5000), and a
 * far one at the top of the address space. */
static struct gmem two_regions(void)
{
	struct gmem m = { 0 };

	assert_int_equal(gmem_add(&m, 0x1000, sizeof(lo), lo), 0);
	assert_int_equal(gmem_add(&m, 0x3000, sizeof(hi), hi), 0);
	return m;
}

static void test_add_refuses_overlap_and_wrap(void **state)
{
	struct gmem m = two_regions();

	(void)state;
	assert_int_equal(gmem_add(&m, 0x2fff, 2, lo), -EINVAL);
	assert_int_equal(gmem_add(&m, UINT64_MAX - 10, 20, lo), -EINVAL);
	assert_int_equal(gmem_add(&m, 0x10000, 0, lo), -EINVAL);
	assert_int_equal(gmem_add(&m, 0x10000, 1, lo), 0);
	assert_int_equal(gmem_add(&m, 0x20000, 1, lo), 0);
	assert_int_equal(gmem_add(&m, 0x30000, 1, lo), -ENOSPC);
}

static void test_ptr_inside_one_region(void **state)
{
	struct gmem m = two_regions();

	(void)state;
	assert_ptr_equal(gmem_ptr(&m, 0x1000, 1), lo);
	assert_ptr_equal(gmem_ptr(&m, 0x1000, sizeof(lo)), lo);
	assert_ptr_equal(gmem_ptr(&m, 0x3000 + 5, 10), hi + 5);
	assert_null(gmem_ptr(&m, 0x1000, 0));             /* empty */
	assert_null(gmem_ptr(&m, 0xfff, 2));              /* starts below */
	assert_null(gmem_ptr(&m, 0x2fff, 2));             /* spans regions */
	assert_null(gmem_ptr(&m, 0x4fff, 2));             /* runs past end */
	assert_null(gmem_ptr(&m, 0x5000, 1));             /* just past */
	assert_null(gmem_ptr(&m, 0x1000, UINT64_MAX));    /* huge */
	assert_null(gmem_ptr(&m, UINT64_MAX, 2));         /* wraps */
}

/* gmem_ptr_first answers as gmem_ptr does, whichever region holds the
 * range (or none); with no region, stale entries are never read. */
static void test_ptr_first_agrees(void **state)
{
	static const struct {
		uint64_t gpa, len;
	} c[] = {
		{ 0x1000, 1 }, { 0x1000, sizeof(lo) }, { 0x2fff, 1 },
		{ 0x3000, 1 }, { 0x3000 + 5, 10 }, { 0x4fff, 1 },
		{ 0x1000, 0 }, { 0xfff, 2 }, { 0x2fff, 2 }, { 0x4fff, 2 },
		{ 0x5000, 1 }, { 0x1000, UINT64_MAX }, { UINT64_MAX, 2 },
		{ 0, 1 }, { 0x1000, sizeof(lo) + 1 },
	};
	struct gmem m = two_regions();
	struct gmem none = { .nr = 0, .r = { { 0x1000, sizeof(lo), lo } } };
	struct gmem_region first = gmem_first(&m), nofirst = gmem_first(&none);

	(void)state;
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_ptr_equal(gmem_ptr_first(&m, &first, c[i].gpa, c[i].len),
				 gmem_ptr(&m, c[i].gpa, c[i].len));
		assert_null(gmem_ptr_first(&none, &nofirst, c[i].gpa,
					   c[i].len));
	}
	assert_ptr_equal(gmem_ptr_first(&m, &first, 0x3000 + 5, 10), hi + 5);
	assert_ptr_equal(gmem_ptr_first(&m, &first, 0x2fff, 1),
			 lo + sizeof(lo) - 1);
}

static void test_copy_spans_regions(void **state)
{
	struct gmem m = two_regions();
	uint8_t buf[16], back[16];

	(void)state;
	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i + 1);
	assert_int_equal(gmem_write(&m, 0x3000 - 8, buf, sizeof(buf)), 0);
	assert_memory_equal(lo + sizeof(lo) - 8, buf, 8);
	assert_memory_equal(hi, buf + 8, 8);
	assert_int_equal(gmem_read(&m, 0x3000 - 8, back, sizeof(back)), 0);
	assert_memory_equal(back, buf, sizeof(buf));
}

static void test_copy_refused_moves_nothing(void **state)
{
	struct gmem m = two_regions();
	uint8_t buf[16];

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	memset(hi, 0, sizeof(hi));
	/* The tail runs past RAM: nothing at all may be written. */
	assert_int_equal(gmem_write(&m, 0x5000 - 8, buf, sizeof(buf)), -EFAULT);
	assert_int_equal(hi[sizeof(hi) - 8], 0);
	assert_int_equal(gmem_read(&m, 0x800, buf, 8), -EFAULT);
	assert_int_equal(gmem_write(&m, 0x1000, buf, 0), -EFAULT);
	assert_int_equal(gmem_read(&m, UINT64_MAX - 3, buf, 8), -EFAULT);
}

static void test_iov_building(void **state)
{
	struct gmem m = two_regions();
	struct iovec iov[3];
	unsigned int n = 0;

	(void)state;
	assert_int_equal(gmem_iov(&m, 0x2000, 0x2000, iov, 3, &n), 0);
	assert_int_equal(n, 2);
	assert_ptr_equal(iov[0].iov_base, lo + PAGE);
	assert_int_equal(iov[0].iov_len, PAGE);
	assert_ptr_equal(iov[1].iov_base, hi);
	assert_int_equal(iov[1].iov_len, PAGE);
	/* Out of iovecs: -E2BIG and n unchanged. */
	assert_int_equal(gmem_iov(&m, 0x2000, 0x2000, iov, 3, &n), -E2BIG);
	assert_int_equal(n, 2);
	assert_int_equal(gmem_iov(&m, 0x4000, 0x2000, iov, 3, &n), -EFAULT);
	assert_int_equal(gmem_iov(&m, 0x4000, 0, iov, 3, &n), -EFAULT);
	assert_int_equal(n, 2);
}

static void test_contains_host(void **state)
{
	struct gmem m = two_regions();

	(void)state;
	assert_true(gmem_contains_host(&m, lo, sizeof(lo)));
	assert_true(gmem_contains_host(&m, hi + 10, 10));
	assert_false(gmem_contains_host(&m, lo + sizeof(lo) - 1, 2));
	assert_false(gmem_contains_host(&m, &m, 1));
}

static void test_fakemem_guards(void **state)
{
	struct fakemem fm;

	(void)state;
	assert_int_equal(fakemem_create(&fm, 0x100000, 3 * PAGE), 0);
	assert_non_null(gmem_ptr(&fm.gm, 0x100000, 3 * PAGE));
	assert_null(gmem_ptr(&fm.gm, 0x100000, 3 * PAGE + 1));
	assert_int_equal(fakemem_alloc(&fm, 16, 16), 0x100000);
	assert_int_equal(fakemem_alloc(&fm, 3 * PAGE, 16), 0);
	fakemem_destroy(&fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_refuses_overlap_and_wrap),
		cmocka_unit_test(test_ptr_inside_one_region),
		cmocka_unit_test(test_ptr_first_agrees),
		cmocka_unit_test(test_copy_spans_regions),
		cmocka_unit_test(test_copy_refused_moves_nothing),
		cmocka_unit_test(test_iov_building),
		cmocka_unit_test(test_contains_host),
		cmocka_unit_test(test_fakemem_guards),
	};

	return cmocka_run_group_tests_name("gmem", tests, NULL, NULL);
}
