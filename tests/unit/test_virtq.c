/* Split virtqueue, device side: pop/push/publish across 16-bit index
 * wrap-around, direct and indirect chains, notification and kick
 * suppression with and without EVENT_IDX, unpop, queue sizes, refused
 * rings and bad chains. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/driver.h"
#include "tests/support/fakemem.h"
#include "tests/support/rng.h"
#include "virtio/virtq.h"

#define GPA 0x100000ull
#define RAM (4u << 20)
#define MAX_IOV 64

struct vqt {
	struct fakemem fm;
	struct drv_vq drv;
	struct virtq vq;
	struct virtq_elem e;
	struct iovec iov[MAX_IOV];
	uint64_t data; /* 64 KiB of buffers after the rings */
};

static int vqt_setup(void **state)
{
	struct vqt *t = calloc(1, sizeof(*t));

	if (!t || fakemem_create(&t->fm, GPA, RAM))
		return -1;
	*state = t;
	return 0;
}

static int vqt_teardown(void **state)
{
	struct vqt *t = *state;

	fakemem_destroy(&t->fm);
	free(t);
	return 0;
}

/* Lay out rings whose indices start at start, then bring the device up. */
static void vqt_rings(struct vqt *t, uint16_t size, bool event_idx,
		      bool indirect, uint16_t start)
{
	uint64_t d, a, u;

	fakemem_reset_alloc(&t->fm);
	memset(t->fm.base, 0, t->fm.size);
	assert_int_equal(drv_vq_init(&t->drv, &t->fm, size, event_idx), 0);
	t->drv.avail->idx = start;
	t->drv.avail_idx = start;
	t->drv.kicked_idx = start;
	t->drv.used->idx = start;
	t->drv.last_used = start;
	t->data = fakemem_alloc(&t->fm, 64u << 10, 16);
	assert_int_not_equal(t->data, 0);
	drv_vq_addrs(&t->drv, &d, &a, &u);
	assert_int_equal(virtq_init(&t->vq, &t->fm.gm, size, d, a, u,
				    event_idx, indirect), 0);
	/* The device starts at 0 whatever the rings say; a start other
	 * than 0 stands for that much earlier traffic. */
	assert_int_equal(t->vq.last_avail, 0);
	assert_int_equal(t->vq.used_idx, 0);
	t->vq.last_avail = t->vq.avail_seen = start;
	t->vq.used_idx = t->vq.published = start;
}

static void *hva(struct vqt *t, uint64_t gpa)
{
	return fakemem_hva(&t->fm, gpa);
}

/* Raw descriptor and avail-ring writes, for chains the builder refuses. */
static void set_desc(struct vqt *t, uint16_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	t->drv.desc[i] = (struct vring_desc){ addr, len, flags, next };
}

static void put_avail(struct vqt *t, uint16_t head)
{
	t->drv.avail->ring[t->drv.avail_idx % t->drv.size] = head;
	t->drv.avail_idx++;
	t->drv.avail->idx = t->drv.avail_idx;
}

static int pop(struct vqt *t)
{
	memset(t->iov, 0xa5, sizeof(t->iov));
	return virtq_pop(&t->vq, &t->e, t->iov, MAX_IOV);
}

static void assert_iov(const struct iovec *v, void *base, size_t len)
{
	assert_ptr_equal(v->iov_base, base);
	assert_int_equal(v->iov_len, len);
}

/* The used element at ring index idx (a free-running index). */
static void assert_used(struct vqt *t, uint16_t idx, uint16_t id, uint32_t len)
{
	struct vring_used_elem *u = &t->drv.used->ring[idx % t->drv.size];

	assert_int_equal(u->id, id);
	assert_int_equal(u->len, len);
}

/* --- sizes and init --------------------------------------------------- */

static void fill_pop_push(struct vqt *t, uint16_t size)
{
	for (unsigned int i = 0; i < size; i++) {
		struct drv_buf b = { t->data + i, 1, true };

		assert_int_equal(drv_vq_add(&t->drv, &b, 1, false), i);
	}
	for (unsigned int i = 0; i < size; i++) {
		assert_int_equal(pop(t), 1);
		assert_int_equal(t->e.head, i);
		assert_iov(&t->iov[0], hva(t, t->data + i), 1);
	}
	assert_int_equal(pop(t), 0);
	assert_int_equal(t->vq.inflight, size);
	for (unsigned int i = 0; i < size; i++)
		virtq_push(&t->vq, (uint16_t)(size - 1 - i), i);
	virtq_publish(&t->vq);
	assert_int_equal(t->drv.used->idx, size);
	for (unsigned int i = 0; i < size; i++)
		assert_used(t, (uint16_t)i, (uint16_t)(size - 1 - i), i);
	assert_int_equal(t->vq.inflight, 0);
}

static void test_sizes_accepted(void **state)
{
	struct vqt *t = *state;

	for (unsigned int size = 1; size <= VIRTQ_MAX_SIZE; size *= 2) {
		vqt_rings(t, (uint16_t)size, false, false, 0);
		assert_int_equal(t->vq.size, size);
		fill_pop_push(t, (uint16_t)size);
	}
}

static void test_sizes_refused(void **state)
{
	static const uint16_t bad[] = { 0, 3, 6, 255, 1023, 1025, 2048,
					4096, 32768, 65535 };
	struct vqt *t = *state;
	uint64_t d = GPA, a = GPA + 0x10000, u = GPA + 0x20000;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(virtq_init(&t->vq, &t->fm.gm, bad[i], d, a, u,
					    true, true),
				 -EINVAL);
	assert_int_equal(virtq_init(&t->vq, &t->fm.gm, 256, d, a, u, true,
				    true),
			 0);
}

static void test_init_misaligned(void **state)
{
	struct vqt *t = *state;
	uint64_t d = GPA, a = GPA + 0x10000, u = GPA + 0x20000;
	struct gmem *m = &t->fm.gm;

	for (unsigned int k = 1; k < 16; k++)
		assert_int_equal(virtq_init(&t->vq, m, 8, d + k, a, u, 0, 0),
				 -EFAULT);
	assert_int_equal(virtq_init(&t->vq, m, 8, d, a + 1, u, 0, 0), -EFAULT);
	for (unsigned int k = 1; k < 4; k++)
		assert_int_equal(virtq_init(&t->vq, m, 8, d, a, u + k, 0, 0),
				 -EFAULT);
	/* The smallest alignments the spec allows are fine. */
	assert_int_equal(virtq_init(&t->vq, m, 8, d + 16, a + 2, u + 4, 0, 0),
			 0);
}

