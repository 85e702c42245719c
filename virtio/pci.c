/* The virtio-pci modern transport (virtio 1.2, 4.1), MSI-X included, on
 * a generic PCI function (hw/pci_func.c).  Pure: see pci.h.
 */
#include "virtio/pci.h"

#include <errno.h>
#include <linux/pci_regs.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <string.h>

#define PCI_VENDOR_REDHAT_QUMRANET 0x1af4
#define VIRTIO_PCI_DEVICE_BASE 0x1040

/* ---- capabilities --------------------------------------------------- */

static int vpci_add_vcap(struct pci_func *f, uint8_t type, uint8_t bar,
			 uint32_t off, uint32_t len, uint32_t mult, bool notify)
{
	struct virtio_pci_notify_cap c;
	uint8_t clen = notify ? sizeof(c) : sizeof(c.cap);

	memset(&c, 0, sizeof(c));
	c.cap.cap_vndr = PCI_CAP_ID_VNDR;
	c.cap.cap_len = clen;
	c.cap.cfg_type = type;
	c.cap.bar = bar;
	c.cap.offset = off;
	c.cap.length = len;
	c.notify_off_multiplier = mult;
	return pci_func_add_cap(f, &c, clen);
}

static int vpci_add_caps(struct vpci *p)
{
	uint8_t msix[PCI_CAP_MSIX_SIZEOF] = { PCI_CAP_ID_MSIX };
	struct pci_func *f = &p->func;
	uint32_t devlen = 0;
	int off;

	if (p->vdev->ops->config_size)
		devlen = p->vdev->ops->config_size(p->vdev->impl);
	if (devlen > VPCI_DEVCFG_LEN)
		return -EINVAL;
	pci_put16(msix + PCI_MSIX_FLAGS, (uint16_t)(p->nvec - 1));
	pci_put32(msix + PCI_MSIX_TABLE, VPCI_MSIX_TABLE_OFF);
	pci_put32(msix + PCI_MSIX_PBA, VPCI_MSIX_PBA_OFF);
	off = pci_func_add_cap(f, msix, sizeof(msix));
	if (off < 0)
		return off;
	p->msix_cap = (uint8_t)off;
	pci_put16(f->wmask + off + PCI_MSIX_FLAGS,
	      PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	/* The I/O BAR's notify capability first: see VPCI_IO_BAR. */
	if (vpci_add_vcap(f, VIRTIO_PCI_CAP_COMMON_CFG, 0, VPCI_COMMON_OFF,
			  VPCI_COMMON_LEN, 0, false) < 0 ||
	    (f->bar_size[VPCI_IO_BAR] &&
	     vpci_add_vcap(f, VIRTIO_PCI_CAP_NOTIFY_CFG, VPCI_IO_BAR, 0,
			   p->vdev->nq * VPCI_NOTIFY_MULT, VPCI_NOTIFY_MULT,
			   true) < 0) ||
	    vpci_add_vcap(f, VIRTIO_PCI_CAP_NOTIFY_CFG, 0, VPCI_NOTIFY_OFF,
			  p->vdev->nq * VPCI_NOTIFY_MULT, VPCI_NOTIFY_MULT,
			  true) < 0 ||
	    vpci_add_vcap(f, VIRTIO_PCI_CAP_ISR_CFG, 0, VPCI_ISR_OFF,
			  VPCI_ISR_LEN, 0, false) < 0)
		return -ENOSPC;
	if (devlen && vpci_add_vcap(f, VIRTIO_PCI_CAP_DEVICE_CFG, 0,
				    VPCI_DEVCFG_OFF, devlen, 0, false) < 0)
		return -ENOSPC;
	return 0;
}

/* ---- interrupt routes and the notify area ------------------------- */

static bool vpci_msix_on(const struct vpci *p, bool *maskall)
{
	uint32_t ctl = pci_func_read(&p->func, p->msix_cap + PCI_MSIX_FLAGS, 2);

	*maskall = ctl & PCI_MSIX_FLAGS_MASKALL;
	return ctl & PCI_MSIX_FLAGS_ENABLE;
}

static uint16_t vpci_src_vector(const struct vpci *p, unsigned int src)
{
	const struct vdev *v = p->vdev;

	if (src == VPCI_SRC_CONFIG)
		return v->msix_config;
	return v->q[src - 1].msix_vector;
}

/* src's route; msix: MSI-X enabled and not masked as a whole. */
static struct vpci_route vpci_compute(const struct vpci *p, unsigned int src,
				      bool msix)
{
	struct vpci_route r = { 0 };
	uint16_t vec = vpci_src_vector(p, src);
	const struct vpci_msix_entry *e;

	if (!msix || vec >= p->nvec)
		return r;
	e = &p->msix[vec];
	if (e->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT)
		return r;
	r.on = true;
	r.addr = ((uint64_t)e->addr_hi << 32) | e->addr_lo;
	r.data = e->data;
	return r;
}

/* INTx mode: MSI-X disabled and INTx not disabled in the command
 * register (virtio 1.2, 4.1.4.5: the ISR then says why INTA# rose). */
static bool vpci_intx_wanted(const struct vpci *p)
{
	bool maskall;

	return !vpci_msix_on(p, &maskall) &&
	       !(pci_func_read(&p->func, PCI_COMMAND, 2) &
		 PCI_COMMAND_INTX_DISABLE);
}

static void vpci_set_intx(struct vpci *p, bool on)
{
	if (on == p->intx)
		return;
	p->intx = on;
	if (p->cb.intx_mode)
		p->cb.intx_mode(p->cb.opaque, on);
}

/* Tell vmm/ about every source whose route changed.  INTx mode ends
 * before MSI routes go on and begins after they went off, so that an
 * interrupt eventfd never has two consumers. */
static void vpci_update_routes(struct vpci *p)
{
	unsigned int src, nsrc = 1 + p->vdev->nq;
	bool intx = vpci_intx_wanted(p), maskall;
	bool msix = vpci_msix_on(p, &maskall) && !maskall;

	if (!intx)
		vpci_set_intx(p, false);
	for (src = 0; src < nsrc; src++) {
		struct vpci_route r = vpci_compute(p, src, msix);
		struct vpci_route *o = &p->route[src];

		if (p->route_valid && r.on == o->on &&
		    (!r.on || (r.addr == o->addr && r.data == o->data)))
			continue;
		*o = r;
		if (p->cb.irq_route)
			p->cb.irq_route(p->cb.opaque, src, r.on, r.addr, r.data);
	}
	p->route_valid = true;
	if (intx)
		vpci_set_intx(p, true);
}

/* Tell vmm/ where each notify area decodes now, if that changed. */
static void vpci_update_notify(struct vpci *p)
{
	for (unsigned int io = 0; io < 2; io++) {
		uint64_t base = 0;
		bool mapped = pci_func_bar(&p->func, io ? VPCI_IO_BAR : 0,
					   &base);

		if (!io)
			base += VPCI_NOTIFY_OFF;
		if (mapped == p->notify_mapped[io] &&
		    (!mapped || base == p->notify_base[io]))
			continue;
		p->notify_mapped[io] = mapped;
		p->notify_base[io] = base;
		if (p->cb.notify_map)
			p->cb.notify_map(p->cb.opaque, io, mapped, base);
	}
}

int vpci_init(struct vpci *p, struct vdev *v, const struct vpci_cb *cb,
	      uint32_t bar_addr, uint32_t io_addr)
{
	uint16_t devid;
	int r;

	if (!v || !cb || v->nq + 1 > VPCI_MSIX_MAX)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->vdev = v;
	p->cb = *cb;
	p->nvec = v->nq + 1;
	devid = (uint16_t)(VIRTIO_PCI_DEVICE_BASE + v->ops->device_id);
	pci_func_init(&p->func, PCI_VENDOR_REDHAT_QUMRANET, devid,
		      v->ops->pci_class, 1,
		      PCI_VENDOR_REDHAT_QUMRANET, 0x40);
	p->func.cfg[PCI_INTERRUPT_PIN] = 1; /* INTA#, for a guest without MSI-X */
	r = pci_func_set_bar(&p->func, 0, VPCI_BAR_SIZE, false, bar_addr);
	if (!r && io_addr)
		r = pci_func_set_bar(&p->func, VPCI_IO_BAR, VPCI_IO_BAR_SIZE,
				     true, io_addr);
	if (!r)
		r = vpci_add_caps(p);
	if (r)
		return r;
	for (unsigned int i = 0; i < p->nvec; i++)
		p->msix[i].ctrl = PCI_MSIX_ENTRY_CTRL_MASKBIT;
	pthread_mutex_init(&p->lock, NULL);
	vdev_set_dma(v, false); /* Bus Master Enable is clear at power-on */
	vpci_update_routes(p);
	return 0;
}

void vpci_destroy(struct vpci *p)
{
	pthread_mutex_destroy(&p->lock);
}

uint32_t vpci_cfg_read(struct vpci *p, uint32_t off, unsigned int size)
{
	uint32_t v;

	pthread_mutex_lock(&p->lock);
	v = pci_func_read(&p->func, off, size);
	pthread_mutex_unlock(&p->lock);
	return v;
}

void vpci_cfg_write(struct vpci *p, uint32_t off, unsigned int size,
		    uint32_t val)
{
	bool master;

	pthread_mutex_lock(&p->lock);
	pci_func_write(&p->func, off, size, val);
	/* Bus Master Enable gates every access of the device to guest
	 * memory (rings, buffers, MSIs); the write completes only once the
	 * device has stopped or started again. */
	master = pci_func_read(&p->func, PCI_COMMAND, 2) & PCI_COMMAND_MASTER;
	if (master != p->bus_master) {
		p->bus_master = master;
		vdev_set_dma(p->vdev, master);
	}
	vpci_update_notify(p);
	vpci_update_routes(p);
	pthread_mutex_unlock(&p->lock);
}

static bool vpci_hit(struct vpci *p, unsigned int bar, uint64_t size,
		     uint64_t addr, uint64_t *off)
{
	uint64_t base;
	bool hit = false;

	pthread_mutex_lock(&p->lock);
	if (pci_func_bar(&p->func, bar, &base) && addr >= base &&
	    addr - base < size) {
		*off = addr - base;
		hit = true;
	}
	pthread_mutex_unlock(&p->lock);
	return hit;
}

bool vpci_bar_hit(struct vpci *p, uint64_t addr, uint64_t *off)
{
	return vpci_hit(p, 0, VPCI_BAR_SIZE, addr, off);
}

bool vpci_io_hit(struct vpci *p, uint64_t port, uint64_t *off)
{
	return vpci_hit(p, VPCI_IO_BAR, VPCI_IO_BAR_SIZE, port, off);
}

/* ---- common configuration ------------------------------------------- */

static uint32_t vpci_queue_read(struct vpci *p, uint32_t off)
{
	struct vdev_queue *q = vdev_selected(p->vdev);

	if (!q)
		return off == VIRTIO_PCI_COMMON_Q_MSIX ? VDEV_NO_VECTOR : 0;
	switch (off) {
	case VIRTIO_PCI_COMMON_Q_SIZE:
		return q->size;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		return q->msix_vector;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		return q->enabled;
	case VIRTIO_PCI_COMMON_Q_NOFF:
		return p->vdev->queue_select;
	case VIRTIO_PCI_COMMON_Q_DESCLO:
		return (uint32_t)q->desc;
	case VIRTIO_PCI_COMMON_Q_DESCHI:
		return (uint32_t)(q->desc >> 32);
	case VIRTIO_PCI_COMMON_Q_AVAILLO:
		return (uint32_t)q->avail;
	case VIRTIO_PCI_COMMON_Q_AVAILHI:
		return (uint32_t)(q->avail >> 32);
	case VIRTIO_PCI_COMMON_Q_USEDLO:
		return (uint32_t)q->used;
	case VIRTIO_PCI_COMMON_Q_USEDHI:
		return (uint32_t)(q->used >> 32);
	}
	return 0;
}

static uint32_t vpci_common_read(struct vpci *p, uint32_t off)
{
	struct vdev *v = p->vdev;

	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		return v->dfselect;
	case VIRTIO_PCI_COMMON_DF:
		return vdev_get_device_features(v);
	case VIRTIO_PCI_COMMON_GFSELECT:
		return v->gfselect;
	case VIRTIO_PCI_COMMON_GF:
		return vdev_get_driver_features(v);
	case VIRTIO_PCI_COMMON_MSIX:
		return v->msix_config;
	case VIRTIO_PCI_COMMON_NUMQ:
		return v->nq;
	case VIRTIO_PCI_COMMON_STATUS:
		return vdev_get_status(v);
	case VIRTIO_PCI_COMMON_CFGGENERATION:
		return v->config_generation;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		return v->queue_select;
	}
	return vpci_queue_read(p, off);
}

