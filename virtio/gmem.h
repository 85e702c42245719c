/* Guest memory: regions of guest-physical RAM mapped into this process.
 *
 * Every accessor refuses a range that is empty, wraps around, or is not
 * wholly inside RAM.  Guest-controlled addresses must go through here
 * before they are dereferenced.
 */
#ifndef VIRTIO_GMEM_H
#define VIRTIO_GMEM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define GMEM_MAX_REGIONS 4

struct gmem_region {
	uint64_t gpa;  /* guest-physical start */
	uint64_t size; /* bytes */
	uint8_t *hva;  /* host address of gpa */
};

struct gmem {
	unsigned int nr;
	struct gmem_region r[GMEM_MAX_REGIONS];
};

/* Add a region; regions must not overlap.  0 or -EINVAL / -ENOSPC. */
int gmem_add(struct gmem *m, uint64_t gpa, uint64_t size, void *hva);

/* Does gpa lie in r?  If so, *p is the host pointer to [gpa, gpa+len),
 * or NULL if the range does not fit in r. */
static inline bool gmem_region_ptr(const struct gmem_region *r, uint64_t gpa,
				   uint64_t len, void **p)
{
	uint64_t off = gpa - r->gpa;

	/* off wraps for gpa below the region: one test covers both;
	 * len - 1 wraps for len 0, which is refused the same way. */
	if (off >= r->size)
		return false;
	*p = len - 1 < r->size - off ? r->hva + off : NULL;
	return true;
}

/* Host pointer to [gpa, gpa+len) if it lies inside one region, else NULL.
 * Inline: it is on every request's path, several times. */
static inline void *gmem_ptr(const struct gmem *m, uint64_t gpa, uint64_t len)
{
	void *p;

	for (const struct gmem_region *r = m->r; r < m->r + m->nr; r++)
		if (gmem_region_ptr(r, gpa, len, &p))
			return p;
	return NULL;
}

/* The first region, or an empty one: for gmem_ptr_first. */
static inline struct gmem_region gmem_first(const struct gmem *m)
{
	return m->nr ? m->r[0] : (struct gmem_region){ 0 };
}

/* gmem_ptr for a caller that looks up several buffers in a row: first is
 * gmem_first(m), a local copy the compiler keeps in registers (where a
 * guest's buffers usually lie), and m is searched only for the rest. */
static inline void *gmem_ptr_first(const struct gmem *m,
				   const struct gmem_region *first,
				   uint64_t gpa, uint64_t len)
{
	void *p;

	return gmem_region_ptr(first, gpa, len, &p) ? p :
						      gmem_ptr(m, gpa, len);
}

/* Copies that may span adjacent regions.  0 or -EFAULT. */
int gmem_read(const struct gmem *m, uint64_t gpa, void *dst, uint64_t len);
int gmem_write(const struct gmem *m, uint64_t gpa, const void *src,
	       uint64_t len);

/* gmem_iov for a range that spans regions (or is refused): the new
 * count of iov, or -EFAULT / -E2BIG.  The count goes by value, so that
 * gmem_iov's caller can keep its own in a register. */
int gmem_iov_split(const struct gmem *m, uint64_t gpa, uint64_t len,
		   struct iovec *iov, unsigned int max, unsigned int n);

/* Append iovecs covering [gpa, gpa+len) to iov[*n..max).
 * 0, -EFAULT (not RAM, empty, wraps) or -E2BIG (out of iovecs).
 * Inline for the per-request case: a buffer inside one region. */
static inline int gmem_iov(const struct gmem *m, uint64_t gpa, uint64_t len,
			   struct iovec *iov, unsigned int max,
			   unsigned int *n)
{
	void *p = gmem_ptr(m, gpa, len);

	if (!p) {
		int r = gmem_iov_split(m, gpa, len, iov, max, *n);

		if (r < 0)
			return r;
		*n = (unsigned int)r;
		return 0;
	}
	if (*n >= max)
		return -E2BIG;
	iov[*n].iov_base = p;
	iov[*n].iov_len = len;
	(*n)++;
	return 0;
}

/* True if host range [p, p+len) lies inside guest RAM (for tests/asserts). */
bool gmem_contains_host(const struct gmem *m, const void *p, uint64_t len);

#endif
