/* virtio/pci.c: config space (write masks, BAR sizing, capability
 * chain), common-config decoding, MSI-X table/masking -> route callbacks,
 * notify area mapping, device config bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/pci_regs.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>

#include "virtio/pci.h"

#define RAM_SIZE (1u << 20)
#define BAR 0xc0000000u
#define IO_BAR 0xc040u
#define NQ 2
#define FAKE_CLASS 0x0c0330u /* not a disk's: the device's own class */

struct fake {
	uint8_t cfg[16];
	int starts, stops, pauses, resumes;
	uint64_t ring[3]; /* queue 0's desc, avail, used at activation */
	/* callbacks seen */
	int routes;
	bool on[VPCI_MAX_SRC];
	uint64_t addr[VPCI_MAX_SRC];
	uint32_t data[VPCI_MAX_SRC];
	bool pending[VPCI_MAX_SRC];
	int maps;                  /* BAR 0's notify area */
	bool mapped;
	uint64_t notify_base;
	int io_maps;               /* the I/O BAR's */
	bool io_mapped;
	uint64_t io_notify_base;
	int notified[NQ];
	bool intx;
	int intx_changes, intx_acks;
};

struct ctx {
	struct fake f;
	struct gmem mem;
	uint8_t *ram;
	struct vdev v;
	struct vpci p;
};

static uint64_t f_features(void *impl) { (void)impl; return 1ull << 32 | 1u << 5; }
static unsigned int f_nq(void *impl) { (void)impl; return NQ; }
static uint16_t f_qmax(void *impl) { (void)impl; return 256; }
static uint32_t f_cfgsize(void *impl) { (void)impl; return 16; }

static void f_cfgread(void *impl, uint32_t off, void *buf, uint32_t len)
{
	memcpy(buf, ((struct fake *)impl)->cfg + off, len);
}

static void f_cfgwrite(void *impl, uint32_t off, const void *buf, uint32_t len)
{
	memcpy(((struct fake *)impl)->cfg + off, buf, len);
}

static int f_activate(void *impl, const struct vdev_activation *a)
{
	struct fake *f = impl;

	f->starts++;
	f->ring[0] = a->q[0].desc;
	f->ring[1] = a->q[0].avail;
	f->ring[2] = a->q[0].used;
	return 0;
}

static void f_reset(void *impl) { ((struct fake *)impl)->stops++; }
static void f_pause(void *impl) { ((struct fake *)impl)->pauses++; }
static int f_resume(void *impl) { ((struct fake *)impl)->resumes++; return 0; }

static const struct vdev_ops ops = {
	.device_id = 2, .pci_class = FAKE_CLASS, .features = f_features,
	.num_queues = f_nq, .queue_max_size = f_qmax, .config_size = f_cfgsize,
	.config_read = f_cfgread, .config_write = f_cfgwrite,
	.activate = f_activate, .reset = f_reset, .pause = f_pause,
	.resume = f_resume,
};

static void cb_route(void *o, unsigned int src, bool on, uint64_t addr,
		     uint32_t data)
{
	struct fake *f = o;

	f->routes++;
	f->on[src] = on;
	f->addr[src] = addr;
	f->data[src] = data;
}

static bool cb_pending(void *o, unsigned int src)
{
	return ((struct fake *)o)->pending[src];
}

static void cb_map(void *o, bool io, bool mapped, uint64_t base)
{
	struct fake *f = o;

	if (io) {
		f->io_maps++;
		f->io_mapped = mapped;
		f->io_notify_base = base;
		return;
	}
	f->maps++;
	f->mapped = mapped;
	f->notify_base = base;
}

static void cb_notify(void *o, unsigned int q)
{
	((struct fake *)o)->notified[q]++;
}

static void cb_intx_mode(void *o, bool on)
{
	((struct fake *)o)->intx = on;
	((struct fake *)o)->intx_changes++;
}

static void cb_intx_ack(void *o)
{
	((struct fake *)o)->intx_acks++;
}

