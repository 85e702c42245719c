/* Fuzz the ring walker.  The input fills fake guest memory (guard pages
 * on both sides) holding the descriptor table, the avail ring, indirect
 * tables and buffers; we pop everything, push it back, and check:
 *
 *  - every iovec lies inside guest RAM and the lengths add up;
 *  - a head is never handed out twice while in flight;
 *  - a bad chain comes back empty, a broken ring stays broken;
 *  - after pushing, the used ring holds exactly the popped heads: no
 *    head is lost;
 *  - (two-step pops) a chain virtq_read_chain3 takes, the general walk
 *    takes with the same iovecs.
 *
 * Input: 5 header bytes, then guest memory from guest-physical 0.
 *   [0] queue size: 1 << (b % 9)
 *   [1] bit 0 EVENT_IDX, bit 1 INDIRECT_DESC, bits 2-3 iovecs per pop
 *       (1, 3, 16, 64), bit 4 two-step pop, bit 5 unpop and pop again
 *   [2..3] starting ring index (little-endian): last_avail and used->idx
 *   [4] a second round: avail->idx advances by this much more
 * Memory: desc at 0, avail right after, used 4-aligned after that.
 * The driver's avail->idx is whatever the memory says (the entries
 * between the start and it are popped).
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "tests/support/fakemem.h"
#include "virtio/virtq.h"

#define FZ_RAM 8192u
#define FZ_HDR 5
#define FZ_MAX_IOV 64

struct fz {
	struct fakemem *fm;
	struct virtq vq;
	uint16_t size;
	unsigned int max_iov;
	bool two_step, unpop;
	uint16_t heads[2 * VIRTQ_MAX_SIZE]; /* popped, in order */
	unsigned int npopped;
	uint8_t mine[VIRTQ_MAX_SIZE]; /* our view of in-flight heads */
	struct iovec iov[FZ_MAX_IOV];
};


/* Read every byte: a stray iovec faults on a guard page or trips ASan. */
static void fz_touch(const struct iovec *v)
{
	const volatile uint8_t *p = v->iov_base;
	uint8_t sum = 0;

	for (size_t i = 0; i < v->iov_len; i++)
		sum ^= p[i];
	(void)sum;
}

static void fz_check_elem(struct fz *f, const struct virtq_elem *e)
{
	uint64_t out = 0, in = 0;

	CHECK(e->iov == f->iov);
	CHECK(e->n_out + e->n_in <= f->max_iov);
	for (unsigned int i = 0; i < e->n_out + e->n_in; i++) {
		const struct iovec *v = &e->iov[i];

		CHECK(v->iov_len > 0);
		CHECK(gmem_contains_host(&f->fm->gm, v->iov_base, v->iov_len));
		fz_touch(v);
		if (i < e->n_out)
			out += v->iov_len;
		else
			in += v->iov_len;
	}
	CHECK(out == e->out_len);
	CHECK(in == e->in_len);
}

static int fz_pop_one(struct fz *f, struct virtq_elem *e)
{
	struct iovec v3[3];
	uint16_t head;
	int ret, n3;

	if (!f->two_step)
		return virtq_pop(&f->vq, e, f->iov, f->max_iov);
	ret = virtq_next_head(&f->vq, &head);
	if (ret <= 0)
		return ret;
	/* The short way first (it changes nothing): what it takes, the
	 * general walk takes the same, given room for three iovecs. */
	n3 = virtq_read_chain3(&f->vq, head, v3);
	CHECK(n3 == -EAGAIN || (n3 >= 0 && n3 <= 3));
	ret = virtq_read_chain(&f->vq, head, e, f->iov, f->max_iov);
	CHECK(e->head == head);
	if (n3 >= 0 && f->max_iov >= 3) {
		CHECK(ret == 0 && e->n_out == (unsigned int)n3 &&
		      e->n_out + e->n_in == 3);
		for (int i = 0; i < 3; i++)
			CHECK(e->iov[i].iov_base == v3[i].iov_base &&
			      e->iov[i].iov_len == v3[i].iov_len);
	}
	return ret ? ret : 1;
}

/* Pop, and with unpop set hand the head back and pop it again. */
static int fz_pop(struct fz *f, struct virtq_elem *e)
{
	int ret = fz_pop_one(f, e);
	uint16_t head = e->head;

	if (ret == 1 && f->unpop && (head & 1)) {
		virtq_unpop(&f->vq, head);
		ret = fz_pop_one(f, e);
		CHECK(ret == 1 && e->head == head);
	}
	return ret;
}

