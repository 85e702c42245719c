/* arm64 vCPUs: KVM_ARM_VCPU_INIT, the boot registers, what one was
 * doing when the VMM was stopped, and the probe's tiny guest. */
#include <errno.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/arm64/vmm/arm64.h"
#include "vmm/arch.h"
#include "vmm/machine.h"

#define CORE_REG(x)                                              \
	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE |  \
	 KVM_REG_ARM_CORE_REG(x))
#define MPIDR_EL1 ARM64_SYS_REG(3, 0, 0, 0, 5)
#define MPIDR_AFF_MASK 0xff00ffffffull

static int get_reg(int fd, uint64_t id, uint64_t *v)
{
	struct kvm_one_reg r = { .id = id, .addr = (uint64_t)(uintptr_t)v };

	return ioctl(fd, KVM_GET_ONE_REG, &r) < 0 ? -errno : 0;
}

static int set_reg(int fd, uint64_t id, uint64_t v)
{
	struct kvm_one_reg r = { .id = id, .addr = (uint64_t)(uintptr_t)&v };

	return ioctl(fd, KVM_SET_ONE_REG, &r) < 0 ? -errno : 0;
}

static int vcpu_init(int vm_fd, int fd, bool powered_off)
{
	struct kvm_vcpu_init init;

	memset(&init, 0, sizeof(init));
	if (ioctl(vm_fd, KVM_ARM_PREFERRED_TARGET, &init) < 0)
		return -errno;
	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	if (powered_off)
		init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
	return ioctl(fd, KVM_ARM_VCPU_INIT, &init) < 0 ? -errno : 0;
}

int arm64_vcpu_init(struct vm *vm, int fd, unsigned int id, uint64_t *mpidr)
{
	/* Secondaries wait, powered off, for the guest's PSCI CPU_ON. */
	int r = vcpu_init(vm->vm_fd, fd, id > 0);

	if (!r)
		r = get_reg(fd, MPIDR_EL1, mpidr);
	if (!r)
		*mpidr &= MPIDR_AFF_MASK;
	return r;
}

/* KVM's reset state is EL1h with interrupts masked and the MMU off, as
 * the boot protocol asks: only the entry and the tree's address. */
int arm64_vcpu_boot_regs(int fd, uint64_t pc, uint64_t x0)
{
	int r = set_reg(fd, CORE_REG(regs.regs[0]), x0);

	return r ? r : set_reg(fd, CORE_REG(regs.pc), pc);
}

static const char *mp_state_name(uint32_t s)
{
	switch (s) {
	case KVM_MP_STATE_RUNNABLE:
		return "running";
	case KVM_MP_STATE_STOPPED:
		return "powered off";
	case KVM_MP_STATE_HALTED:
		return "halted";
	default:
		return "in another state";
	}
}

void arch_vcpu_describe(const struct vcpu *c, char *buf, size_t len)
{
	struct kvm_mp_state mp;
	uint64_t pc = 0, pstate = 0, sp = 0;

	if (ioctl(c->fd, KVM_GET_MP_STATE, &mp) < 0 ||
	    get_reg(c->fd, CORE_REG(regs.pc), &pc) ||
	    get_reg(c->fd, CORE_REG(regs.pstate), &pstate) ||
	    get_reg(c->fd, CORE_REG(sp_el1), &sp)) {
		snprintf(buf, len, "vCPU %u: state not readable: %s", c->id,
			 strerror(errno));
		return;
	}
	snprintf(buf, len,
		 "vCPU %u: %s (mp_state %u), pc=0x%llx pstate=0x%llx "
		 "(interrupts %s) sp_el1=0x%llx",
		 c->id, mp_state_name(mp.mp_state), mp.mp_state,
		 (unsigned long long)pc, (unsigned long long)pstate,
		 pstate & 0x80 ? "masked" : "on", (unsigned long long)sp);
}

/* ---- vmm probe ------------------------------------------------------ */

const struct probe_cap arch_probe_caps[] = {
	{ KVM_CAP_IRQ_ROUTING, "KVM_CAP_IRQ_ROUTING" },
	{ KVM_CAP_IRQFD, "KVM_CAP_IRQFD" },
	{ KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD" },
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
	{ KVM_CAP_ARM_PSCI_0_2, "KVM_CAP_ARM_PSCI_0_2" },
	{ KVM_CAP_DEVICE_CTRL, "KVM_CAP_DEVICE_CTRL" },
	{ KVM_CAP_MAX_VCPUS, "KVM_CAP_MAX_VCPUS" },
};
const unsigned int arch_nprobe_caps =
	sizeof(arch_probe_caps) / sizeof(arch_probe_caps[0]);
/* The loop ends with an MMIO write (no RAM there). */
const uint32_t arch_probe_exit = KVM_EXIT_MMIO;

/* At 0: ldr w1, =N (literal at 16); 1: subs w1, w1, #1; b.ne 1b;
 * str w1, [x2] (x2 = 0x10000, outside RAM); b . */
int arch_probe_setup(int vm, int vcpu, uint8_t *mem, uint32_t loops)
{
	static const uint32_t code[] = {
		0x18000081, /* ldr w1, 16 */
		0x71000421, /* subs w1, w1, #1 */
		0x54ffffe1, /* b.ne -4 */
		0xb9000041, /* str w1, [x2] */
		0,          /* the literal */
	};
	int r;

	memcpy(mem, code, sizeof(code));
	memcpy(mem + 16, &loops, 4);
	r = vcpu_init(vm, vcpu, false);
	if (!r)
		r = set_reg(vcpu, CORE_REG(regs.pc), 0);
	if (!r)
		r = set_reg(vcpu, CORE_REG(regs.regs[2]), 0x10000);
	return r;
}
