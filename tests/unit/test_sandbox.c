/* host/sandbox: each thread kind's filter stops a call outside its list
 * with one line and status 7, lets its own calls through, and a real
 * device serves every request type with its iothreads and its driver
 * (the vCPU's place) under their filters.  Each case runs in a child
 * process: a filter cannot be taken off again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <json-c/json.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "blk/blk.h"
#include "host/sandbox.h"
#if defined(__x86_64__)
#include "arch/x86/hw/rtc.h"
#endif
#include "tests/support/blkdrv.h"
#include "tests/support/fakemem.h"

struct child {
	int status; /* exit status, or 128 + signal */
	char err[4096];
};

/* Run fn(arg) in a child with stderr captured; it exits 0 if fn returns. */
static void run_child(void (*fn)(const void *), const void *arg,
		      struct child *c)
{
	int p[2], ws;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		fn(arg);
		/* Not _exit(): a sanitizer's would run its leak check under
		 * the child's filter. */
		syscall(SYS_exit_group, 0);
	}
	close(p[1]);
	while ((r = read(p[0], c->err + n, sizeof(c->err) - 1 - n)) > 0)
		n += (size_t)r;
	c->err[n] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	c->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* fn(arg) in a child must end with status 0. */
static void expect_clean(const char *what, void (*fn)(const void *),
			 const void *arg)
{
	struct child c;

	run_child(fn, arg, &c);
	if (c.status)
		fail_msg("%s: status %d, stderr: %s", what, c.status, c.err);
}

static void init_or_die(void)
{
	char msg[256];

	if (sandbox_init(NULL, msg, sizeof(msg))) {
		fprintf(stderr, "sandbox_init: %s\n", msg);
		_exit(99);
	}
}

/* ---- calls outside the list ----------------------------------------- */

struct bad_call {
	enum sandbox_kind kind;
	const char *line; /* what stderr must hold */
	long nr, a0, a1, a2;
};

static void make_bad_call(const void *arg)
{
	const struct bad_call *b = arg;

	init_or_die();
	sandbox_enter(b->kind);
	syscall(b->nr, b->a0, b->a1, b->a2);
	fprintf(stderr, "call returned\n");
}

/* Each of the n calls, in a child of its own, is stopped with one line. */
static void expect_stopped(const struct bad_call *b, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct child c;

		run_child(make_bad_call, &b[i], &c);
		if (c.status != SANDBOX_EXIT_STATUS ||
		    !strstr(c.err, b[i].line))
			fail_msg("%s: status %d, stderr: %s", b[i].line,
				 c.status, c.err);
		/* One line, nothing else. */
		assert_non_null(strchr(c.err, '\n'));
		assert_string_equal(strchr(c.err, '\n') + 1, "");
	}
}

#define STR_(x) #x
#define STR(x) STR_(x) /* a system call's number, this build's table */

static void test_each_kind_stops_a_call_outside_its_list(void **state)
{
	static const struct bad_call calls[] = {
		{ SANDBOX_IOTHREAD,
		  "sandbox: the iothread called socket (system call "
		  STR(SYS_socket) "), "
		  "which is not in its list; stopping the VMM",
		  SYS_socket, AF_INET, SOCK_STREAM, 0 },
		{ SANDBOX_VCPU, "the vCPU thread called openat",
		  SYS_openat, AT_FDCWD, (long)"/etc/passwd", O_RDONLY },
		{ SANDBOX_VCPU, "the vCPU thread called io_uring_setup",
		  SYS_io_uring_setup, 8, 0, 0 },
		{ SANDBOX_VCPU, "the vCPU thread called execve",
		  SYS_execve, (long)"/bin/true", 0, 0 },
		{ SANDBOX_MAIN, "the main thread called io_uring_setup",
		  SYS_io_uring_setup, 8, 0, 0 },
		{ SANDBOX_MAIN, "the main thread called clone",
		  SYS_clone, 0, 0, 0 },
		{ SANDBOX_CONSOLE, "the console thread called openat",
		  SYS_openat, AT_FDCWD, (long)"/etc/passwd", O_RDONLY },
		{ SANDBOX_INTX, "the INTx thread called pwrite64",
		  SYS_pwrite64, 2, (long)"x", 1 },
		{ SANDBOX_IOTHREAD, "the iothread called clone",
		  SYS_clone, 0, 0, 0 },
	};

	(void)state;
	expect_stopped(calls, sizeof(calls) / sizeof(calls[0]));
}