/* A vector the driver may use: one in the table, or NO_VECTOR. */
static uint16_t vpci_vector(struct vpci *p, uint32_t val)
{
	return val < p->nvec ? (uint16_t)val : VDEV_NO_VECTOR;
}

static void vpci_queue_write(struct vpci *p, uint32_t off, uint32_t val)
{
	struct vdev *v = p->vdev;
	struct vdev_queue *q;

	switch (off) {
	case VIRTIO_PCI_COMMON_Q_SIZE:
		vdev_queue_set_size(v, (uint16_t)val);
		return;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		q = vdev_selected(v);
		if (q)
			q->msix_vector = vpci_vector(p, val);
		return;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		if (val == 1)
			vdev_queue_enable(v);
		return;
	}
	if (off >= VIRTIO_PCI_COMMON_Q_DESCLO &&
	    off <= VIRTIO_PCI_COMMON_Q_USEDHI)
		vdev_queue_set_addr(v, (off - VIRTIO_PCI_COMMON_Q_DESCLO) / 8,
				    (off & 4) != 0, val);
	else
		p->bad_access++;
}

static void vpci_common_write(struct vpci *p, uint32_t off, uint32_t val)
{
	struct vdev *v = p->vdev;

	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		v->dfselect = val;
		return;
	case VIRTIO_PCI_COMMON_GFSELECT:
		v->gfselect = val;
		return;
	case VIRTIO_PCI_COMMON_GF:
		vdev_set_driver_features(v, val);
		return;
	case VIRTIO_PCI_COMMON_MSIX:
		v->msix_config = vpci_vector(p, val);
		return;
	case VIRTIO_PCI_COMMON_STATUS:
		vdev_set_status(v, (uint8_t)val);
		return;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		v->queue_select = (uint16_t)val;
		return;
	}
	vpci_queue_write(p, off, val);
}

