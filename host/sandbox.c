/* The sandbox's filters; see sandbox.h.
 *
 * Each list is what that thread kind calls after set-up, read from the
 * code (and from glibc's and liburing's wrappers), and checked by running
 * guests with the sandbox on: tests/unit/test_sandbox.c runs a real
 * device under the iothread filter, tests/e2e/py/test_sandbox.py whole
 * guests.  A call that is missing stops the VMM with its name, so a gap
 * is found at once rather than silently tolerated.
 */
#include "host/sandbox.h"

#include <errno.h>
#include <json-c/json.h>
#include <malloc.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/kvm.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <termios.h>
#include <unistd.h>

#define MAX_NR 512 /* above every x86-64 and arm64 system call number */

/* Every kind: memory (malloc, thread stacks), futexes (locks, joins),
 * time, signals' return, stdio on fds it holds, thread exit; tgkill to
 * this process only (vCPU kicks, abort()), added in compile(). */
static const int common_calls[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(close),
	SCMP_SYS(poll), SCMP_SYS(ppoll),
	SCMP_SYS(futex), SCMP_SYS(mmap), SCMP_SYS(munmap),
	SCMP_SYS(mprotect), SCMP_SYS(madvise), SCMP_SYS(mremap),
	SCMP_SYS(brk), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(restart_syscall),
	SCMP_SYS(clock_gettime), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday), SCMP_SYS(sched_yield),
	SCMP_SYS(getpid), SCMP_SYS(gettid),
	SCMP_SYS(newfstatat), SCMP_SYS(fstat), SCMP_SYS(getrandom),
	SCMP_SYS(exit), SCMP_SYS(exit_group),
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* `make SAN=...` only: the sanitizers' runtimes, in every thread
	 * they start or end, read the thread's CPU mask and set up an
	 * alternate signal stack. */
	SCMP_SYS(sched_getaffinity), SCMP_SYS(sigaltstack),
#endif
};

/* The main thread: wait (poll, signalfd, eventfd), kick and join the
 * vCPUs and read their state after (-v), write --stats (a temporary
 * file renamed over the target), tear down the devices (their ioctls
 * below); with --pin follow, read where the vCPUs run and move the
 * iothreads (vmm/follow.h). */
static const int main_calls[] = {
	SCMP_SYS(openat), SCMP_SYS(rename), SCMP_SYS(renameat),
	SCMP_SYS(renameat2), SCMP_SYS(unlink), SCMP_SYS(unlinkat),
	SCMP_SYS(pread64), SCMP_SYS(sched_setaffinity),
};

/* A vCPU: KVM_RUN and the devices' registers, which may start and stop
 * queues (DRIVER_OK, reset, Bus Master Enable) and the INTx thread. */
static const int vcpu_calls[] = {
	SCMP_SYS(clone), SCMP_SYS(clone3),
	SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(seccomp),
};

/* An iothread: its io_uring (opened at each DRIVER_OK, closed at
 * reset), the sync engine's calls, the eventfd the ring signals. */
static const int iothread_calls[] = {
	SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(eventfd2),
	SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(preadv),
	SCMP_SYS(pwritev), SCMP_SYS(preadv2), SCMP_SYS(pwritev2),
	SCMP_SYS(fdatasync), SCMP_SYS(fsync), SCMP_SYS(fallocate),
};

/* The control socket's thread: its clients (accept, recv, send), and
 * the changes it makes: a file disk's size (resize), a RAM disk's
 * mapping (mprotect, common), the disks' eventfds and locks. */
static const int api_calls[] = {
	SCMP_SYS(accept4), SCMP_SYS(recvfrom), SCMP_SYS(sendto),
	SCMP_SYS(ftruncate),
};

/* The hot-plug thread (`vmm ctl attach`, `detach`): what opening a disk
 * and starting its iothreads take (open, a block device's size, the
 * engine's probe ring, threads); the iothreads it starts run under this
 * filter as well as their own, so it also takes the iothread's rules
 * (kind_rules.starts_iothreads).  Detach: KVM's routes and fds, close. */
static const int hotplug_calls[] = {
	SCMP_SYS(openat), SCMP_SYS(clone), SCMP_SYS(clone3),
	SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(seccomp),
	SCMP_SYS(lseek), SCMP_SYS(fcntl), SCMP_SYS(fstatfs),
	SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_setscheduler),
	SCMP_SYS(ftruncate),
};

/* ioctl (every kind) and io_uring_register (the iothread) are allowed
 * only with the requests listed here, added in compile().
 *
 * ioctl requests, per kind.  TCSETSW everywhere: the terminal's restore
 * when the sandbox stops a thread (tcsetattr TCSADRAIN). */
