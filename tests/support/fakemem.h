/* Fake guest memory for tests: one region with PROT_NONE guard pages on
 * both sides, so any access outside guest RAM faults at once. */
#ifndef TESTS_FAKEMEM_H
#define TESTS_FAKEMEM_H

#include <stddef.h>
#include <stdint.h>

#include "virtio/gmem.h"

struct fakemem {
	struct gmem gm;
	uint8_t *map;  /* including guards */
	uint8_t *base; /* guest RAM */
	size_t size, map_size;
	uint64_t gpa;  /* guest-physical base */
	uint64_t brk;  /* bump allocator, offset from base */
};

int fakemem_create(struct fakemem *fm, uint64_t gpa, size_t size);
void fakemem_destroy(struct fakemem *fm);
/* Allocate len bytes (aligned) in guest RAM; returns the gpa (0 on full). */
uint64_t fakemem_alloc(struct fakemem *fm, size_t len, size_t align);
void fakemem_reset_alloc(struct fakemem *fm);
void *fakemem_hva(struct fakemem *fm, uint64_t gpa);

#endif