/* Width of each common-config field, by offset (0: not a field). */
static unsigned int vpci_common_width(uint32_t off)
{
	if (off < VIRTIO_PCI_COMMON_MSIX)
		return 4;
	if (off < VIRTIO_PCI_COMMON_STATUS)
		return 2;
	if (off < VIRTIO_PCI_COMMON_Q_SELECT)
		return 1;
	if (off < VIRTIO_PCI_COMMON_Q_DESCLO)
		return 2;
	if (off < VIRTIO_PCI_COMMON_Q_USEDHI + 4)
		return 4;
	return 0;
}

/* ---- MSI-X table and PBA -------------------------------------------- */

static uint32_t *vpci_msix_word(struct vpci *p, uint64_t off)
{
	uint64_t i = off / PCI_MSIX_ENTRY_SIZE;

	if (i >= p->nvec)
		return NULL;
	return &p->msix[i].addr_lo + (off % PCI_MSIX_ENTRY_SIZE) / 4;
}

static uint32_t vpci_pba_read(struct vpci *p, uint64_t off)
{
	uint32_t bits = 0;
	unsigned int src, nsrc = 1 + p->vdev->nq;

	if (off || !p->cb.irq_pending)
		return 0;
	for (src = 0; src < nsrc; src++) {
		uint16_t vec = vpci_src_vector(p, src);

		if (vec < p->nvec && !p->route[src].on &&
		    p->cb.irq_pending(p->cb.opaque, src))
			bits |= 1u << vec;
	}
	return bits;
}

