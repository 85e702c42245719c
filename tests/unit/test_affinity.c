/* host/affinity: how --pin on spreads threads over the CPUs the VMM may
 * use (in order, round again when there are more threads than CPUs,
 * gaps in the set skipped), reading that set on a host of any size, and
 * binding the calling thread for real; for --pin follow, where a
 * thread last ran (its /proc stat line) and moving another thread. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/affinity.h"
#include "host/clock.h"
#include "host/log.h"

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
	assert_int_equal(affinity_spread(&s, sizeof(s), 7, out), 0);
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
	assert_int_equal(affinity_spread(&s, sizeof(s), 2, out), 0);
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
	assert_int_equal(affinity_spread(&s, sizeof(s), 3, out), 0);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_spread_refuses_an_empty_set(void **state)
{
	cpu_set_t s;
	int out[1] = { 42 };

	(void)state;
	CPU_ZERO(&s);
	assert_int_equal(affinity_spread(&s, sizeof(s), 1, out), -EINVAL);
	assert_int_equal(out[0], 42);
}

/* CPU numbers past a fixed cpu_set_t's 1024. */
static void test_spread_past_1024(void **state)
{
	size_t sz = CPU_ALLOC_SIZE(2048);
	cpu_set_t *s = CPU_ALLOC(2048);
	int out[3];
	const int want[3] = { 3, 1500, 3 };

	(void)state;
	CPU_ZERO_S(sz, s);
	CPU_SET_S(3, sz, s);
	CPU_SET_S(1500, sz, s);
	assert_int_equal(affinity_spread(s, sz, 3, out), 0);
	assert_memory_equal(out, want, sizeof(want));
	CPU_FREE(s);
}

static void test_allowed_is_the_kernels_set(void **state)
{
	cpu_set_t fixed, *s = NULL;
	size_t sz = 0;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(fixed), &fixed), 0);
	assert_int_equal(affinity_allowed(sched_getaffinity, &s, &sz), 0);
	assert_true(sz >= sizeof(fixed));
	assert_int_equal(CPU_COUNT_S(sz, s), CPU_COUNT(&fixed));
	assert_true(CPU_ISSET_S((size_t)sched_getcpu(), sz, s));
	CPU_FREE(s);
}

/* A stand-in for a host with 3001 CPU ids, the process allowed 3000;
 * like the kernel, it refuses a mask narrower than its ids. */
static unsigned int big_calls;
static int big_host(pid_t pid, size_t size, cpu_set_t *set)
{
	(void)pid;
	big_calls++;
	if (size * 8 < 3001) {
		errno = EINVAL;
		return -1;
	}
	CPU_ZERO_S(size, set); /* as glibc's wrapper leaves it */
	CPU_SET_S(3000, size, set);
	return 0;
}

static void test_allowed_grows_until_the_kernel_takes_it(void **state)
{
	cpu_set_t *s = NULL;
	size_t sz = 0;
	int out[2];

	(void)state;
	big_calls = 0;
	assert_int_equal(affinity_allowed(big_host, &s, &sz), 0);
	assert_int_equal(big_calls, 3); /* 1024, 2048, 4096 */
	assert_int_equal(sz, CPU_ALLOC_SIZE(4096));
	assert_int_equal(CPU_COUNT_S(sz, s), 1);
	assert_int_equal(affinity_spread(s, sz, 2, out), 0);
	assert_int_equal(out[0], 3000);
	assert_int_equal(out[1], 3000);
	CPU_FREE(s);
}

static int refusing_host(pid_t pid, size_t size, cpu_set_t *set)
{
	(void)pid, (void)size, (void)set;
	big_calls++;
	errno = big_calls > 1000 ? EINVAL : EPERM;
	return -1;
}

