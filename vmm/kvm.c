/* KVM VM setup and interrupt plumbing. */
#include "vmm/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/boot.h"

#define TSS_ADDR 0xfffbd000ul
#define IDENTITY_MAP_ADDR 0xfffbc000ul
#define CPUID_MAX_ENTRIES 256
#define CPUID_HYPERVISOR (1u << 31)
#define CPUID_TSC_DEADLINE (1u << 24) /* leaf 1 ECX */
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_MTRR_DEF_TYPE 0x2ff
#define IRQCHIP_ROUTES (24 + 16)

static int kvm_err(char *msg, size_t msglen, const char *what, int err)
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
		return kvm_err(msg, msglen, "cannot open /dev/kvm", errno);
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
		return kvm_err(msg, msglen, "KVM_CREATE_VM", errno);
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size <= 0)
		return kvm_err(msg, msglen, "KVM_GET_VCPU_MMAP_SIZE", errno);
	pthread_mutex_init(&vm->irq_lock, NULL);
	return 0;
}

int vm_max_vcpus(struct vm *vm)
{
	int n = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);

	if (n <= 0)
		n = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	return n > 0 ? n : 1;
}

static int vm_slot(struct vm *vm, unsigned int slot, uint64_t gpa,
		   uint64_t size, void *hva)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot, .guest_phys_addr = gpa, .memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
		return -errno;
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

static int vm_ram(struct vm *vm, uint64_t mem, char *msg, size_t msglen)
{
	int r;

	boot_split(mem, &vm->low, &vm->high);
	vm->ram = ram_map(mem);
	if (vm->ram == MAP_FAILED) {
		vm->ram = NULL;
		return kvm_err(msg, msglen, "cannot map guest RAM", errno);
	}
	vm->ram_size = mem;
	r = vm_slot(vm, 0, 0, vm->low, vm->ram);
	if (!r && vm->high)
		r = vm_slot(vm, 1, BOOT_HIGH_START, vm->high,
			    vm->ram + vm->low);
	if (r)
		return kvm_err(msg, msglen, "KVM_SET_USER_MEMORY_REGION", -r);
	return 0;
}

static int vm_cpuid_init(struct vm *vm)
{
	bool deadline;
	size_t sz = sizeof(struct kvm_cpuid2) +
		    CPUID_MAX_ENTRIES * sizeof(struct kvm_cpuid_entry2);

	vm->cpuid = calloc(1, sz);
	if (!vm->cpuid)
		return -ENOMEM;
	vm->cpuid->nent = CPUID_MAX_ENTRIES;
	if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, vm->cpuid) < 0)
		return -errno;
	/* KVM emulates the LAPIC's TSC-deadline mode but leaves the bit
	 * out of the supported list (it depends on the in-kernel LAPIC);
	 * QEMU offers it.  The guest arms its timer with one MSR write. */
	deadline = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
			 KVM_CAP_TSC_DEADLINE_TIMER) > 0;
	for (unsigned int i = 0; i < vm->cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &vm->cpuid->entries[i];

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
static int vm_routes_init(struct vm *vm)
{
	size_t sz = sizeof(struct kvm_irq_routing) +
		    (IRQCHIP_ROUTES + VM_MAX_MSI_ROUTES) *
			    sizeof(struct kvm_irq_routing_entry);
	struct kvm_irq_routing_entry *e;

	vm->routes = calloc(1, sz);
	if (!vm->routes)
		return -ENOMEM;
	e = vm->routes->entries;
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
	return 0;
}

int vm_setup(struct vm *vm, uint64_t mem, char *msg, size_t msglen)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	int r;

	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR) < 0)
		return kvm_err(msg, msglen, "KVM_SET_TSS_ADDR", errno);
	uint64_t idmap = IDENTITY_MAP_ADDR;
	ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap);
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return kvm_err(msg, msglen, "KVM_CREATE_IRQCHIP", errno);
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return kvm_err(msg, msglen, "KVM_CREATE_PIT2", errno);
	r = vm_ram(vm, mem, msg, msglen);
	if (r)
		return r;
	r = vm_cpuid_init(vm);
	if (r)
		return kvm_err(msg, msglen, "KVM_GET_SUPPORTED_CPUID", -r);
	r = vm_routes_init(vm);
	if (r)
		return kvm_err(msg, msglen, "GSI routing", -r);
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
	free(vm->cpuid);
	free(vm->routes);
	vm->vm_fd = vm->kvm_fd = -1;
	vm->ram = NULL;
	vm->cpuid = NULL;
	vm->routes = NULL;
}

int vm_irq_line(struct vm *vm, unsigned int gsi, int level)
{
	struct kvm_irq_level l = { .irq = gsi, .level = level };

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) < 0 ? -errno : 0;
}

int vm_msi_alloc(struct vm *vm)
{
	int gsi;

	pthread_mutex_lock(&vm->irq_lock);
	if (vm->nr_msi >= VM_MAX_MSI_ROUTES) {
		pthread_mutex_unlock(&vm->irq_lock);
		return -ENOSPC;
	}
	gsi = VM_GSI_MSI_BASE + (int)vm->nr_msi++;
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

int vm_msi_set(struct vm *vm, unsigned int gsi, uint64_t addr, uint32_t data)
{
	struct kvm_irq_routing_entry *e;
	int r = 0;

	pthread_mutex_lock(&vm->irq_lock);
	e = vm_route_find(vm, gsi);
	if (!e) {
		e = &vm->routes->entries[vm->routes->nr++];
		memset(e, 0, sizeof(*e));
		e->gsi = gsi;
		e->type = KVM_IRQ_ROUTING_MSI;
	}
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
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

static int vm_vcpu_cpuid(struct vm *vm, int fd, unsigned int id)
{
	size_t sz = sizeof(struct kvm_cpuid2) +
		    vm->cpuid->nent * sizeof(struct kvm_cpuid_entry2);
	struct kvm_cpuid2 *c = malloc(sz);
	int r = 0;

	if (!c)
		return -ENOMEM;
	memcpy(c, vm->cpuid, sz);
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
static int vm_vcpu_msrs(int fd)
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

int vm_vcpu_create(struct vm *vm, unsigned int id, int *fd,
		   struct kvm_run **run)
{
	void *p;
	int r;

	*fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (*fd < 0)
		return -errno;
	r = vm_vcpu_cpuid(vm, *fd, id);
	if (!r)
		r = vm_vcpu_msrs(*fd);
	if (r)
		goto fail;
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

static void seg(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code)
{
	*s = (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
		.present = 1, .dpl = 0, .db = code ? 0 : 1, .s = 1,
		.l = code ? 1 : 0, .g = 1,
	};
}

int vm_vcpu_boot_regs(int fd, uint64_t rip, uint64_t rsi, uint64_t rsp,
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

void vm_cpu_signature(const struct vm *vm, uint32_t *eax, uint32_t *edx)
{
	*eax = *edx = 0;
	for (unsigned int i = 0; i < vm->cpuid->nent; i++) {
		if (vm->cpuid->entries[i].function == 1) {
			*eax = vm->cpuid->entries[i].eax;
			*edx = vm->cpuid->entries[i].edx;
		}
	}
}
