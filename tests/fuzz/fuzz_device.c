/* Fuzz the whole device: a RAM disk, one queue served by a real iothread,
 * and a driver that writes mostly-valid virtio-blk chains into fake guest
 * RAM (guard pages on both sides), some of them mutated.  Checks:
 *
 *  - every head made available comes back, unless the ring was broken
 *    and then the reset hook ran; nothing hangs;
 *  - a batch without mutations comes back with used.len >= 1 and a valid
 *    status byte for every request (no valid chain is called bad);
 *  - after blk_dev_ops.reset() every popped head was pushed (never loses a
 *    head), and a canary in guest RAM is intact.
 *
 * Input: a config byte, then operations (at most FZ_MAX_OPS).
 *   config: bits 0-1 queue size 4 << n, bit 2 EVENT_IDX, bit 3
 *   INDIRECT_DESC, bit 4 DISCARD/WRITE_ZEROES, bit 5 batch=on
 *   op: bits 0-2 kind (IN, OUT, FLUSH, GET_ID, DISCARD, WRITE_ZEROES,
 *       unknown, IN), bit 3 indirect, bits 4-5 data segments, bit 6 make
 *       everything available and wait, bit 7 mutate
 *   then: sector byte; length byte (bits 0-1 n: n * 512 bytes per
 *       segment, or for n = 0 bits 2-7 bytes); for DISCARD and
 *       WRITE_ZEROES 16 payload bytes; for a mutation a kind byte and a
 *       32-bit little-endian value.
 */
#include <errno.h>
#include <linux/virtio_config.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "blk/blk.h"
#include "tests/support/driver.h"
#include "tests/fuzz/fuzz.h"
#include "tests/support/fakemem.h"

#define FZ_RAM (512u << 10)
#define FZ_DISK (64u << 10)
#define FZ_MAX_OPS 64
#define FZ_SEG 1536u
#define FZ_SLOT (3 * FZ_SEG)
#define FZ_QMAX 32
#define FZ_TBL 8 /* indirect entries per head */
#define FZ_CANARY 4096u
#define FZ_WAIT_MS 5000

struct fzd {
	struct fakemem fm;
	struct blk_dev *dev[2]; /* batch off, on */
	int kick_fd, call_fd;
	unsigned int resets;
};

/* One input's run. */
struct run {
	struct fzd *g;
	struct blk_dev *dev;
	struct drv_vq drv;
	uint16_t size;
	bool indirect, dwz;
	uint64_t hdr, status, tables, bufs, canary; /* gpas */
	uint16_t avail;     /* entries made available */
	uint16_t published; /* avail->idx as last stored */
	uint16_t checked;   /* used entries looked at */
	uint16_t next_desc; /* descriptor allocator, reset per batch */
	bool mutated;       /* this batch has a mutation */
	bool broken;
	unsigned int resets0;
	struct blk_stats base;
	const uint8_t *p, *end; /* the rest of the input */
};

static void fz_reset_hook(void *opaque)
{
	struct fzd *g = opaque;

	__atomic_add_fetch(&g->resets, 1, __ATOMIC_SEQ_CST);
}

static struct fzd *fz_global(void)
{
	static struct fzd g;
	static bool ready;
	char msg[128];

	if (ready)
		return &g;
	if (fakemem_create(&g.fm, 0x100000, FZ_RAM))
		abort();
	for (int i = 0; i < 2; i++) {
		struct blk_opts o = { .ram_size = FZ_DISK, .batch = i,
				      .queues = 1 };

		if (blk_dev_create(&o, &g.dev[i], msg, sizeof(msg)))
			abort();
	}
	g.kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g.call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g.kick_fd < 0 || g.call_fd < 0)
		abort();
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

/* --- setup ---------------------------------------------------------------- */

static uint64_t fz_alloc(struct run *r, size_t len)
{
	uint64_t gpa = fakemem_alloc(&r->g->fm, len, 64);

	CHECK(gpa);
	return gpa;
}

static void fz_layout(struct run *r)
{
	struct fakemem *fm = &r->g->fm;

	fakemem_reset_alloc(fm);
	memset(fm->base, 0, fm->size);
	CHECK(drv_vq_init(&r->drv, fm, r->size, true) == 0);
	/* Rings and canary first: a mutated chain may point the device at
	 * any buffer from hdr upwards (see fz_mutate), never below. */
	r->canary = fz_alloc(r, FZ_CANARY);
	r->hdr = fz_alloc(r, 16u * FZ_QMAX);
	r->status = fz_alloc(r, FZ_QMAX);
	r->tables = fz_alloc(r, 16u * FZ_TBL * FZ_QMAX);
	r->bufs = fz_alloc(r, (size_t)FZ_SLOT * FZ_QMAX);
	memset(fz_hva(r, r->canary), 0xc5, FZ_CANARY);
}

