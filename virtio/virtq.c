#include "virtio/virtq.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "virtio 1.x rings are little-endian; this code assumes a LE host"
#endif

/* Chains longer than this (direct plus indirect) are refused. */
#define VIRTQ_MAX_CHAIN VIRTQ_MAX_SIZE

uint64_t virtq_desc_bytes(uint16_t size)
{
	return 16ull * size;
}

uint64_t virtq_avail_bytes(uint16_t size)
{
	return 6ull + 2ull * size; /* flags, idx, ring[size], used_event */
}

uint64_t virtq_used_bytes(uint16_t size)
{
	return 6ull + 8ull * size; /* flags, idx, ring[size], avail_event */
}

int virtq_init(struct virtq *vq, const struct gmem *m, uint16_t size,
	       uint64_t desc, uint64_t avail, uint64_t used, bool event_idx,
	       bool indirect)
{
	memset(vq, 0, sizeof(*vq));
	if (!size || size > VIRTQ_MAX_SIZE || (size & (size - 1)))
		return -EINVAL;
	/* Alignment from virtio 1.2, 2.7: 16, 2 and 4 bytes. */
	if ((desc & 15) || (avail & 1) || (used & 3))
		return -EFAULT;
	vq->desc = gmem_ptr(m, desc, virtq_desc_bytes(size));
	vq->avail = gmem_ptr(m, avail, virtq_avail_bytes(size));
	vq->used = gmem_ptr(m, used, virtq_used_bytes(size));
	if (!vq->desc || !vq->avail || !vq->used)
		return -EFAULT;
	vq->mem = m;
	vq->size = size;
	vq->event_idx = event_idx;
	vq->indirect = indirect;
	vq->used_event = &vq->avail->ring[size];
	vq->avail_event = (uint16_t *)&vq->used->ring[size];
	/* The device's positions start at 0 (virtio 1.2, 2.7): whatever the
	 * driver made available before DRIVER_OK is served, and used->idx is
	 * not read back from guest memory. */
	vq->last_avail = 0;
	vq->used_idx = 0;
	vq->published = 0;
	return 0;
}

static int virtq_break(struct virtq *vq)
{
	vq->broken = true;
	vq->avail_seen = vq->last_avail; /* the next pop looks at broken */
	ctr_add(&vq->stats.ring_errors, 1);
	return -EPROTO;
}

/* Copy a descriptor once; the guest may change it under us. */
static struct vring_desc virtq_desc_load(const volatile struct vring_desc *d)
{
	struct vring_desc l;

	l.addr = d->addr;
	l.len = d->len;
	l.flags = d->flags;
	l.next = d->next;
	return l;
}

struct virtq_walk {
	struct iovec *iov;
	unsigned int max_iov;
	unsigned int n;     /* iovecs filled */
	unsigned int n_out; /* of which device-readable */
	unsigned int count; /* descriptors seen, for loop detection */
	bool seen_writable;
	uint64_t out_len, in_len;
};

/* Add one (non-indirect) descriptor's buffer to the walk.  Inlined into
 * both walkers (static, called once, so inlined too): the walk's state
 * then lives in registers, 50 instructions per request less. */
static inline __attribute__((always_inline)) int
virtq_add_buf(const struct virtq *vq, struct virtq_walk *w,
	      const struct vring_desc *d)
{
	bool writable = d->flags & VRING_DESC_F_WRITE;

	if (++w->count > VIRTQ_MAX_CHAIN)
		return -EBADMSG;
	if (writable) {
		w->seen_writable = true;
		w->in_len += d->len;
	} else {
		if (w->seen_writable)
			return -EBADMSG; /* readable after writable */
		w->out_len += d->len;
	}
	if (!d->len)
		return 0;
	if (gmem_iov(vq->mem, d->addr, d->len, w->iov, w->max_iov, &w->n))
		return -EBADMSG; /* outside RAM, or more segments than we take */
	if (!writable)
		w->n_out = w->n;
	return 0;
}

static int virtq_walk_indirect(struct virtq *vq, struct virtq_walk *w,
			       const struct vring_desc *d)
{
	const volatile struct vring_desc *table;
	uint32_t num = d->len / 16, i = 0;

	if (!vq->indirect || (d->flags & VRING_DESC_F_NEXT) || !d->len ||
	    d->len % 16 || num > VIRTQ_MAX_CHAIN)
		return -EBADMSG;
	/* Any address in RAM will do: the spec asks no alignment of an
	 * indirect table, and each entry is copied out with memcpy. */
	table = gmem_ptr(vq->mem, d->addr, d->len);
	if (!table)
		return -EBADMSG;
	for (uint32_t seen = 0;; seen++) {
		struct vring_desc l;
		int ret;

		if (seen >= num)
			return -EBADMSG; /* loop inside the table */
		memcpy(&l, (const void *)&table[i], sizeof(l));
		if (l.flags & VRING_DESC_F_INDIRECT)
			return -EBADMSG; /* nested indirect */
		ret = virtq_add_buf(vq, w, &l);
		if (ret)
			return ret;
		if (!(l.flags & VRING_DESC_F_NEXT))
			return 0;
		if (l.next >= num)
			return -EBADMSG;
		i = l.next;
	}
}

