#include "tests/support/blkdrv.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct blkdrv_hdr {
	uint32_t type;
	uint32_t ioprio;
	uint64_t sector;
};

int blkdrv_q_init(struct blkdrv_q *q, struct fakemem *fm, uint16_t size,
		  bool event_idx)
{
	int ret = drv_vq_init(&q->vq, fm, size, event_idx);

	if (ret)
		return ret;
	q->hdr_gpa = fakemem_alloc(fm, 16u * size, 16);
	q->status_gpa = fakemem_alloc(fm, size, 1);
	if (!q->hdr_gpa || !q->status_gpa)
		return -ENOMEM;
	q->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	q->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->kick_fd < 0 || q->call_fd < 0)
		return -errno;
	return 0;
}

void blkdrv_q_close(struct blkdrv_q *q)
{
	close(q->kick_fd);
	close(q->call_fd);
	q->kick_fd = q->call_fd = -1;
}

struct vdev_queue blkdrv_q_vdev(const struct blkdrv_q *q)
{
	struct vdev_queue c = {
		.size = q->vq.size,
		.max_size = q->vq.size,
		.msix_vector = VDEV_NO_VECTOR,
		.enabled = true,
		.kick_fd = q->kick_fd,
		.call_fd = q->call_fd,
	};

	drv_vq_addrs(&q->vq, &c.desc, &c.avail, &c.used);
	return c;
}

int blkdrv_activate(struct blk_dev *d, const struct gmem *m,
		    uint64_t features, const struct vdev_queue *q,
		    unsigned int nq, void (*needs_reset)(void *opaque),
		    void *opaque)
{
	struct vdev_activation a = {
		.mem = m, .features = features, .q = q, .nq = nq,
		.needs_reset = needs_reset, .opaque = opaque,
	};

	return blk_dev_ops.activate(d, &a);
}

int blkdrv_add(struct blkdrv_q *q, uint32_t type, uint64_t sector,
	       const struct drv_buf *data, unsigned int ndata, bool indirect)
{
	struct drv_buf b[BLK_SEG_MAX + 2];
	uint16_t head = drv_vq_peek_head(&q->vq);
	struct blkdrv_hdr *h = fakemem_hva(q->vq.fm, q->hdr_gpa + 16u * head);
	uint8_t *status = fakemem_hva(q->vq.fm, q->status_gpa + head);

	if (ndata > BLK_SEG_MAX)
		return -E2BIG;
	/* No room: the head is not ours to write (it may be in flight, or
	 * one past the ring). */
	if (q->vq.num_free < (indirect ? 1 : ndata + 2))
		return -ENOSPC;
	h->type = type;
	h->ioprio = 0;
	h->sector = sector;
	*status = 0xff;
	b[0] = (struct drv_buf){ q->hdr_gpa + 16u * head, 16, false };
	memcpy(&b[1], data, ndata * sizeof(*data));
	b[ndata + 1] = (struct drv_buf){ q->status_gpa + head, 1, true };
	return drv_vq_add(&q->vq, b, ndata + 2, indirect);
}

uint8_t blkdrv_status(const struct blkdrv_q *q, uint16_t head)
{
	return *(uint8_t *)fakemem_hva(q->vq.fm, q->status_gpa + head);
}

void blkdrv_kick(struct blkdrv_q *q)
{
	uint64_t one = 1;

	if (drv_vq_kick_needed(&q->vq))
		(void)!write(q->kick_fd, &one, sizeof(one));
}

int blkdrv_wait_irq(struct blkdrv_q *q, int timeout_ms)
{
	struct pollfd p = { .fd = q->call_fd, .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	(void)!read(q->call_fd, &v, sizeof(v));
	return 1;
}

int blkdrv_sync(struct blkdrv_q *q, uint32_t type, uint64_t sector,
		const struct drv_buf *data, unsigned int ndata, bool indirect,
		uint32_t *used_len)
{
	int head = blkdrv_add(q, type, sector, data, ndata, indirect);
	uint16_t h;
	uint32_t len;

	if (head < 0)
		return head;
	blkdrv_kick(q);
	for (;;) {
		if (drv_vq_get_used(&q->vq, &h, &len)) {
			/* One request at a time: it must be ours. */
			if (h != head)
				return -EPROTO;
			if (used_len)
				*used_len = len;
			return blkdrv_status(q, h);
		}
		if (drv_vq_enable_cb(&q->vq))
			continue;
		if (!blkdrv_wait_irq(q, 5000))
			return -ETIMEDOUT;
	}
}