/* ---- BAR 0 dispatch ------------------------------------------------- */

static bool in(uint64_t off, uint64_t base, uint64_t len)
{
	return off - base < len && off >= base;
}

static uint32_t vpci_read32(struct vpci *p, uint64_t off, unsigned int size)
{
	struct vdev *v = p->vdev;
	uint32_t val = 0;

	if (in(off, VPCI_COMMON_OFF, VPCI_COMMON_LEN)) {
		if (vpci_common_width(off - VPCI_COMMON_OFF) == size)
			return vpci_common_read(p, off - VPCI_COMMON_OFF);
	} else if (off == VPCI_ISR_OFF && size == 1) {
		uint8_t isr = vdev_read_isr(v);

		if (p->intx && p->cb.intx_ack)
			p->cb.intx_ack(p->cb.opaque);
		return isr;
	} else if (in(off, VPCI_DEVCFG_OFF, VPCI_DEVCFG_LEN)) {
		uint32_t o = (uint32_t)(off - VPCI_DEVCFG_OFF);

		if (v->ops->config_read && v->ops->config_size &&
		    o + size <= v->ops->config_size(v->impl)) {
			v->ops->config_read(v->impl, o, &val, size);
			return val;
		}
	} else if (in(off, VPCI_MSIX_TABLE_OFF, VPCI_MSIX_MAX * 16)) {
		uint32_t *w = vpci_msix_word(p, off - VPCI_MSIX_TABLE_OFF);

		if (w && size == 4)
			return *w;
	} else if (in(off, VPCI_MSIX_PBA_OFF, 8)) {
		if (size == 4)
			return vpci_pba_read(p, off - VPCI_MSIX_PBA_OFF);
	} else if (in(off, VPCI_NOTIFY_OFF, VPCI_NOTIFY_LEN)) {
		return 0;
	}
	p->bad_access++;
	return 0;
}

