/* Fuzz the request parser.  The input describes a chain (segments, their
 * lengths and readable contents) and the disk's limits; the chain is laid
 * out in fake guest RAM with guard pages (the last writable segment ends
 * at the last byte of RAM) and canary-filled gaps, parsed, and for a
 * request handed to the backend, the backend is simulated by touching
 * every data byte.  Checks:
 *
 *  - BAD_CHAIN exactly when the header is short or no byte is writable,
 *    and then nothing is written;
 *  - DONE: a valid status byte in the last writable byte, used_len 1 on
 *    error and at most the writable length on success;
 *  - SUBMIT: a known type, the range inside the disk, never a write to a
 *    read-only disk, the data iovecs exactly cover len bytes of the right
 *    direction (never the header, never the status byte);
 *  - no byte outside the chain changes;
 *  - a chain of three segments is also given to the iothread's short
 *    way, blk_req_parse3: when it takes the request, blk_req_parse
 *    submits the same one (type, range, data, status, used.len).
 *
 * Input:
 *   [0]    bit 0 read-only, bit 1 DISCARD, bit 2 WRITE_ZEROES negotiated
 *   [1..2] capacity in sectors (little-endian)
 *   [3]    max discard sectors, [4] max write-zeroes sectors
 *   then segments, each a big-endian 16-bit word (bit 15: writable,
 *   bits 0-13: length), a readable one followed by its bytes.
 * Readable segments are placed before writable ones, as the ring walker
 * guarantees; zero-length ones are dropped like it drops them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/req.h"
#include "tests/fuzz/fuzz.h"
#include "tests/support/fakemem.h"

#define FZ_RAM (64u << 10)
#define FZ_GAP 8u
#define FZ_MAXSEG 16
#define FZ_CANARY 0x5a
#define FZ_WFILL 0xee

struct seg {
	uint32_t len;
	bool w;
	const uint8_t *content;
	size_t avail;  /* content bytes present in the input */
	uint8_t *at;   /* where it was placed */
	uint64_t off;  /* offset in its stream (readable or writable) */
};

struct fz {
	struct fakemem *fm;
	struct blk_req_limits l;
	struct seg seg[FZ_MAXSEG];
	unsigned int nseg;
	struct iovec iov[FZ_MAXSEG];
	struct virtq_elem e;
	struct blk_req r;
	uint8_t *status; /* the last writable byte */
};

static const uint8_t fz_canary[FZ_RAM] = { [0 ... FZ_RAM - 1] = FZ_CANARY };


static size_t fz_limits(struct fz *f, const uint8_t *d)
{
	memset(&f->l, 0, sizeof(f->l));
	f->l.ro = d[0] & 1;
	f->l.discard = d[0] & 2;
	f->l.write_zeroes = d[0] & 4;
	f->l.capacity = (uint64_t)(d[1] | d[2] << 8);
	f->l.max_discard_sectors = d[3];
	f->l.max_write_zeroes_sectors = d[4];
	memcpy(f->l.serial, "fuzz-serial-12345678", BLK_ID_BYTES);
	return 5;
}

/* Read the segment list; readable first, then writable. */
static void fz_segments(struct fz *f, const uint8_t *d, size_t n)
{
	struct seg rd[FZ_MAXSEG], wr[FZ_MAXSEG];
	unsigned int nr = 0, nw = 0;
	size_t i = 0;

	while (i + 2 <= n && nr + nw < FZ_MAXSEG) {
		struct seg s = { .len = (uint32_t)((d[i] & 0x3f) << 8 |
						   d[i + 1]),
				 .w = d[i] & 0x80 };

		i += 2;
		if (!s.w) {
			s.content = d + i;
			s.avail = n - i < s.len ? n - i : s.len;
			i += s.avail;
		}
		if (!s.len)
			continue;
		if (s.w)
			wr[nw++] = s;
		else
			rd[nr++] = s;
	}
	memcpy(f->seg, rd, nr * sizeof(*rd));
	memcpy(f->seg + nr, wr, nw * sizeof(*wr));
	f->nseg = nr + nw;
}

