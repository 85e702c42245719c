/* KVM VM set-up and interrupt plumbing shared by the architectures. */
#include "vmm/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

int vm_fail(char *msg, size_t msglen, const char *what, int err)
{
	snprintf(msg, msglen, "%s: %s", what, strerror(err));
	return -err;
}

int vm_open(struct vm *vm, char *msg, size_t msglen)
{
	int v;

	memset(vm, 0, sizeof(*vm));
	vm->vm_fd = -1;
	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return vm_fail(msg, msglen, "cannot open /dev/kvm", errno);
	v = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (v != KVM_API_VERSION) {
		snprintf(msg, msglen, "KVM API version %d, need %d", v,
			 KVM_API_VERSION);
		return -ENOTSUP;
	}
	/* KVM_CREATE_VM may fail with EINTR (seen in the test host, with
	 * no signal sent; QEMU and Firecracker retry it too): a few tries. */
	for (int i = 0; i < 5; i++) {
		vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
		if (vm->vm_fd >= 0 || errno != EINTR)
			break;
	}
	if (vm->vm_fd < 0)
		return vm_fail(msg, msglen, "KVM_CREATE_VM", errno);
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size <= 0)
		return vm_fail(msg, msglen, "KVM_GET_VCPU_MMAP_SIZE", errno);
	pthread_mutex_init(&vm->irq_lock, NULL);
	vm->routes = calloc(1, sizeof(struct kvm_irq_routing) +
				       VM_MAX_ROUTES *
					       sizeof(struct kvm_irq_routing_entry));
	if (!vm->routes)
		return vm_fail(msg, msglen, "GSI routing", ENOMEM);
	return 0;
}

int vm_max_vcpus(struct vm *vm)
{
	int n = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);

	if (n <= 0)
		n = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	return n > 0 ? n : 1;
}

int vm_add_ram(struct vm *vm, uint64_t gpa, uint64_t size, uint64_t offset)
{
	uint8_t *hva = vm->ram + offset;
	struct kvm_userspace_memory_region r = {
		.slot = vm->nmemslots, .guest_phys_addr = gpa, .memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (offset > vm->ram_size || size > vm->ram_size - offset)
		return -EINVAL;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
		return -errno;
	vm->nmemslots++;
	return gmem_add(&vm->mem, gpa, size, hva);
}

/* Guest RAM on a 2 MiB boundary, with transparent huge pages where the
 * host allows them (QEMU asks for them too; Debian's default is
 * "madvise"): one host fault and one nested page-table entry per 2 MiB
 * instead of 512, for the loader's copy of the kernel and the guest's
 * first touch of its memory.  Returns MAP_FAILED with errno set. */
static uint8_t *ram_map(uint64_t size)
{
	const size_t huge = 2u << 20;
	size_t len = size + huge, head, tail;
	uint8_t *p, *a;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	a = (uint8_t *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
	head = (size_t)(a - p);
	tail = len - head - size;
	if (head)
		munmap(p, head);
	if (tail)
		munmap(a + size, tail);
	(void)madvise(a, size, MADV_HUGEPAGE); /* advice; no THP is fine */
	return a;
}

int vm_map_ram(struct vm *vm, uint64_t mem, char *msg, size_t msglen)
{
	vm->ram = ram_map(mem);
	if (vm->ram == MAP_FAILED) {
		vm->ram = NULL;
		return vm_fail(msg, msglen, "cannot map guest RAM", errno);
	}
	vm->ram_size = mem;
	return 0;
}

void vm_close(struct vm *vm)
{
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->ram)
		munmap(vm->ram, vm->ram_size);
	free(vm->routes);
	vm->vm_fd = vm->kvm_fd = -1;
	vm->ram = NULL;
	vm->routes = NULL;
}

int vm_irq_line(struct vm *vm, unsigned int irq, int level)
{
	struct kvm_irq_level l = { .irq = irq, .level = level };

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) < 0 ? -errno : 0;
}

