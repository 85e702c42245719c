/* virtio-blk request checking: every request type, header and data
 * split across descriptors in many layouts, every refused request, and
 * the used lengths.
 *
 * Chains are laid out in fake guest RAM with guard pages: the first
 * segment starts at the first byte of RAM and the last writable segment
 * ends at the last one, and the gaps between segments hold a canary, so
 * an access outside the chain faults or shows. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "blk/req.h"
#include "tests/support/fakemem.h"
#include "tests/support/rng.h"

#define RAM (256u << 10)
#define GAP 32u
#define CANARY 0x5a
#define WFILL 0xee
#define MAXSEG 16
#define STREAM (64u << 10)
#define CAP 1024ull /* sectors */

struct hdr {
	uint32_t type;
	uint32_t ioprio;
	uint64_t sector;
};

struct dwz {
	uint64_t sector;
	uint32_t num;
	uint32_t flags;
};

/* Segment lengths, readable then writable, each list ended by 0. */
struct layout {
	uint32_t rd[MAXSEG];
	uint32_t wr[MAXSEG];
};

struct rq {
	struct fakemem fm;
	struct blk_req_limits l;
	struct iovec iov[2 * MAXSEG];
	struct virtq_elem e;
	struct blk_req r;
	uint8_t out[STREAM];    /* the readable byte stream */
	uint8_t *rmap[STREAM];  /* host address of each readable byte */
	uint8_t *wmap[STREAM];  /* host address of each writable byte */
	struct iovec seg[2 * MAXSEG]; /* the segments, as laid out */
	uint64_t out_n, in_n;
};

static int rq_setup(void **state)
{
	struct rq *t = calloc(1, sizeof(*t));

	if (!t || fakemem_create(&t->fm, 0x100000, RAM))
		return -1;
	t->l.capacity = CAP;
	t->l.discard = t->l.write_zeroes = true;
	t->l.max_discard_sectors = 64;
	t->l.max_write_zeroes_sectors = 128;
	memcpy(t->l.serial, "0123456789abcdefghij", BLK_ID_BYTES);
	*state = t;
	return 0;
}

static int rq_teardown(void **state)
{
	struct rq *t = *state;

	fakemem_destroy(&t->fm);
	free(t);
	return 0;
}

/* Readable stream: header, then payload. */
static void rq_hdr(struct rq *t, uint32_t type, uint64_t sector)
{
	struct hdr h = { type, 0, sector };

	memcpy(t->out, &h, sizeof(h));
	for (unsigned int i = sizeof(h); i < STREAM; i++)
		t->out[i] = (uint8_t)(i * 7 + 1);
}

static void rq_dwz(struct rq *t, uint64_t sector, uint32_t num, uint32_t flags)
{
	struct dwz s = { sector, num, flags };

	memcpy(t->out + sizeof(struct hdr), &s, sizeof(s));
}

static void rq_seg(struct rq *t, uint8_t *p, uint32_t len, bool w)
{
	struct virtq_elem *e = &t->e;
	unsigned int n = e->n_out + e->n_in;

	t->iov[n] = (struct iovec){ p, len };
	for (uint32_t i = 0; i < len; i++) {
		if (w) {
			t->wmap[e->in_len + i] = p + i;
			p[i] = WFILL;
		} else {
			t->rmap[e->out_len + i] = p + i;
			p[i] = t->out[e->out_len + i];
		}
	}
	if (w) {
		e->n_in++;
		e->in_len += len;
	} else {
		e->n_out++;
		e->out_len += len;
	}
}

/* Lay the chain out and build the element the ring walker would. */
static void rq_build(struct rq *t, const struct layout *lo)
{
	uint8_t *p = t->fm.base, *end = t->fm.base + t->fm.size;
	unsigned int nw = 0;

	memset(t->fm.base, CANARY, t->fm.size);
	memset(&t->e, 0, sizeof(t->e));
	memset(&t->r, 0xcc, sizeof(t->r));
	t->e.head = 77;
	t->e.iov = t->iov;
	for (unsigned int i = 0; lo->rd[i]; i++) {
		rq_seg(t, p, lo->rd[i], false);
		p += lo->rd[i] + GAP;
	}
	while (lo->wr[nw])
		nw++;
	for (unsigned int i = 0; i < nw; i++) {
		/* The last writable segment ends at the end of RAM. */
		uint8_t *at = i + 1 == nw ? end - lo->wr[i] : p;

		assert_true(at >= p);
		rq_seg(t, at, lo->wr[i], true);
		p += lo->wr[i] + GAP;
	}
	t->out_n = t->e.out_len;
	t->in_n = t->e.in_len;
	memcpy(t->seg, t->iov, sizeof(t->seg));
}