static void test_init_outside_ram(void **state)
{
	struct vqt *t = *state;
	uint64_t d = GPA, a = GPA + 0x10000, u = GPA + 0x20000;
	uint64_t end = GPA + RAM;
	struct gmem *m = &t->fm.gm;
	const uint16_t s = 256;

	/* Each ring just fits at the end of RAM... */
	assert_int_equal(virtq_init(&t->vq, m, s, end - virtq_desc_bytes(s),
				    a, u, 1, 1), 0);
	assert_int_equal(virtq_init(&t->vq, m, s, d,
				    end - virtq_avail_bytes(s), u, 1, 1), 0);
	assert_int_equal(virtq_init(&t->vq, m, s, d, a,
				    (end - virtq_used_bytes(s)) & ~3ull, 1, 1),
			 0);
	/* ...and one granule further runs into the guard page. */
	assert_int_equal(virtq_init(&t->vq, m, s,
				    end - virtq_desc_bytes(s) + 16, a, u, 1, 1),
			 -EFAULT);
	assert_int_equal(virtq_init(&t->vq, m, s, d,
				    end - virtq_avail_bytes(s) + 2, u, 1, 1),
			 -EFAULT);
	assert_int_equal(virtq_init(&t->vq, m, s, d, a,
				    end - virtq_used_bytes(s) + 4 - 2, 1, 1),
			 -EFAULT);
	/* Below RAM, at 0, and near the top of the address space. */
	assert_int_equal(virtq_init(&t->vq, m, s, GPA - 16, a, u, 1, 1),
			 -EFAULT);
	assert_int_equal(virtq_init(&t->vq, m, s, d, 0, u, 1, 1), -EFAULT);
	assert_int_equal(virtq_init(&t->vq, m, s, d, a, UINT64_MAX - 3, 1, 1),
			 -EFAULT);
	assert_int_equal(virtq_init(&t->vq, m, s, end, a, u, 1, 1), -EFAULT);
}

/* --- wrap-around ------------------------------------------------------ */

/* Add n chains of nbuf (1: writable; 2: readable + writable) buffers,
 * pop them, push them back in reverse order, publish, and read them. */
static void round_trip(struct vqt *t, unsigned int n, unsigned int nbuf,
		       bool indirect, uint16_t *used_seen)
{
	int heads[VIRTQ_MAX_SIZE];

	for (unsigned int i = 0; i < n; i++) {
		struct drv_buf b[2] = {
			{ t->data + 64 * i, 16, false },
			{ t->data + 64 * i + 16, 48, true },
		};

		heads[i] = drv_vq_add(&t->drv, b + 2 - nbuf, nbuf, indirect);
		assert_true(heads[i] >= 0);
	}
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(pop(t), 1);
		assert_int_equal(t->e.head, heads[i]);
		assert_int_equal(t->e.n_out, nbuf - 1);
		assert_int_equal(t->e.n_in, 1);
		if (nbuf == 2)
			assert_iov(&t->iov[0], hva(t, t->data + 64 * i), 16);
		assert_iov(&t->iov[nbuf - 1], hva(t, t->data + 64 * i + 16),
			   48);
	}
	assert_int_equal(pop(t), 0);
	for (unsigned int i = n; i-- > 0;)
		virtq_push(&t->vq, (uint16_t)heads[i], 1000 + i);
	/* Nothing is visible before publish. */
	assert_int_equal(t->drv.used->idx, *used_seen);
	virtq_publish(&t->vq);
	for (unsigned int i = n; i-- > 0;) {
		uint16_t h;
		uint32_t len;

		assert_int_equal(drv_vq_get_used(&t->drv, &h, &len), 1);
		assert_int_equal(h, heads[i]);
		assert_int_equal(len, 1000 + i);
	}
	*used_seen = (uint16_t)(*used_seen + n);
	assert_int_equal(t->drv.used->idx, *used_seen);
}

static void wrap(struct vqt *t, uint16_t size, bool indirect, uint16_t start)
{
	unsigned int nbuf = size > 1 ? 2 : 1;
	unsigned int per_round = indirect ? size : size / nbuf;
	uint16_t used = start;
	unsigned int total = 0;

	vqt_rings(t, size, false, indirect, start);
	for (unsigned int r = 0; total < 3u * size + 5; r++) {
		unsigned int n = r % per_round + 1;

		round_trip(t, n, nbuf, indirect, &used);
		total += n;
	}
	assert_int_equal(t->vq.last_avail, (uint16_t)(start + total));
	assert_int_equal(t->vq.stats.popped, total);
	assert_int_equal(t->vq.inflight, 0);
}

static void test_wrap_direct(void **state)
{
	static const uint16_t starts[] = { 65535, 65534, 65533, 65530, 0 };

	for (unsigned int i = 0; i < 5; i++) {
		wrap(*state, 4, false, starts[i]);
		wrap(*state, 8, false, starts[i]);
		wrap(*state, 1, false, starts[i]);
	}
}

static void test_wrap_indirect(void **state)
{
	static const uint16_t starts[] = { 65535, 65533, 65529 };

	for (unsigned int i = 0; i < 3; i++) {
		wrap(*state, 4, true, starts[i]);
		wrap(*state, 2, true, starts[i]);
	}
}

/* A completely full ring whose window straddles the wrap is fine. */
static void test_wrap_full_ring(void **state)
{
	struct vqt *t = *state;
	uint16_t used = 65533;

	vqt_rings(t, 8, true, true, 65533);
	round_trip(t, 8, 1, false, &used);
	round_trip(t, 4, 2, false, &used);
	round_trip(t, 8, 2, true, &used);
	assert_int_equal(t->drv.used->idx, (uint16_t)(65533 + 20));
	assert_false(t->vq.broken);
}

/* --- chains and their iovecs ------------------------------------------ */

static void assert_split(struct vqt *t)
{
	assert_int_equal(t->e.n_out, 2);
	assert_int_equal(t->e.n_in, 2);
	assert_int_equal(t->e.out_len, 16 + 100);
	assert_int_equal(t->e.in_len, 512 + 1);
	assert_iov(&t->iov[0], hva(t, t->data), 16);
	assert_iov(&t->iov[1], hva(t, t->data + 0x100), 100);
	assert_iov(&t->iov[2], hva(t, t->data + 0x1000), 512);
	assert_iov(&t->iov[3], hva(t, t->data + 0x3000), 1);
}

static void chain_split(struct vqt *t, bool indirect)
{
	struct drv_buf b[5] = {
		{ t->data, 16, false },
		{ t->data + 0x100, 100, false },
		{ t->data + 0x2000, 0, false }, /* empty: no iovec */
		{ t->data + 0x1000, 512, true },
		{ t->data + 0x3000, 1, true },
	};
	int head;

	head = drv_vq_add(&t->drv, b, 5, indirect);
	assert_true(head >= 0);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.head, head);
	assert_ptr_equal(t->e.iov, t->iov);
	assert_split(t);
}

static void test_chain_direct_split(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, true, true, 0);
	chain_split(t, false);
}

static void test_chain_indirect_split(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, true, true, 0);
	chain_split(t, true);
	assert_int_equal(t->vq.stats.popped, 1);
}

