#include "virtio/gmem.h"

#include <errno.h>
#include <string.h>

int gmem_add(struct gmem *m, uint64_t gpa, uint64_t size, void *hva)
{
	uint64_t end;

	if (!size || !hva || __builtin_add_overflow(gpa, size, &end))
		return -EINVAL;
	if (m->nr >= GMEM_MAX_REGIONS)
		return -ENOSPC;
	for (unsigned int i = 0; i < m->nr; i++) {
		const struct gmem_region *r = &m->r[i];

		if (gpa < r->gpa + r->size && r->gpa < end)
			return -EINVAL;
	}
	m->r[m->nr++] = (struct gmem_region){ gpa, size, hva };
	return 0;
}

static const struct gmem_region *gmem_find(const struct gmem *m, uint64_t gpa)
{
	for (unsigned int i = 0; i < m->nr; i++) {
		const struct gmem_region *r = &m->r[i];

		if (gpa >= r->gpa && gpa - r->gpa < r->size)
			return r;
	}
	return NULL;
}


/* Walk [gpa, gpa+len) region by region; fn gets host pointer pieces. */
static int gmem_walk(const struct gmem *m, uint64_t gpa, uint64_t len,
		     int (*fn)(void *ctx, uint8_t *p, uint64_t n), void *ctx)
{
	uint64_t end;

	if (!len || __builtin_add_overflow(gpa, len, &end))
		return -EFAULT;
	while (gpa < end) {
		const struct gmem_region *r = gmem_find(m, gpa);
		uint64_t off, n;
		int ret;

		if (!r)
			return -EFAULT;
		off = gpa - r->gpa;
		n = r->size - off;
		if (n > end - gpa)
			n = end - gpa;
		ret = fn(ctx, r->hva + off, n);
		if (ret)
			return ret;
		gpa += n;
	}
	return 0;
}

struct gmem_copy {
	uint8_t *buf;
	bool to_guest;
};

static int gmem_copy_piece(void *ctx, uint8_t *p, uint64_t n)
{
	struct gmem_copy *c = ctx;

	if (c->to_guest)
		memcpy(p, c->buf, n);
	else
		memcpy(c->buf, p, n);
	c->buf += n;
	return 0;
}

static int gmem_nop(void *ctx, uint8_t *p, uint64_t n)
{
	(void)ctx, (void)p, (void)n;
	return 0;
}

/* Check the whole range before copying so a refused copy moves nothing. */
static int gmem_copy(const struct gmem *m, uint64_t gpa, void *buf,
		     uint64_t len, bool to_guest)
{
	struct gmem_copy c = { buf, to_guest };
	int ret = gmem_walk(m, gpa, len, gmem_nop, NULL);

	if (ret)
		return ret;
	return gmem_walk(m, gpa, len, gmem_copy_piece, &c);
}

int gmem_read(const struct gmem *m, uint64_t gpa, void *dst, uint64_t len)
{
	return gmem_copy(m, gpa, dst, len, false);
}

int gmem_write(const struct gmem *m, uint64_t gpa, const void *src,
	       uint64_t len)
{
	return gmem_copy(m, gpa, (void *)src, len, true);
}

struct gmem_iovs {
	struct iovec *iov;
	unsigned int max, n;
};

static int gmem_iov_piece(void *ctx, uint8_t *p, uint64_t n)
{
	struct gmem_iovs *v = ctx;

	if (v->n >= v->max)
		return -E2BIG;
	v->iov[v->n].iov_base = p;
	v->iov[v->n].iov_len = n;
	v->n++;
	return 0;
}

int gmem_iov_split(const struct gmem *m, uint64_t gpa, uint64_t len,
		   struct iovec *iov, unsigned int max, unsigned int n)
{
	struct gmem_iovs v = { iov, max, n };
	int ret = gmem_walk(m, gpa, len, gmem_iov_piece, &v);

	return ret ? ret : (int)v.n;
}

bool gmem_contains_host(const struct gmem *m, const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p;

	for (unsigned int i = 0; i < m->nr; i++) {
		uintptr_t b = (uintptr_t)m->r[i].hva;

		if (a >= b && a - b <= m->r[i].size && len <= m->r[i].size - (a - b))
			return true;
	}
	return false;
}