static bool rq_in_seg(const struct rq *t, const uint8_t *p)
{
	for (unsigned int i = 0; i < t->e.n_out + t->e.n_in; i++) {
		const uint8_t *b = t->seg[i].iov_base;

		if (p >= b && p < b + t->seg[i].iov_len)
			return true;
	}
	return false;
}

/* Nothing outside the segments was touched. */
static void assert_canaries(struct rq *t)
{
	for (size_t i = 0; i < t->fm.size; i++) {
		uint8_t *p = t->fm.base + i;

		if (*p != CANARY && !rq_in_seg(t, p))
			fail_msg("byte %zu outside the chain changed", i);
	}
}

/* The device never writes a readable (driver-to-device) byte, whatever
 * the request: the status byte included. */
static void assert_readable_untouched(struct rq *t)
{
	for (uint64_t i = 0; i < t->out_n; i++)
		if (*t->rmap[i] != t->out[i])
			fail_msg("readable byte %llu changed",
				 (unsigned long long)i);
}

static enum blk_parse rq_parse(struct rq *t, const struct layout *lo)
{
	enum blk_parse ret;

	rq_build(t, lo);
	ret = blk_req_parse(&t->l, &t->e, &t->r);
	assert_int_equal(t->r.head, 77);
	assert_canaries(t);
	assert_readable_untouched(t);
	return ret;
}

static uint8_t *status_ptr(struct rq *t)
{
	return t->wmap[t->in_n - 1];
}

/* r->iov..niov covers exactly stream bytes map[0..len), in order. */
static void assert_data(const struct blk_req *r, uint8_t *const *map,
			uint64_t len)
{
	uint64_t k = 0;

	for (unsigned int i = 0; i < r->niov; i++) {
		const uint8_t *b = r->iov[i].iov_base;

		assert_true(r->iov[i].iov_len > 0);
		for (size_t j = 0; j < r->iov[i].iov_len; j++, k++) {
			assert_true(k < len);
			assert_ptr_equal(b + j, map[k]);
		}
	}
	assert_int_equal(k, len);
}

/* Writable bytes other than the status byte are still as we left them. */
static void assert_writable_untouched(struct rq *t)
{
	for (uint64_t i = 0; i + 1 < t->in_n; i++)
		assert_int_equal(*t->wmap[i], WFILL);
}

/* Answered here: status byte, used length, backend not involved. */
static void expect_answered(struct rq *t, const struct layout *lo,
			    uint8_t status, uint32_t used_len)
{
	assert_int_equal(rq_parse(t, lo), BLK_PARSE_ANSWERED);
	assert_ptr_equal(t->r.status, status_ptr(t));
	assert_int_equal(*t->r.status, status);
	assert_int_equal(t->r.used_len, used_len);
}

static uint64_t layout_in_len(const struct layout *lo)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < MAXSEG; i++)
		n += lo->wr[i];
	return n;
}

/* Refused: only the status byte is written, so used.len counts it only
 * when it is the first writable byte (the written prefix, 2.7.8.1). */
static void expect_refused(struct rq *t, const struct layout *lo,
			   uint8_t status)
{
	expect_answered(t, lo, status, layout_in_len(lo) == 1);
	assert_writable_untouched(t);
}

static void expect_submit(struct rq *t, const struct layout *lo,
			  uint32_t type)
{
	assert_int_equal(rq_parse(t, lo), BLK_PARSE_SUBMIT);
	assert_int_equal(t->r.type, type);
	assert_ptr_equal(t->r.status, status_ptr(t));
	/* The status byte is the backend's to write. */
	assert_int_equal(*status_ptr(t), WFILL);
	assert_writable_untouched(t);
}

