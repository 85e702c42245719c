/* virtio-blk on virtio-pci, the KVM side. */
#include "vmm/vdisk.h"

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

static void vdisk_irq_route(void *opaque, unsigned int src, bool on,
			    uint64_t addr, uint32_t data)
{
	struct vdisk *d = opaque;
	int r = 0;

	if (on) {
		r = vm_msi_set(d->vm, (unsigned int)d->gsi[src], addr, data);
		if (!r && !d->irqfd_on[src])
			r = vm_irqfd(d->vm, d->call[src],
				     (unsigned int)d->gsi[src], true);
		if (!r)
			d->irqfd_on[src] = true;
	} else if (d->irqfd_on[src]) {
		/* Deassigned: signals stay in the eventfd, and KVM fires a
		 * pending one when the irqfd is assigned again. */
		r = vm_irqfd(d->vm, d->call[src], (unsigned int)d->gsi[src],
			     false);
		d->irqfd_on[src] = false;
	}
	if (r)
		pr_guest(VLOG_ERR, "virtio-blk: interrupt route %u: %s", src,
			 strerror(-r));
}

static bool vdisk_irq_pending(void *opaque, unsigned int src)
{
	struct vdisk *d = opaque;
	struct pollfd p = { .fd = d->call[src], .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static void vdisk_ioeventfds(struct vdisk *d, bool assign)
{
	for (unsigned int q = 0; q < d->nq; q++) {
		int r = vm_ioeventfd(d->vm, d->kick[q],
				     d->notify_base + q * VPCI_NOTIFY_MULT,
				     NOTIFY_LEN, true, assign);

		if (r)
			pr_guest(VLOG_WARN, "virtio-blk: ioeventfd %u: %s", q,
				 strerror(-r));
	}
}

static void vdisk_notify_map(void *opaque, bool mapped, uint64_t base)
{
	struct vdisk *d = opaque;

	if (d->notify_on)
		vdisk_ioeventfds(d, false);
	d->notify_on = mapped;
	d->notify_base = base;
	if (mapped)
		vdisk_ioeventfds(d, true);
}

static void vdisk_kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0)
		pr_guest(VLOG_WARN, "virtio-blk: eventfd write failed");
}

static void vdisk_notify(void *opaque, unsigned int q)
{
	struct vdisk *d = opaque;

	if (q >= d->nq)
		return;
	__atomic_add_fetch(&d->slow_kicks, 1, __ATOMIC_RELAXED);
	vdisk_kick(d->kick[q]);
}

static void vdisk_config_irq(void *opaque)
{
	struct vdisk *d = opaque;

	vdisk_kick(d->call[VPCI_SRC_CONFIG]);
}

/* INTx: each interrupt eventfd sets its ISR bit and raises INTA#; the
 * driver's ISR read (vdisk_intx_ack) lowers it. */
static void *vdisk_intx_main(void *arg)
{
	struct vdisk *d = arg;
	struct pollfd p[1 + VPCI_MAX_SRC];
	unsigned int n = 1 + d->nq;

	pthread_setname_np(pthread_self(), "intx");
	sandbox_enter(SANDBOX_INTX);
	p[0] = (struct pollfd){ .fd = d->intx_stop, .events = POLLIN };
	for (unsigned int i = 0; i < n; i++)
		p[1 + i] = (struct pollfd){ .fd = d->call[i], .events = POLLIN };
	for (;;) {
		uint8_t bits = 0;
		uint64_t v;

		if (poll(p, 1 + n, -1) < 0)
			continue;
		if (p[0].revents)
			return NULL;
		for (unsigned int i = 0; i < n; i++) {
			if (!p[1 + i].revents ||
			    read(d->call[i], &v, sizeof(v)) != sizeof(v))
				continue;
			bits |= i == VPCI_SRC_CONFIG ? VDEV_ISR_CONFIG
						     : VDEV_ISR_QUEUE;
		}
		if (!bits)
			continue;
		/* The bit before the level: a driver that sees INTA# finds
		 * why in the ISR. */
		__atomic_or_fetch(&d->vdev.isr, bits, __ATOMIC_SEQ_CST);
		vm_irq_line(d->vm, (unsigned int)d->intx_gsi, 1);
	}
}

