/* A virtio device on virtio-pci under KVM: the transport's registers
 * (virtio/vdev, virtio/pci) wired to KVM, with an MSI route and an irqfd
 * per interrupt source, an ioeventfd per queue, and INTx on an interrupt
 * controller line for a guest without MSI-X.  Knows no device type: the device
 * plugs in through its struct vdev_ops and gets its queues, with these
 * eventfds, when the driver activates it.
 */
#ifndef VMM_VPCI_KVM_H
#define VMM_VPCI_KVM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/pci_host.h"
#include "virtio/pci.h"
#include "vmm/kvm.h"

struct vpci_kvm {
	struct vm *vm;
	struct vdev vdev;
	struct vpci pci;
	int kick[VDEV_MAX_QUEUES];
	int call[VPCI_MAX_SRC];   /* [0]: config interrupt; [1 + q]: queue q */
	int gsi[VPCI_MAX_SRC];
	bool irqfd_on[VPCI_MAX_SRC];
	bool notify_on[2];         /* [0]: BAR 0's notify area, [1]: I/O BAR's */
	uint64_t notify_base[2];
	uint64_t slow_kicks;       /* kicks that exited to a vCPU thread */
	uint32_t devid;            /* PCI requester id: bus 0, slot, fn 0 */
	/* INTx (a guest without MSI-X): a thread turns every interrupt
	 * eventfd into an ISR bit and the INTA# level on intx_gsi. */
	int intx_gsi;              /* -1: none */
	bool intx_on;
	int intx_stop;
	pthread_t intx_thread;
};

/* Config space, BAR 0 and the I/O BAR, for the PCI host (opaque: the
 * struct vpci_kvm). */
extern const struct pci_dev_ops vpci_kvm_pci_ops;

/* The device impl (driven through ops) on a new virtio-pci function
 * with BAR 0 at bar and its I/O BAR at port io_bar.  The device stays
 * the caller's.  0 or -errno. */
int vpci_kvm_create(struct vm *vm, const struct vdev_ops *ops, void *impl,
		    uint32_t bar, uint32_t io_bar, struct vpci_kvm **out);
/* The bus and slot it sits in (bus 0, or a root port's secondary bus):
 * its MSIs' requester id. */
void vpci_kvm_set_devid(struct vpci_kvm *t, unsigned int bus,
			unsigned int slot);
/* KVM's number for the line its INTA# reaches (an IOAPIC pin on x86, a
 * GIC SPI on arm64). */
void vpci_kvm_set_intx_gsi(struct vpci_kvm *t, unsigned int gsi);
/* Reset the device (as the driver's status write of 0 would): once this
 * returns its threads no longer touch guest memory. */
void vpci_kvm_reset(struct vpci_kvm *t);
/* Reset the device, then free the transport (not the device): its
 * irqfds, ioeventfds and MSI routes given back to KVM (a device
 * unplugged while the VM runs leaves nothing behind). */
void vpci_kvm_destroy(struct vpci_kvm *t);

#endif