static void fz_place(struct fz *f, unsigned int i, uint8_t *p)
{
	struct seg *s = &f->seg[i];

	s->at = p;
	f->iov[i] = (struct iovec){ p, s->len };
	if (s->w) {
		s->off = f->e.in_len;
		memset(p, FZ_WFILL, s->len);
		f->e.n_in++;
		f->e.in_len += s->len;
		f->status = p + s->len - 1;
	} else {
		s->off = f->e.out_len;
		memset(p, 0, s->len);
		memcpy(p, s->content, s->avail);
		f->e.n_out++;
		f->e.out_len += s->len;
	}
}

/* Lay the segments out in address order; those that do not fit are
 * dropped. */
static void fz_layout(struct fz *f)
{
	uint8_t *p = f->fm->base, *end = f->fm->base + FZ_RAM;
	unsigned int last_w = f->nseg;
	unsigned int kept = 0;

	memset(f->fm->base, FZ_CANARY, FZ_RAM);
	memset(&f->e, 0, sizeof(f->e));
	f->e.head = 3;
	f->e.iov = f->iov;
	f->status = NULL;
	if (f->nseg && f->seg[f->nseg - 1].w)
		last_w = f->nseg - 1;
	for (unsigned int i = 0; i < f->nseg; i++) {
		uint32_t len = f->seg[i].len;
		/* The last writable segment ends at the end of RAM. */
		uint8_t *at = i == last_w ? end - len : p;

		if ((size_t)(end - p) < len + FZ_GAP || at < p)
			break;
		f->seg[kept] = f->seg[i];
		fz_place(f, kept++, at);
		p += len + FZ_GAP;
	}
	f->nseg = kept;
}

static void fz_check_gap(const uint8_t *from, const uint8_t *to)
{
	if (to > from)
		CHECK(!memcmp(from, fz_canary, (size_t)(to - from)));
}

/* No byte between the segments changed. */
static void fz_check_canary(struct fz *f)
{
	const uint8_t *p = f->fm->base;

	for (unsigned int i = 0; i < f->nseg; i++) {
		fz_check_gap(p, f->seg[i].at);
		p = f->seg[i].at + f->seg[i].len;
	}
	fz_check_gap(p, f->fm->base + FZ_RAM);
}

/* The segment that holds [b, b+n), in the direction wanted. */
static const struct seg *fz_owner(struct fz *f, const uint8_t *b, size_t n,
				  bool w)
{
	for (unsigned int i = 0; i < f->nseg; i++) {
		const struct seg *s = &f->seg[i];

		if (b >= s->at && b + n <= s->at + s->len)
			return s->w == w ? s : NULL;
	}
	return NULL;
}

/* Every data iovec lies in a segment of the right direction, never on
 * the header or the status byte; the backend reads or writes them all. */
static void fz_check_data(struct fz *f, bool w)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < f->r.niov; i++) {
		uint8_t *b = f->r.iov[i].iov_base;
		size_t n = f->r.iov[i].iov_len;
		const struct seg *s = fz_owner(f, b, n, w);

		CHECK(n > 0 && s);
		CHECK(gmem_contains_host(&f->fm->gm, b, n));
		if (w) {
			CHECK(f->status < b || f->status >= b + n);
			memset(b, 0xab, n);
		} else {
			CHECK(s->off + (uint64_t)(b - s->at) >= 16);
		}
		total += n;
	}
	CHECK(total == f->r.len);
}

static bool fz_range_ok(const struct fz *f)
{
	uint64_t s = f->r.sector, n = f->r.len >> BLK_SECTOR_SHIFT;

	return s <= f->l.capacity && n <= f->l.capacity - s;
}

static void fz_check_dwz(struct fz *f)
{
	CHECK(!f->l.ro && f->r.niov == 0 && f->r.len && fz_range_ok(f));
}

static void fz_check_submit(struct fz *f)
{
	struct blk_req *r = &f->r;

	CHECK(*f->status == FZ_WFILL); /* the backend's to write */
	switch (r->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		CHECK(r->len && r->len % BLK_SECTOR_SIZE == 0);
		CHECK(r->len < UINT32_MAX && fz_range_ok(f));
		CHECK(r->type == VIRTIO_BLK_T_IN || !f->l.ro);
		fz_check_data(f, r->type == VIRTIO_BLK_T_IN);
		CHECK(r->used_len == (r->type == VIRTIO_BLK_T_IN ? r->len + 1
					      : f->e.in_len == 1));
		break;
	case VIRTIO_BLK_T_FLUSH:
		CHECK(r->used_len == (f->e.in_len == 1));
		break;
	case VIRTIO_BLK_T_DISCARD:
		CHECK(f->l.discard && !r->unmap);
		CHECK(r->len <= (uint64_t)f->l.max_discard_sectors << 9);
		fz_check_dwz(f);
		break;
	case VIRTIO_BLK_T_WRITE_ZEROES:
		CHECK(f->l.write_zeroes);
		CHECK(r->len <= (uint64_t)f->l.max_write_zeroes_sectors << 9);
		fz_check_dwz(f);
		break;
	default:
		CHECK(0);
	}
	CHECK(blk_req_finish(r, VIRTIO_BLK_S_OK) == r->used_len);
	CHECK(*f->status == VIRTIO_BLK_S_OK);
	CHECK(blk_req_finish(r, VIRTIO_BLK_S_IOERR) == (f->e.in_len == 1));
}

