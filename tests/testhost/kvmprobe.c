// SPDX-License-Identifier: GPL-2.0
/*
 * kvmprobe: does this host's /dev/kvm run a standard guest at speed?
 *
 * Creates a VM with one vCPU in real mode and runs a two-instruction loop
 * (dec ecx; jnz) ITER times, then hlt, timing KVM_RUN.  Hardware
 * virtualization does an iteration in about a nanosecond; the emulated
 * kvm_pvm of our development machines needs about a microsecond; the
 * emulated AMD-V inside the test host a few nanoseconds.  A run that
 * exceeds the time limit is interrupted by SIGALRM and rated from the
 * iterations it managed.
 *
 * Usage: kvmprobe [-n ITER] [-t LIMIT_MS] [-s SLOW_NS]
 * Prints one line; exit 0: fast, 1: slow, 2: no usable /dev/kvm.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MEM_SIZE 0x10000
#define CODE_ADDR 0x1000

struct probe {
	int kvm;
	int vm;
	int vcpu;
	uint8_t *mem;
	struct kvm_run *run;
	size_t run_size;
};

static void on_alarm(int sig)
{
	(void)sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(const char *what)
{
	int err = errno;

	printf("kvmprobe: %s: %s: no usable KVM\n", what, strerror(err));
	return -err;
}

static int probe_setup(struct probe *p, uint32_t iter)
{
	/* mov ecx, iter; 1: dec ecx; jnz 1b; hlt (real mode, 0x66 = 32-bit) */
	uint8_t code[] = { 0x66, 0xb9, 0, 0, 0, 0, 0x66, 0x49, 0x75, 0xfc, 0xf4 };
	struct kvm_userspace_memory_region region = { 0 };
	struct kvm_sregs sregs;
	struct kvm_regs regs = { 0 };
	int n;

	p->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (p->kvm < 0)
		return fail("open /dev/kvm");
	if (ioctl(p->kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		return fail("KVM_GET_API_VERSION");
	p->vm = ioctl(p->kvm, KVM_CREATE_VM, 0);
	if (p->vm < 0)
		return fail("KVM_CREATE_VM");
	p->mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->mem == MAP_FAILED)
		return fail("mmap guest memory");
	memcpy(&code[2], &iter, sizeof(iter));
	memcpy(p->mem + CODE_ADDR, code, sizeof(code));
	region.memory_size = MEM_SIZE;
	region.userspace_addr = (uintptr_t)p->mem;
	if (ioctl(p->vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION");
	p->vcpu = ioctl(p->vm, KVM_CREATE_VCPU, 0);
	if (p->vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	n = ioctl(p->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (n <= 0)
		return fail("KVM_GET_VCPU_MMAP_SIZE");
	p->run_size = n;
	p->run = mmap(NULL, p->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      p->vcpu, 0);
	if (p->run == MAP_FAILED)
		return fail("mmap kvm_run");
	if (ioctl(p->vcpu, KVM_GET_SREGS, &sregs) < 0)
		return fail("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(p->vcpu, KVM_SET_SREGS, &sregs) < 0)
		return fail("KVM_SET_SREGS");
	regs.rip = CODE_ADDR;
	regs.rflags = 0x2;
	if (ioctl(p->vcpu, KVM_SET_REGS, &regs) < 0)
		return fail("KVM_SET_REGS");
	return 0;
}

/* Run until hlt or the alarm; return the iterations done, or -1. */
static long long probe_run(struct probe *p, uint32_t iter, int *interrupted)
{
	struct kvm_regs regs;

	*interrupted = 0;
	for (;;) {
		if (ioctl(p->vcpu, KVM_RUN, 0) < 0) {
			if (errno != EINTR) {
				fail("KVM_RUN");
				return -1;
			}
			*interrupted = 1;
			break;
		}
		if (p->run->exit_reason == KVM_EXIT_HLT)
			break;
		if (p->run->exit_reason == KVM_EXIT_INTR) {
			*interrupted = 1;
			break;
		}
		printf("kvmprobe: unexpected exit reason %u: no usable KVM\n",
		       p->run->exit_reason);
		return -1;
	}
	if (ioctl(p->vcpu, KVM_GET_REGS, &regs) < 0) {
		fail("KVM_GET_REGS");
		return -1;
	}
	return (long long)iter - (uint32_t)regs.rcx;
}

int main(int argc, char **argv)
{
	struct probe p = { .kvm = -1, .vm = -1, .vcpu = -1 };
	struct sigaction sa = { 0 };
	struct itimerval timer = { 0 };
	unsigned long iter = 10000000, limit_ms = 1000;
	double slow_ns = 100, t0, dt, ns;
	long long done;
	int opt, intr;

	while ((opt = getopt(argc, argv, "n:t:s:")) != -1) {
		switch (opt) {
		case 'n': iter = strtoul(optarg, NULL, 0); break;
		case 't': limit_ms = strtoul(optarg, NULL, 0); break;
		case 's': slow_ns = strtod(optarg, NULL); break;
		default:
			fprintf(stderr, "usage: %s [-n ITER] [-t LIMIT_MS] [-s SLOW_NS]\n",
				argv[0]);
			return 2;
		}
	}
	if (iter == 0 || iter > UINT32_MAX || limit_ms == 0) {
		fprintf(stderr, "kvmprobe: bad -n or -t\n");
		return 2;
	}
	if (probe_setup(&p, (uint32_t)iter) < 0)
		return 2;
	sa.sa_handler = on_alarm; /* no SA_RESTART: KVM_RUN returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	timer.it_value.tv_sec = limit_ms / 1000;
	timer.it_value.tv_usec = (limit_ms % 1000) * 1000;
	t0 = now_s();
	setitimer(ITIMER_REAL, &timer, NULL);
	done = probe_run(&p, (uint32_t)iter, &intr);
	dt = now_s() - t0;
	memset(&timer, 0, sizeof(timer));
	setitimer(ITIMER_REAL, &timer, NULL);
	if (done < 0)
		return 2;
	if (done == 0) {
		printf("kvmprobe: no iteration done in %.3f s: slow\n", dt);
		return 1;
	}
	ns = dt * 1e9 / done;
	printf("kvmprobe: %lld%s iterations in %.3f s, %.1f ns each: %s\n",
	       done, intr ? " (interrupted)" : "", dt, ns,
	       ns > slow_ns ? "slow (emulated KVM)" : "fast");
	return ns > slow_ns ? 1 : 0;
}
