/* Fuzz the whole device as a guest sees it: a RAM disk behind the
 * virtio-pci transport (virtio/pci.c, virtio/vdev.c), driven by PCI
 * config writes and BAR 0 / I/O BAR accesses, with a driver that writes
 * mostly-valid virtio-blk chains into fake guest RAM (guard pages on
 * both sides), some of them mutated.  The disk's queues are served on
 * this thread (blk_dev_set_sync, blk_dev_serve): no iothread, no wait.
 * Checks, while the input made no raw register write:
 *
 *  - every head made available on an enabled queue comes back once the
 *    device is served, unless the ring was broken (DEVICE_NEEDS_RESET);
 *  - a batch without mutations comes back with a valid
 *    status byte for every request (no valid chain is called bad);
 *  - at a reset every popped head was pushed (never loses a head), the
 *    device needed a reset exactly when a ring error was counted, and,
 *    when no chain was mutated since the rings were laid out, a canary
 *    in guest RAM is intact (a mutated chain may point the device
 *    anywhere in guest RAM: see fz_mutate).
 *
 * Input: a config byte, then operations (at most FZ_MAX_OPS).
 *   config: bits 0-1 queue size 4 << n, bit 2 EVENT_IDX, bit 3
 *   INDIRECT_DESC, bit 4 DISCARD/WRITE_ZEROES, bit 5 batch=on, bit 6
 *   both queues enabled (else queue 0 only), bit 7 MSI-X on (else INTx)
 *   op: bits 0-2 kind (IN, OUT, FLUSH, GET_ID, DISCARD, WRITE_ZEROES,
 *       unknown, or 7: a transport operation), bit 3 indirect, bits 4-5
 *       data segments, bit 6 make everything available, kick and serve,
 *       bit 7 mutate
 *   then: sector byte; length byte (bits 0-1 n: n * 512 bytes per
 *       segment, or for n = 0 bits 2-7 bytes); for DISCARD and
 *       WRITE_ZEROES 16 payload bytes; for a mutation a kind byte and a
 *       32-bit little-endian value.
 *   A transport operation (kind 7) takes a byte t, then by t % 8:
 *     0 reset (status 0) and set the device up again; 1 requests go to
 *     the other queue; 2 kick through the I/O BAR and serve; 3 Bus
 *     Master Enable off, serve, on again; 4 read ISR, device config and
 *     common config; 5 a raw BAR 0 write: 16-bit offset, 64-bit value,
 *     size 1 << (t >> 3 & 3); 6 a raw config space write: offset byte,
 *     32-bit value; 7 a raw MSI-X table write: entry byte, value.
 */
#include <linux/pci_regs.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "blk/blk.h"
#include "tests/fuzz/fuzz.h"
#include "tests/support/driver.h"
#include "tests/support/fakemem.h"
#include "virtio/pci.h"
#include "virtio/vdev.h"

#define FZ_RAM (512u << 10)
#define FZ_DISK (64u << 10)
#define FZ_MAX_OPS 96
#define FZ_SEG 1536u
#define FZ_SLOT (3 * FZ_SEG)
#define FZ_QMAX 32
#define FZ_NQ 2
#define FZ_TBL 8 /* indirect entries per head */
#define FZ_CANARY 4096u
#define FZ_BAR 0xe0000000u
#define FZ_IO 0xc000u

/* One disk and its transport; two of them, batch=off and on. */
struct fzdev {
	struct blk_dev *blk;
	struct vdev v;
	struct vpci p;
	unsigned int kicks;
};

struct fzd {
	struct fakemem fm;
	struct fzdev d[2];
	int kick_fd[FZ_NQ], call_fd[FZ_NQ];
};

/* The driver's side of one queue. */
struct fzq {
	struct drv_vq drv;
	bool on;            /* enabled by the driver */
	uint16_t avail;     /* entries made available */
	uint16_t published; /* avail->idx as last stored */
	uint16_t checked;   /* used entries looked at */
	uint16_t next_desc; /* descriptor allocator, reset per batch */
	bool mutated;       /* this batch has a mutation */
	uint64_t hdr, status, tables, bufs; /* gpas */
};

static uint8_t fz_canary[FZ_CANARY]; /* what the canary holds */

/* One input's run. */
struct run {
	struct fzd *g;
	struct fzdev *d;
	uint8_t cfg;
	uint16_t size;
	bool indirect, dwz;
	struct fzq q[FZ_NQ];
	unsigned int cur;   /* the queue requests go to */
	bool raw;           /* a raw register write: checks off */
	uint64_t canary;
	bool mutated;       /* a chain was mutated since fz_layout */
	struct blk_stats base;
	const uint8_t *p, *end; /* the rest of the input */
};