/* ioctl and io_uring_register pass only with the listed requests. */
static void test_arguments_are_checked(void **state)
{
	static const struct bad_call calls[] = {
		{ SANDBOX_IOTHREAD, "the iothread called ioctl",
		  SYS_ioctl, -1, KVM_RUN, 0 },
		{ SANDBOX_CONSOLE, "the console thread called ioctl",
		  SYS_ioctl, -1, KVM_RUN, 0 },
		{ SANDBOX_VCPU, "the vCPU thread called ioctl",
		  SYS_ioctl, -1, KVM_CREATE_VCPU, 0 },
		{ SANDBOX_VCPU, "the vCPU thread called ioctl",
		  SYS_ioctl, -1, TIOCSTI, 0 },
		{ SANDBOX_MAIN, "the main thread called ioctl",
		  SYS_ioctl, -1, KVM_RUN, 0 },
		{ SANDBOX_IOTHREAD, "the iothread called io_uring_register",
		  SYS_io_uring_register, -1, IORING_UNREGISTER_BUFFERS, 0 },
		{ SANDBOX_IOTHREAD, "the iothread called io_uring_register",
		  SYS_io_uring_register, -1, IORING_REGISTER_PERSONALITY, 0 },
		{ SANDBOX_VCPU, "the vCPU thread called prctl",
		  SYS_prctl, PR_SET_DUMPABLE, 1, 0 },
		{ SANDBOX_MAIN, "the main thread called tgkill", /* not us */
		  SYS_tgkill, 1, 1, 0 },
		{ SANDBOX_IOTHREAD, "the iothread called prctl",
		  SYS_prctl, PR_SET_NAME, (long)"x", 0 },
	};

	(void)state;
	expect_stopped(calls, sizeof(calls) / sizeof(calls[0]));
}

/* ---- what the lists let through ------------------------------------- */

static int seccomp_mode(void)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	char line[256];
	int mode = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

static void allowed_calls(const void *arg)
{
	const enum sandbox_kind *kind = arg;
	char buf[8] = "";
	long r;

	/* Mode 0 before: sandbox_init() alone confines nothing. */
	init_or_die();
	if (seccomp_mode() != 0)
		_exit(10);
	sandbox_enter(*kind);
	/* The calls of every kind: stdio, time, memory, futex. */
	if (write(STDERR_FILENO, "ok ", 3) != 3)
		_exit(11);
	r = syscall(SYS_ioctl, -1, TCSETSW, 0); /* allowed: EBADF */
	if (r != -1 || errno != EBADF)
		_exit(12);
	free(malloc(1 << 20));
	if (syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 0)) /* us */
		_exit(15);
	if (read(-1, buf, 1) != -1 || errno != EBADF)
		_exit(13);
	/* /proc is not readable from the lists (no openat): checked by the
	 * e2e test of a running guest instead, through the main thread's
	 * list, which has it. */
	if (*kind == SANDBOX_MAIN && seccomp_mode() != 2)
		_exit(14);
}

static void test_each_kind_keeps_its_common_calls(void **state)
{
	(void)state;
	for (enum sandbox_kind k = 0; k < SANDBOX_KINDS; k++) {
		struct child c;

		run_child(allowed_calls, &k, &c);
		if (c.status != 0 || strcmp(c.err, "ok "))
			fail_msg("%s: status %d, stderr: %s",
				 sandbox_kind_name(k), c.status, c.err);
	}
}

/* A vCPU starts the INTx thread: the new thread names itself under the
 * vCPU's filter, then takes its own; a call outside both is named as
 * the new thread's. */
static void *new_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "intx");
	if (arg)
		syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	sandbox_enter(SANDBOX_INTX);
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

static void vcpu_starts_thread(const void *arg)
{
	pthread_t t;

	init_or_die();
	/* As in the VMM, where main starts threads before any filter:
	 * glibc's first pthread_create sets up its signal handlers. */
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
		_exit(41);
	sandbox_enter(SANDBOX_VCPU);
	if (pthread_create(&t, NULL, new_thread, (void *)arg) ||
	    pthread_join(t, NULL))
		_exit(40);
}

static void test_vcpu_starts_a_thread(void **state)
{
	struct child c;

	(void)state;
	expect_clean("names itself", vcpu_starts_thread, NULL);
	run_child(vcpu_starts_thread, "bad", &c);
	assert_int_equal(c.status, SANDBOX_EXIT_STATUS);
	assert_non_null(strstr(c.err, "the new thread (under its creator's "
				      "filter) called socket"));
}

#if defined(__x86_64__)
/* The vCPU reads the RTC (an x86 device), which converts the host's
 * time. */
