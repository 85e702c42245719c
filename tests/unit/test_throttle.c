/* The rate-limit buckets (blk/throttle.h) on a clock the test drives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "blk/throttle.h"

#define MS 1000000ull
#define S 1000000000ull

/* Start requests of cost units as the bucket allows, from t0 until t1,
 * each as soon as its wait is over; returns how many started. */
static uint64_t run(struct throttle_bucket *b, uint64_t units, uint64_t t0,
		    uint64_t t1)
{
	uint64_t t = t0, n = 0;

	while (t < t1) {
		uint64_t w = throttle_wait_ns(b, t);

		if (w) {
			t += w;
			continue;
		}
		throttle_take(b, units, t);
		n++;
	}
	return n;
}

static void test_rate(void **state)
{
	struct throttle_bucket b;

	(void)state;
	/* 1000 ops/s, 10 ms burst: 10 s give 10,000 plus the burst (10:
	 * 11 at the first instant, then one a millisecond). */
	throttle_set(&b, 1000, 10 * MS, 5 * S);
	assert_int_equal(run(&b, 1, 5 * S, 15 * S), 10000 + 10);
	/* Bytes: 20 MiB/s in 64 KiB requests over 10 s. */
	throttle_set(&b, 20u << 20, 10 * MS, 0);
	uint64_t n = run(&b, 64 << 10, 0, 10 * S);
	assert_true(n * (64 << 10) <= 10 * (20u << 20) + (20u << 20) / 100 +
					       (64 << 10));
	assert_true(n * (64 << 10) >= 10 * (20u << 20));
}

static void test_burst(void **state)
{
	struct throttle_bucket b;
	uint64_t n = 0;

	(void)state;
	/* A full bucket lets burst_ns worth through at once, then waits. */
	throttle_set(&b, 100, 100 * MS, S);
	while (!throttle_wait_ns(&b, S)) {
		throttle_take(&b, 1, S);
		n++;
	}
	assert_int_equal(n, 11); /* 100 ms at 100/s, and the first */
	assert_int_equal(throttle_wait_ns(&b, S), 10 * MS);
	/* Idle for a long time: the burst again, no more. */
	assert_int_equal(run(&b, 1, 100 * S, 100 * S + 1), 11);
}

static void test_debt(void **state)
{
	struct throttle_bucket b;

	(void)state;
	/* A request bigger than the burst starts, and the next waits its
	 * whole cost out: 1 MiB at 1 MiB/s. */
	throttle_set(&b, 1u << 20, 10 * MS, 0);
	assert_int_equal(throttle_wait_ns(&b, 0), 0);
	throttle_take(&b, 1u << 20, 0);
	assert_int_equal(throttle_wait_ns(&b, 0), S - 10 * MS);
	assert_int_equal(throttle_wait_ns(&b, S - 10 * MS), 0);
}

static void test_clock_jumps(void **state)
{
	struct throttle_bucket b;

	(void)state;
	/* Forward by an hour (a suspended host): the bucket is full, not
	 * an hour's worth. */
	throttle_set(&b, 1000, 10 * MS, 0);
	assert_int_equal(run(&b, 1, 0, S), 1010);
	assert_int_equal(run(&b, 1, 3600 * S, 3600 * S + 1), 11);
	/* No limit: never a wait, whatever is taken. */
	throttle_set(&b, 0, 0, 0);
	throttle_take(&b, 1ull << 40, 0);
	assert_int_equal(throttle_wait_ns(&b, 0), 0);
	/* A cost past 64 bits in units x 1e9 is worked out exactly: 1 GiB
	 * at 1 byte/s; and one that would wrap tat is capped. */
	throttle_set(&b, 1, 0, 0);
	throttle_take(&b, 1ull << 30, 0);
	assert_int_equal(throttle_wait_ns(&b, 0), (1ull << 30) * S);
	throttle_set(&b, 1, 0, 0);
	throttle_take(&b, 1ull << 40, 0);
	assert_int_equal(throttle_wait_ns(&b, 0), THROTTLE_COST_MAX);
	/* A rate that is not a divisor of 1e9 is never exceeded: 3/s. */
	throttle_set(&b, 3, 0, 0);
	assert_int_equal(run(&b, 1, 0, 10 * S), 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_debt),
		cmocka_unit_test(test_clock_jumps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