/* --- IN --------------------------------------------------------------- */

static const struct layout in_layouts[] = {
	{ { 16 }, { 4096, 1 } },
	{ { 1, 15 }, { 4096, 1 } },
	{ { 8, 8 }, { 512, 3584, 1 } },
	{ { 16 }, { 4097 } },                 /* data + status in one */
	{ { 16 }, { 4095, 2 } },              /* status shares a segment */
	{ { 4, 4, 4, 4 }, { 1, 4094, 1, 1 } },
	{ { 16, 100 }, { 4096, 1 } },         /* readable extra: ignored */
	{ { 3, 13 }, { 2048, 2048, 1 } },
};

static void test_in_layouts(void **state)
{
	struct rq *t = *state;

	rq_hdr(t, VIRTIO_BLK_T_IN, 17);
	for (unsigned int i = 0; i < sizeof(in_layouts) / sizeof(*in_layouts);
	     i++) {
		expect_submit(t, &in_layouts[i], VIRTIO_BLK_T_IN);
		assert_int_equal(t->r.sector, 17);
		assert_int_equal(t->r.len, 4096);
		assert_data(&t->r, t->wmap, 4096);
		assert_int_equal(t->r.used_len, 4097);
		/* Success: data + status; failure: only the status byte is
		 * written, after the data: no written prefix at all. */
		assert_int_equal(blk_req_finish(&t->r, VIRTIO_BLK_S_OK), 4097);
		assert_int_equal(*status_ptr(t), VIRTIO_BLK_S_OK);
		assert_int_equal(blk_req_finish(&t->r, VIRTIO_BLK_S_IOERR), 0);
		assert_int_equal(*status_ptr(t), VIRTIO_BLK_S_IOERR);
	}
}

/* A read of nothing: answered at once. */
static void test_in_empty(void **state)
{
	struct layout lo = { { 16 }, { 1 } };
	struct rq *t = *state;

	rq_hdr(t, VIRTIO_BLK_T_IN, 0);
	expect_answered(t, &lo, VIRTIO_BLK_S_OK, 1);
	rq_hdr(t, VIRTIO_BLK_T_OUT, 0);
	expect_answered(t, &lo, VIRTIO_BLK_S_OK, 1);
}

/* --- OUT -------------------------------------------------------------- */

static const struct layout out_layouts[] = {
	{ { 16, 4096 }, { 1 } },
	{ { 4112 }, { 1 } },                   /* header + data in one */
	{ { 1, 15, 4096 }, { 1 } },
	{ { 8, 108, 3996 }, { 1 } },           /* header end + data start */
	{ { 16, 512, 512, 512, 512, 512, 512, 512, 512 }, { 1 } },
	{ { 20, 4092 }, { 1 } },
	{ { 16, 4096 }, { 9 } },               /* writable extra: ignored */
	{ { 16, 4095, 1 }, { 1 } },
};

static void test_out_layouts(void **state)
{
	struct rq *t = *state;

	rq_hdr(t, VIRTIO_BLK_T_OUT, 1000);
	for (unsigned int i = 0;
	     i < sizeof(out_layouts) / sizeof(*out_layouts); i++) {
		expect_submit(t, &out_layouts[i], VIRTIO_BLK_T_OUT);
		assert_int_equal(t->r.sector, 1000);
		assert_int_equal(t->r.len, 4096);
		assert_data(&t->r, t->rmap + sizeof(struct hdr), 4096);
		assert_int_equal(blk_req_finish(&t->r, VIRTIO_BLK_S_OK),
				 layout_in_len(&out_layouts[i]) == 1);
		assert_int_equal(*status_ptr(t), VIRTIO_BLK_S_OK);
	}
}

/* --- FLUSH, GET_ID ------------------------------------------------------ */

