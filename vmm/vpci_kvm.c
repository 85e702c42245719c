/* A virtio device on virtio-pci under KVM: MSI routes and irqfds,
 * ioeventfds, INTx.  Knows no device type. */
#include "vmm/vpci_kvm.h"

#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "host/sandbox.h"
#include "host/log.h"

#define NOTIFY_LEN 2 /* Linux kicks with a 16-bit write */

static void vpci_kvm_irq_route(void *opaque, unsigned int src, bool on,
			       uint64_t addr, uint32_t data)
{
	struct vpci_kvm *t = opaque;
	int r = 0;

	if (on) {
		r = vm_msi_set(t->vm, (unsigned int)t->gsi[src], addr, data,
			       t->devid);
		if (!r && !t->irqfd_on[src])
			r = vm_irqfd(t->vm, t->call[src],
				     (unsigned int)t->gsi[src], true);
		if (!r)
			t->irqfd_on[src] = true;
	} else if (t->irqfd_on[src]) {
		/* Deassigned: signals stay in the eventfd, and KVM fires a
		 * pending one when the irqfd is assigned again. */
		r = vm_irqfd(t->vm, t->call[src], (unsigned int)t->gsi[src],
			     false);
		t->irqfd_on[src] = false;
	}
	if (r)
		pr_guest(VLOG_ERR, "virtio-pci: interrupt route %u: %s", src,
			 strerror(-r));
}