static const unsigned long main_ioctls[] = {
	TCSETSW, KVM_IRQ_LINE, KVM_SET_GSI_ROUTING, KVM_IRQFD, KVM_IOEVENTFD,
	/* what a stopped vCPU was doing (arch_vcpu_describe) */
	KVM_GET_MP_STATE,
#if defined(__x86_64__)
	KVM_GET_REGS, KVM_GET_SREGS, KVM_GET_LAPIC,
#elif defined(__aarch64__)
	KVM_GET_ONE_REG,
#endif
};
static const unsigned long vcpu_ioctls[] = {
	TCSETSW, KVM_RUN, KVM_IRQ_LINE, KVM_SET_GSI_ROUTING, KVM_IRQFD,
	KVM_IOEVENTFD,
};
static const unsigned long iothread_ioctls[] = { TCSETSW };
static const unsigned long hotplug_ioctls[] = {
	KVM_SET_GSI_ROUTING, KVM_IRQFD, KVM_IOEVENTFD, BLKGETSIZE64, BLKSSZGET,
};
/* The console's input and the INTx thread raise an interrupt line. */
static const unsigned long irq_line_ioctls[] = { TCSETSW, KVM_IRQ_LINE };

/* io_uring_register operations blk/uring.c makes before it enables the
 * ring; once enabled, the ring's restrictions refuse them anyway. */
static const unsigned long iothread_uring_ops[] = {
	IORING_REGISTER_EVENTFD, IORING_REGISTER_FILES, IORING_REGISTER_BUFFERS,
	IORING_REGISTER_IOWQ_MAX_WORKERS, IORING_REGISTER_RESTRICTIONS,
	IORING_REGISTER_ENABLE_RINGS,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define LIST(a) a, N(a)

struct kind_rules {
	const char *name;
	const int *calls;
	unsigned int ncalls;
	const unsigned long *ioctls;
	unsigned int nioctls;
	const unsigned long *uring_ops;
	unsigned int nuring_ops;
	bool names_threads; /* prctl(PR_SET_NAME): a new thread names itself
			     * under its creator's filter */
	bool starts_iothreads; /* the iothread's rules too: the iothreads it
				* starts run under both filters */
};

static const struct kind_rules kinds[SANDBOX_KINDS] = {
	[SANDBOX_MAIN] = { "main thread", LIST(main_calls), LIST(main_ioctls),
			   NULL, 0 },
	[SANDBOX_VCPU] = { "vCPU thread", LIST(vcpu_calls), LIST(vcpu_ioctls),
			   NULL, 0, true },
	[SANDBOX_IOTHREAD] = { "iothread", LIST(iothread_calls),
			       LIST(iothread_ioctls),
			       LIST(iothread_uring_ops) },
	[SANDBOX_CONSOLE] = { "console thread", NULL, 0,
			      LIST(irq_line_ioctls), NULL, 0 },
	[SANDBOX_INTX] = { "INTx thread", NULL, 0, LIST(irq_line_ioctls),
			   NULL, 0 },
	[SANDBOX_API] = { "control socket thread", LIST(api_calls),
			  LIST(iothread_ioctls), NULL, 0 },
	[SANDBOX_HOTPLUG] = { "hot-plug thread", LIST(hotplug_calls),
			      LIST(hotplug_ioctls), NULL, 0, true, true },
};

static struct sock_fprog progs[SANDBOX_KINDS];
static bool active;
static void (*stop_hook)(void);
static const char *call_names[MAX_NR];
static __thread int thread_kind = -1;

const char *sandbox_kind_name(enum sandbox_kind kind)
{
	return kind < SANDBOX_KINDS ? kinds[kind].name : "?";
}

bool sandbox_active(void)
{
	return active;
}

/* ---- the stop: SIGSYS in the thread that made the call ---------------- */

static size_t put_str(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	return at;
}

static size_t put_num(char *buf, size_t at, size_t cap, unsigned long v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(d));
	while (n && at + 1 < cap)
		buf[at++] = d[--n];
	return at;
}

/* Only async-signal-safe work: the names were resolved at init. */
static void sandbox_sigsys(int sig, siginfo_t *si, void *uc)
{
	unsigned long nr = (unsigned long)si->si_syscall;
	const char *name = nr < MAX_NR ? call_names[nr] : NULL;
	char line[256];
	size_t n = 0;

	(void)sig, (void)uc;
	if (stop_hook)
		stop_hook();
	n = put_str(line, n, sizeof(line), "vmm: error: sandbox: the ");
	n = put_str(line, n, sizeof(line),
		    thread_kind >= 0 ? kinds[thread_kind].name
				     : "new thread (under its creator's filter)");
	n = put_str(line, n, sizeof(line), " called ");
	n = put_str(line, n, sizeof(line), name ? name : "an unknown call");
	n = put_str(line, n, sizeof(line), " (system call ");
	n = put_num(line, n, sizeof(line), nr);
	n = put_str(line, n, sizeof(line),
		    "), which is not in its list; stopping the VMM\n");
	(void)!write(STDERR_FILENO, line, n);
	/* The system call itself: a sanitizer's _exit() would run its
	 * checks in this thread, under its filter. */
	syscall(SYS_exit_group, SANDBOX_EXIT_STATUS);
}

