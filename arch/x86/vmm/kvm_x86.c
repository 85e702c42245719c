/* The x86 VM: TSS and identity map, in-kernel irqchip (PIC, IOAPIC,
 * LAPIC) and PIT, CPUID and MSRs per vCPU, the 64-bit boot registers. */
#include "arch/x86/vmm/kvm_x86.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define TSS_ADDR 0xfffbd000ul
#define IDENTITY_MAP_ADDR 0xfffbc000ul
#define CPUID_MAX_ENTRIES 256
#define CPUID_HYPERVISOR (1u << 31)
#define CPUID_TSC_DEADLINE (1u << 24) /* leaf 1 ECX */
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_MTRR_DEF_TYPE 0x2ff

static int x86_cpuid_init(struct vm *vm, struct kvm_cpuid2 **out)
{
	bool deadline;
	size_t sz = sizeof(struct kvm_cpuid2) +
		    CPUID_MAX_ENTRIES * sizeof(struct kvm_cpuid_entry2);
	struct kvm_cpuid2 *c = calloc(1, sz);

	*out = c;
	if (!c)
		return -ENOMEM;
	c->nent = CPUID_MAX_ENTRIES;
	if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0)
		return -errno;
	/* KVM emulates the LAPIC's TSC-deadline mode but leaves the bit
	 * out of the supported list (it depends on the in-kernel LAPIC);
	 * QEMU offers it.  The guest arms its timer with one MSR write. */
	deadline = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
			 KVM_CAP_TSC_DEADLINE_TIMER) > 0;
	for (unsigned int i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		/* Without it Linux thinks it runs on bare metal: no
		 * kvm-clock, and TSC calibration against the PIT stalls. */
		if (e->function == 1)
			e->ecx |= CPUID_HYPERVISOR |
				  (deadline ? CPUID_TSC_DEADLINE : 0);
		/* XSAVE area for the features XCR0 will enable: Linux
		 * enables all it supports; KVM does not always refresh this
		 * at run time (seen nested), and Linux warns on a mismatch. */
		if (e->function == 0xd && e->index == 0)
			e->ebx = e->ecx;
	}
	return 0;
}

/* KVM's default table, which KVM_SET_GSI_ROUTING replaces: GSI 0-15 to
 * the PIC and IOAPIC pin, 16-23 to the IOAPIC. */
static void x86_routes_init(struct vm *vm)
{
	struct kvm_irq_routing_entry *e = vm->routes->entries;

	for (unsigned int gsi = 0; gsi < 24; gsi++) {
		*e++ = (struct kvm_irq_routing_entry){
			.gsi = gsi, .type = KVM_IRQ_ROUTING_IRQCHIP,
			.u.irqchip = { KVM_IRQCHIP_IOAPIC, gsi } };
		if (gsi >= 16)
			continue;
		*e++ = (struct kvm_irq_routing_entry){
			.gsi = gsi, .type = KVM_IRQ_ROUTING_IRQCHIP,
			.u.irqchip = { gsi < 8 ? KVM_IRQCHIP_PIC_MASTER :
						 KVM_IRQCHIP_PIC_SLAVE,
				       gsi % 8 } };
	}
	vm->routes->nr = (uint32_t)(e - vm->routes->entries);
	vm->msi_base = X86_GSI_MSI_BASE;
}

int x86_vm_setup(struct vm *vm, uint64_t mem, uint64_t low,
		 struct kvm_cpuid2 **cpuid, char *msg, size_t msglen)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	uint64_t idmap = IDENTITY_MAP_ADDR;
	int r;

	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR) < 0)
		return vm_fail(msg, msglen, "KVM_SET_TSS_ADDR", errno);
	ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap);
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return vm_fail(msg, msglen, "KVM_CREATE_IRQCHIP", errno);
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return vm_fail(msg, msglen, "KVM_CREATE_PIT2", errno);
	r = vm_map_ram(vm, mem, msg, msglen);
	if (r)
		return r;
	r = vm_add_ram(vm, 0, low, 0);
	if (!r && mem > low)
		r = vm_add_ram(vm, BOOT_HIGH_START, mem - low, low);
	if (r)
		return vm_fail(msg, msglen, "KVM_SET_USER_MEMORY_REGION", -r);
	r = x86_cpuid_init(vm, cpuid);
	if (r)
		return vm_fail(msg, msglen, "KVM_GET_SUPPORTED_CPUID", -r);
	x86_routes_init(vm);
	return 0;
}