static void vdisk_intx_ack(void *opaque)
{
	struct vdisk *d = opaque;

	vm_irq_line(d->vm, (unsigned int)d->intx_gsi, 0);
	/* A bit set between the driver's read and the line going low. */
	if (__atomic_load_n(&d->vdev.isr, __ATOMIC_SEQ_CST))
		vm_irq_line(d->vm, (unsigned int)d->intx_gsi, 1);
}

static void vdisk_intx_mode(void *opaque, bool on)
{
	struct vdisk *d = opaque;
	uint64_t one = 1, v;

	if (d->intx_gsi < 0 || on == d->intx_on)
		return;
	if (on) {
		d->intx_on = !pthread_create(&d->intx_thread, NULL,
					     vdisk_intx_main, d);
		if (!d->intx_on)
			pr_err("virtio-blk: no INTx thread");
		return;
	}
	(void)!write(d->intx_stop, &one, sizeof(one));
	pthread_join(d->intx_thread, NULL);
	(void)!read(d->intx_stop, &v, sizeof(v));
	vm_irq_line(d->vm, (unsigned int)d->intx_gsi, 0);
	d->intx_on = false;
}

void vdisk_set_intx_gsi(struct vdisk *d, unsigned int gsi)
{
	d->intx_gsi = (int)gsi;
	vpci_set_intx_line(&d->pci, (uint8_t)gsi);
	if (d->pci.intx) /* MSI-X is off at power-on */
		vdisk_intx_mode(d, true);
}

