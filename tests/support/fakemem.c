#include "tests/support/fakemem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int fakemem_create(struct fakemem *fm, uint64_t gpa, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(fm, 0, sizeof(*fm));
	size = (size + page - 1) & ~(page - 1);
	fm->map_size = size + 2 * page;
	fm->map = mmap(NULL, fm->map_size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fm->map == MAP_FAILED)
		return -errno;
	fm->base = fm->map + page;
	if (mprotect(fm->base, size, PROT_READ | PROT_WRITE)) {
		munmap(fm->map, fm->map_size);
		return -errno;
	}
	fm->size = size;
	fm->gpa = gpa;
	return gmem_add(&fm->gm, gpa, size, fm->base);
}

void fakemem_destroy(struct fakemem *fm)
{
	if (fm->map)
		munmap(fm->map, fm->map_size);
	memset(fm, 0, sizeof(*fm));
}

uint64_t fakemem_alloc(struct fakemem *fm, size_t len, size_t align)
{
	uint64_t off = (fm->brk + align - 1) & ~(uint64_t)(align - 1);

	if (off + len > fm->size)
		return 0;
	fm->brk = off + len;
	return fm->gpa + off;
}

void fakemem_reset_alloc(struct fakemem *fm)
{
	fm->brk = 0;
}

void *fakemem_hva(struct fakemem *fm, uint64_t gpa)
{
	return fm->base + (gpa - fm->gpa);
}