/* Pop until the ring is empty or broken. */
static void fz_drain(struct fz *f)
{
	for (unsigned int i = 0; i < 2u * f->size + 2; i++) {
		struct virtq_elem e;
		int ret = fz_pop(f, &e);

		if (ret == 0)
			return;
		if (ret == -EPROTO) {
			CHECK(f->vq.broken);
			CHECK(fz_pop(f, &e) == -EPROTO);
			return;
		}
		CHECK(ret == 1 || ret == -EBADMSG);
		CHECK(e.head < f->size);
		CHECK(!f->mine[e.head]);
		f->mine[e.head] = 1;
		f->heads[f->npopped++] = e.head;
		if (ret == 1)
			fz_check_elem(f, &e);
		else
			CHECK(!e.n_out && !e.n_in && !e.out_len && !e.in_len);
		CHECK(f->vq.inflight == f->npopped);
	}
	/* More pops than the ring can hold without an error: a bug. */
	CHECK(0);
}

/* Push everything back in reverse order; the used ring must hold it. */
static void fz_push_all(struct fz *f)
{
	uint16_t start = f->vq.used_idx;
	struct vring_used *u = f->vq.used;

	for (unsigned int i = f->npopped; i-- > 0;) {
		virtq_push(&f->vq, f->heads[i], i);
		f->mine[f->heads[i]] = 0;
	}
	virtq_publish(&f->vq);
	(void)virtq_need_notify(&f->vq);
	CHECK(!virtq_need_notify(&f->vq));
	CHECK(f->vq.inflight == 0);
	CHECK(u->idx == (uint16_t)(start + f->npopped));
	for (unsigned int k = 0; k < f->npopped; k++) {
		const struct vring_used_elem *el =
			&u->ring[(uint16_t)(start + k) % f->size];

		CHECK(el->id == f->heads[f->npopped - 1 - k]);
		CHECK(el->len == f->npopped - 1 - k);
	}
	f->npopped = 0;
}

static const unsigned int fz_iovs[4] = { 1, 3, 16, FZ_MAX_IOV };

static void fz_init(struct fz *f, const uint8_t *data)
{
	uint64_t avail = 16ull * f->size;
	uint64_t used = (avail + virtq_avail_bytes(f->size) + 3) & ~3ull;
	bool ev = data[1] & 1, ind = data[1] & 2;
	uint16_t start = (uint16_t)(data[2] | data[3] << 8);
	struct vring_avail *a = fakemem_hva(f->fm, avail);
	struct vring_used *u = fakemem_hva(f->fm, used);
	uint16_t target = a->idx;

	/* The rings fit by construction: init must take them. */
	a->idx = start;
	u->idx = start;
	CHECK(virtq_init(&f->vq, &f->fm->gm, f->size, 0, avail, used, ev,
			 ind) == 0);
	/* The device starts at 0; start stands for earlier traffic. */
	CHECK(f->vq.last_avail == 0 && f->vq.used_idx == 0);
	f->vq.last_avail = f->vq.avail_seen = start;
	f->vq.used_idx = f->vq.published = start;
	a->idx = target;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	size_t n;

	if (size < FZ_HDR)
		return 0;
	memset(&f, 0, sizeof(f));
	f.fm = fz_mem_once(0, FZ_RAM);
	f.size = (uint16_t)(1u << (data[0] % 9));
	f.max_iov = fz_iovs[(data[1] >> 2) & 3];
	f.two_step = data[1] & 16;
	f.unpop = data[1] & 32;
	memset(f.fm->base, 0, FZ_RAM);
	n = size - FZ_HDR < FZ_RAM ? size - FZ_HDR : FZ_RAM;
	memcpy(f.fm->base, data + FZ_HDR, n);
	fz_init(&f, data);
	fz_drain(&f);
	(void)virtq_enable_kick(&f.vq);
	fz_push_all(&f);
#ifdef FZ_VERBOSE
	fprintf(stderr, "size %u popped %llu bad %llu broken %d\n", f.size,
		(unsigned long long)f.vq.stats.popped,
		(unsigned long long)f.vq.stats.bad_chains, f.vq.broken);
#endif
	if (f.vq.broken || !data[4])
		return 0;
	/* Round two: the driver makes more entries available. */
	f.vq.avail->idx = (uint16_t)(f.vq.avail->idx + data[4]);
	virtq_disable_kick(&f.vq);
	fz_drain(&f);
	fz_push_all(&f);
	(void)virtq_enable_kick(&f.vq);
	return 0;
}