static void fz_irq_route(void *opaque, unsigned int src, bool on,
			 uint64_t addr, uint32_t data)
{
	(void)opaque;
	(void)src;
	(void)on;
	(void)addr;
	(void)data;
}

static void fz_notify(void *opaque, unsigned int q)
{
	struct fzdev *d = opaque;

	(void)q;
	d->kicks++;
}

static void fz_config_irq(void *opaque)
{
	(void)opaque;
}

static struct fzd *fz_global(void)
{
	static struct fzd g;
	static bool ready;
	char msg[128];

	if (ready)
		return &g;
	memset(fz_canary, 0xc5, FZ_CANARY);
	if (fakemem_create(&g.fm, 0x100000, FZ_RAM))
		abort();
	for (int i = 0; i < FZ_NQ; i++) {
		g.kick_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		g.call_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (g.kick_fd[i] < 0 || g.call_fd[i] < 0)
			abort();
	}
	for (int i = 0; i < 2; i++) {
		struct blk_opts o = { .ram_size = FZ_DISK, .batch = i,
				      .queues = FZ_NQ };
		struct fzdev *d = &g.d[i];
		struct vpci_cb cb = { .opaque = d, .irq_route = fz_irq_route,
				      .notify = fz_notify };

		if (blk_dev_create(&o, &d->blk, msg, sizeof(msg)))
			abort();
		blk_dev_set_sync(d->blk);
		if (vdev_init(&d->v, &blk_dev_ops, d->blk, &g.fm.gm,
			      fz_config_irq, d) ||
		    vpci_init(&d->p, &d->v, &cb, FZ_BAR, FZ_IO))
			abort();
		for (int q = 0; q < FZ_NQ; q++) {
			d->v.q[q].kick_fd = g.kick_fd[q];
			d->v.q[q].call_fd = g.call_fd[q];
		}
	}
	ready = true;
	return &g;
}

static uint8_t fz_byte(struct run *r)
{
	return r->p < r->end ? *r->p++ : 0;
}

static uint32_t fz_u32(struct run *r)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t)fz_byte(r) << (8 * i);
	return v;
}

static void *fz_hva(struct run *r, uint64_t gpa)
{
	return fakemem_hva(&r->g->fm, gpa);
}

/* --- registers ---------------------------------------------------------- */

static void fz_w(struct run *r, uint32_t off, unsigned int size, uint32_t v)
{
	vpci_bar_write(&r->d->p, off, &v, size);
}

static uint32_t fz_r(struct run *r, uint32_t off, unsigned int size)
{
	uint32_t v = 0;

	vpci_bar_read(&r->d->p, off, &v, size);
	return v;
}

static uint8_t fz_status(struct run *r)
{
	return (uint8_t)fz_r(r, VIRTIO_PCI_COMMON_STATUS, 1);
}

static bool fz_needs_reset(struct run *r)
{
	return fz_status(r) & VIRTIO_CONFIG_S_NEEDS_RESET;
}

/* --- setup ---------------------------------------------------------------- */

static uint64_t fz_alloc(struct run *r, size_t len)
{
	uint64_t gpa = fakemem_alloc(&r->g->fm, len, 64);

	CHECK(gpa);
	return gpa;
}

/* Fresh rings: canary first, then both queues' rings, their headers,
 * status bytes and tables, and last their data buffers.  Only what lies
 * below the buffers is cleared (the data in them does not matter). */
static void fz_layout(struct run *r)
{
	struct fakemem *fm = &r->g->fm;
	unsigned int i;

	fakemem_reset_alloc(fm);
	r->mutated = false;
	r->canary = fz_alloc(r, FZ_CANARY);
	for (i = 0; i < FZ_NQ; i++) {
		memset(&r->q[i], 0, sizeof(r->q[i]));
		CHECK(drv_vq_init(&r->q[i].drv, fm, r->size, r->cfg & 4) == 0);
	}
	for (i = 0; i < FZ_NQ; i++) {
		r->q[i].hdr = fz_alloc(r, 16u * FZ_QMAX);
		r->q[i].status = fz_alloc(r, FZ_QMAX);
		r->q[i].tables = fz_alloc(r, 16u * FZ_TBL * FZ_QMAX);
	}
	memset(fm->base, 0, fm->brk);
	memset(fz_hva(r, r->canary), 0xc5, FZ_CANARY);
	for (i = 0; i < FZ_NQ; i++)
		r->q[i].bufs = fz_alloc(r, (size_t)FZ_SLOT * FZ_QMAX);
}