/* Readable only, and writable only, chains are fine for the ring. */
static void test_chain_one_direction(void **state)
{
	struct vqt *t = *state;
	struct drv_buf r, w;

	vqt_rings(t, 8, false, false, 0);
	r = (struct drv_buf){ t->data, 7, false };
	w = (struct drv_buf){ t->data, 9, true };
	drv_vq_add(&t->drv, &r, 1, false);
	drv_vq_add(&t->drv, &w, 1, false);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.n_out, 1);
	assert_int_equal(t->e.n_in, 0);
	assert_int_equal(t->e.out_len, 7);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.n_out, 0);
	assert_int_equal(t->e.n_in, 1);
	assert_int_equal(t->e.in_len, 9);
}

/* A chain as long as the queue, following next pointers in any order. */
static void test_chain_as_long_as_queue(void **state)
{
	struct vqt *t = *state;
	const uint16_t size = 16;
	uint16_t order[16];

	vqt_rings(t, size, false, false, 0);
	for (uint16_t i = 0; i < size; i++)
		order[i] = (uint16_t)((i * 7 + 3) % size);
	for (uint16_t i = 0; i < size; i++)
		set_desc(t, order[i], t->data + 16 * order[i], 16,
			 i + 1 < size ? VRING_DESC_F_NEXT : 0,
			 i + 1 < size ? order[i + 1] : 0);
	put_avail(t, order[0]);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.n_out, size);
	for (uint16_t i = 0; i < size; i++)
		assert_iov(&t->iov[i], hva(t, t->data + 16 * order[i]), 16);
}

/* --- bad chains: -EBADMSG, head in flight, the queue goes on ---------- */

/* Pop the chain at head: refused, nothing in the element, counted; then
 * push it with 0 and prove a valid chain still pops. */
static void expect_bad_chain(struct vqt *t, uint16_t head)
{
	uint64_t bad = t->vq.stats.bad_chains;
	uint16_t used = t->drv.used->idx;
	struct drv_buf ok = { t->data + 0x8000, 4, true };
	uint16_t ok_head = (uint16_t)(t->drv.size - 1);

	put_avail(t, head);
	assert_int_equal(pop(t), -EBADMSG);
	assert_int_equal(t->e.head, head);
	assert_int_equal(t->e.n_out + t->e.n_in, 0);
	assert_int_equal(t->e.out_len + t->e.in_len, 0);
	assert_int_equal(t->vq.stats.bad_chains, bad + 1);
	assert_int_equal(t->vq.inflight, 1);
	assert_false(t->vq.broken);
	virtq_push(&t->vq, head, 0);
	virtq_publish(&t->vq);
	assert_used(t, used, head, 0);
	set_desc(t, ok_head, ok.gpa, ok.len, VRING_DESC_F_WRITE, 0);
	put_avail(t, ok_head);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.head, ok_head);
	virtq_push(&t->vq, ok_head, 4);
	virtq_publish(&t->vq);
	assert_int_equal(t->vq.inflight, 0);
}

static void test_bad_next_out_of_range(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, true, 65534);
	set_desc(t, 0, t->data, 16, VRING_DESC_F_NEXT, 8);
	expect_bad_chain(t, 0);
	set_desc(t, 0, t->data, 16, VRING_DESC_F_NEXT, 0xffff);
	expect_bad_chain(t, 0);
}

static void test_bad_loop(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, true, 0);
	set_desc(t, 0, t->data, 16, VRING_DESC_F_NEXT, 0); /* self */
	expect_bad_chain(t, 0);
	set_desc(t, 0, t->data, 16, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, t->data, 16, VRING_DESC_F_NEXT, 2);
	set_desc(t, 2, t->data, 16, VRING_DESC_F_NEXT, 1);
	expect_bad_chain(t, 0);
	/* Every descriptor chained to the next, the last back to the first. */
	for (uint16_t i = 0; i < 8; i++)
		set_desc(t, i, t->data, 1, VRING_DESC_F_NEXT,
			 (uint16_t)((i + 1) % 8));
	expect_bad_chain(t, 3);
}

/* A loop of zero-length descriptors adds no iovec: still caught. */
static void test_bad_loop_empty_descs(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 4, false, true, 0);
	set_desc(t, 0, 0, 0, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, 0, 0, VRING_DESC_F_NEXT, 0);
	expect_bad_chain(t, 0);
}

static void test_bad_address(void **state)
{
	struct vqt *t = *state;
	uint64_t end = GPA + RAM;

	vqt_rings(t, 8, false, true, 0);
	set_desc(t, 0, end, 1, 0, 0); /* the guard page after RAM */
	expect_bad_chain(t, 0);
	set_desc(t, 0, end - 8, 16, VRING_DESC_F_WRITE, 0); /* runs past */
	expect_bad_chain(t, 0);
	set_desc(t, 0, GPA - 1, 1, 0, 0); /* the guard page before */
	expect_bad_chain(t, 0);
	set_desc(t, 0, UINT64_MAX - 7, 16, 0, 0); /* wraps */
	expect_bad_chain(t, 0);
	set_desc(t, 0, GPA, UINT32_MAX, 0, 0); /* far too long */
	expect_bad_chain(t, 0);
	/* A good first buffer does not save a bad second one. */
	set_desc(t, 0, t->data, 16, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, 0, 1, VRING_DESC_F_WRITE, 0);
	expect_bad_chain(t, 0);
}

static void test_bad_readable_after_writable(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, true, 0);
	set_desc(t, 0, t->data, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, t->data + 16, 16, 0, 0);
	expect_bad_chain(t, 0);
	/* Also when the readable one is empty. */
	set_desc(t, 1, t->data + 16, 0, 0, 0);
	expect_bad_chain(t, 0);
}

static void test_bad_too_many_iovecs(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, false, 0);
	for (uint16_t i = 0; i < 3; i++)
		set_desc(t, i, t->data + 32 * i, 16,
			 i < 2 ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	put_avail(t, 0);
	assert_int_equal(virtq_pop(&t->vq, &t->e, t->iov, 2), -EBADMSG);
	assert_int_equal(t->e.n_out + t->e.n_in, 0);
	virtq_push(&t->vq, 0, 0);
	put_avail(t, 0);
	assert_int_equal(virtq_pop(&t->vq, &t->e, t->iov, 3), 1);
}

/* An indirect table at tbl (in data), described by head 0. */
static struct vring_desc *indirect_at(struct vqt *t, uint64_t tbl,
				      uint32_t len, uint16_t flags)
{
	set_desc(t, 0, tbl, len, VRING_DESC_F_INDIRECT | flags, 1);
	set_desc(t, 1, t->data, 16, 0, 0);
	return hva(t, tbl);
}