/* No writable byte changed. */
static void fz_check_untouched(struct fz *f)
{
	for (unsigned int i = 0; i < f->nseg; i++) {
		const struct seg *s = &f->seg[i];

		for (uint32_t k = 0; s->w && k < s->len; k++)
			CHECK(s->at[k] == FZ_WFILL);
	}
}

static void fz_check_done(struct fz *f)
{
	uint8_t st = *f->status;

	CHECK(f->r.status == f->status);
	CHECK(st == VIRTIO_BLK_S_OK || st == VIRTIO_BLK_S_IOERR ||
	      st == VIRTIO_BLK_S_UNSUPP);
	/* used.len is the written prefix: a status alone counts only when
	 * it is the first writable byte. */
	CHECK(f->r.used_len <= f->e.in_len);
	if (st != VIRTIO_BLK_S_OK)
		CHECK(f->r.used_len == (f->e.in_len == 1));
	if (f->r.type != VIRTIO_BLK_T_IN && f->r.type != VIRTIO_BLK_T_GET_ID)
		CHECK(f->r.used_len == (f->e.in_len == 1));
	if (f->r.type == VIRTIO_BLK_T_GET_ID)
		CHECK(f->r.used_len <= BLK_ID_BYTES + 1);
}

/* The short way, on a copy of the three iovecs (blk_req_parse trims
 * its own in place): true if it took the request, into *r3. */
static bool fz_parse3(struct fz *f, struct iovec iov3[3], struct blk_req *r3)
{
	if (f->nseg != 3)
		return false;
	memcpy(iov3, f->iov, 3 * sizeof(*iov3));
	memset(r3, 0, sizeof(*r3));
	return blk_req_parse3(&f->l, f->e.head, iov3, (int)f->e.n_out, r3);
}

static void fz_check_same(const struct fz *f, const struct blk_req *r3)
{
	const struct blk_req *r = &f->r;

	CHECK(r3->head == r->head && r3->type == r->type);
	CHECK(r3->sector == r->sector && r3->len == r->len);
	CHECK(r3->unmap == r->unmap && r3->niov == r->niov);
	CHECK(r3->niov == 1 && r3->iov[0].iov_base == r->iov[0].iov_base &&
	      r3->iov[0].iov_len == r->iov[0].iov_len);
	CHECK(r3->status == r->status && r3->used_len == r->used_len);
	CHECK(r3->in_before_status == r->in_before_status);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct iovec iov3[3];
	struct blk_req r3;
	enum blk_parse ret;
	bool took3;
	size_t off;

	if (size < 5)
		return 0;
	f.fm = fz_mem_once(0x10000, FZ_RAM);
	off = fz_limits(&f, data);
	fz_segments(&f, data + off, size - off);
	fz_layout(&f);
	took3 = fz_parse3(&f, iov3, &r3);
	ret = blk_req_parse(&f.l, &f.e, &f.r);
	if (took3) {
		CHECK(ret == BLK_PARSE_SUBMIT);
		fz_check_same(&f, &r3);
	}
	CHECK(f.r.head == f.e.head);
	if (f.e.out_len < 16 || !f.e.in_len) {
		CHECK(ret == BLK_PARSE_BAD_CHAIN);
		fz_check_untouched(&f);
	} else if (ret == BLK_PARSE_SUBMIT) {
		CHECK(f.r.status == f.status);
		fz_check_submit(&f);
	} else {
		CHECK(ret == BLK_PARSE_ANSWERED);
		fz_check_done(&f);
	}
	fz_check_canary(&f);
	return 0;
}