static int setup_io(void **state, uint32_t io_bar)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct vpci_cb cb = { &c->f, cb_route, cb_pending, cb_map, cb_notify,
			      cb_intx_mode, cb_intx_ack };

	c->ram = calloc(1, RAM_SIZE);
	assert_int_equal(gmem_add(&c->mem, 0, RAM_SIZE, c->ram), 0);
	assert_int_equal(vdev_init(&c->v, &ops, &c->f, &c->mem, NULL, NULL), 0);
	assert_int_equal(vpci_init(&c->p, &c->v, &cb, BAR, io_bar), 0);
	*state = c;
	return 0;
}

static int setup(void **state)
{
	return setup_io(state, IO_BAR);
}

/* A machine without I/O space (arm64): no I/O BAR. */
static int setup_no_io(void **state)
{
	return setup_io(state, 0);
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	vpci_destroy(&c->p);
	free(c->ram);
	free(c);
	return 0;
}

static uint32_t rd(struct ctx *c, uint64_t off, unsigned int size)
{
	uint64_t v = 0;

	vpci_bar_read(&c->p, off, &v, size);
	return (uint32_t)v;
}

static void wr(struct ctx *c, uint64_t off, unsigned int size, uint32_t val)
{
	vpci_bar_write(&c->p, off, &val, size);
}

/* The nth (from 0) vendor capability of cfg_type in the chain: its
 * config offset, or 0. */
static unsigned int find_vcap_nth(struct ctx *c, uint8_t type, int nth)
{
	unsigned int off = vpci_cfg_read(&c->p, PCI_CAPABILITY_LIST, 1);
	int guard = 0;

	while (off && guard++ < 48) {
		if (vpci_cfg_read(&c->p, off, 1) == PCI_CAP_ID_VNDR &&
		    vpci_cfg_read(&c->p, off + 3, 1) == type && !nth--)
			return off;
		off = vpci_cfg_read(&c->p, off + 1, 1);
	}
	return 0;
}

static unsigned int find_vcap(struct ctx *c, uint8_t type)
{
	return find_vcap_nth(c, type, 0);
}

static unsigned int find_cap(struct ctx *c, uint8_t id)
{
	unsigned int off = vpci_cfg_read(&c->p, PCI_CAPABILITY_LIST, 1);

	while (off && vpci_cfg_read(&c->p, off, 1) != id)
		off = vpci_cfg_read(&c->p, off + 1, 1);
	return off;
}

static void enable_mem(struct ctx *c)
{
	vpci_cfg_write(&c->p, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
}

/* The common config's generation: a configuration change (a disk
 * resized) moves it on, and it is read under the transport's lock. */
static void test_config_generation(void **state)
{
	struct ctx *c = *state;
	uint32_t g = rd(c, VPCI_COMMON_OFF + VIRTIO_PCI_COMMON_CFGGENERATION, 1);

	vpci_config_changed(&c->p);
	assert_int_equal(rd(c, VPCI_COMMON_OFF + VIRTIO_PCI_COMMON_CFGGENERATION, 1),
			 (g + 1) & 0xff);
	vpci_config_changed(&c->p);
	assert_int_equal(rd(c, VPCI_COMMON_OFF + VIRTIO_PCI_COMMON_CFGGENERATION, 1),
			 (g + 2) & 0xff);
}

static void test_ids_and_header(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(vpci_cfg_read(&c->p, PCI_VENDOR_ID, 2), 0x1af4);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_DEVICE_ID, 2), 0x1042);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_REVISION_ID, 1), 1);
	/* The class code is the device's, not the transport's. */
	assert_int_equal(vpci_cfg_read(&c->p, PCI_CLASS_REVISION, 4),
			 FAKE_CLASS << 8 | 1);
	assert_true(vpci_cfg_read(&c->p, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_SUBSYSTEM_ID, 2), 0x40);
	/* read-only fields ignore writes */
	vpci_cfg_write(&c->p, PCI_VENDOR_ID, 4, 0);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_VENDOR_ID, 2), 0x1af4);
	/* misaligned and out-of-range accesses */
	assert_int_equal(vpci_cfg_read(&c->p, 1, 2), 0xffffffff);
	assert_int_equal(vpci_cfg_read(&c->p, 254, 4), 0xffffffff);
	assert_int_equal(vpci_cfg_read(&c->p, 256, 1), 0xffffffff);
	vpci_cfg_write(&c->p, 255, 4, 0); /* ignored, no crash */
}