static void test_bad_indirect_table(void **state)
{
	struct vqt *t = *state;
	uint64_t tbl = t->data + 0x4000;
	struct vring_desc *d;

	vqt_rings(t, 8, false, true, 0);
	tbl = t->data + 0x4000;
	d = indirect_at(t, tbl, 32, 0);
	d[0] = (struct vring_desc){ t->data, 16, VRING_DESC_F_NEXT, 1 };
	d[1] = (struct vring_desc){ t->data + 16, 1, VRING_DESC_F_WRITE, 0 };
	put_avail(t, 0);
	assert_int_equal(pop(t), 1); /* the good table */
	assert_int_equal(t->e.n_out + t->e.n_in, 2);
	virtq_push(&t->vq, 0, 1);
	virtq_publish(&t->vq);
	indirect_at(t, tbl, 0, 0); /* len 0 */
	expect_bad_chain(t, 0);
	d[0] = (struct vring_desc){ t->data, 16, 0, 0 };
	indirect_at(t, tbl, 24, 0); /* not a multiple of 16 */
	expect_bad_chain(t, 0);
	indirect_at(t, tbl, 32, VRING_DESC_F_NEXT); /* indirect + NEXT */
	expect_bad_chain(t, 0);
	indirect_at(t, GPA + RAM - 16, 32, 0); /* table runs out of RAM */
	expect_bad_chain(t, 0);
	indirect_at(t, GPA + RAM, 16, 0); /* table in the guard page */
	expect_bad_chain(t, 0);
}

static void test_bad_indirect_contents(void **state)
{
	struct vqt *t = *state;
	struct vring_desc *d;

	vqt_rings(t, 8, false, true, 0);
	d = indirect_at(t, t->data + 0x4000, 32, 0);
	d[0] = (struct vring_desc){ t->data, 16, VRING_DESC_F_NEXT, 2 };
	expect_bad_chain(t, 0); /* next past the table */
	d[0].next = 0;
	expect_bad_chain(t, 0); /* loop inside the table */
	d[0] = (struct vring_desc){ t->data + 0x4000, 32,
				    VRING_DESC_F_INDIRECT, 0 };
	expect_bad_chain(t, 0); /* nested indirect */
	d[0] = (struct vring_desc){ t->data, 16,
				    VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1 };
	d[1] = (struct vring_desc){ t->data, 16, 0, 0 };
	expect_bad_chain(t, 0); /* readable after writable */
	d[0] = (struct vring_desc){ GPA + RAM, 16, 0, 0 };
	expect_bad_chain(t, 0); /* buffer outside RAM */
	/* A table in the last bytes of RAM: following a next past its end
	 * would read the guard page. */
	d = indirect_at(t, GPA + RAM - 32, 32, 0);
	d[0] = (struct vring_desc){ t->data, 16, VRING_DESC_F_NEXT, 1 };
	d[1] = (struct vring_desc){ t->data, 16, VRING_DESC_F_NEXT, 2 };
	expect_bad_chain(t, 0);
}

/* A descriptor table in the last bytes of RAM: following a next past
 * its end would read the guard page. */
static void test_bad_next_at_end_of_ram(void **state)
{
	struct vqt *t = *state;
	const uint16_t size = 8;
	uint64_t d = GPA + RAM - virtq_desc_bytes(size), a, u, unused;
	struct vring_desc *desc = hva(t, d);

	vqt_rings(t, size, false, false, 0);
	drv_vq_addrs(&t->drv, &unused, &a, &u);
	assert_int_equal(virtq_init(&t->vq, &t->fm.gm, size, d, a, u, false,
				    false), 0);
	desc[7] = (struct vring_desc){ t->data, 16, VRING_DESC_F_NEXT, 8 };
	put_avail(t, 7);
	assert_int_equal(pop(t), -EBADMSG);
	desc[7].next = 0xffff;
	virtq_push(&t->vq, 7, 0);
	put_avail(t, 7);
	assert_int_equal(pop(t), -EBADMSG);
}

/* Direct descriptors, then one indirect descriptor that ends the chain:
 * the device MUST handle it (virtio 1.2, 2.7.5.3.2); its WRITE flag is
 * ignored. */
static void test_indirect_after_direct(void **state)
{
	struct vqt *t = *state;
	struct vring_desc *d;

	vqt_rings(t, 8, false, true, 0);
	d = hva(t, t->data + 0x4000);
	d[0] = (struct vring_desc){ t->data + 16, 32, VRING_DESC_F_NEXT, 1 };
	d[1] = (struct vring_desc){ t->data + 64, 1, VRING_DESC_F_WRITE, 0 };
	set_desc(t, 2, t->data, 16, VRING_DESC_F_NEXT, 3);
	set_desc(t, 3, t->data + 0x4000, 32,
		 VRING_DESC_F_INDIRECT | VRING_DESC_F_WRITE, 0);
	put_avail(t, 2);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.head, 2);
	assert_int_equal(t->e.n_out, 2);
	assert_int_equal(t->e.n_in, 1);
	assert_int_equal(t->e.out_len, 48);
	assert_iov(&t->iov[0], hva(t, t->data), 16);
	assert_iov(&t->iov[1], hva(t, t->data + 16), 32);
	assert_iov(&t->iov[2], hva(t, t->data + 64), 1);
	/* ... but not an indirect descriptor that is followed by more. */
	virtq_push(&t->vq, 2, 0);
	set_desc(t, 3, t->data + 0x4000, 32,
		 VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 4);
	set_desc(t, 4, t->data, 16, 0, 0);
	expect_bad_chain(t, 2);
}

/* An indirect table at any address in RAM, aligned or not. */
static void test_indirect_unaligned(void **state)
{
	struct vqt *t = *state;
	static const unsigned int offs[] = { 1, 2, 4, 8, 15 };

	vqt_rings(t, 8, false, true, 0);
	for (unsigned int i = 0; i < 5; i++) {
		uint64_t tbl = t->data + 0x4000 + offs[i];
		struct vring_desc dd[2] = {
			{ t->data, 16, VRING_DESC_F_NEXT, 1 },
			{ t->data + 16, 1, VRING_DESC_F_WRITE, 0 },
		};

		memcpy(hva(t, tbl), dd, sizeof(dd));
		set_desc(t, 0, tbl, sizeof(dd), VRING_DESC_F_INDIRECT, 0);
		put_avail(t, 0);
		assert_int_equal(pop(t), 1);
		assert_int_equal(t->e.n_out + t->e.n_in, 2);
		assert_iov(&t->iov[1], hva(t, t->data + 16), 1);
		virtq_push(&t->vq, 0, 1);
	}
}

/* Buffers the driver made available before the device started (before
 * DRIVER_OK) are served: the device starts at avail position 0. */
