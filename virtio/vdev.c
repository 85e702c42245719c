/* Virtio device state: status state machine, feature negotiation and
 * queue registers (virtio 1.2, 2.1-2.2 and 3.1).  Pure: the transport
 * decodes registers and calls in here under its lock.
 */
#include "virtio/pci.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <string.h>

/* Transport features we implement; device-type bits (0-23) pass as the
 * device offers them. */
#define VDEV_TRANSPORT_FEATURES                                        \
	((1ull << VIRTIO_RING_F_INDIRECT_DESC) |                       \
	 (1ull << VIRTIO_RING_F_EVENT_IDX) | (1ull << VIRTIO_F_VERSION_1))
#define VDEV_DEVICE_FEATURES ((1ull << 24) - 1)

static bool is_pow2(unsigned int x)
{
	return x && !(x & (x - 1));
}

static void vdev_clear(struct vdev *v)
{
	unsigned int i;

	v->driver_features = 0;
	v->dfselect = 0;
	v->gfselect = 0;
	v->status = 0;
	v->queue_select = 0;
	v->msix_config = VDEV_NO_VECTOR;
	v->started = false;
	for (i = 0; i < v->nq; i++) {
		struct vdev_queue *q = &v->q[i];

		q->size = q->max_size;
		q->msix_vector = VDEV_NO_VECTOR;
		q->enabled = false;
		q->desc = q->avail = q->used = 0;
	}
	__atomic_store_n(&v->isr, 0, __ATOMIC_RELAXED);
	/* Cleared last: a reset is what acknowledges it. */
	__atomic_store_n(&v->needs_reset, 0, __ATOMIC_RELEASE);
}

int vdev_init(struct vdev *v, const struct vdev_ops *ops, void *impl,
	      const struct gmem *m, void (*config_irq)(void *), void *opaque)
{
	unsigned int nq, i;
	uint16_t max;

	if (!ops || !ops->features || !ops->num_queues ||
	    !ops->queue_max_size || !ops->activate || !ops->reset || !m)
		return -EINVAL;
	nq = ops->num_queues(impl);
	max = ops->queue_max_size(impl);
	if (!nq || nq > VDEV_MAX_QUEUES || !is_pow2(max))
		return -EINVAL;
	memset(v, 0, sizeof(*v));
	v->ops = ops;
	v->impl = impl;
	v->mem = m;
	v->nq = nq;
	v->config_irq = config_irq;
	v->opaque = opaque;
	v->offered = (ops->features(impl) &
		      (VDEV_DEVICE_FEATURES | VDEV_TRANSPORT_FEATURES)) |
		     (1ull << VIRTIO_F_VERSION_1);
	for (i = 0; i < nq; i++) {
		v->q[i].max_size = max;
		v->q[i].kick_fd = -1;
		v->q[i].call_fd = -1;
	}
	vdev_clear(v);
	return 0;
}

uint8_t vdev_get_status(const struct vdev *v)
{
	uint8_t st = v->status;

	if (__atomic_load_n(&v->needs_reset, __ATOMIC_ACQUIRE))
		st |= VIRTIO_CONFIG_S_NEEDS_RESET;
	return st;
}

void vdev_reset(struct vdev *v)
{
	/* reset() joins the device's threads: once it returns nothing
	 * touches guest memory for this device, and only then does status
	 * read 0. */
	if (v->started)
		v->ops->reset(v->impl);
	vdev_clear(v);
}

static bool vdev_features_ok(const struct vdev *v)
{
	if (v->driver_features & ~v->offered)
		return false;
	return v->driver_features & (1ull << VIRTIO_F_VERSION_1);
}

/* The driver may enable any subset of the queues (at least one):
 * activate() gets them all and serves those with enabled set. */
static unsigned int vdev_enabled_queues(const struct vdev *v)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < v->nq; i++)
		n += v->q[i].enabled;
	return n;
}

static void vdev_needs_reset(void *opaque)
{
	vdev_signal_needs_reset(opaque);
}

static void vdev_activate(struct vdev *v)
{
	struct vdev_activation a = {
		.mem = v->mem, .features = v->driver_features,
		.q = v->q, .nq = v->nq,
		.needs_reset = vdev_needs_reset, .opaque = v,
	};
	int r;

	if (!vdev_enabled_queues(v)) {
		vdev_signal_needs_reset(v);
		return;
	}
	r = v->ops->activate(v->impl, &a);
	if (r < 0) {
		vdev_signal_needs_reset(v);
		return;
	}
	v->started = true;
}