static void test_bar_sizing(void **state)
{
	struct ctx *c = *state;
	uint64_t off = ~0ull; /* ~0: not written */

	assert_int_equal(vpci_cfg_read(&c->p, PCI_BASE_ADDRESS_0, 4), BAR);
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_0, 4, 0xffffffff);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_BASE_ADDRESS_0, 4),
			 ~(uint32_t)(VPCI_BAR_SIZE - 1));
	/* BAR 2: I/O space, VPCI_IO_BAR_SIZE ports */
	assert_int_equal(vpci_cfg_read(&c->p, PCI_BASE_ADDRESS_2, 4),
			 IO_BAR | PCI_BASE_ADDRESS_SPACE_IO);
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_2, 4, 0xffffffff);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_BASE_ADDRESS_2, 4),
			 ~(uint32_t)(VPCI_IO_BAR_SIZE - 1) |
				 PCI_BASE_ADDRESS_SPACE_IO);
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_2, 4, IO_BAR);
	/* other BARs do not exist */
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_1, 4, 0xffffffff);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_BASE_ADDRESS_1, 4), 0);
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_3, 4, 0xffffffff);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_BASE_ADDRESS_3, 4), 0);
	enable_mem(c);
	assert_false(vpci_bar_hit(&c->p, BAR, &off)); /* sizing pattern */
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_0, 4, BAR + 0x10000);
	assert_true(vpci_bar_hit(&c->p, BAR + 0x10000 + 8, &off));
	assert_int_equal(off, 8);
	assert_false(vpci_bar_hit(&c->p, BAR + 0x10000 + VPCI_BAR_SIZE, &off));
}

static void test_decode_off_until_enabled(void **state)
{
	struct ctx *c = *state;
	uint64_t off;

	assert_false(vpci_bar_hit(&c->p, BAR, &off));
	assert_false(c->f.mapped);
	enable_mem(c);
	assert_true(vpci_bar_hit(&c->p, BAR, &off));
	assert_true(c->f.mapped);
	assert_int_equal(c->f.notify_base, BAR + VPCI_NOTIFY_OFF);
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_0, 4, BAR + VPCI_BAR_SIZE);
	assert_int_equal(c->f.notify_base, BAR + VPCI_BAR_SIZE + VPCI_NOTIFY_OFF);
	vpci_cfg_write(&c->p, PCI_COMMAND, 2, 0);
	assert_false(c->f.mapped);
	assert_int_equal(c->f.maps, 3);
	/* Memory decoding never mapped the I/O BAR's notify area. */
	assert_int_equal(c->f.io_maps, 0);
}

/* The I/O BAR decodes with I/O decoding on, apart from memory; its
 * notify area starts at offset 0 and moves with the BAR. */
static void test_io_bar_decode(void **state)
{
	struct ctx *c = *state;
	uint64_t off = ~0ull; /* ~0: not written */

	assert_false(vpci_io_hit(&c->p, IO_BAR, &off));
	vpci_cfg_write(&c->p, PCI_COMMAND, 2, PCI_COMMAND_IO);
	assert_false(c->f.mapped);
	assert_true(c->f.io_mapped);
	assert_int_equal(c->f.io_notify_base, IO_BAR);
	assert_true(vpci_io_hit(&c->p, IO_BAR + 6, &off));
	assert_int_equal(off, 6);
	assert_false(vpci_io_hit(&c->p, IO_BAR + VPCI_IO_BAR_SIZE, &off));
	assert_false(vpci_io_hit(&c->p, IO_BAR - 1, &off));
	assert_false(vpci_bar_hit(&c->p, BAR, &off)); /* memory still off */
	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_2, 4, IO_BAR + 0x100);
	assert_int_equal(c->f.io_notify_base, IO_BAR + 0x100);
	assert_false(vpci_io_hit(&c->p, IO_BAR, &off));
	vpci_cfg_write(&c->p, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	assert_false(c->f.io_mapped);
	assert_true(c->f.mapped);
	assert_int_equal(c->f.io_maps, 3);
}

/* A kick through the I/O BAR that no ioeventfd caught: a 16-bit write
 * at q * VPCI_NOTIFY_MULT, as Linux's iowrite16; anything else there is
 * a bad access and kicks nothing. */
