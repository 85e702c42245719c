#include "blk/req.h"

#include <errno.h>
#include <string.h>

struct blk_hdr {
	uint32_t type;
	uint32_t ioprio;
	uint64_t sector;
};

struct blk_dwz_seg {
	uint64_t sector;
	uint32_t num_sectors;
	uint32_t flags;
};

/* Copy the first len bytes of iov[0..n) into dst, across buffers; the
 * caller has checked that iov holds that many. */
static void iov_gather(const struct iovec *iov, unsigned int n, void *dst,
		       uint64_t len)
{
	uint8_t *d = dst;

	for (unsigned int i = 0; i < n && len; i++) {
		uint64_t c = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(d, iov[i].iov_base, c);
		d += c;
		len -= c;
	}
}

/* The same; inline, so that with len a constant the usual case (all of
 * it in the first buffer) is one fixed-size copy. */
static inline void iov_copy_from(const struct iovec *iov, unsigned int n,
				 void *dst, uint64_t len)
{
	if (__builtin_expect(iov[0].iov_len >= len, 1))
		memcpy(dst, iov[0].iov_base, len);
	else
		iov_gather(iov, n, dst, len);
}

/* Copy src into iov[0..n), as much as fits; returns bytes copied. */
static uint64_t iov_copy_to(struct iovec *iov, unsigned int n, const void *src,
			    uint64_t len)
{
	const uint8_t *s = src;
	uint64_t copied = 0;

	for (unsigned int i = 0; i < n && copied < len; i++) {
		uint64_t c = iov[i].iov_len < len - copied ? iov[i].iov_len
							   : len - copied;

		memcpy(iov[i].iov_base, s + copied, c);
		copied += c;
	}
	return copied;
}

/* Drop the first skip bytes of iov[0..*n) in place; returns the new start. */
static struct iovec *iov_skip(struct iovec *iov, unsigned int *n, uint64_t skip)
{
	while (*n && skip >= iov->iov_len) {
		skip -= iov->iov_len;
		iov++;
		(*n)--;
	}
	if (*n && skip) {
		iov->iov_base = (uint8_t *)iov->iov_base + skip;
		iov->iov_len -= skip;
	}
	return iov;
}

/* Drop the last byte of iov[0..*n) (it is the status byte). */
static uint8_t *iov_pop_last_byte(struct iovec *iov, unsigned int *n)
{
	struct iovec *last = &iov[*n - 1];
	uint8_t *status = (uint8_t *)last->iov_base + last->iov_len - 1;

	if (--last->iov_len == 0)
		(*n)--;
	return status;
}

/* used.len counts the bytes written from the start of the writable part
 * of the chain, with no gap (virtio 1.2, 2.7.8.1).  A status alone
 * counts only when nothing writable comes before it. */
uint32_t blk_req_finish(struct blk_req *r, uint8_t status)
{
	*r->status = status;
	return status == VIRTIO_BLK_S_OK ? r->used_len : !r->in_before_status;
}

static bool blk_range_ok(const struct blk_req_limits *l, uint64_t sector,
			 uint64_t sectors)
{
	uint64_t end;

	return !__builtin_add_overflow(sector, sectors, &end) &&
	       end <= __atomic_load_n(&l->capacity, __ATOMIC_RELAXED);
}

static enum blk_parse blk_answer(struct blk_req *r, uint8_t status)
{
	r->used_len = blk_req_finish(r, status);
	return BLK_PARSE_ANSWERED;
}

static enum blk_parse blk_parse_rw(const struct blk_req_limits *l,
				   struct blk_req *r)
{
	if (r->type == VIRTIO_BLK_T_OUT && l->ro)
		return blk_answer(r, VIRTIO_BLK_S_IOERR);
	if (r->len % BLK_SECTOR_SIZE || r->len >= UINT32_MAX ||
	    !blk_range_ok(l, r->sector, r->len >> BLK_SECTOR_SHIFT))
		return blk_answer(r, VIRTIO_BLK_S_IOERR);
	if (!r->len)
		return blk_answer(r, VIRTIO_BLK_S_OK);
	return BLK_PARSE_SUBMIT;
}

static enum blk_parse blk_parse_dwz(const struct blk_req_limits *l,
				    struct blk_req *r)
{
	bool discard = r->type == VIRTIO_BLK_T_DISCARD;
	uint32_t max = discard ? l->max_discard_sectors
			       : l->max_write_zeroes_sectors;
	struct blk_dwz_seg seg;