/* ---- compiling the filters -------------------------------------------- */

static int add_rules(scmp_filter_ctx ctx, const int *calls, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);

		if (r)
			return r;
	}
	return 0;
}

static int add_arg_rules(scmp_filter_ctx ctx, int nr, const unsigned long *v,
			 unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					 SCMP_A1(SCMP_CMP_EQ,
						 (scmp_datum_t)v[i]));

		if (r)
			return r;
	}
	return 0;
}

/* libseccomp 2.5 exports a program only to a file descriptor. */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog *p)
{
	int fd = memfd_create("sandbox", MFD_CLOEXEC), r;
	off_t len;

	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (!r) {
		len = lseek(fd, 0, SEEK_END);
		p->filter = len > 0 ? malloc((size_t)len) : NULL;
		if (!p->filter || pread(fd, p->filter, (size_t)len, 0) != len)
			r = -EIO;
		else
			p->len = (unsigned short)(len / 8);
	}
	close(fd);
	return r;
}

/* A kind's own calls, ioctl requests and io_uring_register operations. */
static int add_kind(scmp_filter_ctx ctx, const struct kind_rules *kr)
{
	int r = add_rules(ctx, kr->calls, kr->ncalls);

	if (!r)
		r = add_arg_rules(ctx, SCMP_SYS(ioctl), kr->ioctls,
				  kr->nioctls);
	if (!r)
		r = add_arg_rules(ctx, SCMP_SYS(io_uring_register),
				  kr->uring_ops, kr->nuring_ops);
	return r;
}

static int compile(enum sandbox_kind k)
{
	const struct kind_rules *kr = &kinds[k];
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	int r;

	if (!ctx)
		return -ENOMEM;
	r = add_rules(ctx, common_calls, N(common_calls));
	if (!r)
		r = add_kind(ctx, kr);
	if (!r && kr->starts_iothreads)
		r = add_kind(ctx, &kinds[SANDBOX_IOTHREAD]);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				     SCMP_A0(SCMP_CMP_EQ,
					     (scmp_datum_t)getpid()));
	if (!r && kr->names_threads)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	if (!r)
		r = export_prog(ctx, &progs[k]);
	seccomp_release(ctx);
	return r;
}

/* Libraries that set themselves up on first use, with system calls no
 * filter allows, are set up here, before any filter:
 * - glibc sizes its pool of malloc arenas, once a thread's first malloc
 *   finds more than glibc.malloc.arena_test of them, from
 *   /sys/devices/system/cpu/online (glibc 2.36): its own default limit
 *   (8 per CPU on 64-bit) is set here, so it never reads the file;
 * - json-c seeds its hash (getrandom, else /dev/urandom) on the first
 *   key it hashes: the control socket's first command. */
static void sandbox_prepare_libraries(void)
{
	struct json_object *o;
	int cpus = get_nprocs();

	mallopt(M_ARENA_MAX, 8 * (cpus > 0 ? cpus : 1));
	o = json_object_new_object();
	if (o) {
		json_object_object_add(o, "seed", NULL);
		json_object_put(o);
	}
}

int sandbox_init(void (*on_stop)(void), char *msg, unsigned int msglen)
{
	struct sigaction sa;
	int r;

	sandbox_prepare_libraries();
	for (int nr = 0; nr < MAX_NR; nr++)
		call_names[nr] =
			seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	for (unsigned int k = 0; k < SANDBOX_KINDS; k++) {
		r = compile(k);
		if (r) {
			snprintf(msg, msglen,
				 "cannot build the %s's filter: %s",
				 kinds[k].name, strerror(-r));
			return r;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sandbox_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		r = -errno;
		snprintf(msg, msglen, "cannot set up the sandbox: %s",
			 strerror(errno));
		return r;
	}
	stop_hook = on_stop;
	active = true;
	return 0;
}

void sandbox_enter(enum sandbox_kind kind)
{
	char line[160];
	int e;

	if (!active || kind >= SANDBOX_KINDS)
		return;
	thread_kind = (int)kind;
	if (!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &progs[kind]))
		return;
	/* The filters were built and checked by sandbox_init(): only a
	 * host out of memory gets here.  Not a thread left unconfined. */
	e = errno;
	if (stop_hook)
		stop_hook();
	snprintf(line, sizeof(line),
		 "vmm: error: sandbox: cannot load the %s's filter: "
		 "%s\n", kinds[kind].name, strerror(e));
	(void)!write(STDERR_FILENO, line, strlen(line));
	syscall(SYS_exit_group, 1);
}
