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
#include "vmm/arch.h"
#include "vmm/machine.h"

#define PROBE_LOOPS 500000u
#define PROBE_FAST_NS 50000000ull /* 50 ms: far above hardware speed */

static bool probe_caps_ok(int kvm)
{
	bool ok = true;

	printf("capabilities:\n");
	for (unsigned int i = 0; i < arch_nprobe_caps; i++) {
		int v = ioctl(kvm, KVM_CHECK_EXTENSION, arch_probe_caps[i].cap);

		printf("  %-24s %s", arch_probe_caps[i].name,
		       v > 0 ? "yes" : "NO");
		if (arch_probe_caps[i].cap == KVM_CAP_MAX_VCPUS && v > 0)
			printf(" (%d)", v);
		printf("\n");
		ok &= v > 0;
	}
	return ok;
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
	reg.userspace_addr = (uintptr_t)mem;
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0 || ioctl(vm, KVM_SET_USER_MEMORY_REGION, &reg) < 0)
		goto out;
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0 || sz <= 0 || arch_probe_setup(vm, vcpu, mem, PROBE_LOOPS))
		goto out;
	run = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu,
		   0);
	if (run == MAP_FAILED)
		goto out;
	t0 = mono_ns();
	if (ioctl(vcpu, KVM_RUN, 0) < 0 || run->exit_reason != arch_probe_exit)
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