static void test_flush(void **state)
{
	struct layout lo[] = { { { 16 }, { 1 } }, { { 9, 7 }, { 1 } } };
	struct rq *t = *state;

	rq_hdr(t, VIRTIO_BLK_T_FLUSH, 0);
	for (unsigned int i = 0; i < 2; i++) {
		expect_submit(t, &lo[i], VIRTIO_BLK_T_FLUSH);
		assert_int_equal(t->r.niov, 0);
		assert_int_equal(blk_req_finish(&t->r, VIRTIO_BLK_S_OK), 1);
	}
	t->l.ro = true; /* flushing a read-only disk is fine */
	expect_submit(t, &lo[0], VIRTIO_BLK_T_FLUSH);
}

/* used.len is the written prefix: the id, plus the status byte only when
 * it follows the id directly (a buffer of at most 20 bytes). */
static void expect_id(struct rq *t, const struct layout *lo,
		      const char *want, uint32_t copied)
{
	expect_answered(t, lo, VIRTIO_BLK_S_OK,
		    copied + (layout_in_len(lo) == copied + 1));
	for (uint32_t i = 0; i < copied; i++)
		assert_int_equal(*t->wmap[i], (uint8_t)want[i]);
	for (uint64_t i = copied; i + 1 < t->in_n; i++)
		assert_int_equal(*t->wmap[i], WFILL);
}

