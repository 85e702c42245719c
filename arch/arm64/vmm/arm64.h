/* The arm64 half of the VMM (arch/arm64/vmm/): what its files share. */
#ifndef ARM64_VMM_ARM64_H
#define ARM64_VMM_ARM64_H

#include <stdint.h>

#include "arch/arm64/hw/image.h"
#include "vmm/kvm.h"

struct arch_kernel {
	struct arm64_image im;
	const uint8_t *img; /* the file, the caller's */
};

/* KVM's number for SPI n on KVM_IRQ_LINE. */
static inline unsigned int arm64_spi_irq(unsigned int spi)
{
	return (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) |
	       (32 + spi);
}

/* The in-kernel GICv3 and its ITS (arch/arm64/vmm/gic.c): created with
 * their addresses before the vCPUs, initialised after.  0 or -errno
 * with one line in msg. */
int arm64_gic_create(struct vm *vm, int *gic_fd, int *its_fd, char *msg,
		     size_t msglen);
int arm64_gic_init(int gic_fd, int its_fd, char *msg, size_t msglen);

/* vCPU set-up (arch/arm64/vmm/vcpu.c): KVM_ARM_VCPU_INIT with PSCI 0.2
 * (secondaries powered off until the guest's PSCI CPU_ON), its MPIDR;
 * the boot vCPU's registers. */
int arm64_vcpu_init(struct vm *vm, int fd, unsigned int id, uint64_t *mpidr);
int arm64_vcpu_boot_regs(int fd, uint64_t pc, uint64_t x0);

#endif