static void test_io_notify(void **state)
{
	struct ctx *c = *state;
	uint16_t v = 1;
	uint32_t w = 0xffffffff;

	vpci_io_write(&c->p, 1 * VPCI_NOTIFY_MULT, &v, 2);
	assert_int_equal(c->f.notified[1], 1);
	vpci_io_write(&c->p, 0, &v, 2);
	assert_int_equal(c->f.notified[0], 1);
	assert_int_equal(c->p.bad_access, 0);
	vpci_io_write(&c->p, NQ * VPCI_NOTIFY_MULT, &v, 2); /* no queue */
	vpci_io_write(&c->p, 2, &v, 2);                     /* between */
	vpci_io_write(&c->p, 0, &w, 4);                     /* wrong width */
	vpci_io_write(&c->p, 0, &w, 1);
	assert_int_equal(c->f.notified[0] + c->f.notified[1], 2);
	assert_int_equal(c->p.bad_access, 4);
	vpci_io_read(&c->p, 0, &w, 2);
	assert_int_equal(w & 0xffff, 0);
	assert_int_equal(c->p.bad_access, 4);
	vpci_io_read(&c->p, 1, &w, 4);
	assert_int_equal(w, 0);
	assert_int_equal(c->p.bad_access, 5);
}

static void test_virtio_caps(void **state)
{
	struct ctx *c = *state;
	static const struct { uint8_t type; uint32_t off; } want[] = {
		{ VIRTIO_PCI_CAP_COMMON_CFG, VPCI_COMMON_OFF },
		{ VIRTIO_PCI_CAP_NOTIFY_CFG, VPCI_NOTIFY_OFF },
		{ VIRTIO_PCI_CAP_ISR_CFG, VPCI_ISR_OFF },
		{ VIRTIO_PCI_CAP_DEVICE_CFG, VPCI_DEVCFG_OFF },
	};
	unsigned int cap;

	unsigned int io_notify;

	/* The first notify capability is the I/O BAR's: a driver takes the
	 * first it can use.  BAR 0's follows, for one that cannot. */
	io_notify = find_vcap(c, VIRTIO_PCI_CAP_NOTIFY_CFG);
	assert_int_not_equal(io_notify, 0);
	assert_int_equal(vpci_cfg_read(&c->p, io_notify + 4, 1), VPCI_IO_BAR);
	assert_int_equal(vpci_cfg_read(&c->p, io_notify + 8, 4), 0);
	assert_int_equal(vpci_cfg_read(&c->p, io_notify + 12, 4),
			 NQ * VPCI_NOTIFY_MULT);
	assert_int_equal(vpci_cfg_read(&c->p, io_notify + 16, 4),
			 VPCI_NOTIFY_MULT);
	for (unsigned int i = 0; i < 4; i++) {
		cap = find_vcap_nth(c, want[i].type,
				    want[i].type == VIRTIO_PCI_CAP_NOTIFY_CFG);
		assert_int_not_equal(cap, 0);
		assert_int_equal(vpci_cfg_read(&c->p, cap + 4, 1), 0); /* BAR 0 */
		assert_int_equal(vpci_cfg_read(&c->p, cap + 8, 4), want[i].off);
	}
	cap = find_vcap_nth(c, VIRTIO_PCI_CAP_NOTIFY_CFG, 1);
	assert_int_equal(vpci_cfg_read(&c->p, cap + 2, 1), 20);
	assert_int_equal(vpci_cfg_read(&c->p, cap + 12, 4),
			 NQ * VPCI_NOTIFY_MULT);
	assert_int_equal(vpci_cfg_read(&c->p, cap + 16, 4), VPCI_NOTIFY_MULT);
	assert_int_equal(find_vcap_nth(c, VIRTIO_PCI_CAP_NOTIFY_CFG, 2), 0);
	cap = find_vcap(c, VIRTIO_PCI_CAP_DEVICE_CFG);
	assert_int_equal(vpci_cfg_read(&c->p, cap + 12, 4), 16);
	cap = find_cap(c, PCI_CAP_ID_MSIX);
	assert_int_not_equal(cap, 0);
	assert_int_equal(vpci_cfg_read(&c->p, cap + PCI_MSIX_FLAGS, 2), NQ);
	assert_int_equal(vpci_cfg_read(&c->p, cap + PCI_MSIX_TABLE, 4),
			 VPCI_MSIX_TABLE_OFF);
	assert_int_equal(vpci_cfg_read(&c->p, cap + PCI_MSIX_PBA, 4),
			 VPCI_MSIX_PBA_OFF);
}