static void test_get_id(void **state)
{
	struct layout full = { { 16 }, { 20, 1 } };
	struct layout split = { { 8, 8 }, { 5, 5, 11 } };
	struct layout longer = { { 16 }, { 30, 1 } };
	struct layout shorter = { { 16 }, { 8, 1 } };
	struct layout none = { { 16 }, { 1 } };
	struct rq *t = *state;

	rq_hdr(t, VIRTIO_BLK_T_GET_ID, 0);
	expect_id(t, &full, "0123456789abcdefghij", 20);
	expect_id(t, &split, "0123456789abcdefghij", 20);
	expect_id(t, &longer, "0123456789abcdefghij", 20);
	expect_id(t, &shorter, "01234567", 8);
	expect_id(t, &none, "", 0);
	/* A short serial is padded with NULs to 20 bytes. */
	memset(t->l.serial, 0, sizeof(t->l.serial));
	memcpy(t->l.serial, "abc", 3);
	expect_id(t, &full, "abc\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20);
	t->l.ro = true;
	expect_id(t, &shorter, "abc\0\0\0\0", 8);
}

/* --- DISCARD, WRITE_ZEROES -------------------------------------------- */

static const struct layout dwz_layouts[] = {
	{ { 16, 16 }, { 1 } },
	{ { 32 }, { 1 } },
	{ { 16, 8, 8 }, { 1 } },
	{ { 4, 12, 16 }, { 1 } },
	{ { 20, 12 }, { 4 } },
};

static void dwz_ok(struct rq *t, uint32_t type, uint32_t flags, bool unmap)
{
	rq_hdr(t, type, 999); /* the header's sector is not used */
	rq_dwz(t, 100, 64, flags);
	for (unsigned int i = 0;
	     i < sizeof(dwz_layouts) / sizeof(*dwz_layouts); i++) {
		expect_submit(t, &dwz_layouts[i], type);
		assert_int_equal(t->r.sector, 100);
		assert_int_equal(t->r.len, 64 * 512);
		assert_int_equal(t->r.unmap, unmap);
		assert_int_equal(t->r.niov, 0);
		assert_int_equal(blk_req_finish(&t->r, VIRTIO_BLK_S_OK),
				 layout_in_len(&dwz_layouts[i]) == 1);
	}
}

static void test_discard(void **state)
{
	dwz_ok(*state, VIRTIO_BLK_T_DISCARD, 0, false);
}

static void test_write_zeroes(void **state)
{
	dwz_ok(*state, VIRTIO_BLK_T_WRITE_ZEROES, 0, false);
	dwz_ok(*state, VIRTIO_BLK_T_WRITE_ZEROES,
	       VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP, true);
}

/* Range checks for discard / write zeroes. */
static void test_dwz_range(void **state)
{
	struct layout lo = { { 16, 16 }, { 1 } };
	struct rq *t = *state;
	const uint32_t types[] = { VIRTIO_BLK_T_DISCARD,
				   VIRTIO_BLK_T_WRITE_ZEROES };

	for (unsigned int i = 0; i < 2; i++) {
		uint32_t max = i ? 128 : 64;

		rq_hdr(t, types[i], 0);
		rq_dwz(t, CAP - max, max, 0); /* up to the end, the maximum */
		expect_submit(t, &lo, types[i]);
		rq_dwz(t, 0, max + 1, 0);
		expect_refused(t, &lo, VIRTIO_BLK_S_IOERR);
		rq_dwz(t, CAP - 1, 2, 0);
		expect_refused(t, &lo, VIRTIO_BLK_S_IOERR);
		rq_dwz(t, CAP, 1, 0);
		expect_refused(t, &lo, VIRTIO_BLK_S_IOERR);
		rq_dwz(t, UINT64_MAX, 1, 0);
		expect_refused(t, &lo, VIRTIO_BLK_S_IOERR);
		rq_dwz(t, UINT64_MAX - 2, 4, 0); /* wraps to 1 */
		expect_refused(t, &lo, VIRTIO_BLK_S_IOERR);
		rq_dwz(t, 0, UINT32_MAX, 0);
		expect_refused(t, &lo, VIRTIO_BLK_S_IOERR);
		rq_dwz(t, 5, 0, 0); /* nothing to do */
		expect_answered(t, &lo, VIRTIO_BLK_S_OK, 1);
	}
}

static void test_dwz_refused(void **state)
{
	struct layout one = { { 16, 16 }, { 1 } };
	struct layout two = { { 16, 32 }, { 1 } };
	struct layout odd[] = { { { 16, 8 }, { 1 } }, { { 16, 24 }, { 1 } },
				{ { 16, 17 }, { 1 } }, { { 16 }, { 1 } } };
	struct rq *t = *state;

	rq_hdr(t, VIRTIO_BLK_T_DISCARD, 0);
	rq_dwz(t, 0, 8, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
	expect_refused(t, &one, VIRTIO_BLK_S_UNSUPP); /* discard + unmap */
	rq_hdr(t, VIRTIO_BLK_T_WRITE_ZEROES, 0);
	rq_dwz(t, 0, 8, 2);
	expect_refused(t, &one, VIRTIO_BLK_S_UNSUPP); /* unknown flag */
	rq_dwz(t, 0, 8, 0x80000001u);
	expect_refused(t, &one, VIRTIO_BLK_S_UNSUPP);
	rq_dwz(t, 0, 8, 0);
	expect_refused(t, &two, VIRTIO_BLK_S_UNSUPP); /* two segments */
	for (unsigned int i = 0; i < 4; i++)          /* not whole segments */
		expect_refused(t, &odd[i], VIRTIO_BLK_S_IOERR);
	t->l.write_zeroes = false;
	expect_refused(t, &one, VIRTIO_BLK_S_UNSUPP); /* not negotiated */
	rq_hdr(t, VIRTIO_BLK_T_DISCARD, 0);
	t->l.discard = false;
	expect_refused(t, &one, VIRTIO_BLK_S_UNSUPP);
}

/* --- refused reads and writes ------------------------------------------ */

static void rw_refused(struct rq *t, uint32_t type, const struct layout *lo)
{
	rq_hdr(t, type, 0);
	expect_refused(t, lo, VIRTIO_BLK_S_IOERR); /* not whole sectors */
}

static void test_len_not_sector_multiple(void **state)
{
	struct layout in[] = { { { 16 }, { 4096 } }, { { 16 }, { 1, 1 } },
			       { { 16 }, { 511, 1 } }, { { 16 }, { 513, 1 } } };
	struct layout out[] = { { { 16, 100 }, { 1 } },
				{ { 16, 511 }, { 1 } },
				{ { 16, 4096, 1 }, { 1 } } };

	for (unsigned int i = 0; i < 4; i++)
		rw_refused(*state, VIRTIO_BLK_T_IN, &in[i]);
	for (unsigned int i = 0; i < 3; i++)
		rw_refused(*state, VIRTIO_BLK_T_OUT, &out[i]);
}

static void sector_check(struct rq *t, uint32_t type, const struct layout *lo)
{
	/* 4096 bytes = 8 sectors. */
	rq_hdr(t, type, CAP - 8);
	expect_submit(t, lo, type); /* up to the very end */
	rq_hdr(t, type, CAP - 7);
	expect_refused(t, lo, VIRTIO_BLK_S_IOERR);
	rq_hdr(t, type, CAP);
	expect_refused(t, lo, VIRTIO_BLK_S_IOERR);
	rq_hdr(t, type, UINT64_MAX);
	expect_refused(t, lo, VIRTIO_BLK_S_IOERR);
	rq_hdr(t, type, UINT64_MAX - 3); /* sector + 8 wraps to 4 */
	expect_refused(t, lo, VIRTIO_BLK_S_IOERR);
	rq_hdr(t, type, 1ull << 55); /* sector << 9 would overflow */
	expect_refused(t, lo, VIRTIO_BLK_S_IOERR);
}

static void test_sector_past_capacity(void **state)
{
	struct layout in = { { 16 }, { 4096, 1 } };
	struct layout out = { { 16, 4096 }, { 1 } };

	sector_check(*state, VIRTIO_BLK_T_IN, &in);
	sector_check(*state, VIRTIO_BLK_T_OUT, &out);
}

/* Fill the stack below the caller with a pattern, so that a byte the
 * parser leaves out of its copy of the header shows as 0xa5. */
static void __attribute__((noinline)) poison_stack(void)
{
	volatile uint8_t b[8192];

	for (unsigned int i = 0; i < sizeof(b); i++)
		b[i] = 0xa5;
}

/* Every byte of the header counts, wherever the header sits: a sector
 * with no zero byte, past the capacity, is refused and read back whole. */
static void test_header_read_whole(void **state)
{
	struct rq *t = *state;
	const uint64_t sector = 0x8877665544332211ull;
	struct layout lo[] = { { { 16 }, { 4096, 1 } },
			       { { 15, 1 }, { 4096, 1 } },
			       { { 8, 8 }, { 4096, 1 } },
			       { { 1, 15 }, { 4096, 1 } } };

	for (unsigned int i = 0; i < sizeof(lo) / sizeof(*lo); i++) {
		rq_hdr(t, VIRTIO_BLK_T_IN, sector);
		poison_stack();
		expect_refused(t, &lo[i], VIRTIO_BLK_S_IOERR);
		assert_int_equal(t->r.sector, sector);
		assert_int_equal(t->r.type, VIRTIO_BLK_T_IN);
	}
}

static void test_read_only(void **state)
{
	struct layout out = { { 16, 4096 }, { 1 } };
	struct layout in = { { 16 }, { 4096, 1 } };
	struct layout dwz = { { 16, 16 }, { 1 } };
	struct rq *t = *state;

	t->l.ro = true;
	rq_hdr(t, VIRTIO_BLK_T_OUT, 0);
	expect_refused(t, &out, VIRTIO_BLK_S_IOERR);
	rq_hdr(t, VIRTIO_BLK_T_DISCARD, 0);
	rq_dwz(t, 0, 8, 0);
	expect_refused(t, &dwz, VIRTIO_BLK_S_IOERR);
	rq_hdr(t, VIRTIO_BLK_T_WRITE_ZEROES, 0);
	rq_dwz(t, 0, 8, 0);
	expect_refused(t, &dwz, VIRTIO_BLK_S_IOERR);
	rq_hdr(t, VIRTIO_BLK_T_IN, 0);
	expect_submit(t, &in, VIRTIO_BLK_T_IN); /* reads are fine */
}

static void test_unknown_type(void **state)
{
	static const uint32_t types[] = { 2, 3, 5, 6, 7, 9, 10, 12, 14, 15,
					  16, 0x80000000u, UINT32_MAX };
	struct layout lo[] = { { { 16 }, { 512, 1 } },
			       { { 16, 512 }, { 1 } } };
	struct rq *t = *state;

	for (unsigned int i = 0; i < sizeof(types) / sizeof(*types); i++) {
		rq_hdr(t, types[i], 0);
		expect_refused(t, &lo[i % 2], VIRTIO_BLK_S_UNSUPP);
	}
}

/* --- bad chains: no header, no status byte ------------------------------ */

static void expect_bad_chain(struct rq *t, const struct layout *lo)
{
	assert_int_equal(rq_parse(t, lo), BLK_PARSE_BAD_CHAIN);
	/* Nothing written anywhere. */
	for (uint64_t i = 0; i < t->in_n; i++)
		assert_int_equal(*t->wmap[i], WFILL);
}

static void test_bad_chain(void **state)
{
	static const struct layout bad[] = {
		{ { 16, 512 }, { 0 } },       /* no writable byte */
		{ { 16 }, { 0 } },
		{ { 15 }, { 1 } },            /* header too short */
		{ { 8, 7 }, { 512, 1 } },
		{ { 1 }, { 1 } },
		{ { 0 }, { 16, 1 } },         /* header in writable part */
		{ { 0 }, { 0 } },             /* nothing at all */
	};
	struct rq *t = *state;

	rq_hdr(t, VIRTIO_BLK_T_IN, 0);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		expect_bad_chain(t, &bad[i]);
	rq_hdr(t, VIRTIO_BLK_T_GET_ID, 0);
	expect_bad_chain(t, &bad[0]);
	rq_hdr(t, 12345, 0);
	expect_bad_chain(t, &bad[2]);
}

/* Data longer than a 32-bit used.len can describe.  The data iovecs
 * point at inaccessible memory: the parser must not touch them. */
static void test_huge_data(void **state)
{
	const size_t gib = 1ull << 30;
	struct rq *t = *state;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	uint8_t *none = mmap(NULL, gib, PROT_NONE, flags, -1, 0);
	struct hdr *h = (struct hdr *)t->fm.base;

	assert_true(none != MAP_FAILED);
	*h = (struct hdr){ VIRTIO_BLK_T_IN, 0, 0 };
	t->l.capacity = 1ull << 40;
	memset(&t->e, 0, sizeof(t->e));
	t->e.iov = t->iov;
	t->iov[0] = (struct iovec){ h, 16 };
	for (unsigned int i = 1; i <= 4; i++)
		t->iov[i] = (struct iovec){ none, gib };
	t->iov[5] = (struct iovec){ t->fm.base + 64, 1 };
	t->e.n_out = 1;
	t->e.n_in = 5;
	t->e.out_len = 16;
	t->e.in_len = 4 * gib + 1; /* 4 GiB of data: len >= 2^32 - 1 */
	assert_int_equal(blk_req_parse(&t->l, &t->e, &t->r), BLK_PARSE_ANSWERED);
	assert_int_equal(t->fm.base[64], VIRTIO_BLK_S_IOERR);
	assert_int_equal(t->r.used_len, 0); /* the status follows the data */
	munmap(none, gib);
}

/* blk_req_parse3 against blk_req_parse, on three buffers as
 * virtq_read_chain3 gives them (readable ones first) with
 * random lengths, directions, types, sectors and a read-only disk or
 * not: whenever it accepts, blk_req_parse submits the same request (the
 * fields it sets, the data iovecs); whenever blk_req_parse submits a
 * request of the usual shape (16-byte header, data one way, 1-byte
 * status), it accepts. */
static void test_parse3_matches_parse(void **state)
{
	static const uint32_t hlens[] = { 16, 16, 16, 16, 16, 8, 17, 32 };
	static const uint32_t dlens[] = { 4096, 4096, 512, 1024, 100, 513,
					  64u << 10, 8 * 512 };
	static const uint32_t slens[] = { 1, 1, 1, 1, 1, 1, 2, 16 };
	static const uint32_t types[] = {
		VIRTIO_BLK_T_IN, VIRTIO_BLK_T_OUT, VIRTIO_BLK_T_IN,
		VIRTIO_BLK_T_OUT, VIRTIO_BLK_T_FLUSH, VIRTIO_BLK_T_GET_ID,
		VIRTIO_BLK_T_DISCARD, VIRTIO_BLK_T_WRITE_ZEROES, 99 };
	struct rq *t = *state;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	unsigned int accepted = 0, declined = 0;

	for (int n = 0; n < 20000; n++) {
		uint64_t x = rng_next(&rng), y = rng_next(&rng);
		/* header, data, status */
		struct iovec b[3] = {
			{ t->fm.base, hlens[x % 8] },
			{ t->fm.base + 0x1000, dlens[(x >> 8) % 8] },
			{ t->fm.base + 64, slens[(x >> 16) % 8] },
		};
		/* How many readable: 1 (a read), 2 (a write), or else. */
		unsigned int nr = (x >> 24) % 8 < 3 ? 1 : (x >> 24) % 8 < 6 ? 2
						   : (x >> 27) % 4;
		struct hdr h = { types[(x >> 32) % 9], 0, 0 };
		uint64_t secs = b[1].iov_len / BLK_SECTOR_SIZE;
		struct iovec fiov[3], giov[3];
		struct virtq_elem e = { .head = 77, .iov = giov };
		struct blk_req rf, rg;
		bool fast, usual;
		enum blk_parse slow;

		switch ((y >> 8) % 7) {
		case 0: h.sector = 0; break;
		case 1: h.sector = CAP - secs; break;     /* the last sectors */
		case 2: h.sector = CAP - secs + 1; break; /* one past */
		case 3: h.sector = y >> 40; break;        /* far past */
		case 4: h.sector = -secs; break;          /* the end wraps to 0 */
		case 5: h.sector = ~0ull - (y >> 60); break;
		default: h.sector = (y >> 16) % CAP; break;
		}
		t->l.ro = (y & 3) == 0;
		memcpy(b[0].iov_base, &h,
		       b[0].iov_len < sizeof(h) ? b[0].iov_len : sizeof(h));
		for (unsigned int i = 0; i < 3; i++) {
			fiov[i] = giov[i] = b[i];
			if (i >= nr) {
				e.n_in++;
				e.in_len += b[i].iov_len;
			} else {
				e.n_out++;
				e.out_len += b[i].iov_len;
			}
		}
		memset(&rf, 0xcc, sizeof(rf));
		memset(&rg, 0xdd, sizeof(rg));
		fast = blk_req_parse3(&t->l, 77, fiov, (int)nr, &rf);
		slow = blk_req_parse(&t->l, &e, &rg);
		usual = b[0].iov_len == 16 && b[2].iov_len == 1 &&
			nr == (h.type == VIRTIO_BLK_T_IN ? 1u : 2u) &&
			(h.type == VIRTIO_BLK_T_IN || h.type == VIRTIO_BLK_T_OUT);
		if (usual && slow == BLK_PARSE_SUBMIT)
			assert_true(fast);
		if (!fast) {
			declined++;
			continue;
		}
		accepted++;
		assert_int_equal(slow, BLK_PARSE_SUBMIT);
		assert_int_equal(rf.head, rg.head);
		assert_int_equal(rf.type, rg.type);
		assert_int_equal(rf.sector, rg.sector);
		assert_int_equal(rf.len, rg.len);
		assert_int_equal(rf.unmap, rg.unmap);
		assert_ptr_equal(rf.status, rg.status);
		assert_int_equal(rf.used_len, rg.used_len);
		assert_int_equal(rf.in_before_status, rg.in_before_status);
		assert_int_equal(rf.niov, rg.niov);
		assert_ptr_equal(rf.iov, &fiov[1]);
		for (unsigned int i = 0; i < rf.niov; i++) {
			assert_ptr_equal(rf.iov[i].iov_base, rg.iov[i].iov_base);
			assert_int_equal(rf.iov[i].iov_len, rg.iov[i].iov_len);
		}
	}
	/* Both ways taken often: the comparison is not empty. */
	assert_true(accepted > 500); /* 749 with this seed */
	assert_true(declined > 10000);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rq_setup, rq_teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(test_in_layouts),
		T(test_in_empty),
		T(test_out_layouts),
		T(test_flush),
		T(test_get_id),
		T(test_discard),
		T(test_write_zeroes),
		T(test_dwz_range),
		T(test_dwz_refused),
		T(test_len_not_sector_multiple),
		T(test_sector_past_capacity),
		T(test_header_read_whole),
		T(test_read_only),
		T(test_unknown_type),
		T(test_bad_chain),
		T(test_huge_data),
		T(test_parse3_matches_parse),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("req", tests, NULL, NULL);
}