	if (discard ? !l->discard : !l->write_zeroes)
		return blk_answer(r, VIRTIO_BLK_S_UNSUPP);
	/* We offer one segment per request (max_*_seg = 1). */
	if (r->len != sizeof(seg))
		return blk_answer(r, r->len % sizeof(seg) || !r->len
					   ? VIRTIO_BLK_S_IOERR
					   : VIRTIO_BLK_S_UNSUPP);
	iov_copy_from(r->iov, r->niov, &seg, sizeof(seg));
	if (seg.flags & ~(uint32_t)VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP ||
	    (discard && seg.flags))
		return blk_answer(r, VIRTIO_BLK_S_UNSUPP);
	if (l->ro || seg.num_sectors > max ||
	    !blk_range_ok(l, seg.sector, seg.num_sectors))
		return blk_answer(r, VIRTIO_BLK_S_IOERR);
	r->sector = seg.sector;
	r->len = (uint64_t)seg.num_sectors << BLK_SECTOR_SHIFT;
	r->unmap = seg.flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;
	r->niov = 0;
	if (!r->len)
		return blk_answer(r, VIRTIO_BLK_S_OK);
	return BLK_PARSE_SUBMIT;
}

static enum blk_parse blk_parse_get_id(const struct blk_req_limits *l,
				       struct blk_req *r)
{
	uint64_t n = iov_copy_to(r->iov, r->niov, l->serial,
				 r->len < BLK_ID_BYTES ? r->len : BLK_ID_BYTES);

	/* The id fills the buffer's start; the status byte, at its end,
	 * extends that prefix only when nothing lies between them. */
	r->used_len = (uint32_t)n + (n == r->len);
	return blk_answer(r, VIRTIO_BLK_S_OK);
}

bool blk_req_parse3(const struct blk_req_limits *l, uint16_t head,
		    struct iovec iov[3], int n_out, struct blk_req *r)
{
	struct blk_hdr h;
	bool in;

	if (iov[0].iov_len != sizeof(h) || iov[2].iov_len != 1)
		return false;
	/* The header is copied once; the guest may change it later. */
	memcpy(&h, iov[0].iov_base, sizeof(h));
	in = h.type == VIRTIO_BLK_T_IN;
	/* A read's data is writable, a write's readable (this checks n_out
	 * too: the header is readable, the status writable). */
	if (n_out != (in ? 1 : 2) ||
	    (!in && (h.type != VIRTIO_BLK_T_OUT || l->ro)))
		return false;
	if (iov[1].iov_len % BLK_SECTOR_SIZE ||
	    !blk_range_ok(l, h.sector, iov[1].iov_len >> BLK_SECTOR_SHIFT))
		return false;
	/* Field by field, not the whole struct: the rest is the backend's
	 * scratch, which it sets before use. */
	r->head = head;
	r->type = h.type;
	r->sector = h.sector;
	r->len = iov[1].iov_len;
	r->unmap = false;
	r->iov = &iov[1];
	r->niov = 1;
	r->status = iov[2].iov_base;
	/* A read fills its data, then the status; a write's writable part
	 * is the status alone. */
	r->used_len = in ? (uint32_t)r->len + 1 : 1;
	r->in_before_status = in ? r->len : 0;
	return true;
}

enum blk_parse blk_req_parse(const struct blk_req_limits *l,
			     struct virtq_elem *e, struct blk_req *r)
{
	struct blk_hdr h;
	unsigned int n_out = e->n_out, n_in = e->n_in;
	struct iovec *out, *in;

	memset(r, 0, sizeof(*r));
	r->head = e->head;
	if (e->out_len < sizeof(h) || !e->in_len)
		return BLK_PARSE_BAD_CHAIN; /* no header, or no status byte */
	/* The header is copied once; the guest may change it later. */
	iov_copy_from(e->iov, n_out, &h, sizeof(h));
	out = iov_skip(e->iov, &n_out, sizeof(h));
	in = e->iov + e->n_out;
	r->status = iov_pop_last_byte(in, &n_in);
	r->type = h.type;
	r->sector = h.sector;
	r->in_before_status = e->in_len - 1;
	r->used_len = !r->in_before_status;

	switch (h.type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_GET_ID:
		r->iov = in;
		r->niov = n_in;
		r->len = e->in_len - 1;
		r->used_len = (uint32_t)e->in_len;
		return h.type == VIRTIO_BLK_T_IN ? blk_parse_rw(l, r)
						 : blk_parse_get_id(l, r);
	case VIRTIO_BLK_T_OUT:
		r->iov = out;
		r->niov = n_out;
		r->len = e->out_len - sizeof(h);
		return blk_parse_rw(l, r);
	case VIRTIO_BLK_T_FLUSH:
		return BLK_PARSE_SUBMIT;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		r->iov = out;
		r->niov = n_out;
		r->len = e->out_len - sizeof(h);
		return blk_parse_dwz(l, r);
	default:
		return blk_answer(r, VIRTIO_BLK_S_UNSUPP);
	}
}
