/* A disk's rate limit: two buckets, operations per second and bytes per
 * second, shared by all of the disk's queues without a lock.
 *
 * Each bucket is kept as a "theoretical arrival time" (the generic cell
 * rate algorithm, which is a token bucket in another form): tat is when
 * the bucket would be full again if nothing more were taken.  A request
 * may start while tat is at most burst_ns ahead of now; it then moves
 * tat on by its cost (units / rate seconds) with one compare-and-swap,
 * so a bucket costs one atomic per request and no lock, whichever queue
 * takes from it.  A request's bytes are known only once it was popped
 * and parsed: it is charged then, and may take the bucket into debt,
 * which the next request waits out.  Over any interval the units taken
 * are at most rate x interval + burst + one request.
 *
 * A request's cost in nanoseconds is units x 1e9 / rate, rounded up,
 * worked out with a multiplication by a 32.32 fixed-point ns per unit
 * kept when the rate is set (a division per request was a tenth of the
 * limited path's instructions, bench/callgrind.sh with LIMIT=1), and
 * capped at THROTTLE_COST_MAX (146 years) so tat cannot wrap.
 *
 * Times are CLOCK_MONOTONIC nanoseconds, passed in (the unit test
 * drives its own clock).  A clock that jumps forward fills the bucket
 * only to its burst.
 */
#ifndef BLK_THROTTLE_H
#define BLK_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#define THROTTLE_COST_MAX (1ull << 62)

/* All three fields are atomics (relaxed): a limit may change while the
 * iothreads read it, and any mix of old and new is safe. */
struct throttle_bucket {
	uint64_t ns_per_unit; /* 32.32 fixed point, rounded up; 0: no limit */
	uint64_t burst_ns;    /* how far ahead of now tat may be */
	uint64_t tat;
};

/* Set the rate (0: none) and burst; the bucket starts full. */
void throttle_set(struct throttle_bucket *b, uint64_t rate, uint64_t burst_ns,
		  uint64_t now);
/* Nanoseconds to wait before a request may start; 0: now. */
uint64_t throttle_wait_ns(const struct throttle_bucket *b, uint64_t now);
/* Take units from the bucket (a request that started at now). */
void throttle_take(struct throttle_bucket *b, uint64_t units, uint64_t now);

#endif
