/* Counters with one writer and any number of readers: the writer (an
 * iothread) adds with a relaxed load and store, which compile to the
 * plain instructions an increment would (no lock prefix, no fence), and
 * a reader in another thread (the control socket) loads them relaxed.
 * A reader may see one counter a request ahead of another; never a torn
 * or lost value.
 */
#ifndef HOST_COUNTER_H
#define HOST_COUNTER_H

#include <stdint.h>

static inline void ctr_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline void ctr_set(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

static inline uint64_t ctr_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

#endif