static void vcpu_reads_rtc(const void *arg)
{
	struct rtc r;
	uint8_t idx = 0x09, year = 0; /* the year, BCD */

	(void)arg;
	init_or_die();
	rtc_init(&r);
	sandbox_enter(SANDBOX_VCPU);
	rtc_io(&r, RTC_INDEX, &idx, 1, true);
	rtc_io(&r, RTC_DATA, &year, 1, false);
	if (year < 0x25)
		_exit(42);
}

static void test_vcpu_reads_the_rtc(void **state)
{
	(void)state;
	expect_clean("RTC", vcpu_reads_rtc, NULL);
}
#endif

/* Without sandbox_init(), sandbox_enter() confines nothing. */
static void not_active(const void *arg)
{
	(void)arg;
	sandbox_enter(SANDBOX_IOTHREAD);
	if (sandbox_active() || seccomp_mode() != 0)
		_exit(20);
	close(socket(AF_INET, SOCK_STREAM, 0));
}

static void test_off_without_init(void **state)
{
	(void)state;
	expect_clean("off", not_active, NULL);
}

/* ---- a real device under the filters -------------------------------- */

#define DISK (1u << 20)
#define QSIZE 16

struct dev_case {
	const char *name;
	bool ram;
	enum blk_engine engine;
};

static int one(struct blkdrv_q *q, uint32_t type, uint64_t sector,
	       uint64_t gpa, uint32_t len, bool dev_writes)
{
	struct drv_buf b = { gpa, len, dev_writes };

	return blkdrv_sync(q, type, sector, &b, len ? 1 : 0, false, NULL);
}

/* Every request type the driver may send, then a reset and a second
 * start (the iothread opens its backend queue again under its filter). */
static void device_run(const void *arg)
{
	const struct dev_case *dc = arg;
	char path[] = "/tmp/test_sandbox.XXXXXX", msg[256];
	struct blk_opts o = { .ram_size = DISK, .queues = 2,
			      .poll_us = BLK_POLL_US_DEFAULT,
			      .engine = dc->engine };
	struct vdev_queue qc[2];
	struct blkdrv_q rq[2][2]; /* per round: made before the filter */
	struct fakemem fm;
	struct blk_dev *d;
	uint64_t buf;
	int fd;

	init_or_die();
	if (!dc->ram) {
		fd = mkstemp(path);
		if (fd < 0 || ftruncate(fd, DISK))
			_exit(30);
		close(fd);
		o.path = path;
	}
	if (blk_dev_create(&o, &d, msg, sizeof(msg))) {
		fprintf(stderr, "blk_dev_create: %s\n", msg);
		_exit(31);
	}
	if (!dc->ram)
		unlink(path); /* the backend holds it open */
	if (fakemem_create(&fm, 1ull << 32, 8u << 20))
		_exit(32);
	buf = fakemem_alloc(&fm, 1u << 16, 4096);
	memset(fakemem_hva(&fm, buf), 0x5a, 1u << 16);
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 2; i++)
			if (blkdrv_q_init(&rq[r][i], &fm, QSIZE, true))
				_exit(33);
	/* The driver side is the vCPU's place: DRIVER_OK and reset come
	 * from a vCPU thread. */
	sandbox_enter(SANDBOX_VCPU);
	for (int round = 0; round < 2; round++) {
		struct blkdrv_q *q = rq[round];

		for (int i = 0; i < 2; i++)
			qc[i] = blkdrv_q_vdev(&q[i]);
		if (blkdrv_activate(d, &fm.gm, blk_dev_ops.features(d), qc, 2,
				    NULL, NULL))
			_exit(34);
		for (int i = 0; i < 2; i++) {
			struct blkdrv_q *bq = &q[i];
			int st[6];

			st[0] = one(bq, VIRTIO_BLK_T_OUT, 8, buf, 4096, false);
			st[1] = one(bq, VIRTIO_BLK_T_IN, 8, buf + 8192, 4096,
				    true);
			st[2] = one(bq, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false);
			st[3] = one(bq, VIRTIO_BLK_T_GET_ID, 0, buf + 16384,
				    20, true);
			st[4] = st[5] = VIRTIO_BLK_S_OK;
			if (blk_dev_ops.features(d) &
			    (1ull << VIRTIO_BLK_F_DISCARD)) {
				struct virtio_blk_discard_write_zeroes *s =
					fakemem_hva(&fm, buf + 32768);

				memset(s, 0, sizeof(*s));
				s->sector = 16;
				s->num_sectors = 8;
				st[4] = one(bq, VIRTIO_BLK_T_DISCARD, 0,
					    buf + 32768, sizeof(*s), false);
				st[5] = one(bq, VIRTIO_BLK_T_WRITE_ZEROES, 0,
					    buf + 32768, sizeof(*s), false);
			}
			for (int k = 0; k < 6; k++)
				if (st[k] != VIRTIO_BLK_S_OK) {
					fprintf(stderr, "request %d: %d\n", k,
						st[k]);
					_exit(35);
				}
			if (memcmp(fakemem_hva(&fm, buf),
				   fakemem_hva(&fm, buf + 8192), 4096))
				_exit(36);
		}
		blk_dev_ops.reset(d); /* the driver's reset */
	}
	blk_dev_destroy(d);
}