static bool vpci_kvm_irq_pending(void *opaque, unsigned int src)
{
	struct vpci_kvm *t = opaque;
	struct pollfd p = { .fd = t->call[src], .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* Kicks at either notify area (io: the I/O BAR's) reach the queue's
 * eventfd in the kernel. */
static void vpci_kvm_ioeventfds(struct vpci_kvm *t, bool io, bool assign)
{
	for (unsigned int q = 0; q < t->vdev.nq; q++) {
		int r = vm_ioeventfd(t->vm, t->kick[q],
				     t->notify_base[io] + q * VPCI_NOTIFY_MULT,
				     NOTIFY_LEN, !io, assign);

		if (r)
			pr_guest(VLOG_WARN, "virtio-pci: ioeventfd %u (%s): %s",
				 q, io ? "I/O" : "MMIO", strerror(-r));
	}
}

static void vpci_kvm_notify_map(void *opaque, bool io, bool mapped,
				uint64_t base)
{
	struct vpci_kvm *t = opaque;

	if (t->notify_on[io])
		vpci_kvm_ioeventfds(t, io, false);
	t->notify_on[io] = mapped;
	t->notify_base[io] = base;
	if (mapped)
		vpci_kvm_ioeventfds(t, io, true);
}

static void vpci_kvm_kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0)
		pr_guest(VLOG_WARN, "virtio-pci: eventfd write failed");
}

static void vpci_kvm_notify(void *opaque, unsigned int q)
{
	struct vpci_kvm *t = opaque;

	if (q >= t->vdev.nq)
		return;
	__atomic_add_fetch(&t->slow_kicks, 1, __ATOMIC_RELAXED);
	vpci_kvm_kick(t->kick[q]);
}

static void vpci_kvm_config_irq(void *opaque)
{
	struct vpci_kvm *t = opaque;

	vpci_kvm_kick(t->call[VPCI_SRC_CONFIG]);
}

/* INTx: each interrupt eventfd sets its ISR bit and raises INTA#; the
 * driver's ISR read (vpci_kvm_intx_ack) lowers it. */
static void *vpci_kvm_intx_main(void *arg)
{
	struct vpci_kvm *t = arg;
	struct pollfd p[1 + VPCI_MAX_SRC];
	unsigned int n = 1 + t->vdev.nq;

	pthread_setname_np(pthread_self(), "intx");
	sandbox_enter(SANDBOX_INTX);
	p[0] = (struct pollfd){ .fd = t->intx_stop, .events = POLLIN };
	for (unsigned int i = 0; i < n; i++)
		p[1 + i] = (struct pollfd){ .fd = t->call[i], .events = POLLIN };
	for (;;) {
		uint8_t bits = 0;
		uint64_t v;

		if (poll(p, 1 + n, -1) < 0)
			continue;
		if (p[0].revents)
			return NULL;
		for (unsigned int i = 0; i < n; i++) {
			if (!p[1 + i].revents ||
			    read(t->call[i], &v, sizeof(v)) != sizeof(v))
				continue;
			bits |= i == VPCI_SRC_CONFIG ? VDEV_ISR_CONFIG
						     : VDEV_ISR_QUEUE;
		}
		if (!bits)
			continue;
		/* The bit before the level: a driver that sees INTA# finds
		 * why in the ISR. */
		__atomic_or_fetch(&t->vdev.isr, bits, __ATOMIC_SEQ_CST);
		vm_irq_line(t->vm, (unsigned int)t->intx_gsi, 1);
	}
}

static void vpci_kvm_intx_ack(void *opaque)
{
	struct vpci_kvm *t = opaque;

	vm_irq_line(t->vm, (unsigned int)t->intx_gsi, 0);
	/* A bit set between the driver's read and the line going low. */
	if (__atomic_load_n(&t->vdev.isr, __ATOMIC_SEQ_CST))
		vm_irq_line(t->vm, (unsigned int)t->intx_gsi, 1);
}

static void vpci_kvm_intx_mode(void *opaque, bool on)
{
	struct vpci_kvm *t = opaque;
	uint64_t one = 1, v;

	if (t->intx_gsi < 0 || on == t->intx_on)
		return;
	if (on) {
		t->intx_on = !pthread_create(&t->intx_thread, NULL,
					     vpci_kvm_intx_main, t);
		if (!t->intx_on)
			pr_err("virtio-pci: no INTx thread");
		return;
	}
	(void)!write(t->intx_stop, &one, sizeof(one));
	pthread_join(t->intx_thread, NULL);
	(void)!read(t->intx_stop, &v, sizeof(v));
	vm_irq_line(t->vm, (unsigned int)t->intx_gsi, 0);
	t->intx_on = false;
}

void vpci_kvm_set_devid(struct vpci_kvm *t, unsigned int bus,
			unsigned int slot)
{
	t->devid = bus << 8 | slot << 3;
}

void vpci_kvm_set_intx_gsi(struct vpci_kvm *t, unsigned int gsi)
{
	t->intx_gsi = (int)gsi;
	vpci_set_intx_line(&t->pci, (uint8_t)gsi);
	if (t->pci.intx) /* MSI-X is off at power-on */
		vpci_kvm_intx_mode(t, true);
}

static int vpci_kvm_fds(struct vpci_kvm *t)
{
	for (unsigned int i = 0; i < t->vdev.nq; i++) {
		t->kick[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->kick[i] < 0)
			return -errno;
	}
	for (unsigned int i = 0; i < 1 + t->vdev.nq; i++) {
		t->call[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->call[i] < 0)
			return -errno;
		t->gsi[i] = vm_msi_alloc(t->vm);
		if (t->gsi[i] < 0)
			return t->gsi[i];
	}
	for (unsigned int i = 0; i < t->vdev.nq; i++) {
		t->vdev.q[i].kick_fd = t->kick[i];
		t->vdev.q[i].call_fd = t->call[VPCI_SRC_QUEUE(i)];
	}
	return 0;
}

int vpci_kvm_create(struct vm *vm, const struct vdev_ops *ops, void *impl,
		    uint32_t bar, uint32_t io_bar, struct vpci_kvm **out)
{
	struct vpci_cb cb = {
		.irq_route = vpci_kvm_irq_route,
		.irq_pending = vpci_kvm_irq_pending,
		.notify_map = vpci_kvm_notify_map,
		.notify = vpci_kvm_notify,
		.intx_mode = vpci_kvm_intx_mode,
		.intx_ack = vpci_kvm_intx_ack,
	};
	struct vpci_kvm *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->vm = vm;
	memset(t->kick, -1, sizeof(t->kick));
	memset(t->call, -1, sizeof(t->call));
	t->intx_gsi = -1; /* set once the slot is known; INTx waits till then */
	t->intx_stop = eventfd(0, EFD_CLOEXEC);
	if (t->intx_stop < 0) {
		free(t);
		return -errno;
	}
	cb.opaque = t;
	r = vdev_init(&t->vdev, ops, impl, &vm->mem, vpci_kvm_config_irq, t);
	if (r)
		goto fail;
	r = vpci_kvm_fds(t);
	if (r)
		goto fail;
	r = vpci_init(&t->pci, &t->vdev, &cb, bar, io_bar);
	if (r)
		goto fail;
	*out = t;
	return 0;
fail:
	vpci_kvm_destroy(t);
	return r;
}

void vpci_kvm_reset(struct vpci_kvm *t)
{
	vpci_reset(&t->pci);
}

void vpci_kvm_destroy(struct vpci_kvm *t)
{
	if (!t)
		return;
	vpci_kvm_intx_mode(t, false);
	if (t->pci.vdev) {
		vpci_reset(&t->pci);
		for (unsigned int io = 0; io < 2; io++)
			if (t->notify_on[io])
				vpci_kvm_ioeventfds(t, io, false);
		vpci_destroy(&t->pci);
	}
	for (unsigned int i = 0; i < VDEV_MAX_QUEUES; i++)
		if (t->kick[i] >= 0)
			close(t->kick[i]);
	for (unsigned int i = 0; i < VPCI_MAX_SRC; i++) {
		if (t->irqfd_on[i])
			vm_irqfd(t->vm, t->call[i], (unsigned int)t->gsi[i],
				 false);
		if (t->call[i] >= 0)
			close(t->call[i]);
		if (t->gsi[i] > 0)
			vm_msi_free(t->vm, (unsigned int)t->gsi[i]);
	}
	close(t->intx_stop);
	free(t);
}

static uint32_t vpci_kvm_cfg_read(void *opaque, uint32_t off,
				  unsigned int size)
{
	struct vpci_kvm *t = opaque;

	return vpci_cfg_read(&t->pci, off, size);
}

static void vpci_kvm_cfg_write(void *opaque, uint32_t off,
			       unsigned int size, uint32_t val)
{
	struct vpci_kvm *t = opaque;

	vpci_cfg_write(&t->pci, off, size, val);
}

static bool vpci_kvm_mmio(void *opaque, uint64_t addr, uint8_t *data,
			  unsigned int size, bool write)
{
	struct vpci_kvm *t = opaque;
	uint64_t off;

	if (!vpci_bar_hit(&t->pci, addr, &off))
		return false;
	if (write)
		vpci_bar_write(&t->pci, off, data, size);
	else
		vpci_bar_read(&t->pci, off, data, size);
	return true;
}

static bool vpci_kvm_pio(void *opaque, uint64_t port, uint8_t *data,
			 unsigned int size, bool write)
{
	struct vpci_kvm *t = opaque;
	uint64_t off;

	if (!vpci_io_hit(&t->pci, port, &off))
		return false;
	if (write)
		vpci_io_write(&t->pci, off, data, size);
	else
		vpci_io_read(&t->pci, off, data, size);
	return true;
}

const struct pci_dev_ops vpci_kvm_pci_ops = {
	.cfg_read = vpci_kvm_cfg_read, .cfg_write = vpci_kvm_cfg_write,
	.mmio = vpci_kvm_mmio, .pio = vpci_kvm_pio,
};