static void test_served_from_zero(void **state)
{
	struct vqt *t = *state;
	uint64_t d, a, u;

	fakemem_reset_alloc(&t->fm);
	memset(t->fm.base, 0, t->fm.size);
	assert_int_equal(drv_vq_init(&t->drv, &t->fm, 8, true), 0);
	t->data = fakemem_alloc(&t->fm, 64u << 10, 16);
	for (unsigned int i = 0; i < 3; i++) {
		struct drv_buf b = { t->data + i, 1, true };

		assert_int_equal(drv_vq_add(&t->drv, &b, 1, false), i);
	}
	t->drv.used->idx = 5; /* garbage the device must not adopt */
	drv_vq_addrs(&t->drv, &d, &a, &u);
	assert_int_equal(virtq_init(&t->vq, &t->fm.gm, 8, d, a, u, true,
				    false), 0);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(pop(t), 1);
		assert_int_equal(t->e.head, i);
		virtq_push(&t->vq, (uint16_t)i, 1);
	}
	assert_int_equal(pop(t), 0);
	virtq_publish(&t->vq);
	assert_int_equal(t->drv.used->idx, 3);
}

/* An indirect descriptor without the feature. */
static void test_bad_indirect_placement(void **state)
{
	struct vqt *t = *state;
	struct vring_desc *d;

	vqt_rings(t, 8, false, false, 0);
	d = indirect_at(t, t->data + 0x4000, 16, 0);
	d[0] = (struct vring_desc){ t->data, 16, 0, 0 };
	expect_bad_chain(t, 0); /* INDIRECT_DESC not negotiated */
}

/* --- ring errors: -EPROTO for good ------------------------------------ */

static void expect_broken(struct vqt *t)
{
	assert_int_equal(pop(t), -EPROTO);
	assert_true(t->vq.broken);
	assert_int_equal(t->vq.stats.ring_errors, 1);
	/* Broken for good, even if the driver puts things right. */
	t->drv.avail->idx = t->vq.last_avail;
	assert_int_equal(pop(t), -EPROTO);
	put_avail(t, 0);
	assert_int_equal(pop(t), -EPROTO);
	assert_int_equal(t->vq.stats.ring_errors, 1);
}

static void test_ring_avail_jump(void **state)
{
	struct vqt *t = *state;
	static const uint16_t starts[] = { 0, 65530, 65535 };

	for (unsigned int i = 0; i < 3; i++) {
		vqt_rings(t, 8, true, true, starts[i]);
		set_desc(t, 0, t->data, 1, VRING_DESC_F_WRITE, 0);
		/* Exactly the queue size is a full ring, one more is not. */
		t->drv.avail->idx = (uint16_t)(starts[i] + 9);
		expect_broken(t);
		vqt_rings(t, 8, true, true, starts[i]);
		t->drv.avail->idx = (uint16_t)(starts[i] - 1); /* backwards */
		expect_broken(t);
	}
}

/* avail->idx is read again only once every entry up to the value last
 * read has been popped: entries the driver announced are popped even if
 * the index then goes wrong, and the next read finds it wrong. */
static void test_ring_avail_idx_read_per_run(void **state)
{
	struct vqt *t = *state;
	struct drv_buf b = { 0, 8, true };

	vqt_rings(t, 4, false, false, 65534);
	for (unsigned int i = 0; i < 3; i++) {
		b.gpa = t->data + 8 * i;
		assert_int_equal(drv_vq_add(&t->drv, &b, 1, false), (int)i);
	}
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.head, 0);
	t->drv.avail->idx = 65533; /* backwards */
	for (uint16_t h = 1; h < 3; h++) {
		assert_int_equal(pop(t), 1);
		assert_int_equal(t->e.head, h);
		assert_iov(&t->iov[0], hva(t, t->data + 8 * h), 8);
	}
	assert_int_equal(t->vq.stats.ring_errors, 0);
	expect_broken(t);
}

static void test_ring_head_out_of_range(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, false, 65535);
	set_desc(t, 0, t->data, 1, VRING_DESC_F_WRITE, 0);
	put_avail(t, 8);
	expect_broken(t);
	vqt_rings(t, 8, false, false, 0);
	put_avail(t, 0xffff);
	expect_broken(t);
}

static void test_ring_head_reused(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, false, 65535);
	set_desc(t, 5, t->data, 1, VRING_DESC_F_WRITE, 0);
	put_avail(t, 5);
	assert_int_equal(pop(t), 1);
	/* Pushed back, it may come again... */
	virtq_push(&t->vq, 5, 1);
	put_avail(t, 5);
	assert_int_equal(pop(t), 1);
	/* ...but not while it is still in flight. */
	put_avail(t, 5);
	expect_broken(t);
	assert_int_equal(t->vq.inflight, 1);
}

/* A bad chain's head is in flight too until pushed. */
static void test_ring_bad_chain_head_reused(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, false, 0);
	set_desc(t, 2, GPA + RAM, 1, 0, 0);
	put_avail(t, 2);
	put_avail(t, 2);
	assert_int_equal(pop(t), -EBADMSG);
	expect_broken(t);
}

/* --- unpop -------------------------------------------------------------- */

static void test_unpop(void **state)
{
	struct vqt *t = *state;
	struct drv_buf b = { 0, 8, true };

	vqt_rings(t, 4, false, false, 65535);
	for (unsigned int i = 0; i < 3; i++) {
		b.gpa = t->data + 8 * i;
		drv_vq_add(&t->drv, &b, 1, false);
	}
	assert_int_equal(pop(t), 1);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.head, 1);
	virtq_unpop(&t->vq, 1);
	assert_int_equal(t->vq.inflight, 1);
	assert_int_equal(t->vq.last_avail, 0);
	assert_int_equal(t->vq.stats.popped, 1);
	/* The same head comes again, with its buffer. */
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.head, 1);
	assert_iov(&t->iov[0], hva(t, t->data + 8), 8);
	assert_int_equal(pop(t), 1);
	assert_int_equal(t->e.head, 2);
	assert_int_equal(pop(t), 0);
	/* Unpop everything, back across the wrap to 65535. */
	virtq_unpop(&t->vq, 2);
	virtq_unpop(&t->vq, 1);
	virtq_unpop(&t->vq, 0);
	assert_int_equal(t->vq.last_avail, 65535);
	assert_int_equal(t->vq.inflight, 0);
	assert_int_equal(t->vq.stats.popped, 0);
	for (uint16_t h = 0; h < 3; h++) {
		assert_int_equal(pop(t), 1);
		assert_int_equal(t->e.head, h);
		assert_iov(&t->iov[0], hva(t, t->data + 8 * h), 8);
		virtq_push(&t->vq, h, h);
	}
	virtq_publish(&t->vq);
	assert_int_equal(t->drv.used->idx, 2);
	assert_int_equal(t->vq.stats.popped, 3);
	assert_int_equal(t->vq.inflight, 0);
}

