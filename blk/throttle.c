/* Rate-limit buckets; see throttle.h. */
#include "blk/throttle.h"

#define NS_PER_S 1000000000ull

void throttle_set(struct throttle_bucket *b, uint64_t rate, uint64_t burst_ns,
		  uint64_t now)
{
	/* 1e9 x 2^32 / rate, rounded up: below 2^63 for any rate >= 1. */
	uint64_t fx = rate ? (uint64_t)((((unsigned __int128)NS_PER_S << 32) +
					 rate - 1) / rate) : 0;

	__atomic_store_n(&b->ns_per_unit, fx, __ATOMIC_RELAXED);
	__atomic_store_n(&b->burst_ns, burst_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&b->tat, now, __ATOMIC_RELAXED);
}

uint64_t throttle_wait_ns(const struct throttle_bucket *b, uint64_t now)
{
	uint64_t tat = __atomic_load_n(&b->tat, __ATOMIC_RELAXED);
	uint64_t ahead = now + __atomic_load_n(&b->burst_ns, __ATOMIC_RELAXED);

	if (!__atomic_load_n(&b->ns_per_unit, __ATOMIC_RELAXED) || tat <= ahead)
		return 0;
	return tat - ahead;
}

void throttle_take(struct throttle_bucket *b, uint64_t units, uint64_t now)
{
	uint64_t fx = __atomic_load_n(&b->ns_per_unit, __ATOMIC_RELAXED);
	unsigned __int128 c;
	uint64_t cost, old, tat;

	if (!fx)
		return;
	c = ((unsigned __int128)units * fx + 0xffffffffu) >> 32;
	cost = c > THROTTLE_COST_MAX ? THROTTLE_COST_MAX : (uint64_t)c;
	old = __atomic_load_n(&b->tat, __ATOMIC_RELAXED);
	do
		tat = (old > now ? old : now) + cost;
	while (!__atomic_compare_exchange_n(&b->tat, &old, tat, true,
					    __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED));
}
