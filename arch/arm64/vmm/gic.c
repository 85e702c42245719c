/* The in-kernel GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3) and its ITS
 * (KVM_DEV_TYPE_ARM_VGIC_ITS), through KVM's device API
 * (Documentation/virt/kvm/devices/arm-vgic-v3.rst, arm-vgic-its.rst). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/arm64/hw/layout.h"
#include "arch/arm64/vmm/arm64.h"

static int dev_create(struct vm *vm, uint32_t type, int *fd)
{
	struct kvm_create_device d = { .type = type };

	if (ioctl(vm->vm_fd, KVM_CREATE_DEVICE, &d) < 0)
		return -errno;
	*fd = (int)d.fd;
	return 0;
}

static int dev_attr(int fd, uint32_t group, uint64_t attr, void *val)
{
	struct kvm_device_attr a = { .group = group, .attr = attr,
				     .addr = (uint64_t)(uintptr_t)val };

	return ioctl(fd, KVM_SET_DEVICE_ATTR, &a) < 0 ? -errno : 0;
}

static int dev_addr(int fd, uint64_t type, uint64_t addr)
{
	return dev_attr(fd, KVM_DEV_ARM_VGIC_GRP_ADDR, type, &addr);
}

int arm64_gic_create(struct vm *vm, int *gic_fd, int *its_fd, char *msg,
		     size_t msglen)
{
	uint32_t nr_irqs = ARM64_NR_IRQS;
	int r;

	*gic_fd = *its_fd = -1;
	r = dev_create(vm, KVM_DEV_TYPE_ARM_VGIC_V3, gic_fd);
	if (r) {
		snprintf(msg, msglen, "this KVM has no GICv3 model "
			 "(KVM_DEV_TYPE_ARM_VGIC_V3): %s", strerror(-r));
		return r;
	}
	r = dev_addr(*gic_fd, KVM_VGIC_V3_ADDR_TYPE_DIST, ARM64_GICD_BASE);
	if (!r)
		r = dev_addr(*gic_fd, KVM_VGIC_V3_ADDR_TYPE_REDIST,
			     ARM64_GICR_BASE);
	if (!r)
		r = dev_attr(*gic_fd, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0,
			     &nr_irqs);
	if (r)
		return vm_fail(msg, msglen, "GICv3 set-up", -r);
	r = dev_create(vm, KVM_DEV_TYPE_ARM_VGIC_ITS, its_fd);
	if (r) {
		snprintf(msg, msglen, "this KVM has no GICv3 ITS "
			 "(KVM_DEV_TYPE_ARM_VGIC_ITS) for MSIs: %s",
			 strerror(-r));
		return r;
	}
	r = dev_addr(*its_fd, KVM_VGIC_ITS_ADDR_TYPE, ARM64_ITS_BASE);
	if (r)
		return vm_fail(msg, msglen, "GICv3 ITS address", -r);
	/* MSIs reach the ITS by device id: the PCI requester id. */
	vm->msi_devid = true;
	vm->msi_base = ARM64_NR_IRQS;
	return 0;
}

int arm64_gic_init(int gic_fd, int its_fd, char *msg, size_t msglen)
{
	int r = dev_attr(gic_fd, KVM_DEV_ARM_VGIC_GRP_CTRL,
			 KVM_DEV_ARM_VGIC_CTRL_INIT, NULL);

	if (r)
		return vm_fail(msg, msglen, "GICv3 init", -r);
	r = dev_attr(its_fd, KVM_DEV_ARM_VGIC_GRP_CTRL,
		     KVM_DEV_ARM_VGIC_CTRL_INIT, NULL);
	if (r)
		return vm_fail(msg, msglen, "GICv3 ITS init", -r);
	return 0;
}