static void test_device_serves_under_its_filters(void **state)
{
	static const struct dev_case cases[] = {
		{ "ram", true, BLK_ENGINE_AUTO },
		{ "file, io_uring", false, BLK_ENGINE_URING },
		{ "file, sync", false, BLK_ENGINE_SYNC },
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_clean(cases[i].name, device_run, &cases[i]);
}

/* ---- libraries' lazy set-up ------------------------------------------ */

/* glibc gives a thread its malloc arena at the thread's first malloc;
 * once more arenas exist than glibc.malloc.arena_test allows (8 on
 * 64-bit), it sizes the pool from /sys/devices/system/cpu/online, an
 * openat no filter allows: the 10th thread alive whose first malloc
 * comes after its filter meets that (as a VMM with 8 vCPUs and 8 queues
 * did at the first I/O; GLIBC_TUNABLES=glibc.malloc.arena_test=1 brings
 * it to the second, as tests/e2e/py/test_sandbox.py runs the VMM).  json-c
 * seeds its hash on first use (from /dev/urandom where getrandom
 * fails): the control socket's first command, under its filter. */
#define ARENA_THREADS 16

/* Held until every thread has allocated: an ended thread's arena goes
 * to the next thread's first malloc, which then needs no new one. */
static pthread_barrier_t arena_barrier;

static void *first_malloc_under_filter(void *arg)
{
	enum sandbox_kind kind = (enum sandbox_kind)(uintptr_t)arg;
	struct json_object *o;
	void *p;

	sandbox_enter(kind);
	p = malloc(4096);
	/* Kept: the compiler may drop a malloc whose result is unused. */
	__asm__ volatile("" : : "r"(p) : "memory");
	free(p);
	if (kind == SANDBOX_API) {
		o = json_tokener_parse("{\"execute\": \"info\"}");
		json_object_object_add(o, "seeded", json_object_new_int(1));
		if (!json_object_to_json_string(o))
			fprintf(stderr, "json-c failed\n");
		json_object_put(o);
	}
	pthread_barrier_wait(&arena_barrier);
	return NULL;
}

static void threads_malloc_under_filters(const void *arg)
{
	static const enum sandbox_kind kinds[] = {
		SANDBOX_VCPU, SANDBOX_IOTHREAD, SANDBOX_CONSOLE,
		SANDBOX_INTX, SANDBOX_API,
	};

	pthread_t t[ARENA_THREADS];

	(void)arg;
	init_or_die();
	if (pthread_barrier_init(&arena_barrier, NULL, ARENA_THREADS + 1))
		_exit(98);
	for (unsigned int i = 0; i < ARENA_THREADS; i++) {
		uintptr_t k = kinds[i % (sizeof(kinds) / sizeof(kinds[0]))];

		if (pthread_create(&t[i], NULL, first_malloc_under_filter,
				   (void *)k))
			_exit(98);
	}
	pthread_barrier_wait(&arena_barrier);
	for (unsigned int i = 0; i < ARENA_THREADS; i++)
		pthread_join(t[i], NULL);
}

static void test_first_malloc_under_each_filter(void **state)
{
	(void)state;
	expect_clean("16 threads' first malloc and json-c under filters",
		     threads_malloc_under_filters, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_kind_stops_a_call_outside_its_list),
		cmocka_unit_test(test_arguments_are_checked),
		cmocka_unit_test(test_each_kind_keeps_its_common_calls),
		cmocka_unit_test(test_vcpu_starts_a_thread),
#if defined(__x86_64__)
		cmocka_unit_test(test_vcpu_reads_the_rtc),
#endif
		cmocka_unit_test(test_off_without_init),
		cmocka_unit_test(test_device_serves_under_its_filters),
		cmocka_unit_test(test_first_malloc_under_each_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
