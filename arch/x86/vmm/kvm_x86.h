/* The x86 half of the KVM VM (arch/x86/vmm/kvm_x86.c). */
#ifndef X86_VMM_KVM_X86_H
#define X86_VMM_KVM_X86_H

#include <stdint.h>

#include "arch/x86/hw/boot.h"
#include "vmm/kvm.h"

#define X86_GSI_MSI_BASE 24 /* GSIs below are the irqchip pins */

/* TSS, irqchip, PIT, guest RAM (low at 0, the rest from 4 GiB), the
 * supported CPUID (hypervisor bit set; freed by the caller) and the
 * irqchip routes.  0 or -errno with one line in msg. */
int x86_vm_setup(struct vm *vm, uint64_t mem, uint64_t low,
		 struct kvm_cpuid2 **cpuid, char *msg, size_t msglen);
/* CPUID for APIC id `id`, and the MSRs firmware would leave. */
int x86_vcpu_init(const struct kvm_cpuid2 *cpuid, int fd, unsigned int id);
/* Registers for the 64-bit boot entry. */
int x86_vcpu_boot_regs(int fd, uint64_t rip, uint64_t rsi, uint64_t rsp,
		       uint64_t cr3, uint64_t gdt);
struct arch_kernel;
/* The boot protocol's view of the kernel (arch/x86/vmm/kernel.c). */
const struct boot_kernel *x86_boot_kernel(const struct arch_kernel *k);
/* CPUID leaf 1 EAX and EDX, for the MP table. */
void x86_cpu_signature(const struct kvm_cpuid2 *cpuid, uint32_t *eax,
		       uint32_t *edx);

#endif