static void test_common_cfg(void **state)
{
	struct ctx *c = *state;

	enable_mem(c);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_NUMQ, 2), NQ);
	wr(c, VIRTIO_PCI_COMMON_DFSELECT, 4, 1);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_DF, 4), 1);
	wr(c, VIRTIO_PCI_COMMON_DFSELECT, 4, 0);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_DF, 4), 1u << 5);
	wr(c, VIRTIO_PCI_COMMON_Q_SELECT, 2, 1);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_Q_SIZE, 2), 256);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_Q_NOFF, 2), 1);
	wr(c, VIRTIO_PCI_COMMON_Q_DESCLO, 4, 0x1000);
	wr(c, VIRTIO_PCI_COMMON_Q_DESCHI, 4, 0x2);
	assert_int_equal(c->v.q[1].desc, 0x200001000ull);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_Q_DESCHI, 4), 2);
	/* a 64-bit access is split into two halves */
	uint64_t v = 0x3000;
	vpci_bar_write(&c->p, VIRTIO_PCI_COMMON_Q_USEDLO, &v, 8);
	assert_int_equal(c->v.q[1].used, 0x3000);
	/* wrong width for the field: ignored */
	wr(c, VIRTIO_PCI_COMMON_Q_SELECT, 4, 0);
	assert_int_equal(c->v.queue_select, 1);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_STATUS, 2), 0);
	/* nonexistent queue */
	wr(c, VIRTIO_PCI_COMMON_Q_SELECT, 2, 7);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_Q_SIZE, 2), 0);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_Q_MSIX, 2), VDEV_NO_VECTOR);
}

static void test_features_ok_refused_over_pci(void **state)
{
	struct ctx *c = *state;

	enable_mem(c);
	wr(c, VIRTIO_PCI_COMMON_STATUS, 1, 3);
	wr(c, VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
	wr(c, VIRTIO_PCI_COMMON_GF, 4, 1u << 5 | 1u << 6); /* 6: not offered */
	wr(c, VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	wr(c, VIRTIO_PCI_COMMON_GF, 4, 1);
	wr(c, VIRTIO_PCI_COMMON_STATUS, 1, 3 | VIRTIO_CONFIG_S_FEATURES_OK);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_STATUS, 1), 3);
	wr(c, VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
	wr(c, VIRTIO_PCI_COMMON_GF, 4, 1u << 5);
	wr(c, VIRTIO_PCI_COMMON_STATUS, 1, 3 | VIRTIO_CONFIG_S_FEATURES_OK);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_STATUS, 1),
			 3 | VIRTIO_CONFIG_S_FEATURES_OK);
}

/* Bus Master Enable gates the device: clear at power-on, so DRIVER_OK
 * waits for it; clearing it later pauses the device, setting resumes. */