static void fz_start(struct run *r, uint8_t cfg)
{
	struct vdev_queue c = { .size = r->size, .enabled = true,
				.kick_fd = r->g->kick_fd,
				.call_fd = r->g->call_fd };
	struct vdev_activation a = { .mem = &r->g->fm.gm, .q = &c, .nq = 1,
				     .needs_reset = fz_reset_hook,
				     .opaque = r->g };
	uint64_t f = blk_dev_ops.features(r->dev);

	if (!(cfg & 4))
		f &= ~(1ull << VIRTIO_RING_F_EVENT_IDX);
	if (!r->indirect)
		f &= ~(1ull << VIRTIO_RING_F_INDIRECT_DESC);
	if (!r->dwz)
		f &= ~(1ull << VIRTIO_BLK_F_DISCARD |
		       1ull << VIRTIO_BLK_F_WRITE_ZEROES);
	drv_vq_addrs(&r->drv, &c.desc, &c.avail, &c.used);
	blk_dev_stats(r->dev, &r->base);
	r->resets0 = __atomic_load_n(&r->g->resets, __ATOMIC_SEQ_CST);
	a.features = f;
	CHECK(blk_dev_ops.activate(r->dev, &a) == 0);
}

/* --- batches ---------------------------------------------------------- */

static uint16_t fz_used_idx(struct run *r)
{
	/* Acquire: used elements and status bytes after the index. */
	return __atomic_load_n(&r->drv.used->idx, __ATOMIC_ACQUIRE);
}

static bool fz_reset_seen(struct run *r)
{
	return __atomic_load_n(&r->g->resets, __ATOMIC_SEQ_CST) != r->resets0;
}

/* Look at the used entries of a batch. */
static void fz_check_used(struct run *r, uint16_t upto)
{
	for (; r->checked != upto; r->checked++) {
		const struct vring_used_elem *u =
			&r->drv.used->ring[r->checked % r->size];
		uint8_t st;

		CHECK(u->id < r->size);
		if (r->mutated)
			continue;
		st = *(uint8_t *)fz_hva(r, r->status + u->id);
		CHECK(st == VIRTIO_BLK_S_OK || st == VIRTIO_BLK_S_IOERR ||
		      st == VIRTIO_BLK_S_UNSUPP);
	}
}

/* Make everything available, kick, and wait until it all came back or
 * the ring was declared broken. */
static void fz_flush(struct run *r)
{
	struct timespec ts = { 0, 20 * 1000 };
	uint64_t one = 1;
	int i;

	if (r->published != r->avail) {
		/* Release: descriptors and ring entries before the index. */
		__atomic_store_n(&r->drv.avail->idx, r->avail,
				 __ATOMIC_RELEASE);
		r->published = r->avail;
		(void)!write(r->g->kick_fd, &one, sizeof(one));
	}
	for (i = 0; i < FZ_WAIT_MS * 50; i++) {
		if (fz_used_idx(r) == r->avail)
			break;
		if (fz_reset_seen(r)) {
			r->broken = true;
			return;
		}
		nanosleep(&ts, NULL);
	}
	CHECK(fz_used_idx(r) == r->avail); /* a lost head, or a hang */
	fz_check_used(r, r->avail);
	r->next_desc = 0;
	r->mutated = false;
}

/* --- requests --------------------------------------------------------- */

