/* A small, fast, seeded generator for test and benchmark workloads
 * (xorshift64*): the same seed gives the same sequence everywhere. */
#ifndef TESTS_SUPPORT_RNG_H
#define TESTS_SUPPORT_RNG_H

#include <stdint.h>

/* Next value of the sequence in *S (which must not be 0). */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

#endif
