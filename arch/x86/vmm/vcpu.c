/* x86 vCPUs: what one was doing when the VMM was stopped, and the
 * probe's tiny real-mode guest. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/arch.h"
#include "vmm/machine.h"

static const char *vcpu_mp_state_name(uint32_t s)
{
	switch (s) {
	case KVM_MP_STATE_RUNNABLE:
		return "running";
	case KVM_MP_STATE_HALTED:
		return "halted";
	case KVM_MP_STATE_UNINITIALIZED:
		return "waiting for INIT";
	case KVM_MP_STATE_INIT_RECEIVED:
		return "waiting for SIPI";
	default:
		return "in another state";
	}
}

/* The vectors set in a local APIC register bank (IRR at 0x200, ISR at
 * 0x100: eight 32-bit words, 16 bytes apart), as " 0xNN" each. */
static void vcpu_apic_vectors(const struct kvm_lapic_state *l, unsigned int base,
			      char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = 0;
	for (unsigned int v = 0; v < 256 && k + 6 < len; v++) {
		uint32_t w;

		memcpy(&w, &l->regs[base + (v / 32) * 16], sizeof(w));
		if (w & (1u << (v % 32)))
			k += (size_t)snprintf(buf + k, len - k, " 0x%02x", v);
	}
	if (!k)
		snprintf(buf, len, " none");
}

void arch_vcpu_describe(const struct vcpu *c, char *buf, size_t len)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	struct kvm_mp_state mp;
	struct kvm_lapic_state l;
	char irr[64], isr[64];

	if (ioctl(c->fd, KVM_GET_MP_STATE, &mp) < 0 ||
	    ioctl(c->fd, KVM_GET_REGS, &r) < 0 ||
	    ioctl(c->fd, KVM_GET_SREGS, &s) < 0 ||
	    ioctl(c->fd, KVM_GET_LAPIC, &l) < 0) {
		snprintf(buf, len, "vCPU %u: state not readable: %s", c->id,
			 strerror(errno));
		return;
	}
	vcpu_apic_vectors(&l, 0x200, irr, sizeof(irr));
	vcpu_apic_vectors(&l, 0x100, isr, sizeof(isr));
	/* The paging registers too: a guest that loops on page faults
	 * shows whether its page tables' root is still a RAM address. */
	snprintf(buf, len,
		 "vCPU %u: %s (mp_state %u), rip=0x%llx rflags=0x%llx, interrupts %s; "
		 "cr0=0x%llx cr3=0x%llx cr4=0x%llx efer=0x%llx; "
		 "APIC requested:%s, in service:%s",
		 c->id, vcpu_mp_state_name(mp.mp_state), mp.mp_state,
		 (unsigned long long)r.rip, (unsigned long long)r.rflags,
		 r.rflags & 0x200 ? "on" : "off",
		 (unsigned long long)s.cr0, (unsigned long long)s.cr3,
		 (unsigned long long)s.cr4, (unsigned long long)s.efer, irr, isr);
}

const struct probe_cap arch_probe_caps[] = {
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

const unsigned int arch_nprobe_caps =
	sizeof(arch_probe_caps) / sizeof(arch_probe_caps[0]);
const uint32_t arch_probe_exit = KVM_EXIT_HLT;

/* Real mode at 0: mov ecx, N; 1: dec ecx; jnz 1b; hlt. */
static void probe_code(uint8_t *p, uint32_t n)
{
	static const uint8_t code[] = { 0x66, 0xb9, 0, 0, 0, 0, 0x66, 0x49,
					0x75, 0xfc, 0xf4 };
	memcpy(p, code, sizeof(code));
	memcpy(p + 2, &n, 4);
}

int arch_probe_setup(int vm, int vcpu, uint8_t *mem, uint32_t loops)
{
	struct kvm_sregs s;
	struct kvm_regs r = { .rip = 0, .rflags = 2 };

	(void)vm;
	probe_code(mem, loops);
	if (ioctl(vcpu, KVM_GET_SREGS, &s) < 0)
		return -errno;
	s.cs.base = 0;
	s.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &s) < 0 ||
	    ioctl(vcpu, KVM_SET_REGS, &r) < 0)
		return -errno;
	return 0;
}
