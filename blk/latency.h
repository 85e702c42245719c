/* Per-queue latency breakdown of the device: for each request, the time
 * from pop to backend submit, from submit to completion (as the iothread
 * learns of it), and from completion to the used-ring publish.
 *
 * Log-linear histograms: a value v > 0 falls in the bucket of its highest
 * set bit and the LAT_SUB_BITS bits below it, so a bucket's width is at
 * most 1/2^LAT_SUB_BITS of its lower bound (12.5%); quantiles report a
 * bucket's upper bound, never less than the true value.  The maximum and
 * the sum are exact.  Pure: no clock, no allocation, no locking (a queue's
 * histograms belong to its iothread and are read after it stopped).
 */
#ifndef BLK_LATENCY_H
#define BLK_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	h->bucket[lat_bucket(v)]++;
}

/* Add every sample of src to dst. */
void lat_merge(struct lat_hist *dst, const struct lat_hist *src);
/* The value at quantile q (0..1): the top of the bucket that holds the
 * ceil(q * count)-th smallest sample, capped at max; 0 if empty. */
uint64_t lat_quantile(const struct lat_hist *h, double q);

/* One JSON object per stage, values in nanoseconds:
 * {"pop_to_submit": {"count":..,"mean":..,"p50":..,"p99":..,"p999":..,
 *  "max":..}, "submit_to_complete": {..}, "complete_to_publish": {..}} */
void lat_queue_json(FILE *f, const struct lat_queue *q);
/* "n=.. p50=..us p99=..us p99.9=..us max=..us" into buf. */
void lat_hist_format(const struct lat_hist *h, char *buf, size_t len);

/* A cheap monotonic clock in nanoseconds for the datapath: the TSC scaled
 * by a rate measured at lat_clock_init() against CLOCK_MONOTONIC (x86),
 * else CLOCK_MONOTONIC itself. */
void lat_clock_init(void);
uint64_t lat_now(void);

#endif