/* What a driver does at probe: PCI command, MSI-X, status, features,
 * queues, DRIVER_OK; all through the registers. */
static void fz_setup(struct run *r)
{
	uint64_t f, want = 1ull << VIRTIO_F_VERSION_1 |
			   1ull << VIRTIO_BLK_F_FLUSH |
			   1ull << VIRTIO_BLK_F_SEG_MAX |
			   1ull << VIRTIO_BLK_F_BLK_SIZE |
			   1ull << VIRTIO_BLK_F_MQ;
	struct vpci *p = &r->d->p;

	fz_layout(r);
	vpci_cfg_write(p, PCI_COMMAND, 2, PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
		       PCI_COMMAND_MASTER);
	if (r->cfg & 0x80) {
		vpci_cfg_write(p, p->msix_cap + PCI_MSIX_FLAGS, 2,
			       PCI_MSIX_FLAGS_ENABLE);
		for (unsigned int i = 0; i <= FZ_NQ; i++) {
			uint32_t e = VPCI_MSIX_TABLE_OFF + 16 * i;

			fz_w(r, e + PCI_MSIX_ENTRY_LOWER_ADDR, 4, 0xfee00000);
			fz_w(r, e + PCI_MSIX_ENTRY_DATA, 4, 0x40 + i);
			fz_w(r, e + PCI_MSIX_ENTRY_VECTOR_CTRL, 4, 0);
		}
	}
	fz_w(r, VIRTIO_PCI_COMMON_STATUS, 1, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	fz_w(r, VIRTIO_PCI_COMMON_STATUS, 1, VIRTIO_CONFIG_S_ACKNOWLEDGE |
	     VIRTIO_CONFIG_S_DRIVER);
	fz_w(r, VIRTIO_PCI_COMMON_DFSELECT, 4, 0);
	f = fz_r(r, VIRTIO_PCI_COMMON_DF, 4);
	fz_w(r, VIRTIO_PCI_COMMON_DFSELECT, 4, 1);
	f |= (uint64_t)fz_r(r, VIRTIO_PCI_COMMON_DF, 4) << 32;
	if (r->cfg & 4)
		want |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	if (r->indirect)
		want |= 1ull << VIRTIO_RING_F_INDIRECT_DESC;
	if (r->dwz)
		want |= 1ull << VIRTIO_BLK_F_DISCARD |
			1ull << VIRTIO_BLK_F_WRITE_ZEROES;
	f &= want;
	fz_w(r, VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
	fz_w(r, VIRTIO_PCI_COMMON_GF, 4, (uint32_t)f);
	fz_w(r, VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	fz_w(r, VIRTIO_PCI_COMMON_GF, 4, (uint32_t)(f >> 32));
	fz_w(r, VIRTIO_PCI_COMMON_STATUS, 1, VIRTIO_CONFIG_S_ACKNOWLEDGE |
	     VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK(fz_status(r) & VIRTIO_CONFIG_S_FEATURES_OK);
	if (r->cfg & 0x80)
		fz_w(r, VIRTIO_PCI_COMMON_MSIX, 2, 0);
	for (unsigned int i = 0; i < FZ_NQ; i++) {
		struct fzq *q = &r->q[i];
		uint64_t a[3];

		q->on = i == 0 || (r->cfg & 0x40);
		if (!q->on)
			continue;
		drv_vq_addrs(&q->drv, &a[0], &a[1], &a[2]);
		fz_w(r, VIRTIO_PCI_COMMON_Q_SELECT, 2, i);
		fz_w(r, VIRTIO_PCI_COMMON_Q_SIZE, 2, r->size);
		if (r->cfg & 0x80)
			fz_w(r, VIRTIO_PCI_COMMON_Q_MSIX, 2, 1 + i);
		for (unsigned int k = 0; k < 3; k++) {
			uint32_t off = VIRTIO_PCI_COMMON_Q_DESCLO + 8 * k;

			fz_w(r, off, 4, (uint32_t)a[k]);
			fz_w(r, off + 4, 4, (uint32_t)(a[k] >> 32));
		}
		fz_w(r, VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	}
	blk_dev_stats(r->d->blk, &r->base);
	fz_w(r, VIRTIO_PCI_COMMON_STATUS, 1, VIRTIO_CONFIG_S_ACKNOWLEDGE |
	     VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
	     VIRTIO_CONFIG_S_DRIVER_OK);
	CHECK(fz_status(r) & VIRTIO_CONFIG_S_DRIVER_OK);
	CHECK(!fz_needs_reset(r));
	r->cur = 0;
}

/* --- batches ---------------------------------------------------------- */

static uint16_t fz_used_idx(struct fzq *q)
{
	return __atomic_load_n(&q->drv.used->idx, __ATOMIC_ACQUIRE);
}

/* Look at the used entries of a batch. */
static void fz_check_used(struct run *r, struct fzq *q)
{
	uint16_t upto = fz_used_idx(q);

	for (; q->checked != upto; q->checked++) {
		const struct vring_used_elem *u =
			&q->drv.used->ring[q->checked % r->size];
		uint8_t st;

		CHECK(u->id < r->size);
		if (q->mutated || r->raw)
			continue;
		st = *(uint8_t *)fz_hva(r, q->status + u->id);
		CHECK(st == VIRTIO_BLK_S_OK || st == VIRTIO_BLK_S_IOERR ||
		      st == VIRTIO_BLK_S_UNSUPP);
	}
}

/* Publish what each queue has, kick (through BAR 0, or the I/O BAR),
 * serve, and check that it all came back unless the ring broke. */
static void fz_flush(struct run *r, bool io)
{
	for (unsigned int i = 0; i < FZ_NQ; i++) {
		struct fzq *q = &r->q[i];
		uint16_t n = (uint16_t)i;

		if (q->published == q->avail)
			continue;
		/* Release: descriptors and ring entries before the index. */
		__atomic_store_n(&q->drv.avail->idx, q->avail,
				 __ATOMIC_RELEASE);
		q->published = q->avail;
		if (io)
			vpci_io_write(&r->d->p, VPCI_NOTIFY_MULT * i, &n, 2);
		else
			fz_w(r, VPCI_NOTIFY_OFF + VPCI_NOTIFY_MULT * i, 2, i);
	}
	blk_dev_serve(r->d->blk);
	for (unsigned int i = 0; i < FZ_NQ; i++) {
		struct fzq *q = &r->q[i];

		if (!r->raw && q->on && !fz_needs_reset(r))
			CHECK(fz_used_idx(q) == q->avail); /* a lost head */
		fz_check_used(r, q);
		q->next_desc = 0;
		q->mutated = false;
	}
}

/* --- requests --------------------------------------------------------- */

static const uint32_t fz_types[7] = {
	VIRTIO_BLK_T_IN,
	VIRTIO_BLK_T_OUT,
	VIRTIO_BLK_T_FLUSH,
	VIRTIO_BLK_T_GET_ID,
	VIRTIO_BLK_T_DISCARD,
	VIRTIO_BLK_T_WRITE_ZEROES,
	0x7f, /* unknown */
};

struct req {
	uint8_t op;
	uint32_t type;
	uint16_t head;
	uint64_t sector;
	unsigned int nseg, ndesc;
	uint32_t seglen;
	bool indirect;
	struct vring_desc d[3 + 2]; /* the chain, before it is written */
};

static void fz_chain(struct fzq *fq, struct run *r, struct req *q,
		     const uint8_t *payload)
{
	bool w = q->type == VIRTIO_BLK_T_IN || q->type == VIRTIO_BLK_T_GET_ID;
	uint64_t data = fq->bufs + (uint64_t)FZ_SLOT * q->head;
	unsigned int n = 0;

	q->d[n++] = (struct vring_desc){ fq->hdr + 16u * q->head, 16, 0, 0 };
	for (unsigned int k = 0; k < q->nseg; k++) {
		uint16_t fl = w ? VRING_DESC_F_WRITE : 0;

		q->d[n++] = (struct vring_desc){ data + FZ_SEG * k, q->seglen,
						 fl, 0 };
	}
	if (payload) {
		q->d[1].len = 16;
		memcpy(fz_hva(r, data), payload, 16);
	}
	q->d[n++] = (struct vring_desc){ fq->status + q->head, 1,
					 VRING_DESC_F_WRITE, 0 };
	q->ndesc = n;
}

/* Write the chain: direct descriptors head.., or a table for head. */
static void fz_write_chain(struct fzq *fq, struct run *r, struct req *q)
{
	struct vring_desc *t = q->indirect ? fz_hva(r, fq->tables +
				16u * FZ_TBL * q->head) : fq->drv.desc;
	uint16_t base = q->indirect ? 0 : q->head;

	for (unsigned int k = 0; k < q->ndesc; k++) {
		t[base + k] = q->d[k];
		if (k + 1 < q->ndesc) {
			t[base + k].flags |= VRING_DESC_F_NEXT;
			t[base + k].next = (uint16_t)(base + k + 1);
		}
	}
	if (q->indirect)
		fq->drv.desc[q->head] = (struct vring_desc){
			fq->tables + 16u * FZ_TBL * q->head, 16 * q->ndesc,
			VRING_DESC_F_INDIRECT, 0 };
}

static void fz_put_avail(struct run *r, struct fzq *q, uint16_t head)
{
	q->drv.avail->ring[q->avail++ % r->size] = head;
}

/* Mutations never move a buffer below where it was (an address is
 * bufs + v, a length only grows a buffer upwards), but a grown buffer
 * may reach the guest's own tables: a status descriptor grown by 0x100
 * has the device write its status byte into the next head's table,
 * and a stale head made available again then points the device at the
 * canary, as a guest may.  So the canary is checked only while no chain
 * was mutated (fz_reset). */
static void fz_mutate(struct run *r, struct fzq *fq, struct req *q,
		      uint8_t m, uint32_t v)
{
	unsigned int which = (m / 10u) % q->ndesc;
	struct vring_desc *d = q->indirect ? &fq->drv.desc[q->head]
					   : &fq->drv.desc[q->head + which];
	struct vring_desc *t = fz_hva(r, fq->tables + 16u * FZ_TBL * q->head);
	uint32_t *h = fz_hva(r, fq->hdr + 16u * q->head);

	fq->mutated = true;
	r->mutated = true;
	switch (m % 10) {
	case 0: d->addr = fq->bufs + v; break;
	case 1: d->len = v; break;
	case 2: d->flags ^= (uint16_t)v; break;
	case 3: d->next = (uint16_t)v; break;
	case 4: h[0] = v; break;
	case 5: h[2] = v; h[3] = v >> 16; break;
	case 6: fq->drv.avail->ring[(fq->avail - 1) % r->size] = (uint16_t)v;
		break;
	case 7: fq->avail = (uint16_t)(fq->avail + (v & 0xff)); break;
	case 8: t[which].next = (uint16_t)(v & 0xff);
		t[which].flags ^= (uint16_t)((v >> 8) & 7);
		t[which].len ^= v >> 16;
		break;
	default: fz_put_avail(r, fq, q->head); break;
	}
}

static void fz_read_req(struct run *r, struct req *q, uint8_t op)
{
	uint8_t sector = fz_byte(r), lc = fz_byte(r);

	q->op = op;
	q->type = fz_types[op & 7];
	q->indirect = (op & 8) && r->indirect;
	q->nseg = (op >> 4) & 3;
	q->seglen = lc & 3 ? 512u * (lc & 3) : lc >> 2;
	if (!q->indirect && q->nseg + 2 > r->size)
		q->nseg = r->size - 2u;
	if (q->type == VIRTIO_BLK_T_DISCARD ||
	    q->type == VIRTIO_BLK_T_WRITE_ZEROES)
		q->nseg = q->nseg ? 1 : 0;
	q->sector = sector;
}

static void fz_add(struct run *r, uint8_t op)
{
	struct fzq *fq = &r->q[r->cur];
	struct req q;
	uint8_t payload[16];
	bool dwz;
	unsigned int need;

	memset(&q, 0, sizeof(q));
	fz_read_req(r, &q, op);
	dwz = q.type == VIRTIO_BLK_T_DISCARD ||
	      q.type == VIRTIO_BLK_T_WRITE_ZEROES;
	for (unsigned int i = 0; dwz && i < 16; i++)
		payload[i] = fz_byte(r);
	need = q.indirect ? 1 : q.nseg + 2;
	if (fq->next_desc + need > r->size)
		fz_flush(r, false);
	q.head = fq->next_desc;
	fq->next_desc = (uint16_t)(fq->next_desc + need);
	fz_chain(fq, r, &q, dwz && q.nseg ? payload : NULL);
	memcpy(fz_hva(r, fq->hdr + 16u * q.head), &q.type, 4);
	memset(fz_hva(r, fq->hdr + 16u * q.head + 4), 0, 4);
	memcpy(fz_hva(r, fq->hdr + 16u * q.head + 8), &q.sector, 8);
	*(uint8_t *)fz_hva(r, fq->status + q.head) = 0xff;
	fz_write_chain(fq, r, &q);
	fz_put_avail(r, fq, q.head);
	if (op & 0x80) {
		uint8_t m = fz_byte(r);

		fz_mutate(r, fq, &q, m, fz_u32(r));
	}
	if (op & 0x40)
		fz_flush(r, false);
}

/* --- the run ------------------------------------------------------------- */

/* Reset (status 0), then the checks a reset allows. */
static void fz_reset(struct run *r)
{
	struct blk_stats s;
	const uint8_t *c = fz_hva(r, r->canary);
	uint64_t used = 0;

	fz_w(r, VIRTIO_PCI_COMMON_STATUS, 1, 0);
	CHECK(fz_status(r) == 0);
	if (r->raw)
		return;
	blk_dev_stats(r->d->blk, &s);
	for (unsigned int i = 0; i < FZ_NQ; i++)
		used += fz_used_idx(&r->q[i]);
	/* Never loses a head: every popped head is in a used ring. */
	CHECK(s.requests - r->base.requests == used);
	CHECK(r->mutated || !memcmp(c, fz_canary, FZ_CANARY));
}

static void fz_transport(struct run *r, uint8_t t)
{
	struct vpci *p = &r->d->p;
	uint8_t buf[8];
	uint64_t v64;
	uint32_t v;
	unsigned int off;

	switch (t % 8) {
	case 0:
		fz_reset(r);
		fz_setup(r);
		break;
	case 1:
		if (r->q[r->cur ^ 1].on) {
			fz_flush(r, false);
			r->cur ^= 1;
		}
		break;
	case 2:
		fz_flush(r, true);
		break;
	case 3:
		fz_flush(r, false);
		vpci_cfg_write(p, PCI_COMMAND, 2, PCI_COMMAND_IO |
			       PCI_COMMAND_MEMORY);
		blk_dev_serve(r->d->blk);
		vpci_cfg_write(p, PCI_COMMAND, 2, PCI_COMMAND_IO |
			       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
		break;
	case 4:
		(void)fz_r(r, VPCI_ISR_OFF, 1);
		for (off = 0; off < 64; off += 4) {
			(void)fz_r(r, VPCI_DEVCFG_OFF + off, 4);
			(void)fz_r(r, VIRTIO_PCI_COMMON_DFSELECT + off, 4);
		}
		vpci_bar_read(p, VPCI_MSIX_PBA_OFF, buf, 8);
		for (off = 0; off < PCI_CFG_SPACE; off += 4)
			(void)vpci_cfg_read(p, off, 4);
		break;
	case 5:
		off = fz_byte(r);
		off |= (unsigned int)fz_byte(r) << 8;
		v64 = fz_u32(r);
		v64 |= (uint64_t)fz_u32(r) << 32;
		r->raw = true;
		vpci_bar_write(p, off & (VPCI_BAR_SIZE - 1), &v64,
			       1u << (t >> 3 & 3));
		blk_dev_serve(r->d->blk);
		break;
	case 6:
		off = fz_byte(r);
		v = fz_u32(r);
		r->raw = true;
		vpci_cfg_write(p, off & ~3u, 4 >> (t >> 3 & 2), v);
		blk_dev_serve(r->d->blk);
		break;
	default:
		off = fz_byte(r);
		v = fz_u32(r);
		/* The MSI-X table is the guest's to write: no check off. */
		fz_w(r, VPCI_MSIX_TABLE_OFF + (off & 0x3c), 4, v);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;
	unsigned int ops = 0;

	if (size < 1)
		return 0;
	memset(&r, 0, sizeof(r));
	r.g = fz_global();
	r.cfg = data[0];
	r.size = (uint16_t)(4u << (r.cfg & 3));
	r.indirect = r.cfg & 8;
	r.dwz = r.cfg & 16;
	r.d = &r.g->d[!!(r.cfg & 32)];
	r.p = data + 1;
	r.end = data + size;
	vpci_reset(&r.d->p);
	fz_setup(&r);
	while (r.p < r.end && ops++ < FZ_MAX_OPS) {
		uint8_t op = fz_byte(&r);

		if ((op & 7) == 7)
			fz_transport(&r, fz_byte(&r));
		else
			fz_add(&r, op);
	}
	if (!r.raw)
		fz_flush(&r, false);
	fz_reset(&r);
	/* Whatever the registers were left as, the next input starts from
	 * power-on: a reset, and every register a raw write may have
	 * changed back as vpci_init left it. */
	vpci_cfg_write(&r.d->p, PCI_COMMAND, 2, 0);
	return 0;
}