int vm_msi_alloc(struct vm *vm)
{
	int gsi;

	pthread_mutex_lock(&vm->irq_lock);
	if (vm->nfree_msi) {
		gsi = (int)vm->free_msi[--vm->nfree_msi];
		pthread_mutex_unlock(&vm->irq_lock);
		return gsi;
	}
	if (vm->nr_msi >= VM_MAX_MSI_ROUTES) {
		pthread_mutex_unlock(&vm->irq_lock);
		return -ENOSPC;
	}
	gsi = (int)(vm->msi_base + vm->nr_msi++);
	pthread_mutex_unlock(&vm->irq_lock);
	return gsi;
}

static struct kvm_irq_routing_entry *vm_route_find(struct vm *vm,
						   unsigned int gsi)
{
	for (unsigned int i = 0; i < vm->routes->nr; i++)
		if (vm->routes->entries[i].gsi == gsi &&
		    vm->routes->entries[i].type == KVM_IRQ_ROUTING_MSI)
			return &vm->routes->entries[i];
	return NULL;
}

void vm_msi_free(struct vm *vm, unsigned int gsi)
{
	struct kvm_irq_routing_entry *e;

	pthread_mutex_lock(&vm->irq_lock);
	e = vm_route_find(vm, gsi);
	if (e) {
		*e = vm->routes->entries[--vm->routes->nr];
		/* Cannot fail for a smaller table KVM took before. */
		(void)ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, vm->routes);
	}
	if (vm->nfree_msi < VM_MAX_MSI_ROUTES)
		vm->free_msi[vm->nfree_msi++] = gsi;
	pthread_mutex_unlock(&vm->irq_lock);
}

int vm_msi_set(struct vm *vm, unsigned int gsi, uint64_t addr, uint32_t data,
	       uint32_t devid)
{
	struct kvm_irq_routing_entry *e;
	int r = 0;

	pthread_mutex_lock(&vm->irq_lock);
	e = vm_route_find(vm, gsi);
	if (!e) {
		if (vm->routes->nr >= VM_MAX_ROUTES) {
			pthread_mutex_unlock(&vm->irq_lock);
			return -ENOSPC;
		}
		e = &vm->routes->entries[vm->routes->nr++];
		memset(e, 0, sizeof(*e));
		e->gsi = gsi;
		e->type = KVM_IRQ_ROUTING_MSI;
	}
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
	/* The ITS translates by device id: the requester that sent it. */
	if (vm->msi_devid) {
		e->flags = KVM_MSI_VALID_DEVID;
		e->u.msi.devid = devid;
	}
	if (ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, vm->routes) < 0)
		r = -errno;
	pthread_mutex_unlock(&vm->irq_lock);
	return r;
}

int vm_irqfd(struct vm *vm, int fd, unsigned int gsi, bool assign)
{
	struct kvm_irqfd f = {
		.fd = (uint32_t)fd, .gsi = gsi,
		.flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN,
	};

	return ioctl(vm->vm_fd, KVM_IRQFD, &f) < 0 ? -errno : 0;
}

int vm_ioeventfd(struct vm *vm, int fd, uint64_t addr, unsigned int len,
		 bool mmio, bool assign)
{
	struct kvm_ioeventfd e = {
		.addr = addr, .len = len, .fd = fd,
		.flags = (mmio ? 0 : KVM_IOEVENTFD_FLAG_PIO) |
			 (assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN),
	};

	return ioctl(vm->vm_fd, KVM_IOEVENTFD, &e) < 0 ? -errno : 0;
}

int vm_vcpu_create(struct vm *vm, unsigned int id, int *fd,
		   struct kvm_run **run)
{
	void *p;
	int r;

	*fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (*fd < 0)
		return -errno;
	p = mmap(NULL, (size_t)vm->run_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	*run = p;
	return 0;
fail:
	close(*fd);
	*fd = -1;
	return r;
}