static int virtq_walk_chain(struct virtq *vq, struct virtq_walk *w,
			    uint16_t head)
{
	uint16_t i = head;

	for (unsigned int seen = 0;; seen++) {
		struct vring_desc l;
		int ret;

		if (seen >= vq->size)
			return -EBADMSG; /* loop, or longer than the queue */
		l = virtq_desc_load(&vq->desc[i]);
		/* Zero or more direct descriptors may come before one
		 * indirect descriptor, which ends the chain (2.7.5.3.2). */
		if (l.flags & VRING_DESC_F_INDIRECT)
			return virtq_walk_indirect(vq, w, &l);
		ret = virtq_add_buf(vq, w, &l);
		if (ret)
			return ret;
		if (!(l.flags & VRING_DESC_F_NEXT))
			return 0;
		if (l.next >= vq->size)
			return -EBADMSG;
		i = l.next;
	}
}

static bool virtq_busy(const struct virtq *vq, uint16_t head)
{
	return vq->busy[head];
}

static void virtq_set_busy(struct virtq *vq, uint16_t head, bool on)
{
	vq->busy[head] = on;
}

/* Read avail->idx again, once every entry up to the last one read has
 * been popped.  1: entries to pop, 0: none, -EPROTO: broken. */
static int virtq_fetch_avail(struct virtq *vq)
{
	uint16_t avail_idx;

	if (vq->broken)
		return -EPROTO;
	/* Acquire: ring entries and descriptors are read after the index. */
	avail_idx = __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
	if (avail_idx == vq->last_avail)
		return 0;
	if ((uint16_t)(avail_idx - vq->last_avail) > vq->size)
		return virtq_break(vq);
	vq->avail_seen = avail_idx;
	return 1;
}

int virtq_next_head(struct virtq *vq, uint16_t *head)
{
	uint16_t h;

	/* Entries up to avail_seen were made available before the index
	 * we read (with acquire) said so: no need to read it per pop. */
	if (vq->last_avail == vq->avail_seen) {
		int ret = virtq_fetch_avail(vq);

		if (ret <= 0)
			return ret;
	}
	/* size is a power of two (virtq_init): a mask, not a division. */
	h = __atomic_load_n(&vq->avail->ring[vq->last_avail & (vq->size - 1)],
			    __ATOMIC_RELAXED);
	if (h >= vq->size || virtq_busy(vq, h))
		return virtq_break(vq);
	vq->last_avail++;
	virtq_set_busy(vq, h, true);
	vq->inflight++;
	ctr_add(&vq->stats.popped, 1);
	*head = h;
	return 1;
}

int virtq_read_chain(struct virtq *vq, uint16_t head, struct virtq_elem *e,
		     struct iovec *iov, unsigned int max_iov)
{
	struct virtq_walk w = { .iov = iov, .max_iov = max_iov };
	int ret = virtq_walk_chain(vq, &w, head);

	e->head = head;
	e->iov = iov;
	if (ret) {
		ctr_add(&vq->stats.bad_chains, 1);
		w.n = w.n_out = 0;
		w.out_len = w.in_len = 0;
	}
	e->n_out = w.n_out;
	e->n_in = w.n - w.n_out;
	e->out_len = w.out_len;
	e->in_len = w.in_len;
	return ret;
}

/* A descriptor as two words, addr and len | flags << 32 | next << 48
 * (little-endian), each read once: the guest may change them under us.
 * Through a byte pointer: an indirect table may sit at any address. */
static inline void virtq_desc_words(const volatile struct vring_desc *d,
				    uint64_t *addr, uint64_t *lfn)
{
	const uint8_t *p = (const uint8_t *)(const void *)d;

	memcpy(addr, p, sizeof(*addr));
	memcpy(lfn, p + sizeof(*addr), sizeof(*lfn));
}

/* One table entry for virtq_read_chain3: link is what its flags and
 * next must be, the WRITE flag aside (for the last entry, next is not
 * read).  false: anything else, or not one non-empty buffer in RAM. */
static inline __attribute__((always_inline)) bool
virtq_buf3(const struct gmem *m, const struct gmem_region *first,
	   const volatile struct vring_desc *d, uint32_t link, uint32_t mask,
	   struct iovec *iov, uint32_t *write)
{
	uint64_t addr, lfn;
	uint32_t fn, len;

	virtq_desc_words(d, &addr, &lfn);
	fn = ((uint32_t)(lfn >> 32) & mask) ^ link; /* 0 or WRITE if right */
	if (fn & ~(uint32_t)VRING_DESC_F_WRITE)
		return false;
	*write = fn;
	len = (uint32_t)lfn;
	iov->iov_base = gmem_ptr_first(m, first, addr, len);
	iov->iov_len = len;
	return iov->iov_base;
}

int virtq_read_chain3(const struct virtq *vq, uint16_t head,
		      struct iovec iov[3])
{
	const struct gmem *m = vq->mem;
	const struct gmem_region first = gmem_first(m);
	const volatile struct vring_desc *table;
	uint64_t addr, lfn;
	uint32_t w0, w1, w2; /* each 0 or VRING_DESC_F_WRITE */

