#include "tests/support/driver.h"

#include <errno.h>
#include <string.h>

void drv_vq_addrs(const struct drv_vq *q, uint64_t *desc, uint64_t *avail,
		  uint64_t *used)
{
	*desc = q->desc_gpa;
	*avail = q->avail_gpa;
	*used = q->used_gpa;
}

int drv_vq_init(struct drv_vq *q, struct fakemem *fm, uint16_t size,
		bool event_idx)
{
	memset(q, 0, sizeof(*q));
	q->fm = fm;
	q->size = size;
	q->event_idx = event_idx;
	q->desc_gpa = fakemem_alloc(fm, 16u * size, 16);
	q->avail_gpa = fakemem_alloc(fm, 6u + 2u * size, 2);
	q->used_gpa = fakemem_alloc(fm, 6u + 8u * size, 4);
	if (!q->desc_gpa || !q->avail_gpa || !q->used_gpa)
		return -ENOMEM;
	q->desc = fakemem_hva(fm, q->desc_gpa);
	q->avail = fakemem_hva(fm, q->avail_gpa);
	q->used = fakemem_hva(fm, q->used_gpa);
	memset(q->desc, 0, 16u * size);
	memset(q->avail, 0, 6u + 2u * size);
	memset(q->used, 0, 6u + 8u * size);
	for (uint16_t i = 0; i < size; i++)
		q->desc[i].next = (uint16_t)(i + 1);
	q->num_free = size;
	return 0;
}

static void drv_fill(struct vring_desc *d, const struct drv_buf *b)
{
	d->addr = b->gpa;
	d->len = b->len;
	d->flags = b->write ? VRING_DESC_F_WRITE : 0;
}

/* head's indirect table (a 1024-entry one), allocated on first use. */
static uint64_t drv_indirect_table(struct drv_vq *q, uint16_t head)
{
	if (!q->indirect_gpa[head])
		q->indirect_gpa[head] = fakemem_alloc(q->fm, 16u * 1024, 16);
	return q->indirect_gpa[head];
}

int drv_vq_alloc_indirect(struct drv_vq *q)
{
	for (uint16_t h = 0; h < q->size; h++)
		if (!drv_indirect_table(q, h))
			return -ENOMEM;
	return 0;
}

static int drv_add_indirect(struct drv_vq *q, const struct drv_buf *b,
			    unsigned int n, uint16_t head)
{
	uint64_t t = drv_indirect_table(q, head);
	struct vring_desc *table;

	if (!t)
		return -ENOMEM;
	table = fakemem_hva(q->fm, t);
	for (unsigned int i = 0; i < n; i++) {
		drv_fill(&table[i], &b[i]);
		if (i + 1 < n) {
			table[i].flags |= VRING_DESC_F_NEXT;
			table[i].next = (uint16_t)(i + 1);
		}
	}
	q->desc[head].addr = t;
	q->desc[head].len = 16u * n;
	q->desc[head].flags = VRING_DESC_F_INDIRECT;
	return 0;
}

int drv_vq_add(struct drv_vq *q, const struct drv_buf *b, unsigned int n,
	       bool indirect)
{
	unsigned int need = indirect ? 1 : n;
	uint16_t head = q->free_head, i = head;

	if (!n || need > q->num_free || n > 1024)
		return -ENOSPC;
	if (indirect) {
		if (drv_add_indirect(q, b, n, head))
			return -ENOMEM;
		q->free_head = q->desc[head].next;
	} else {
		for (unsigned int k = 0; k < n; k++) {
			drv_fill(&q->desc[i], &b[k]);
			if (k + 1 < n)
				q->desc[i].flags |= VRING_DESC_F_NEXT;
			if (k + 1 < n)
				i = q->desc[i].next;
		}
		q->free_head = q->desc[i].next;
	}
	q->num_free -= need;
	q->chain_len[head] = (uint16_t)need;
	q->avail->ring[q->avail_idx % q->size] = head;
	q->avail_idx++;
	/* Release: descriptors and ring entry before the index. */
	__atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
	return head;
}

bool drv_vq_kick_needed(struct drv_vq *q)
{
	uint16_t old = q->kicked_idx, now = q->avail_idx;

	q->kicked_idx = now;
	/* Full fence: avail->idx store before avail_event / flags load. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (q->event_idx) {
		uint16_t ev = __atomic_load_n(
			(uint16_t *)&q->used->ring[q->size], __ATOMIC_RELAXED);

		return vring_need_event(ev, now, old);
	}
	return !(__atomic_load_n(&q->used->flags, __ATOMIC_RELAXED) &
		 VRING_USED_F_NO_NOTIFY);
}

static void drv_free_chain(struct drv_vq *q, uint16_t head)
{
	uint16_t i = head;

	for (uint16_t k = 1; k < q->chain_len[head]; k++)
		i = q->desc[i].next;
	q->desc[i].next = q->free_head;
	q->free_head = head;
	q->num_free += q->chain_len[head];
}

int drv_vq_get_used(struct drv_vq *q, uint16_t *head, uint32_t *len)
{
	struct vring_used_elem *u;

	/* Acquire: the used element after the index that covers it. */
	if (__atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) == q->last_used)
		return 0;
	u = &q->used->ring[q->last_used % q->size];
	*head = (uint16_t)u->id;
	*len = u->len;
	q->last_used++;
	drv_free_chain(q, *head);
	return 1;
}

bool drv_vq_enable_cb(struct drv_vq *q)
{
	if (q->event_idx)
		__atomic_store_n(&q->avail->ring[q->size], q->last_used,
				 __ATOMIC_RELAXED);
	else
		__atomic_store_n(&q->avail->flags, 0, __ATOMIC_RELAXED);
	/* Full fence: used_event store before the used->idx reload. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) != q->last_used;
}

void drv_vq_disable_cb(struct drv_vq *q)
{
	if (!q->event_idx)
		__atomic_store_n(&q->avail->flags, VRING_AVAIL_F_NO_INTERRUPT,
				 __ATOMIC_RELAXED);
}
