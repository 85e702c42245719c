/* The KVM VM: memory, irqchip, PIT, vCPUs, GSI routing, irqfd and
 * ioeventfd.  The only module (with vcpu.c and probe.c) that makes KVM
 * ioctls.
 */
#ifndef VMM_KVM_H
#define VMM_KVM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "virtio/gmem.h"

#define VM_MAX_MSI_ROUTES 256
#define VM_GSI_MSI_BASE 24 /* GSIs below are the irqchip pins */

struct vm {
	int kvm_fd, vm_fd;
	int run_size;            /* bytes of struct kvm_run mapping */
	uint8_t *ram;            /* all guest RAM, one mapping */
	uint64_t ram_size, low, high;
	struct gmem mem;
	struct kvm_cpuid2 *cpuid; /* supported, hypervisor bit set */
	pthread_mutex_t irq_lock;
	struct kvm_irq_routing *routes;
	unsigned int nr_msi;     /* MSI GSIs handed out */
};

/* 0 or -errno with one line in msg. */
int vm_open(struct vm *vm, char *msg, size_t msglen);
/* Guest RAM, irqchip, PIT, CPUID, default routes. */
int vm_setup(struct vm *vm, uint64_t mem, char *msg, size_t msglen);
void vm_close(struct vm *vm);
int vm_max_vcpus(struct vm *vm);

int vm_irq_line(struct vm *vm, unsigned int gsi, int level);
/* A fresh GSI for MSI routing, or -ENOSPC. */
int vm_msi_alloc(struct vm *vm);
int vm_msi_set(struct vm *vm, unsigned int gsi, uint64_t addr, uint32_t data);
int vm_irqfd(struct vm *vm, int fd, unsigned int gsi, bool assign);
/* len 0: any access size (MMIO only). */
int vm_ioeventfd(struct vm *vm, int fd, uint64_t addr, unsigned int len,
		 bool mmio, bool assign);

/* vCPU fd with CPUID set for APIC id `id`; *run gets the kvm_run. */
int vm_vcpu_create(struct vm *vm, unsigned int id, int *fd,
		   struct kvm_run **run);
/* Registers for the 64-bit boot entry. */
int vm_vcpu_boot_regs(int fd, uint64_t rip, uint64_t rsi, uint64_t rsp,
		      uint64_t cr3, uint64_t gdt);
/* CPUID leaf 1 EAX and EDX, for the MP table. */
void vm_cpu_signature(const struct vm *vm, uint32_t *eax, uint32_t *edx);

#endif
