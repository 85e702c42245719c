/* host/affinity: how --pin on spreads threads over the CPUs the VMM may
 * use (in order, round again when there are more threads than CPUs,
 * gaps in the set skipped), and binding the calling thread for real. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host/affinity.h"

static cpu_set_t set_of(const int *cpus, unsigned int n)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	for (unsigned int i = 0; i < n; i++)
		CPU_SET(cpus[i], &s);
	return s;
}

static void test_spread_in_order_then_round(void **state)
{
	const int in[] = { 2, 5, 7 };
	cpu_set_t s = set_of(in, 3);
	int out[7] = { -1, -1, -1, -1, -1, -1, -1 };
	const int want[7] = { 2, 5, 7, 2, 5, 7, 2 };

	(void)state;
	assert_int_equal(affinity_spread(&s, 7, out), 0);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_spread_fewer_threads_than_cpus(void **state)
{
	const int in[] = { 0, 1, 2, 3 };
	cpu_set_t s = set_of(in, 4);
	int out[3] = { 0 }, sentinel = 99;
	const int want[2] = { 0, 1 };

	(void)state;
	out[2] = sentinel;
	assert_int_equal(affinity_spread(&s, 2, out), 0);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(out[2], sentinel); /* n entries, no more */
}

static void test_spread_last_cpu_of_the_set(void **state)
{
	const int in[] = { 3, CPU_SETSIZE - 1 };
	cpu_set_t s = set_of(in, 2);
	int out[3];
	const int want[3] = { 3, CPU_SETSIZE - 1, 3 };

	(void)state;
	assert_int_equal(affinity_spread(&s, 3, out), 0);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_spread_refuses_an_empty_set(void **state)
{
	cpu_set_t s;
	int out[1] = { 42 };

	(void)state;
	CPU_ZERO(&s);
	assert_int_equal(affinity_spread(&s, 1, out), -EINVAL);
	assert_int_equal(out[0], 42);
}

/* Each case runs in its own thread: binding it leaves the test's other
 * threads as they were. */
struct pin_case {
	int cpu, ret;
	cpu_set_t before, after;
};

static void *pin_thread(void *arg)
{
	struct pin_case *p = arg;

	sched_getaffinity(0, sizeof(p->before), &p->before);
	p->ret = affinity_pin_self(p->cpu);
	sched_getaffinity(0, sizeof(p->after), &p->after);
	return NULL;
}

static struct pin_case pin_in_thread(int cpu)
{
	struct pin_case p = { .cpu = cpu };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, pin_thread, &p), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	return p;
}

static void test_pin_self_binds_to_one_cpu(void **state)
{
	cpu_set_t now;
	int last = -1;
	struct pin_case p;

	(void)state;
	/* The last CPU this process may use: not the first, where the
	 * set has more than one. */
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &now))
			last = i;
	assert_true(last >= 0);
	p = pin_in_thread(last);
	assert_int_equal(p.ret, 0);
	assert_int_equal(CPU_COUNT(&p.after), 1);
	assert_true(CPU_ISSET(last, &p.after));
}

static void test_pin_self_negative_leaves_the_set(void **state)
{
	struct pin_case p;

	(void)state;
	p = pin_in_thread(-1);
	assert_int_equal(p.ret, 0);
	assert_true(CPU_EQUAL(&p.before, &p.after));
}

static void test_pin_self_refuses_a_cpu_out_of_range(void **state)
{
	struct pin_case p;

	(void)state;
	p = pin_in_thread(CPU_SETSIZE);
	assert_int_equal(p.ret, -EINVAL);
	assert_true(CPU_EQUAL(&p.before, &p.after));
	/* A CPU the machine does not have: the kernel's refusal comes
	 * back as its errno, and the thread stays where it was. */
	p = pin_in_thread(CPU_SETSIZE - 1);
	assert_int_equal(p.ret, -EINVAL);
	assert_true(CPU_EQUAL(&p.before, &p.after));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread_in_order_then_round),
		cmocka_unit_test(test_spread_fewer_threads_than_cpus),
		cmocka_unit_test(test_spread_last_cpu_of_the_set),
		cmocka_unit_test(test_spread_refuses_an_empty_set),
		cmocka_unit_test(test_pin_self_binds_to_one_cpu),
		cmocka_unit_test(test_pin_self_negative_leaves_the_set),
		cmocka_unit_test(test_pin_self_refuses_a_cpu_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
