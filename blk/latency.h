/* Per-queue latency breakdown of the device: for each request, the time
 * from pop to backend submit, from submit to completion (as the iothread
 * learns of it), and from completion to the used-ring publish.
 *
 * Log-linear histograms: a value v > 0 falls in the bucket of its highest
 * set bit and the LAT_SUB_BITS bits below it, so a bucket's width is at
 * most 1/2^LAT_SUB_BITS of its lower bound (12.5%); quantiles report a
 * bucket's upper bound, never less than the true value.  The maximum and
 * the sum are exact.  Pure: no clock, no allocation, no locking: a
 * queue's histograms have one writer, its iothread, and lat_add() writes
 * each field as a host/counter.h counter, so lat_merge() and
 * lat_snapshot() may read them from another thread while it runs (the
 * control socket's `stats`).
 */
#ifndef BLK_LATENCY_H
#define BLK_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "host/counter.h"

#define LAT_SUB_BITS 3
#define LAT_SUB (1u << LAT_SUB_BITS)
#define LAT_BUCKETS ((64 - LAT_SUB_BITS + 1) * LAT_SUB)

struct lat_hist {
	uint64_t count, sum, max;
	uint64_t bucket[LAT_BUCKETS];
};

enum lat_stage { LAT_SUBMIT, LAT_BACKEND, LAT_PUBLISH, LAT_STAGES };

extern const char *const lat_stage_name[LAT_STAGES];

struct lat_queue {
	struct lat_hist stage[LAT_STAGES];
};

/* Inline: three samples per request on the datapath. */
static inline unsigned int lat_bucket(uint64_t v)
{
	unsigned int msb;

	if (v < LAT_SUB)
		return (unsigned int)v; /* exact for the smallest values */
	msb = 63u - (unsigned int)__builtin_clzll(v);
	return (msb - LAT_SUB_BITS + 1) * LAT_SUB +
	       (unsigned int)((v >> (msb - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

/* The largest value that falls in bucket b. */
uint64_t lat_bucket_top(unsigned int b);

static inline void lat_add(struct lat_hist *h, uint64_t v)
{
	ctr_add(&h->count, 1);
	ctr_add(&h->sum, v);
	if (v > ctr_get(&h->max))
		ctr_set(&h->max, v);
	ctr_add(&h->bucket[lat_bucket(v)], 1);
}

/* Add every sample of src to dst (src may be written meanwhile: dst's
 * count is then the sum of the buckets it read). */
void lat_merge(struct lat_hist *dst, const struct lat_hist *src);
/* Take the samples of base (an earlier snapshot of h) out of h: what
 * was added since.  max becomes the top of the highest bucket left
 * (capped at h's max): exact only where base was empty. */
void lat_since(struct lat_hist *h, const struct lat_hist *base);
/* The value at quantile q (0..1): the top of the bucket that holds the
 * ceil(q * count)-th smallest sample, capped at max; 0 if empty. */
uint64_t lat_quantile(const struct lat_hist *h, double q);

struct json_object;
/* A new json-c object, one member per stage, values in nanoseconds:
 * {"pop_to_submit": {"count":..,"mean":..,"p50":..,"p99":..,"p999":..,
 *  "max":..}, "submit_to_complete": {..}, "complete_to_publish": {..}}
 * (the control socket's stats and --stats FILE). */
struct json_object *lat_queue_json(const struct lat_queue *q);
/* "n=.. p50=..us p99=..us p99.9=..us max=..us" into buf. */
void lat_hist_format(const struct lat_hist *h, char *buf, size_t len);

/* A cheap monotonic clock in nanoseconds for the datapath: the TSC scaled
 * by a rate measured at lat_clock_init() against CLOCK_MONOTONIC (x86),
 * else CLOCK_MONOTONIC itself. */
void lat_clock_init(void);
uint64_t lat_now(void);

#endif