static const uint32_t fz_types[8] = {
	VIRTIO_BLK_T_IN,
	VIRTIO_BLK_T_OUT,
	VIRTIO_BLK_T_FLUSH,
	VIRTIO_BLK_T_GET_ID,
	VIRTIO_BLK_T_DISCARD,
	VIRTIO_BLK_T_WRITE_ZEROES,
	0x7f, /* unknown */
	VIRTIO_BLK_T_IN,
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

static void fz_chain(struct run *r, struct req *q, const uint8_t *payload)
{
	bool w = q->type == VIRTIO_BLK_T_IN || q->type == VIRTIO_BLK_T_GET_ID;
	uint64_t data = r->bufs + (uint64_t)FZ_SLOT * q->head;
	unsigned int n = 0;

	q->d[n++] = (struct vring_desc){ r->hdr + 16u * q->head, 16, 0, 0 };
	for (unsigned int k = 0; k < q->nseg; k++) {
		uint16_t fl = w ? VRING_DESC_F_WRITE : 0;

		q->d[n++] = (struct vring_desc){ data + FZ_SEG * k, q->seglen,
						 fl, 0 };
	}
	if (payload) {
		q->d[1].len = 16;
		memcpy(fz_hva(r, data), payload, 16);
	}
	q->d[n++] = (struct vring_desc){ r->status + q->head, 1,
					 VRING_DESC_F_WRITE, 0 };
	q->ndesc = n;
}

/* Write the chain: direct descriptors head.., or a table for head. */
static void fz_write_chain(struct run *r, struct req *q)
{
	struct vring_desc *t = q->indirect ? fz_hva(r, r->tables +
				16u * FZ_TBL * q->head) : r->drv.desc;
	uint16_t base = q->indirect ? 0 : q->head;

	for (unsigned int k = 0; k < q->ndesc; k++) {
		t[base + k] = q->d[k];
		if (k + 1 < q->ndesc) {
			t[base + k].flags |= VRING_DESC_F_NEXT;
			t[base + k].next = (uint16_t)(base + k + 1);
		}
	}
	if (q->indirect)
		r->drv.desc[q->head] = (struct vring_desc){
			r->tables + 16u * FZ_TBL * q->head, 16 * q->ndesc,
			VRING_DESC_F_INDIRECT, 0 };
}

static void fz_put_avail(struct run *r, uint16_t head)
{
	r->drv.avail->ring[r->avail++ % r->size] = head;
}

/* Mutations never move a buffer below r->hdr (an address is bufs + v, a
 * length only grows a buffer upwards), so the device's writes cannot
 * reach the rings or the canary: what the checks rely on stays ours. */
static void fz_mutate(struct run *r, struct req *q, uint8_t m, uint32_t v)
{
	unsigned int which = (m / 10u) % q->ndesc;
	struct vring_desc *d = q->indirect ? &r->drv.desc[q->head]
					   : &r->drv.desc[q->head + which];
	struct vring_desc *t = fz_hva(r, r->tables + 16u * FZ_TBL * q->head);
	uint32_t *h = fz_hva(r, r->hdr + 16u * q->head);

	r->mutated = true;
	switch (m % 10) {
	case 0: d->addr = r->bufs + v; break;
	case 1: d->len = v; break;
	case 2: d->flags ^= (uint16_t)v; break;
	case 3: d->next = (uint16_t)v; break;
	case 4: h[0] = v; break;
	case 5: h[2] = v; h[3] = v >> 16; break;
	case 6: r->drv.avail->ring[(r->avail - 1) % r->size] = (uint16_t)v;
		break;
	case 7: r->avail = (uint16_t)(r->avail + (v & 0xff)); break;
	case 8: t[which].next = (uint16_t)(v & 0xff);
		t[which].flags ^= (uint16_t)((v >> 8) & 7);
		t[which].len ^= v >> 16;
		break;
	default: fz_put_avail(r, q->head); break;
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
	if (r->next_desc + need > r->size)
		fz_flush(r);
	if (r->broken)
		return;
	q.head = r->next_desc;
	r->next_desc = (uint16_t)(r->next_desc + need);
	fz_chain(r, &q, dwz && q.nseg ? payload : NULL);
	memcpy(fz_hva(r, r->hdr + 16u * q.head), &q.type, 4);
	memset(fz_hva(r, r->hdr + 16u * q.head + 4), 0, 4);
	memcpy(fz_hva(r, r->hdr + 16u * q.head + 8), &q.sector, 8);
	*(uint8_t *)fz_hva(r, r->status + q.head) = 0xff;
	fz_write_chain(r, &q);
	fz_put_avail(r, q.head);
	if (op & 0x80) {
		uint8_t m = fz_byte(r);

		fz_mutate(r, &q, m, fz_u32(r));
	}
	if (op & 0x40)
		fz_flush(r);
}

/* --- the run ------------------------------------------------------------- */

static void fz_finish(struct run *r)
{
	struct blk_stats s;
	const uint8_t *c = fz_hva(r, r->canary);

	if (!r->broken)
		fz_flush(r);
	blk_dev_ops.reset(r->dev);
	blk_dev_stats(r->dev, &s);
	/* Never loses a head: every popped head is in the used ring. */
	CHECK(s.requests - r->base.requests == fz_used_idx(r));
	/* The reset hook ran exactly when a ring error was counted. */
	CHECK(fz_reset_seen(r) == (s.ring_errors != r->base.ring_errors));
	for (unsigned int i = 0; i < FZ_CANARY; i++)
		CHECK(c[i] == 0xc5);
#ifdef FZ_VERBOSE
	fprintf(stderr, "size %u requests %llu bad %llu ring %llu broken %d\n",
		r->size, (unsigned long long)(s.requests - r->base.requests),
		(unsigned long long)(s.bad_chains - r->base.bad_chains),
		(unsigned long long)(s.ring_errors - r->base.ring_errors),
		r->broken);
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;
	unsigned int ops = 0;
	uint8_t cfg;

	if (size < 1)
		return 0;
	memset(&r, 0, sizeof(r));
	r.g = fz_global();
	cfg = data[0];
	r.size = (uint16_t)(4u << (cfg & 3));
	r.indirect = cfg & 8;
	r.dwz = cfg & 16;
	r.dev = r.g->dev[!!(cfg & 32)];
	r.p = data + 1;
	r.end = data + size;
	fz_layout(&r);
	fz_start(&r, cfg);
	while (r.p < r.end && ops++ < FZ_MAX_OPS && !r.broken)
		fz_add(&r, fz_byte(&r));
	fz_finish(&r);
	return 0;
}