/* virtq_next_head then virtq_read_chain, and unpop between them. */
static void test_two_step_pop(void **state)
{
	struct vqt *t = *state;
	struct drv_buf b = { 0, 8, false };
	uint16_t head;

	vqt_rings(t, 4, false, false, 0);
	b.gpa = t->data;
	drv_vq_add(&t->drv, &b, 1, false);
	assert_int_equal(virtq_next_head(&t->vq, &head), 1);
	assert_int_equal(head, 0);
	virtq_unpop(&t->vq, head);
	assert_int_equal(virtq_next_head(&t->vq, &head), 1);
	assert_int_equal(virtq_read_chain(&t->vq, head, &t->e, t->iov, 4), 0);
	assert_int_equal(t->e.head, 0);
	assert_int_equal(t->e.out_len, 8);
	assert_int_equal(virtq_next_head(&t->vq, &head), 0);
}

/* --- the three-buffer chain (virtq_read_chain3) ----------------------- */

/* Lay out a Linux-style request at head 0: one indirect descriptor to a
 * table of three entries linked 0 -> 1 -> 2 (header, data, status). */
static struct vring_desc *chain3_at(struct vqt *t, bool data_write)
{
	struct vring_desc *d;

	/* next is not read without NEXT: Linux leaves its free list there. */
	set_desc(t, 0, t->data, 48, VRING_DESC_F_INDIRECT, 5);
	d = hva(t, t->data);
	d[0] = (struct vring_desc){ t->data + 0x100, 16, VRING_DESC_F_NEXT, 1 };
	d[1] = (struct vring_desc){
		t->data + 0x1000, 4096,
		VRING_DESC_F_NEXT | (data_write ? VRING_DESC_F_WRITE : 0), 2 };
	d[2] = (struct vring_desc){ t->data + 0x200, 1, VRING_DESC_F_WRITE,
				    0x7777 /* not read: no NEXT */ };
	return d;
}

static void test_chain3_linux_request(void **state)
{
	struct vqt *t = *state;
	struct iovec v[3];

	vqt_rings(t, 8, true, true, 0);
	for (int w = 0; w < 2; w++) {
		chain3_at(t, w);
		/* a read: header readable; a write: header and data */
		assert_int_equal(virtq_read_chain3(&t->vq, 0, v), w ? 1 : 2);
		assert_iov(&v[0], hva(t, t->data + 0x100), 16);
		assert_iov(&v[1], hva(t, t->data + 0x1000), 4096);
		assert_iov(&v[2], hva(t, t->data + 0x200), 1);
	}
	/* A table at an odd address (the spec asks no alignment). */
	memcpy(hva(t, t->data + 0x2001), hva(t, t->data), 48);
	t->drv.desc[0].addr = t->data + 0x2001;
	assert_int_equal(virtq_read_chain3(&t->vq, 0, v), 1);
	assert_iov(&v[1], hva(t, t->data + 0x1000), 4096);
	/* Without INDIRECT_DESC, the general walk refuses it: so does this. */
	vqt_rings(t, 8, true, false, 0);
	chain3_at(t, true);
	assert_int_equal(virtq_read_chain3(&t->vq, 0, v), -EAGAIN);
}

/* Each declined: a direct chain, a table of two or four, a link out of
 * order, an empty buffer, one outside RAM, readable after writable, a
 * nested indirect entry, an indirect descriptor with NEXT. */
static void test_chain3_declines(void **state)
{
	struct vqt *t = *state;
	struct iovec v[3];
	struct vring_desc *d;

	vqt_rings(t, 8, true, true, 0);
	set_desc(t, 0, t->data + 0x100, 16, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, t->data + 0x1000, 4096, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	set_desc(t, 2, t->data + 0x200, 1, VRING_DESC_F_WRITE, 0);
	assert_int_equal(virtq_read_chain3(&t->vq, 0, v), -EAGAIN);
	for (int k = 0; k < 9; k++) {
		d = chain3_at(t, true);
		switch (k) {
		case 0: t->drv.desc[0].len = 32; break;
		case 1: t->drv.desc[0].len = 64; break;
		case 2: d[0].next = 2; break;
		case 3: d[1].len = 0; break;
		case 4: d[1].addr = GPA + RAM - 100; break;
		case 5: /* writable header, readable data */
			d[0].flags |= VRING_DESC_F_WRITE;
			d[1].flags &= (uint16_t)~VRING_DESC_F_WRITE;
			break;
		case 6: d[2].flags |= VRING_DESC_F_INDIRECT; break;
		case 7: t->drv.desc[0].flags |= VRING_DESC_F_NEXT; break;
		case 8: d[2].flags |= VRING_DESC_F_NEXT; break;
		}
		assert_int_equal(virtq_read_chain3(&t->vq, 0, v), -EAGAIN);
	}
	/* A table whose first two entries are good and whose third would
	 * lie past the end of RAM (a guard page follows it). */
	d = hva(t, GPA + RAM - 32);
	memcpy(d, chain3_at(t, true), 32);
	t->drv.desc[0].addr = GPA + RAM - 32;
	assert_int_equal(virtq_read_chain3(&t->vq, 0, v), -EAGAIN);
}

/* A random change to one field of a three-entry request, or none. */
static bool chain3_mutate(struct vqt *t, struct vring_desc *d, uint64_t *rng)
{
	uint64_t x = rng_next(rng);
	struct vring_desc *e = &d[(x >> 8) % 3];
	static const uint64_t addrs[] = { 0, GPA - 16, GPA + RAM - 8,
					  GPA + RAM, ~0ull - 4, GPA };
	static const uint32_t lens[] = { 0, 1, 15, 16, 17, 512, 4096,
					 RAM, 0xffffffffu };

	switch (x % 12) {
	case 0: e->flags ^= (uint16_t)(1u << ((x >> 16) % 16)); break;
	case 1: e->next = (uint16_t)((x >> 16) % 5); break;
	case 2: e->len = lens[(x >> 16) % 9]; break;
	case 3: e->addr = addrs[(x >> 16) % 6]; break;
	case 4: t->drv.desc[0].flags ^= (uint16_t)(1u << ((x >> 16) % 16)); break;
	case 5: t->drv.desc[0].len = (uint32_t)((x >> 16) % 5) * 16 + ((x >> 24) & 1); break;
	case 6: e->flags ^= VRING_DESC_F_WRITE; break;
	default: return false; /* the request as laid out */
	}
	return true;
}

/* virtq_read_chain3 against the general walk, on requests with random
 * changes: whenever it accepts, the general walk accepts with the same
 * buffers in the same order and the same lengths; the request left
 * unchanged is always accepted. */
static void test_chain3_matches_general(void **state)
{
	struct vqt *t = *state;
	uint64_t rng = 0x3c3c3c3c1ull;
	unsigned int accepted = 0, declined = 0;

	vqt_rings(t, 16, true, true, 0);
	for (int n = 0; n < 20000; n++) {
		struct iovec v[3];
		struct vring_desc *d = chain3_at(t, rng_next(&rng) & 1);
		bool changed = chain3_mutate(t, d, &rng);
		uint16_t head;
		int fast, slow;

		if (rng_next(&rng) & 1)
			changed |= chain3_mutate(t, d, &rng);
		put_avail(t, 0);
		assert_int_equal(virtq_next_head(&t->vq, &head), 1);
		fast = virtq_read_chain3(&t->vq, head, v);
		memset(t->iov, 0xa5, sizeof(t->iov));
		slow = virtq_read_chain(&t->vq, head, &t->e, t->iov, MAX_IOV);
		if (!changed)
			assert_true(fast >= 0);
		if (fast >= 0) {
			uint64_t out = 0, in = 0;

			accepted++;
			assert_int_equal(slow, 0);
			assert_int_equal(t->e.n_out + t->e.n_in, 3);
			assert_int_equal(t->e.n_out, fast);
			for (int i = 0; i < 3; i++) {
				assert_iov(&t->iov[i], v[i].iov_base,
					   v[i].iov_len);
				if (i < fast)
					out += v[i].iov_len;
				else
					in += v[i].iov_len;
			}
			assert_int_equal(t->e.out_len, out);
			assert_int_equal(t->e.in_len, in);
		} else {
			assert_int_equal(fast, -EAGAIN);
			declined++;
		}
		virtq_push(&t->vq, head, 0);
		virtq_publish(&t->vq);
	}
	/* Both ways taken often: the comparison is not empty. */
	assert_true(accepted > 5000);
	assert_true(declined > 5000);
}

/* --- notifications ---------------------------------------------------- */

/* Pop and push n chains the driver added, publish, and ask. */
static bool complete_n(struct vqt *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct drv_buf b = { t->data, 1, true };
		uint16_t h;
		uint32_t len;

		assert_true(drv_vq_add(&t->drv, &b, 1, false) >= 0);
		assert_int_equal(pop(t), 1);
		virtq_push(&t->vq, t->e.head, 1);
		virtq_publish(&t->vq);
		assert_int_equal(drv_vq_get_used(&t->drv, &h, &len), 1);
	}
	return virtq_need_notify(&t->vq);
}