static void test_bus_master_gates_dma(void **state)
{
	struct ctx *c = *state;

	enable_mem(c); /* memory decode only: no bus mastering yet */
	wr(c, VIRTIO_PCI_COMMON_STATUS, 1, 3);
	wr(c, VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	wr(c, VIRTIO_PCI_COMMON_GF, 4, 1);
	wr(c, VIRTIO_PCI_COMMON_STATUS, 1, 3 | VIRTIO_CONFIG_S_FEATURES_OK);
	wr(c, VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
	wr(c, VIRTIO_PCI_COMMON_Q_DESCLO, 4, 0x10000);
	wr(c, VIRTIO_PCI_COMMON_Q_AVAILLO, 4, 0x11000);
	wr(c, VIRTIO_PCI_COMMON_Q_USEDLO, 4, 0x12000);
	wr(c, VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	wr(c, VIRTIO_PCI_COMMON_STATUS, 1,
	   3 | VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_int_equal(c->f.starts, 0);
	vpci_cfg_write(&c->p, PCI_COMMAND, 2,
		       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	assert_int_equal(c->f.starts, 1);
	/* Each ring reaches the device under its register's name. */
	assert_int_equal(c->f.ring[0], 0x10000);
	assert_int_equal(c->f.ring[1], 0x11000);
	assert_int_equal(c->f.ring[2], 0x12000);
	vpci_cfg_write(&c->p, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	assert_int_equal(c->f.pauses, 1);
	vpci_cfg_write(&c->p, PCI_COMMAND, 2, PCI_COMMAND_MEMORY); /* again */
	assert_int_equal(c->f.pauses, 1);
	vpci_cfg_write(&c->p, PCI_COMMAND, 2,
		       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	assert_int_equal(c->f.resumes, 1);
	assert_int_equal(c->f.starts, 1);
}

static void program_vector(struct ctx *c, unsigned int vec, uint32_t data,
			   bool masked)
{
	uint64_t e = VPCI_MSIX_TABLE_OFF + 16 * vec;

	wr(c, e + PCI_MSIX_ENTRY_LOWER_ADDR, 4, 0xfee00000);
	wr(c, e + PCI_MSIX_ENTRY_UPPER_ADDR, 4, 0);
	wr(c, e + PCI_MSIX_ENTRY_DATA, 4, data);
	wr(c, e + PCI_MSIX_ENTRY_VECTOR_CTRL, 4, masked);
}

static void msix_ctl(struct ctx *c, uint16_t v)
{
	vpci_cfg_write(&c->p, find_cap(c, PCI_CAP_ID_MSIX) + PCI_MSIX_FLAGS,
		       2, v);
}

/* INTx: INTA# declared; INTx mode while MSI-X is off and INTx is not
 * disabled; an ISR read in INTx mode is acknowledged to vmm/. */
static void test_intx_mode(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(vpci_cfg_read(&c->p, PCI_INTERRUPT_PIN, 1), 1);
	vpci_set_intx_line(&c->p, 17);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_INTERRUPT_LINE, 1), 17);
	assert_true(c->f.intx); /* MSI-X is off at power-on */
	enable_mem(c);
	assert_int_equal(rd(c, VPCI_ISR_OFF, 1), 0);
	assert_int_equal(c->f.intx_acks, 1);
	msix_ctl(c, PCI_MSIX_FLAGS_ENABLE);
	assert_false(c->f.intx);
	assert_int_equal(rd(c, VPCI_ISR_OFF, 1), 0);
	assert_int_equal(c->f.intx_acks, 1); /* not in MSI-X mode */
	msix_ctl(c, 0);
	assert_true(c->f.intx);
	vpci_cfg_write(&c->p, PCI_COMMAND, 2,
		       PCI_COMMAND_MEMORY | PCI_COMMAND_INTX_DISABLE);
	assert_false(c->f.intx);
	assert_int_equal(c->f.intx_changes, 4);
}

static void test_msix_routes(void **state)
{
	struct ctx *c = *state;
	unsigned int q0 = VPCI_SRC_QUEUE(0);

	enable_mem(c);
	assert_int_equal(rd(c, VPCI_MSIX_TABLE_OFF + 12, 4), 1); /* masked */
	program_vector(c, 1, 0x41, false);
	wr(c, VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
	wr(c, VIRTIO_PCI_COMMON_Q_MSIX, 2, 1);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_Q_MSIX, 2), 1);
	assert_false(c->f.on[q0]); /* MSI-X still disabled */
	msix_ctl(c, PCI_MSIX_FLAGS_ENABLE);
	assert_true(c->f.on[q0]);
	assert_int_equal(c->f.addr[q0], 0xfee00000);
	assert_int_equal(c->f.data[q0], 0x41);
	assert_false(c->f.on[VPCI_SRC_CONFIG]); /* config: no vector */
	/* mask the vector: route off; data change while masked is kept */
	wr(c, VPCI_MSIX_TABLE_OFF + 16 + 12, 4, 1);
	assert_false(c->f.on[q0]);
	wr(c, VPCI_MSIX_TABLE_OFF + 16 + 8, 4, 0x42);
	assert_false(c->f.on[q0]);
	/* pending while masked shows in the PBA */
	c->f.pending[q0] = true;
	assert_int_equal(rd(c, VPCI_MSIX_PBA_OFF, 4), 1u << 1);
	wr(c, VPCI_MSIX_TABLE_OFF + 16 + 12, 4, 0);
	assert_true(c->f.on[q0]);
	assert_int_equal(c->f.data[q0], 0x42);
	assert_int_equal(rd(c, VPCI_MSIX_PBA_OFF, 4), 0); /* routed now */
	/* function mask */
	msix_ctl(c, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	assert_false(c->f.on[q0]);
	msix_ctl(c, PCI_MSIX_FLAGS_ENABLE);
	assert_true(c->f.on[q0]);
	/* an out-of-range vector reads back as NO_VECTOR, route off */
	wr(c, VIRTIO_PCI_COMMON_Q_MSIX, 2, NQ + 1);
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_Q_MSIX, 2), VDEV_NO_VECTOR);
	assert_false(c->f.on[q0]);
}

static void test_msix_unchanged_no_callback(void **state)
{
	struct ctx *c = *state;
	int n;

	enable_mem(c);
	program_vector(c, 0, 0x30, false);
	wr(c, VIRTIO_PCI_COMMON_MSIX, 2, 0);
	msix_ctl(c, PCI_MSIX_FLAGS_ENABLE);
	assert_true(c->f.on[VPCI_SRC_CONFIG]);
	n = c->f.routes;
	wr(c, VPCI_MSIX_TABLE_OFF + 8, 4, 0x30); /* same value */
	assert_int_equal(c->f.routes, n);
}

static void test_msix_table_bounds(void **state)
{
	struct ctx *c = *state;

	enable_mem(c);
	/* entries past nvec and the PBA are not writable; no crash */
	wr(c, VPCI_MSIX_TABLE_OFF + 16 * (NQ + 1), 4, 0x1234);
	assert_int_equal(rd(c, VPCI_MSIX_TABLE_OFF + 16 * (NQ + 1), 4), 0);
	wr(c, VPCI_MSIX_PBA_OFF, 4, 0xffffffff);
	assert_int_equal(rd(c, VPCI_MSIX_PBA_OFF, 4), 0);
	/* vector control keeps only the mask bit */
	wr(c, VPCI_MSIX_TABLE_OFF + 12, 4, 0xfffffffe);
	assert_int_equal(rd(c, VPCI_MSIX_TABLE_OFF + 12, 4), 0);
}

static void test_device_cfg_bounds(void **state)
{
	struct ctx *c = *state;

	c->f.cfg[12] = 0xab;
	assert_int_equal(rd(c, VPCI_DEVCFG_OFF + 12, 1), 0xab);
	assert_int_equal(rd(c, VPCI_DEVCFG_OFF + 16, 4), 0); /* past the end */
	wr(c, VPCI_DEVCFG_OFF + 14, 2, 0x5566);
	assert_int_equal(c->f.cfg[14], 0x66);
	wr(c, VPCI_DEVCFG_OFF + 16, 4, 0x1); /* ignored */
	/* misaligned, odd sizes, past the BAR */
	assert_int_equal(rd(c, VPCI_DEVCFG_OFF + 13, 2), 0xffff);
	assert_int_equal(rd(c, VPCI_BAR_SIZE, 4), 0xffffffff);
	uint8_t big[16];
	vpci_bar_read(&c->p, 0, big, 3);
	assert_true(c->p.bad_access > 0);
}

static void test_notify_fallback(void **state)
{
	struct ctx *c = *state;

	wr(c, VPCI_NOTIFY_OFF + VPCI_NOTIFY_MULT, 2, 1);
	assert_int_equal(c->f.notified[1], 1);
	wr(c, VPCI_NOTIFY_OFF + VPCI_NOTIFY_MULT * NQ, 2, NQ); /* no queue */
	assert_int_equal(c->f.notified[0] + c->f.notified[1], 1);
}

static void test_isr_read_clears(void **state)
{
	struct ctx *c = *state;

	vdev_signal_needs_reset(&c->v);
	assert_int_equal(rd(c, VPCI_ISR_OFF, 1), VDEV_ISR_CONFIG);
	assert_int_equal(rd(c, VPCI_ISR_OFF, 1), 0);
	assert_true(rd(c, VIRTIO_PCI_COMMON_STATUS, 1) &
		    VIRTIO_CONFIG_S_NEEDS_RESET);
}

static void test_reset_turns_routes_off(void **state)
{
	struct ctx *c = *state;

	enable_mem(c);
	program_vector(c, 0, 0x30, false);
	wr(c, VIRTIO_PCI_COMMON_MSIX, 2, 0);
	msix_ctl(c, PCI_MSIX_FLAGS_ENABLE);
	assert_true(c->f.on[VPCI_SRC_CONFIG]);
	wr(c, VIRTIO_PCI_COMMON_STATUS, 1, 0);
	assert_false(c->f.on[VPCI_SRC_CONFIG]); /* vector reset to NO_VECTOR */
	assert_int_equal(rd(c, VIRTIO_PCI_COMMON_MSIX, 2), VDEV_NO_VECTOR);
}

static void test_func_helpers(void **state)
{
	struct pci_func f;
	uint8_t cap[4] = { 0x09, 0xff, 4, 0 };

	(void)state;
	pci_func_init(&f, 1, 2, 0x060000, 0, 0, 0);
	assert_int_equal(pci_func_set_bar(&f, 0, 100, false, 0), -EINVAL);
	assert_int_equal(pci_func_set_bar(&f, 0, 8, false, 0), -EINVAL);
	assert_int_equal(pci_func_set_bar(&f, 6, 16, false, 0), -EINVAL);
	assert_int_equal(pci_func_set_bar(&f, 0, 16, false, 8), -EINVAL);
	assert_int_equal(pci_func_set_bar(&f, 1, 16, true, 0x1000), 0);
	assert_int_equal(pci_func_read(&f, PCI_BASE_ADDRESS_1, 4), 0x1001);
	assert_int_equal(pci_func_add_cap(&f, cap, 4), 0x40);
	assert_int_equal(pci_func_read(&f, 0x41, 1), 0); /* next fixed up */
	assert_int_equal(pci_func_add_cap(&f, cap, 4), 0x44);
	assert_int_equal(pci_func_read(&f, 0x41, 1), 0x44);
	for (int i = 0; i < 60; i++)
		pci_func_add_cap(&f, cap, 4);
	assert_int_equal(pci_func_add_cap(&f, cap, 4), -ENOSPC);
}

/* Without an I/O BAR, BAR 2 does not exist and the only notify
 * capability is BAR 0's: a driver never looks for I/O space. */
static void test_no_io_bar(void **state)
{
	struct ctx *c = *state;
	uint64_t off;
	unsigned int n;

	vpci_cfg_write(&c->p, PCI_BASE_ADDRESS_2, 4, 0xffffffff);
	assert_int_equal(vpci_cfg_read(&c->p, PCI_BASE_ADDRESS_2, 4), 0);
	n = find_vcap(c, VIRTIO_PCI_CAP_NOTIFY_CFG);
	assert_int_not_equal(n, 0);
	assert_int_equal(vpci_cfg_read(&c->p, n + 4, 1), 0);
	assert_int_equal(vpci_cfg_read(&c->p, n + 8, 4), VPCI_NOTIFY_OFF);
	assert_int_equal(find_vcap_nth(c, VIRTIO_PCI_CAP_NOTIFY_CFG, 1), 0);
	vpci_cfg_write(&c->p, PCI_COMMAND, 2,
		       PCI_COMMAND_IO | PCI_COMMAND_MEMORY);
	assert_false(vpci_io_hit(&c->p, 0, &off));
	assert_false(c->f.io_mapped);
	assert_int_equal(c->f.io_maps, 0);
	assert_true(c->f.mapped); /* BAR 0's area decodes */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(test_ids_and_header),
		T(test_bar_sizing),
		T(test_decode_off_until_enabled),
		T(test_io_bar_decode),
		T(test_io_notify),
		T(test_virtio_caps),
		T(test_common_cfg),
		T(test_features_ok_refused_over_pci),
		T(test_bus_master_gates_dma),
		T(test_intx_mode),
		T(test_msix_routes),
		T(test_msix_unchanged_no_callback),
		T(test_msix_table_bounds),
		T(test_device_cfg_bounds),
		T(test_notify_fallback),
		T(test_isr_read_clears),
		T(test_config_generation),
		T(test_reset_turns_routes_off),
		cmocka_unit_test_setup_teardown(test_no_io_bar, setup_no_io,
						teardown),
		cmocka_unit_test(test_func_helpers),
#undef T
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("pci", tests, NULL, NULL);
}