static void test_allowed_passes_other_errors_and_gives_up(void **state)
{
	cpu_set_t *s = NULL;
	size_t sz = 0;

	(void)state;
	big_calls = 0;
	assert_int_equal(affinity_allowed(refusing_host, &s, &sz), -EPERM);
	assert_int_equal(big_calls, 1);
	assert_null(s);
	/* EINVAL at every size up to AFFINITY_MAX_CPUS: no endless loop. */
	big_calls = 1000;
	assert_int_equal(affinity_allowed(refusing_host, &s, &sz), -EINVAL);
	assert_int_equal(big_calls, 1000 + 7); /* 1024 .. 65536 */
	assert_null(s);
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
	p = pin_in_thread(AFFINITY_MAX_CPUS);
	assert_int_equal(p.ret, -ERANGE);
	assert_true(CPU_EQUAL(&p.before, &p.after));
	/* CPUs the machine does not have, inside and past a fixed
	 * cpu_set_t: the kernel's refusal comes back as its errno, and the
	 * thread stays where it was. */
	p = pin_in_thread(CPU_SETSIZE - 1);
	assert_int_equal(p.ret, -EINVAL);
	assert_true(CPU_EQUAL(&p.before, &p.after));
	p = pin_in_thread(AFFINITY_MAX_CPUS - 1);
	assert_int_equal(p.ret, -EINVAL);
	assert_true(CPU_EQUAL(&p.before, &p.after));
}

/* What affinity_pin_thread says on stderr, in a thread of its own. */
struct say_case {
	int cpu;
	char text[256];
};

static void *say_thread(void *arg)
{
	struct say_case *c = arg;
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	affinity_pin_thread(c->cpu, "iothread-q7");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(c->text, 1, sizeof(c->text) - 1, f);
	c->text[n] = '\0';
	fclose(f);
	return NULL;
}

static const char *pin_thread_says(int cpu)
{
	static struct say_case c;
	pthread_t t;

	memset(&c, 0, sizeof(c));
	c.cpu = cpu;
	assert_int_equal(pthread_create(&t, NULL, say_thread, &c), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	return c.text;
}

static void test_pin_thread_warns_when_the_host_refuses(void **state)
{
	cpu_set_t now;
	const char *said;

	(void)state;
	vlog_set_level(VLOG_INFO);
	said = pin_thread_says(CPU_SETSIZE - 1);
	assert_non_null(strstr(said, "vmm: warning: iothread-q7: cannot bind to "
				     "host CPU 1023 (Invalid argument); it "
				     "runs on any"));
	/* Bound: said at -v only. */
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &now)) {
			char want[64];

			snprintf(want, sizeof(want),
				 "iothread-q7: on host CPU %d", i);
			assert_non_null(strstr(pin_thread_says(i), want));
			vlog_set_level(VLOG_WARN);
			assert_string_equal(pin_thread_says(i), "");
			break;
		}
	/* Unbound: nothing to say. */
	vlog_set_level(VLOG_INFO);
	assert_string_equal(pin_thread_says(-1), "");
	vlog_set_level(VLOG_WARN);
}

/* /proc/PID/task/TID/stat as Linux writes it: pid, (comm), then 50
 * fields; "processor" is field 39. */
static void stat_line(char *buf, size_t len, const char *comm, int cpu)
{
	int n = snprintf(buf, len, "4242 (%s) S", comm);

	for (int field = 4; field <= 52; field++)
		n += snprintf(buf + n, len - (size_t)n, " %d",
			      field == 39 ? cpu : field * 11);
	snprintf(buf + n, len - (size_t)n, "\n");
}

static void test_stat_cpu_is_field_39(void **state)
{
	char buf[1024];

	(void)state;
	stat_line(buf, sizeof(buf), "vcpu1", 3);
	assert_int_equal(affinity_stat_cpu(buf), 3);
	stat_line(buf, sizeof(buf), "vcpu1", 0);
	assert_int_equal(affinity_stat_cpu(buf), 0);
	stat_line(buf, sizeof(buf), "vcpu1", 1000);
	assert_int_equal(affinity_stat_cpu(buf), 1000);
	/* A name may hold spaces and parentheses: fields count from the
	 * last ')'. */
	stat_line(buf, sizeof(buf), "a) (b c) 7 8", 5);
	assert_int_equal(affinity_stat_cpu(buf), 5);
}