/* A kick at offset off of a notify area (inside nq * VPCI_NOTIFY_MULT)
 * that no ioeventfd caught. */
static void vpci_notify(struct vpci *p, uint64_t off)
{
	if (p->cb.notify)
		p->cb.notify(p->cb.opaque, (unsigned int)(off / VPCI_NOTIFY_MULT));
}

static void vpci_msix_write(struct vpci *p, uint64_t off, uint32_t val)
{
	uint32_t *w = vpci_msix_word(p, off);

	if (!w) {
		p->bad_access++;
		return;
	}
	if (off % PCI_MSIX_ENTRY_SIZE == PCI_MSIX_ENTRY_VECTOR_CTRL)
		val &= PCI_MSIX_ENTRY_CTRL_MASKBIT;
	*w = val;
	vpci_update_routes(p);
}

static void vpci_write32(struct vpci *p, uint64_t off, unsigned int size,
			 uint32_t val)
{
	struct vdev *v = p->vdev;

	if (in(off, VPCI_COMMON_OFF, VPCI_COMMON_LEN) &&
	    vpci_common_width(off - VPCI_COMMON_OFF) == size) {
		uint32_t o = (uint32_t)(off - VPCI_COMMON_OFF);

		vpci_common_write(p, o, val);
		/* Of the common config, only a vector, or the status (a
		 * reset clears the vectors), is read by vpci_compute. */
		if (o == VIRTIO_PCI_COMMON_MSIX ||
		    o == VIRTIO_PCI_COMMON_STATUS ||
		    o == VIRTIO_PCI_COMMON_Q_MSIX)
			vpci_update_routes(p);
	} else if (in(off, VPCI_DEVCFG_OFF, VPCI_DEVCFG_LEN)) {
		uint32_t o = (uint32_t)(off - VPCI_DEVCFG_OFF);

		if (v->ops->config_write && v->ops->config_size &&
		    o + size <= v->ops->config_size(v->impl))
			v->ops->config_write(v->impl, o, &val, size);
		else
			p->bad_access++;
	} else if (in(off, VPCI_NOTIFY_OFF, (uint64_t)v->nq * VPCI_NOTIFY_MULT)) {
		vpci_notify(p, off - VPCI_NOTIFY_OFF);
	} else if (in(off, VPCI_MSIX_TABLE_OFF, VPCI_MSIX_MAX * 16) && size == 4) {
		vpci_msix_write(p, off - VPCI_MSIX_TABLE_OFF, val);
	} else {
		p->bad_access++;
	}
}

