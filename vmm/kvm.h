/* The KVM VM: memory slots, vCPU file descriptors, GSI routing of MSIs,
 * irqfd and ioeventfd: what every architecture's machine uses.  The
 * architecture's own VM set-up (irqchip, timers, CPUID or the GIC) is in
 * arch/ARCH/vmm/.  The only module (with vcpu.c, probe.c and those) that
 * makes KVM ioctls.
 */
#ifndef VMM_KVM_H
#define VMM_KVM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "virtio/gmem.h"

#define VM_MAX_MSI_ROUTES 256
#define VM_MAX_ROUTES (64 + VM_MAX_MSI_ROUTES)

struct vm {
	int kvm_fd, vm_fd;
	int run_size;            /* bytes of struct kvm_run mapping */
	uint8_t *ram;            /* all guest RAM, one mapping */
	uint64_t ram_size;
	struct gmem mem;
	pthread_mutex_t irq_lock;
	struct kvm_irq_routing *routes;
	unsigned int msi_base;   /* first MSI GSI (set by the architecture) */
	unsigned int nr_msi;     /* MSI GSIs handed out */
	unsigned int nfree_msi;  /* of those, given back (free_msi) */
	unsigned int free_msi[VM_MAX_MSI_ROUTES];
	bool msi_devid;          /* MSI routes carry the requester id (ITS) */
	unsigned int nmemslots;  /* KVM memory slots used */
};

/* One line "what: strerror(err)" in msg; returns -err. */
int vm_fail(char *msg, size_t msglen, const char *what, int err);
/* 0 or -errno with one line in msg. */
int vm_open(struct vm *vm, char *msg, size_t msglen);
void vm_close(struct vm *vm);
int vm_max_vcpus(struct vm *vm);
/* Map mem bytes of guest RAM (2 MiB aligned, huge pages where the host
 * allows them) into vm->ram; the architecture places it in slots. */
int vm_map_ram(struct vm *vm, uint64_t mem, char *msg, size_t msglen);
/* Guest-physical [gpa, gpa + size) backed by vm->ram + offset. */
int vm_add_ram(struct vm *vm, uint64_t gpa, uint64_t size, uint64_t offset);

/* KVM_IRQ_LINE: irq is KVM's number for the line (the GSI on x86; type,
 * vCPU and number packed on arm64). */
int vm_irq_line(struct vm *vm, unsigned int irq, int level);
/* A fresh GSI for MSI routing, or -ENOSPC. */
int vm_msi_alloc(struct vm *vm);
/* Give gsi back (a device unplugged): its route is removed; its irqfds
 * must be deassigned first. */
void vm_msi_free(struct vm *vm, unsigned int gsi);
/* Route gsi to the MSI (addr, data) from PCI requester devid. */
int vm_msi_set(struct vm *vm, unsigned int gsi, uint64_t addr, uint32_t data,
	       uint32_t devid);
int vm_irqfd(struct vm *vm, int fd, unsigned int gsi, bool assign);
/* len 0: any access size (MMIO only). */
int vm_ioeventfd(struct vm *vm, int fd, uint64_t addr, unsigned int len,
		 bool mmio, bool assign);

/* A vCPU fd for id and its kvm_run; the architecture sets it up. */
int vm_vcpu_create(struct vm *vm, unsigned int id, int *fd,
		   struct kvm_run **run);

#endif