	virtq_desc_words(&vq->desc[head], &addr, &lfn);
	/* len 48 and flags INDIRECT alone; next is not read. */
	if (!vq->indirect || (lfn & 0xffffffffffffull) !=
	    (3 * sizeof(*table) | (uint64_t)VRING_DESC_F_INDIRECT << 32))
		return -EAGAIN;
	table = gmem_ptr_first(m, &first, addr, 3 * sizeof(*table));
	if (!table ||
	    !virtq_buf3(m, &first, &table[0], VRING_DESC_F_NEXT | 1u << 16,
			~0u, &iov[0], &w0) ||
	    !virtq_buf3(m, &first, &table[1], VRING_DESC_F_NEXT | 2u << 16,
			~0u, &iov[1], &w1) ||
	    !virtq_buf3(m, &first, &table[2], 0, 0xffff, &iov[2], &w2))
		return -EAGAIN;
	if (w0 > w1 || w1 > w2)
		return -EAGAIN; /* readable after writable */
	return 3 - (int)((w0 + w1 + w2) / VRING_DESC_F_WRITE);
}

int virtq_pop(struct virtq *vq, struct virtq_elem *e, struct iovec *iov,
	      unsigned int max_iov)
{
	uint16_t head;
	int ret = virtq_next_head(vq, &head);

	if (ret <= 0)
		return ret;
	ret = virtq_read_chain(vq, head, e, iov, max_iov);
	return ret ? ret : 1;
}

void virtq_unpop(struct virtq *vq, uint16_t head)
{
	assert(virtq_busy(vq, head));
	virtq_set_busy(vq, head, false);
	vq->inflight--;
	vq->last_avail--;
	ctr_add(&vq->stats.popped, (uint64_t)-1);
}

/* inline: a hint that lets LTO put it into the iothread's loop. */
inline void virtq_push(struct virtq *vq, uint16_t head, uint32_t len)
{
	volatile struct vring_used_elem *u;

	/* Only heads we popped come back: a host invariant. */
	assert(head < vq->size && virtq_busy(vq, head));
	virtq_set_busy(vq, head, false);
	vq->inflight--;
	u = &vq->used->ring[vq->used_idx & (vq->size - 1)];
	u->id = head;
	u->len = len;
	vq->used_idx++;
}

void virtq_publish(struct virtq *vq)
{
	if (vq->published == vq->used_idx)
		return;
	/* Release: the used elements are visible before the new index. */
	__atomic_store_n(&vq->used->idx, vq->used_idx, __ATOMIC_RELEASE);
	vq->published = vq->used_idx;
}

bool virtq_need_notify(struct virtq *vq)
{
	uint16_t old = vq->signalled, now = vq->published;
	bool valid = vq->signalled_valid, need;

	/* Full fence: our used->idx store before the driver's
	 * used_event / flags load (pairs with the driver's fence). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (vq->event_idx) {
		uint16_t ev = __atomic_load_n(vq->used_event, __ATOMIC_RELAXED);

		need = !valid || vring_need_event(ev, now, old);
	} else {
		need = !(__atomic_load_n(&vq->avail->flags, __ATOMIC_RELAXED) &
			 VRING_AVAIL_F_NO_INTERRUPT);
	}
	if (old == now && valid)
		need = false; /* nothing new since the last interrupt */
	vq->signalled = now;
	vq->signalled_valid = true;
	if (need)
		ctr_add(&vq->stats.notifies, 1);
	return need;
}

void virtq_owe_notify(struct virtq *vq)
{
	vq->signalled_valid = false;
}

bool virtq_avail_pending(const struct virtq *vq)
{
	return __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE) !=
	       vq->last_avail;
}

bool virtq_driver_idle(const struct virtq *vq)
{
	uint16_t used = __atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE) != used)
		return false;
	/* With EVENT_IDX the driver also says what it has taken: having
	 * read the used ring dry, it asks for the next interrupt with
	 * used_event = its last used index (Linux's virtqueue_enable_cb).
	 * Until then answers wait in the ring for a driver that may be
	 * about to lose the device (a surprise removal breaks its rings). */
	return !vq->event_idx ||
	       __atomic_load_n(vq->used_event, __ATOMIC_ACQUIRE) == used;
}

bool virtq_enable_kick(struct virtq *vq)
{
	if (vq->event_idx)
		__atomic_store_n(vq->avail_event, vq->last_avail,
				 __ATOMIC_RELAXED);
	else
		__atomic_store_n(&vq->used->flags, 0, __ATOMIC_RELAXED);
	/* Full fence: our avail_event / flags store before the avail->idx
	 * reload, so a driver that missed it sees our request for a kick. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return virtq_avail_pending(vq);
}

void virtq_disable_kick(struct virtq *vq)
{
	/* With EVENT_IDX an old avail_event already suppresses kicks. */
	if (!vq->event_idx)
		__atomic_store_n(&vq->used->flags, VRING_USED_F_NO_NOTIFY,
				 __ATOMIC_RELAXED);
}