static int vdisk_fds(struct vdisk *d)
{
	for (unsigned int i = 0; i < d->nq; i++) {
		d->kick[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (d->kick[i] < 0)
			return -errno;
	}
	for (unsigned int i = 0; i < 1 + d->nq; i++) {
		d->call[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (d->call[i] < 0)
			return -errno;
		d->gsi[i] = vm_msi_alloc(d->vm);
		if (d->gsi[i] < 0)
			return d->gsi[i];
	}
	for (unsigned int i = 0; i < d->nq; i++) {
		d->vdev.q[i].kick_fd = d->kick[i];
		d->vdev.q[i].call_fd = d->call[VPCI_SRC_QUEUE(i)];
	}
	return 0;
}

int vdisk_create(struct vm *vm, struct blk_dev *blk, uint32_t bar,
		 struct vdisk **out)
{
	struct vpci_cb cb = {
		.irq_route = vdisk_irq_route, .irq_pending = vdisk_irq_pending,
		.notify_map = vdisk_notify_map, .notify = vdisk_notify,
		.intx_mode = vdisk_intx_mode, .intx_ack = vdisk_intx_ack,
	};
	struct vdisk *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->vm = vm;
	d->blk = blk;
	memset(d->kick, -1, sizeof(d->kick));
	memset(d->call, -1, sizeof(d->call));
	d->intx_gsi = -1; /* set once the slot is known; INTx waits till then */
	d->intx_stop = eventfd(0, EFD_CLOEXEC);
	if (d->intx_stop < 0) {
		free(d);
		return -errno;
	}
	cb.opaque = d;
	r = vdev_init(&d->vdev, &blk_dev_ops, blk, &vm->mem, vdisk_config_irq,
		      d);
	if (r)
		goto fail;
	d->nq = d->vdev.nq;
	r = vdisk_fds(d);
	if (r)
		goto fail;
	r = vpci_init(&d->pci, &d->vdev, &cb, bar);
	if (r)
		goto fail;
	/* BAR 0 is programmed but decoding is off until the guest enables
	 * it; apply the initial (unmapped) state. */
	*out = d;
	return 0;
fail:
	d->blk = NULL; /* the caller still owns it */
	vdisk_destroy(d);
	return r;
}

/* Each queue's latency breakdown, one log line per stage. */
static void vdisk_print_latency(const struct vdisk *d)
{
	char line[160];

	for (unsigned int q = 0; q < blk_dev_ops.num_queues(d->blk); q++) {
		const struct lat_queue *l = blk_dev_latency(d->blk, q);

		for (unsigned int s = 0; s < LAT_STAGES; s++) {
			lat_hist_format(&l->stage[s], line, sizeof(line));
			pr_info("virtio-blk q%u: %s %s", q, lat_stage_name[s],
				line);
		}
	}
}

void vdisk_stop(struct vdisk *d)
{
	vpci_reset(&d->pci);
}

void vdisk_stats_json(struct vdisk *d, FILE *f)
{
	struct blk_stats st;
	unsigned int nq = blk_dev_ops.num_queues(d->blk);

	blk_dev_stats(d->blk, &st);
	fprintf(f, "{\"requests\": %llu, \"notifies\": %llu, "
		"\"bad_chains\": %llu, \"ring_errors\": %llu, "
		"\"io_errors\": %llu, \"queues\": [",
		(unsigned long long)st.requests,
		(unsigned long long)st.notifies,
		(unsigned long long)st.bad_chains,
		(unsigned long long)st.ring_errors,
		(unsigned long long)st.io_errors);
	for (unsigned int q = 0; q < nq; q++) {
		fputs(q ? ", " : "", f);
		lat_queue_json(f, blk_dev_latency(d->blk, q));
	}
	fputs("]}", f);
}

void vdisk_destroy(struct vdisk *d)
{
	struct blk_stats st;

	if (!d)
		return;
	vdisk_intx_mode(d, false);
	if (d->pci.vdev) {
		vpci_reset(&d->pci);
		if (d->notify_on)
			vdisk_ioeventfds(d, false);
		vpci_destroy(&d->pci);
	}
	if (d->blk) {
		blk_dev_stats(d->blk, &st);
		pr_info("virtio-blk: %llu requests, %llu notifies, %llu kicks "
			"through a vCPU exit, %llu bad chains, %llu ring errors, "
			"%llu I/O errors, %llu bad register accesses",
			(unsigned long long)st.requests,
			(unsigned long long)st.notifies,
			(unsigned long long)d->slow_kicks,
			(unsigned long long)st.bad_chains,
			(unsigned long long)st.ring_errors,
			(unsigned long long)st.io_errors,
			(unsigned long long)d->pci.bad_access);
		if (vlog_get_level() >= VLOG_INFO)
			vdisk_print_latency(d);
	}
	blk_dev_destroy(d->blk);
	for (unsigned int i = 0; i < VDEV_MAX_QUEUES; i++)
		if (d->kick[i] >= 0)
			close(d->kick[i]);
	for (unsigned int i = 0; i < VPCI_MAX_SRC; i++)
		if (d->call[i] >= 0)
			close(d->call[i]);
	close(d->intx_stop);
	free(d);
}

static uint32_t vdisk_cfg_read(void *opaque, uint32_t off, unsigned int size)
{
	struct vdisk *d = opaque;

	return vpci_cfg_read(&d->pci, off, size);
}

static void vdisk_cfg_write(void *opaque, uint32_t off, unsigned int size,
			    uint32_t val)
{
	struct vdisk *d = opaque;

	vpci_cfg_write(&d->pci, off, size, val);
}

static bool vdisk_mmio(void *opaque, uint64_t addr, uint8_t *data,
		       unsigned int size, bool write)
{
	struct vdisk *d = opaque;
	uint64_t off;

	if (!vpci_bar_hit(&d->pci, addr, &off))
		return false;
	if (write)
		vpci_bar_write(&d->pci, off, data, size);
	else
		vpci_bar_read(&d->pci, off, data, size);
	return true;
}

const struct pci_dev_ops vdisk_pci_ops = {
	vdisk_cfg_read, vdisk_cfg_write, vdisk_mmio,
};
