/* blk/latency: bucket boundaries, quantiles against sorted samples, merge,
 * the JSON shape, the clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "blk/latency.h"
#include "host/clock.h"

/* Every value lands in a bucket whose range holds it, bucket tops grow,
 * and a bucket is at most 1/8 of its lower bound wide. */
static void test_buckets_hold_their_values(void **state)
{
	(void)state;
	for (unsigned int b = 1; b < LAT_BUCKETS - 8; b++)
		assert_true(lat_bucket_top(b) > lat_bucket_top(b - 1));
	for (uint64_t v = 0; v < 100000; v += (v < 64 ? 1 : v / 7)) {
		unsigned int b = lat_bucket(v);

		assert_true(v <= lat_bucket_top(b));
		if (b)
			assert_true(v > lat_bucket_top(b - 1));
	}
	for (unsigned int i = 0; i < 64; i++) {
		uint64_t v = 1ull << i;
		unsigned int b = lat_bucket(v);
		uint64_t lo = b ? lat_bucket_top(b - 1) + 1 : 0;

		assert_true(v >= lo && v <= lat_bucket_top(b));
		if (lo >= 8)
			assert_true(lat_bucket_top(b) - lo + 1 <= lo / 8);
	}
	assert_int_equal(lat_bucket(7), 7);
	assert_int_equal(lat_bucket(UINT64_MAX), LAT_BUCKETS - 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A quantile is never below the exact one and at most 12.5% above. */
static void test_quantiles_bound_the_exact_ones(void **state)
{
	static struct lat_hist h;
	uint64_t v[5000];
	const double qs[] = { 0.0, 0.5, 0.9, 0.99, 0.999, 1.0 };
	uint64_t sum = 0;

	(void)state;
	memset(&h, 0, sizeof(h));
	srand(7);
	for (unsigned int i = 0; i < 5000; i++) {
		v[i] = (uint64_t)rand() % 1000000 + (i % 10 == 0 ? 5000000 : 0);
		lat_add(&h, v[i]);
		sum += v[i];
	}
	qsort(v, 5000, sizeof(v[0]), cmp_u64);
	assert_int_equal(h.count, 5000);
	assert_int_equal(h.sum, sum);
	assert_int_equal(h.max, v[4999]);
	for (unsigned int i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		unsigned int rank = (unsigned int)(qs[i] * 5000 + 0.999999);
		uint64_t exact = v[rank ? rank - 1 : 0];
		uint64_t got = lat_quantile(&h, qs[i]);

		assert_true(got >= exact);
		assert_true(got <= exact + exact / 8 + 1);
	}
	assert_int_equal(lat_quantile(&h, 1.0), v[4999]);
}

static void test_empty_and_single(void **state)
{
	static struct lat_hist h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(lat_quantile(&h, 0.5), 0);
	lat_add(&h, 12345);
	/* One sample: every quantile is capped at it. */
	assert_int_equal(lat_quantile(&h, 0.5), 12345);
	assert_int_equal(lat_quantile(&h, 0.999), 12345);
}

static void test_merge_adds_everything(void **state)
{
	static struct lat_hist a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (uint64_t i = 1; i <= 100; i++)
		lat_add(i <= 50 ? &a : &b, i * 1000);
	lat_merge(&a, &b);
	assert_int_equal(a.count, 100);
	assert_int_equal(a.sum, 5050 * 1000);
	assert_int_equal(a.max, 100000);
	assert_true(lat_quantile(&a, 0.5) >= 50000);
	assert_true(lat_quantile(&a, 0.5) < 57000);
}

static void test_json_shape(void **state)
{
	static struct lat_queue q;
	struct json_object *o, *st, *v;

	(void)state;
	memset(&q, 0, sizeof(q));
	lat_add(&q.stage[LAT_SUBMIT], 1000);
	lat_add(&q.stage[LAT_SUBMIT], 3000);
	o = lat_queue_json(&q);
	assert_int_equal(json_object_object_length(o), LAT_STAGES);
	assert_true(json_object_object_get_ex(o, "pop_to_submit", &st));
	assert_true(json_object_object_get_ex(st, "count", &v));
	assert_int_equal(json_object_get_uint64(v), 2);
	assert_true(json_object_object_get_ex(st, "mean", &v));
	assert_true(json_object_get_double(v) == 2000.0);
	assert_true(json_object_object_get_ex(st, "p50", &v));
	assert_int_equal(json_object_get_uint64(v), 1023);
	assert_true(json_object_object_get_ex(st, "p99", &v));
	assert_int_equal(json_object_get_uint64(v), 3000);
	assert_true(json_object_object_get_ex(st, "max", &v));
	assert_int_equal(json_object_get_uint64(v), 3000);
	assert_true(json_object_object_get_ex(o, "submit_to_complete", &st));
	assert_true(json_object_object_get_ex(st, "count", &v));
	assert_int_equal(json_object_get_uint64(v), 0);
	assert_true(json_object_object_get_ex(st, "mean", &v));
	assert_true(json_object_get_double(v) == 0.0);
	assert_true(json_object_object_get_ex(o, "complete_to_publish", &st));
	json_object_put(o);
}

/* The cheap clock moves forward at the rate of CLOCK_MONOTONIC: over a
 * 20 ms sleep (or however long it took, on a busy machine) it advances
 * between what CLOCK_MONOTONIC saw inside and around its two reads,
 * within 5% (its calibration's error). */
static void test_clock_rate(void **state)
{
	struct timespec d = { 0, 20000000 };
	uint64_t a, b, m0, m1, m2, m3;

	(void)state;
	lat_clock_init();
	m0 = mono_ns();
	a = lat_now();
	m1 = mono_ns();
	nanosleep(&d, NULL);
	m2 = mono_ns();
	b = lat_now();
	m3 = mono_ns();
	assert_true(m2 - m1 >= 20000000);
	assert_true(b - a >= (m2 - m1) / 100 * 95);
	assert_true(b - a <= (m3 - m0) / 100 * 105);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_hold_their_values),
		cmocka_unit_test(test_quantiles_bound_the_exact_ones),
		cmocka_unit_test(test_empty_and_single),
		cmocka_unit_test(test_merge_adds_everything),
		cmocka_unit_test(test_json_shape),
		cmocka_unit_test(test_clock_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