/* Publish n entries in one go (the batch case). */
static bool complete_batch(struct vqt *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct drv_buf b = { t->data, 1, true };

		assert_true(drv_vq_add(&t->drv, &b, 1, false) >= 0);
		assert_int_equal(pop(t), 1);
		virtq_push(&t->vq, t->e.head, 1);
	}
	virtq_publish(&t->vq);
	for (unsigned int i = 0; i < n; i++) {
		uint16_t h;
		uint32_t len;

		assert_int_equal(drv_vq_get_used(&t->drv, &h, &len), 1);
	}
	return virtq_need_notify(&t->vq);
}

static void set_used_event(struct vqt *t, uint16_t ev)
{
	t->drv.avail->ring[t->drv.size] = ev;
}

static void event_idx_sequence(struct vqt *t, uint16_t s)
{
	vqt_rings(t, 16, true, false, s);
	set_used_event(t, (uint16_t)(s + 100));
	assert_true(complete_n(t, 1));   /* the first interrupt always goes */
	set_used_event(t, (uint16_t)(s + 1));
	assert_true(complete_n(t, 1));   /* idx s+2 passes s+1 */
	assert_false(complete_n(t, 1));  /* s+3: event behind, no new one */
	set_used_event(t, (uint16_t)(s + 5));
	assert_false(complete_n(t, 1));  /* s+4: event ahead */
	assert_true(complete_batch(t, 2)); /* s+6: the batch passes s+5 */
	set_used_event(t, (uint16_t)(s + 6));
	assert_false(virtq_need_notify(&t->vq)); /* nothing new */
	assert_true(complete_batch(t, 3)); /* s+9 passes s+6 */
	set_used_event(t, (uint16_t)(s + 2));
	assert_false(complete_batch(t, 3)); /* s+12: far behind */
	set_used_event(t, (uint16_t)(s + 12));
	assert_true(complete_batch(t, 1)); /* s+13: exactly the event */
	set_used_event(t, (uint16_t)(s + 14));
	assert_false(complete_batch(t, 1)); /* s+14: one short */
	assert_true(complete_batch(t, 1));  /* s+15 */
	assert_int_equal(t->vq.stats.notifies, 6);
}

static void test_notify_event_idx(void **state)
{
	static const uint16_t starts[] = { 0, 65535, 65530, 65524, 32767 };

	for (unsigned int i = 0; i < 5; i++)
		event_idx_sequence(*state, starts[i]);
}

/* With EVENT_IDX the NO_INTERRUPT flag means nothing. */
static void test_notify_event_idx_ignores_flag(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, true, false, 65535);
	t->drv.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	assert_true(complete_n(t, 1));
	set_used_event(t, 0);
	assert_true(complete_n(t, 1));
}

static void test_notify_flags(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, false, 65534);
	set_used_event(t, 0xffff); /* ignored without EVENT_IDX */
	t->drv.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	assert_false(complete_n(t, 1));
	t->drv.avail->flags = 0;
	assert_true(complete_n(t, 1));
	assert_true(complete_n(t, 1));
	assert_false(virtq_need_notify(&t->vq)); /* nothing new */
	assert_true(complete_batch(t, 3));
	t->drv.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	assert_false(complete_batch(t, 2));
	t->drv.avail->flags = 0;
	assert_false(virtq_need_notify(&t->vq)); /* still nothing new */
	assert_int_equal(t->vq.stats.notifies, 3);
}

/* publish without a push changes nothing. */
static void test_publish_idempotent(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, false, 7);
	/* Nothing pushed: publish stores nothing (a stand-in value in the
	 * ring shows whether it did). */
	t->drv.used->idx = 42;
	virtq_publish(&t->vq);
	assert_int_equal(t->drv.used->idx, 42);
	t->drv.used->idx = 7;
	assert_true(complete_n(t, 1));
	/* Again with nothing new: no store, and nothing new to signal. */
	t->drv.used->idx = 42;
	virtq_publish(&t->vq);
	assert_int_equal(t->drv.used->idx, 42);
	assert_false(virtq_need_notify(&t->vq));
	t->drv.used->idx = 8;
}

/* Entries published while no interrupt could be sent are owed one: the
 * next decision says yes even with nothing new, then it is back to
 * normal. */
static void test_owe_notify(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, true, false, 0);
	assert_true(complete_n(t, 1));
	assert_false(virtq_need_notify(&t->vq)); /* nothing new */
	virtq_owe_notify(&t->vq);
	assert_true(virtq_need_notify(&t->vq));
	assert_false(virtq_need_notify(&t->vq));
}

/* --- kicks ---------------------------------------------------------------- */

static uint16_t avail_event(struct vqt *t)
{
	uint16_t ev;

	memcpy(&ev, &t->drv.used->ring[t->drv.size], sizeof(ev));
	return ev;
}

static void add_one(struct vqt *t)
{
	struct drv_buf b = { t->data, 1, true };

	assert_true(drv_vq_add(&t->drv, &b, 1, false) >= 0);
}

