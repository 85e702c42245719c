/* Probe KVM: API version, the capabilities the VMM relies on, and a
 * timed tiny guest loop that tells hardware virtualization (well under a
 * millisecond) from instruction emulation (a second or more). */
#include "vmm/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "vmm/machine.h"

#define PROBE_LOOPS 500000u
#define PROBE_FAST_NS 50000000ull /* 50 ms: far above hardware speed */

static const struct {
	int cap;
	const char *name;
} probe_caps[] = {
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP" },
	{ KVM_CAP_PIT2, "KVM_CAP_PIT2" },
	{ KVM_CAP_IRQ_ROUTING, "KVM_CAP_IRQ_ROUTING" },
	{ KVM_CAP_IRQFD, "KVM_CAP_IRQFD" },
	{ KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR" },
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
	{ KVM_CAP_MAX_VCPUS, "KVM_CAP_MAX_VCPUS" },
};

static bool probe_caps_ok(int kvm)
{
	bool ok = true;

	printf("capabilities:\n");
	for (unsigned int i = 0; i < sizeof(probe_caps) / sizeof(probe_caps[0]);
	     i++) {
		int v = ioctl(kvm, KVM_CHECK_EXTENSION, probe_caps[i].cap);

		printf("  %-24s %s", probe_caps[i].name, v > 0 ? "yes" : "NO");
		if (probe_caps[i].cap == KVM_CAP_MAX_VCPUS && v > 0)
			printf(" (%d)", v);
		printf("\n");
		ok &= v > 0;
	}
	return ok;
}

/* Real mode at 0: mov ecx, N; 1: dec ecx; jnz 1b; hlt. */
static void probe_code(uint8_t *p)
{
	static const uint8_t code[] = { 0x66, 0xb9, 0, 0, 0, 0, 0x66, 0x49,
					0x75, 0xfc, 0xf4 };
	uint32_t n = PROBE_LOOPS;

	memcpy(p, code, sizeof(code));
	memcpy(p + 2, &n, 4);
}

static int probe_vcpu_setup(int vm, int vcpu)
{
	struct kvm_sregs s;
	struct kvm_regs r = { .rip = 0, .rflags = 2 };

	(void)vm;
	if (ioctl(vcpu, KVM_GET_SREGS, &s) < 0)
		return -errno;
	s.cs.base = 0;
	s.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &s) < 0 ||
	    ioctl(vcpu, KVM_SET_REGS, &r) < 0)
		return -errno;
	return 0;
}

/* Nanoseconds the loop took, or 0 on failure. */
static uint64_t probe_loop(int kvm)
{
	struct kvm_userspace_memory_region reg = { .memory_size = 0x1000 };
	int vm = -1, vcpu = -1, sz = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	uint64_t t0;
	struct kvm_run *run = MAP_FAILED;
	uint64_t ns = 0;
	uint8_t *mem;

	mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 0;
	probe_code(mem);
	reg.userspace_addr = (uintptr_t)mem;
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0 || ioctl(vm, KVM_SET_USER_MEMORY_REGION, &reg) < 0)
		goto out;
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0 || sz <= 0 || probe_vcpu_setup(vm, vcpu))
		goto out;
	run = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu,
		   0);
	if (run == MAP_FAILED)
		goto out;
	t0 = mono_ns();
	if (ioctl(vcpu, KVM_RUN, 0) < 0 || run->exit_reason != KVM_EXIT_HLT)
		goto out;
	ns = mono_ns() - t0;
	if (!ns)
		ns = 1;
out:
	if (run != MAP_FAILED)
		munmap(run, (size_t)sz);
	if (vcpu >= 0)
		close(vcpu);
	if (vm >= 0)
		close(vm);
	munmap(mem, 0x1000);
	return ns;
}

int probe_run(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), v;
	bool caps;
	uint64_t ns;

	if (kvm < 0) {
		printf("KVM: cannot open /dev/kvm: %s\n", strerror(errno));
		return VMM_EXIT_ERROR;
	}
	v = ioctl(kvm, KVM_GET_API_VERSION, 0);
	printf("KVM API version: %d%s\n", v,
	       v == KVM_API_VERSION ? "" : " (unsupported)");
	caps = probe_caps_ok(kvm);
	fflush(stdout);
	ns = probe_loop(kvm);
	close(kvm);
	if (!ns || v != KVM_API_VERSION || !caps) {
		printf("verdict: KVM unusable%s\n",
		       ns ? " (missing capabilities)" : " (test guest failed)");
		return VMM_EXIT_ERROR;
	}
	printf("guest loop: %u iterations in %.3f ms, %.1f ns each\n",
	       PROBE_LOOPS, (double)ns / 1e6, (double)ns / PROBE_LOOPS);
	if (ns < PROBE_FAST_NS) {
		printf("verdict: hardware virtualization, guests run at speed\n");
		return VMM_EXIT_RESET;
	}
	printf("verdict: emulated (no hardware virtualization at this level): "
	       "too slow for Linux guests, use the test host\n");
	return VMM_EXIT_SLOW;
}