static void test_stat_cpu_refuses_what_is_not_a_stat_line(void **state)
{
	char buf[1024];

	(void)state;
	assert_int_equal(affinity_stat_cpu(""), -1);
	assert_int_equal(affinity_stat_cpu("4242 vcpu1 S 1 2 3"), -1);
	/* Cut short before field 39, or ending on its separator. */
	assert_int_equal(affinity_stat_cpu("4242 (vcpu1) S 1 2 3\n"), -1);
	stat_line(buf, sizeof(buf), "vcpu1", 6);
	*strstr(buf, " 6 ") = '\0'; /* fields 1-38 */
	assert_int_equal(affinity_stat_cpu(buf), -1);
	strcat(buf, " ");
	assert_int_equal(affinity_stat_cpu(buf), -1);
	/* Not a number, negative, or past the widest mask. */
	stat_line(buf, sizeof(buf), "vcpu1", -2);
	assert_int_equal(affinity_stat_cpu(buf), -1);
	stat_line(buf, sizeof(buf), "vcpu1", AFFINITY_MAX_CPUS);
	assert_int_equal(affinity_stat_cpu(buf), -1);
	stat_line(buf, sizeof(buf), "vcpu1", 999);
	memcpy(strstr(buf, " 999 ") + 1, "9x", 2);
	assert_int_equal(affinity_stat_cpu(buf), -1);
}

/* A thread that waits to be moved, then says where it ran. */
struct moved_case {
	pid_t tid;
	int go;
	int cpu_after;
};

static void *moved_thread(void *arg)
{
	struct moved_case *c = arg;

	__atomic_store_n(&c->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
		sched_yield();
	c->cpu_after = sched_getcpu();
	return NULL;
}

/* What --pin follow does, for real: read where a thread ran from its
 * stat file and move another thread of this process there by its id. */
static void test_pin_tid_moves_another_thread_and_stat_says_where(void **s)
{
	static struct moved_case c; /* outlives a failed assertion */
	cpu_set_t now, after;
	char path[64], buf[1024];
	pthread_t t;
	int last = -1, fd;
	uint64_t end;
	ssize_t n;

	(void)s;
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &now))
			last = i;
	assert_int_equal(pthread_create(&t, NULL, moved_thread, &c), 0);
	while (!__atomic_load_n(&c.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	assert_int_equal(affinity_pin_tid(c.tid, last), 0);
	assert_int_equal(sched_getaffinity(c.tid, sizeof(after), &after), 0);
	assert_int_equal(CPU_COUNT(&after), 1);
	assert_true(CPU_ISSET(last, &after));
	/* The caller itself stays where it was. */
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&now, &after));
	__atomic_store_n(&c.go, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(c.cpu_after, last);
	/* An ended thread has no stat file to read (follow then skips it).
	 * pthread_join returns when the thread has cleared its id, which is
	 * before the kernel removes its task entry: wait for that. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)c.tid);
	end = mono_ns() + 10000000000ull;
	while ((fd = open(path, O_RDONLY)) >= 0) {
		close(fd);
		if (mono_ns() > end)
			fail_msg("%s still there 10 s after the join", path);
		usleep(1000);
	}
	assert_int_equal(errno, ENOENT);
	/* The caller's own stat file, once it is bound and has run again,
	 * says the CPU it is on. */
	assert_int_equal(affinity_pin_self(last), 0);
	sched_yield();
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)gettid());
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(affinity_stat_cpu(buf), last);
	close(fd);
	assert_int_equal(sched_setaffinity(0, sizeof(now), &now), 0);
	/* A thread id that is not there. */
	assert_int_equal(affinity_pin_tid(INT32_MAX, last), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread_in_order_then_round),
		cmocka_unit_test(test_spread_fewer_threads_than_cpus),
		cmocka_unit_test(test_spread_last_cpu_of_the_set),
		cmocka_unit_test(test_spread_refuses_an_empty_set),
		cmocka_unit_test(test_spread_past_1024),
		cmocka_unit_test(test_allowed_is_the_kernels_set),
		cmocka_unit_test(test_allowed_grows_until_the_kernel_takes_it),
		cmocka_unit_test(test_allowed_passes_other_errors_and_gives_up),
		cmocka_unit_test(test_pin_self_binds_to_one_cpu),
		cmocka_unit_test(test_pin_self_negative_leaves_the_set),
		cmocka_unit_test(test_pin_self_refuses_a_cpu_out_of_range),
		cmocka_unit_test(test_pin_thread_warns_when_the_host_refuses),
		cmocka_unit_test(test_stat_cpu_is_field_39),
		cmocka_unit_test(test_stat_cpu_refuses_what_is_not_a_stat_line),
		cmocka_unit_test(test_pin_tid_moves_another_thread_and_stat_says_where),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