static void kick_event_idx(struct vqt *t, uint16_t s)
{
	vqt_rings(t, 8, true, false, s);
	add_one(t);
	assert_int_equal(pop(t), 1);
	assert_false(virtq_enable_kick(&t->vq));
	assert_int_equal(avail_event(t), (uint16_t)(s + 1));
	assert_int_equal(t->drv.used->flags, 0);
	add_one(t);
	assert_true(drv_vq_kick_needed(&t->drv)); /* it asked */
	add_one(t);
	assert_false(drv_vq_kick_needed(&t->drv)); /* not asked again */
	virtq_disable_kick(&t->vq);
	assert_int_equal(avail_event(t), (uint16_t)(s + 1));
	assert_int_equal(t->drv.used->flags, 0);
	/* Pending buffers: enable says "drain again". */
	assert_true(virtq_enable_kick(&t->vq));
	assert_int_equal(avail_event(t), (uint16_t)(s + 1));
	assert_int_equal(pop(t), 1);
	assert_int_equal(pop(t), 1);
	assert_false(virtq_enable_kick(&t->vq));
	assert_int_equal(avail_event(t), (uint16_t)(s + 3));
	add_one(t);
	assert_true(drv_vq_kick_needed(&t->drv));
}

static void test_kick_event_idx(void **state)
{
	static const uint16_t starts[] = { 0, 65535, 65534, 65533 };

	for (unsigned int i = 0; i < 4; i++)
		kick_event_idx(*state, starts[i]);
}

static void test_kick_flags(void **state)
{
	struct vqt *t = *state;

	vqt_rings(t, 8, false, false, 65535);
	virtq_disable_kick(&t->vq);
	assert_int_equal(t->drv.used->flags, VRING_USED_F_NO_NOTIFY);
	add_one(t);
	assert_false(drv_vq_kick_needed(&t->drv));
	assert_true(virtq_enable_kick(&t->vq)); /* one is pending */
	assert_int_equal(t->drv.used->flags, 0);
	assert_int_equal(pop(t), 1);
	assert_false(virtq_enable_kick(&t->vq));
	add_one(t);
	assert_true(drv_vq_kick_needed(&t->drv));
	virtq_disable_kick(&t->vq);
	assert_int_equal(t->drv.used->flags, VRING_USED_F_NO_NOTIFY);
}

/* --- two RAM regions -------------------------------------------------- */

#define REG 0x10000u

struct two {
	struct fakemem a, b;
	struct gmem m; /* a at GPA, b right after it, apart in the host */
};

static void two_setup(struct two *w)
{
	assert_int_equal(fakemem_create(&w->a, GPA, REG), 0);
	assert_int_equal(fakemem_create(&w->b, GPA + REG, REG), 0);
	memset(&w->m, 0, sizeof(w->m));
	assert_int_equal(gmem_add(&w->m, GPA, REG, w->a.base), 0);
	assert_int_equal(gmem_add(&w->m, GPA + REG, REG, w->b.base), 0);
}

static void two_spanning_chain(struct two *w, struct drv_vq *drv,
			       struct virtq *vq)
{
	struct drv_buf buf[2] = {
		{ GPA + REG - 100, 300, false },
		{ GPA + REG - 1, 2, true },
	};
	struct virtq_elem e;
	struct iovec iov[4];

	assert_int_equal(drv_vq_add(drv, buf, 2, false), 0);
	assert_int_equal(virtq_pop(vq, &e, iov, 4), 1);
	assert_int_equal(e.n_out, 2);
	assert_int_equal(e.n_in, 2);
	assert_iov(&iov[0], w->a.base + REG - 100, 100);
	assert_iov(&iov[1], w->b.base, 200);
	assert_iov(&iov[2], w->a.base + REG - 1, 1);
	assert_iov(&iov[3], w->b.base, 1);
	virtq_push(vq, 0, 0);
	/* The same chain with too few iovecs is a bad chain. */
	assert_true(drv_vq_add(drv, buf, 2, false) >= 0);
	assert_int_equal(virtq_pop(vq, &e, iov, 3), -EBADMSG);
}

static void test_two_regions(void **state)
{
	struct two w;
	struct drv_vq *drv = malloc(sizeof(*drv));
	struct virtq vq;
	uint64_t d, a, u;

	(void)state;
	two_setup(&w);
	assert_int_equal(drv_vq_init(drv, &w.a, 8, false), 0);
	drv_vq_addrs(drv, &d, &a, &u);
	assert_int_equal(virtq_init(&vq, &w.m, 8, d, a, u, false, false), 0);
	two_spanning_chain(&w, drv, &vq);
	/* A ring that straddles the two regions is refused. */
	assert_int_equal(virtq_init(&vq, &w.m, 8, GPA + REG - 64, a, u, 0, 0),
			 -EFAULT);
	assert_int_equal(virtq_init(&vq, &w.m, 8, d, GPA + REG - 8, u, 0, 0),
			 -EFAULT);
	assert_int_equal(virtq_init(&vq, &w.m, 8, d, a, GPA + REG - 32, 0, 0),
			 -EFAULT);
	/* In the second region alone is fine. */
	assert_int_equal(virtq_init(&vq, &w.m, 8, GPA + REG, GPA + REG + 0x1000,
				    GPA + REG + 0x2000, 0, 0), 0);
	free(drv);
	fakemem_destroy(&w.a);
	fakemem_destroy(&w.b);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, vqt_setup, vqt_teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(test_sizes_accepted),
		T(test_sizes_refused),
		T(test_init_misaligned),
		T(test_init_outside_ram),
		T(test_wrap_direct),
		T(test_wrap_indirect),
		T(test_wrap_full_ring),
		T(test_chain_direct_split),
		T(test_chain_indirect_split),
		T(test_chain_one_direction),
		T(test_chain_as_long_as_queue),
		T(test_bad_next_out_of_range),
		T(test_bad_next_at_end_of_ram),
		T(test_bad_loop),
		T(test_bad_loop_empty_descs),
		T(test_bad_address),
		T(test_bad_readable_after_writable),
		T(test_bad_too_many_iovecs),
		T(test_bad_indirect_table),
		T(test_bad_indirect_contents),
		T(test_bad_indirect_placement),
		T(test_indirect_after_direct),
		T(test_indirect_unaligned),
		T(test_served_from_zero),
		T(test_ring_avail_jump),
		T(test_ring_avail_idx_read_per_run),
		T(test_ring_head_out_of_range),
		T(test_ring_head_reused),
		T(test_ring_bad_chain_head_reused),
		T(test_unpop),
		T(test_two_step_pop),
		T(test_notify_event_idx),
		T(test_notify_event_idx_ignores_flag),
		T(test_notify_flags),
		T(test_publish_idempotent),
		T(test_owe_notify),
		T(test_kick_event_idx),
		T(test_kick_flags),
		T(test_two_regions),
		T(test_chain3_linux_request),
		T(test_chain3_declines),
		T(test_chain3_matches_general),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("virtq", tests, NULL, NULL);
}