static int x86_vcpu_cpuid(const struct kvm_cpuid2 *cpuid, int fd,
			  unsigned int id)
{
	size_t sz = sizeof(struct kvm_cpuid2) +
		    cpuid->nent * sizeof(struct kvm_cpuid_entry2);
	struct kvm_cpuid2 *c = malloc(sz);
	int r = 0;

	if (!c)
		return -ENOMEM;
	memcpy(c, cpuid, sz);
	for (unsigned int i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == 1)
			e->ebx = (e->ebx & 0x00ffffff) | (id << 24);
		else if (e->function == 0xb || e->function == 0x1f)
			e->edx = id;
	}
	if (ioctl(fd, KVM_SET_CPUID2, c) < 0)
		r = -errno;
	free(c);
	return r;
}

/* MSRs as firmware leaves them (QEMU's SeaBIOS, Firecracker): MTRRs on
 * with write-back as the default type (with MTRRs off, Linux 6.1 also
 * leaves PAT off: "MTRRs disabled, skipping PAT initialization too"),
 * and fast string operations on. */
static int x86_vcpu_msrs(int fd)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[2];
	} m = {
		.hdr.nmsrs = 2,
		.e = { { .index = MSR_MTRR_DEF_TYPE, .data = 0x806 },
		       { .index = MSR_IA32_MISC_ENABLE, .data = 1 } },
	};
	int r = ioctl(fd, KVM_SET_MSRS, &m);

	if (r < 0)
		return -errno;
	return r == 2 ? 0 : -EINVAL;
}

int x86_vcpu_init(const struct kvm_cpuid2 *cpuid, int fd, unsigned int id)
{
	int r = x86_vcpu_cpuid(cpuid, fd, id);

	return r ? r : x86_vcpu_msrs(fd);
}

static void seg(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code)
{
	*s = (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
		.present = 1, .dpl = 0, .db = code ? 0 : 1, .s = 1,
		.l = code ? 1 : 0, .g = 1,
	};
}

int x86_vcpu_boot_regs(int fd, uint64_t rip, uint64_t rsi, uint64_t rsp,
		      uint64_t cr3, uint64_t gdt)
{
	struct kvm_sregs s;
	struct kvm_regs r = { .rip = rip, .rsi = rsi, .rsp = rsp, .rflags = 2 };
	struct kvm_fpu fpu = { .fcw = 0x37f, .mxcsr = 0x1f80 };

	if (ioctl(fd, KVM_GET_SREGS, &s) < 0)
		return -errno;
	seg(&s.cs, BOOT_CS, 0xb, true);
	seg(&s.ds, BOOT_DS, 0x3, false);
	s.es = s.fs = s.gs = s.ss = s.ds;
	s.gdt.base = gdt;
	s.gdt.limit = 4 * 8 - 1;
	s.cr0 = 0x80000031; /* PG, NE, ET, PE */
	s.cr3 = cr3;
	s.cr4 = 0x20;       /* PAE */
	s.efer = 0x500;     /* LMA, LME */
	if (ioctl(fd, KVM_SET_SREGS, &s) < 0 || ioctl(fd, KVM_SET_REGS, &r) < 0 ||
	    ioctl(fd, KVM_SET_FPU, &fpu) < 0)
		return -errno;
	return 0;
}

void x86_cpu_signature(const struct kvm_cpuid2 *cpuid, uint32_t *eax,
		       uint32_t *edx)
{
	*eax = *edx = 0;
	for (unsigned int i = 0; i < cpuid->nent; i++) {
		if (cpuid->entries[i].function == 1) {
			*eax = cpuid->entries[i].eax;
			*edx = cpuid->entries[i].edx;
		}
	}
}