uint8_t vdev_set_status(struct vdev *v, uint8_t val)
{
	uint8_t old = v->status, add;

	if (!val) {
		vdev_reset(v);
		return 0;
	}
	val &= (uint8_t)~VIRTIO_CONFIG_S_NEEDS_RESET; /* device-set only */
	if ((old & val) != old) {
		v->refused++; /* the driver may not clear bits */
		return vdev_get_status(v);
	}
	add = val & ~old;
	if ((add & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    (!(val & VIRTIO_CONFIG_S_DRIVER) || !vdev_features_ok(v))) {
		v->refused++;
		val &= (uint8_t)~VIRTIO_CONFIG_S_FEATURES_OK;
	}
	if ((add & VIRTIO_CONFIG_S_DRIVER_OK) &&
	    !(val & VIRTIO_CONFIG_S_FEATURES_OK)) {
		v->refused++;
		val &= (uint8_t)~VIRTIO_CONFIG_S_DRIVER_OK;
	}
	v->status = val;
	if ((val & VIRTIO_CONFIG_S_DRIVER_OK) && !v->started &&
	    !(val & VIRTIO_CONFIG_S_FAILED) && !v->dma_off)
		vdev_activate(v);
	return vdev_get_status(v);
}

void vdev_set_dma(struct vdev *v, bool on)
{
	if (on == !v->dma_off)
		return;
	v->dma_off = !on;
	if (v->started && !on) {
		if (v->ops->pause)
			v->ops->pause(v->impl);
	} else if (v->started) {
		if (v->ops->resume && v->ops->resume(v->impl) < 0)
			vdev_signal_needs_reset(v);
	} else if (on && (v->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
		   !(v->status & VIRTIO_CONFIG_S_FAILED)) {
		vdev_activate(v); /* DRIVER_OK came while DMA was off */
	}
}

uint32_t vdev_get_device_features(const struct vdev *v)
{
	if (v->dfselect > 1)
		return 0;
	return (uint32_t)(v->offered >> (32 * v->dfselect));
}

uint32_t vdev_get_driver_features(const struct vdev *v)
{
	if (v->gfselect > 1)
		return 0;
	return (uint32_t)(v->driver_features >> (32 * v->gfselect));
}

void vdev_set_driver_features(struct vdev *v, uint32_t val)
{
	unsigned int shift;

	if (v->gfselect > 1 || (v->status & VIRTIO_CONFIG_S_FEATURES_OK)) {
		v->refused++;
		return;
	}
	shift = 32 * v->gfselect;
	v->driver_features &= ~(0xffffffffull << shift);
	v->driver_features |= (uint64_t)val << shift;
}

struct vdev_queue *vdev_selected(struct vdev *v)
{
	if (v->queue_select >= v->nq)
		return NULL;
	return &v->q[v->queue_select];
}

static struct vdev_queue *vdev_writable_queue(struct vdev *v)
{
	struct vdev_queue *q = vdev_selected(v);

	if (!q || q->enabled || (v->status & VIRTIO_CONFIG_S_DRIVER_OK)) {
		v->refused++;
		return NULL;
	}
	return q;
}

void vdev_queue_set_size(struct vdev *v, uint16_t size)
{
	struct vdev_queue *q = vdev_writable_queue(v);

	if (q)
		q->size = size; /* checked at enable */
}

void vdev_queue_set_addr(struct vdev *v, unsigned int which, bool hi,
			 uint32_t val)
{
	struct vdev_queue *q = vdev_writable_queue(v);
	uint64_t *a;

	if (!q || which > 2)
		return;
	a = which == 0 ? &q->desc : which == 1 ? &q->avail : &q->used;
	if (hi)
		*a = (*a & 0xffffffffull) | ((uint64_t)val << 32);
	else
		*a = (*a & ~0xffffffffull) | val;
}

static bool ring_ok(const struct vdev *v, uint64_t gpa, uint64_t len,
		    uint64_t align)
{
	return !(gpa & (align - 1)) && gmem_ptr(v->mem, gpa, len);
}

/* Sizes of the split rings (virtio 1.2, 2.7), with the event fields. */
static bool vdev_queue_ok(const struct vdev *v, const struct vdev_queue *q)
{
	uint64_t n = q->size;

	if (!is_pow2(q->size) || q->size > q->max_size)
		return false;
	return ring_ok(v, q->desc, 16 * n, 16) &&
	       ring_ok(v, q->avail, 6 + 2 * n, 2) &&
	       ring_ok(v, q->used, 6 + 8 * n, 4);
}

void vdev_queue_enable(struct vdev *v)
{
	struct vdev_queue *q = vdev_writable_queue(v);

	if (!q)
		return;
	if (!vdev_queue_ok(v, q)) {
		v->refused++;
		return;
	}
	q->enabled = true;
}

void vdev_signal_needs_reset(struct vdev *v)
{
	if (__atomic_exchange_n(&v->needs_reset, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_or_fetch(&v->isr, VDEV_ISR_CONFIG, __ATOMIC_RELEASE);
	if (v->config_irq)
		v->config_irq(v->opaque);
}

void vdev_config_changed(struct vdev *v)
{
	v->config_generation++;
	if (!(v->status & VIRTIO_CONFIG_S_DRIVER_OK))
		return;
	__atomic_or_fetch(&v->isr, VDEV_ISR_CONFIG, __ATOMIC_RELEASE);
	if (v->config_irq)
		v->config_irq(v->opaque);
}

uint8_t vdev_read_isr(struct vdev *v)
{
	return __atomic_exchange_n(&v->isr, 0, __ATOMIC_ACQ_REL);
}