static bool vpci_size_ok(uint64_t off, unsigned int size)
{
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return false;
	return !(off & (size - 1)) && off < VPCI_BAR_SIZE &&
	       off + size <= VPCI_BAR_SIZE;
}

void vpci_bar_read(struct vpci *p, uint64_t off, void *data,
		   unsigned int size)
{
	uint32_t lo, hi = 0;

	if (!vpci_size_ok(off, size)) {
		memset(data, 0xff, size <= 8 ? size : 8);
		p->bad_access++;
		return;
	}
	pthread_mutex_lock(&p->lock);
	if (size == 8) { /* two halves, as a 64-bit access splits */
		lo = vpci_read32(p, off, 4);
		hi = vpci_read32(p, off + 4, 4);
	} else {
		lo = vpci_read32(p, off, size);
	}
	pthread_mutex_unlock(&p->lock);
	uint64_t v = ((uint64_t)hi << 32) | lo;
	memcpy(data, &v, size); /* little-endian host */
}

void vpci_bar_write(struct vpci *p, uint64_t off, const void *data,
		    unsigned int size)
{
	uint64_t v = 0;

	if (!vpci_size_ok(off, size)) {
		p->bad_access++;
		return;
	}
	memcpy(&v, data, size);
	pthread_mutex_lock(&p->lock);
	if (size == 8) {
		vpci_write32(p, off, 4, (uint32_t)v);
		vpci_write32(p, off + 4, 4, (uint32_t)(v >> 32));
	} else {
		vpci_write32(p, off, size, (uint32_t)v);
	}
	pthread_mutex_unlock(&p->lock);
}

/* ---- the I/O BAR: a notify area only -------------------------------- */

void vpci_io_read(struct vpci *p, uint64_t off, void *data,
		  unsigned int size)
{
	/* The notify area reads as 0 (nothing to read in it). */
	memset(data, 0, size <= 8 ? size : 8);
	pthread_mutex_lock(&p->lock);
	if (size != 2 || off % VPCI_NOTIFY_MULT || off >= VPCI_IO_BAR_SIZE)
		p->bad_access++;
	pthread_mutex_unlock(&p->lock);
}

void vpci_io_write(struct vpci *p, uint64_t off, const void *data,
		   unsigned int size)
{
	(void)data; /* the queue is in the address, as in BAR 0 */
	pthread_mutex_lock(&p->lock);
	if (size == 2 && !(off % VPCI_NOTIFY_MULT) &&
	    off < (uint64_t)p->vdev->nq * VPCI_NOTIFY_MULT)
		vpci_notify(p, off);
	else
		p->bad_access++;
	pthread_mutex_unlock(&p->lock);
}

void vpci_set_intx_line(struct vpci *p, uint8_t line)
{
	pthread_mutex_lock(&p->lock);
	p->func.cfg[PCI_INTERRUPT_LINE] = line;
	pthread_mutex_unlock(&p->lock);
}

uint64_t vpci_features(struct vpci *p)
{
	uint64_t f = 0;

	pthread_mutex_lock(&p->lock);
	if (p->vdev->status & VIRTIO_CONFIG_S_FEATURES_OK)
		f = p->vdev->driver_features;
	pthread_mutex_unlock(&p->lock);
	return f;
}

void vpci_config_changed(struct vpci *p)
{
	pthread_mutex_lock(&p->lock);
	vdev_config_changed(p->vdev);
	pthread_mutex_unlock(&p->lock);
}

void vpci_reset(struct vpci *p)
{
	pthread_mutex_lock(&p->lock);
	vdev_reset(p->vdev);
	vpci_update_routes(p);
	pthread_mutex_unlock(&p->lock);
}
