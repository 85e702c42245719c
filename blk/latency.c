/* Latency histograms of the device's stages; see latency.h. */
#include <stdbool.h>
#include <time.h>

#include "blk/latency.h"

#include "host/clock.h"
#include "host/json.h"

const char *const lat_stage_name[LAT_STAGES] = {
	[LAT_SUBMIT] = "pop_to_submit",
	[LAT_BACKEND] = "submit_to_complete",
	[LAT_PUBLISH] = "complete_to_publish",
};

uint64_t lat_bucket_top(unsigned int b)
{
	unsigned int shift, sub;

	if (b < LAT_SUB)
		return b;
	shift = b / LAT_SUB - 1;
	sub = b % LAT_SUB;
	if (shift + LAT_SUB_BITS >= 64)
		return UINT64_MAX;
	return (((uint64_t)(LAT_SUB + sub + 1)) << shift) - 1;
}

void lat_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	uint64_t max = ctr_get(&src->max);

	/* An empty histogram (latency off, or an idle queue) adds nothing:
	 * count is the first field lat_add writes, so a sample that raced
	 * with this read is one a snapshot just before it did not have. */
	if (!ctr_get(&src->count))
		return;
	dst->sum += ctr_get(&src->sum);
	if (max > dst->max)
		dst->max = max;
	for (unsigned int b = 0; b < LAT_BUCKETS; b++) {
		uint64_t n = ctr_get(&src->bucket[b]);

		dst->bucket[b] += n;
		dst->count += n;
	}
}

void lat_since(struct lat_hist *h, const struct lat_hist *base)
{
	uint64_t top = 0;

	h->count = 0;
	h->sum = h->sum > base->sum ? h->sum - base->sum : 0;
	for (unsigned int b = 0; b < LAT_BUCKETS; b++) {
		h->bucket[b] = h->bucket[b] > base->bucket[b] ?
			       h->bucket[b] - base->bucket[b] : 0;
		h->count += h->bucket[b];
		if (h->bucket[b])
			top = lat_bucket_top(b);
	}
	if (top < h->max)
		h->max = top;
}

uint64_t lat_quantile(const struct lat_hist *h, double q)
{
	uint64_t rank, seen = 0;
	double x;

	if (!h->count)
		return 0;
	if (q <= 0)
		q = 0;
	x = q * (double)h->count;
	rank = (uint64_t)x;
	if ((double)rank < x)
		rank++; /* ceil */
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned int b = 0; b < LAT_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank) {
			uint64_t top = lat_bucket_top(b);

			return top < h->max ? top : h->max;
		}
	}
	return h->max;
}

struct json_object *lat_queue_json(const struct lat_queue *q)
{
	struct json_object *o = json_object_new_object();

	for (unsigned int s = 0; s < LAT_STAGES; s++) {
		const struct lat_hist *h = &q->stage[s];
		struct json_object *st = json_object_new_object();

		json_put_u64(st, "count", h->count);
		json_object_object_add(st, "mean", json_object_new_double(
			h->count ? (double)h->sum / (double)h->count : 0.0));
		json_put_u64(st, "p50", lat_quantile(h, 0.5));
		json_put_u64(st, "p99", lat_quantile(h, 0.99));
		json_put_u64(st, "p999", lat_quantile(h, 0.999));
		json_put_u64(st, "max", h->max);
		json_object_object_add(o, lat_stage_name[s], st);
	}
	return o;
}

void lat_hist_format(const struct lat_hist *h, char *buf, size_t len)
{
	snprintf(buf, len, "n=%llu p50=%.1fus p99=%.1fus p99.9=%.1fus "
		 "max=%.1fus", (unsigned long long)h->count,
		 (double)lat_quantile(h, 0.5) / 1e3,
		 (double)lat_quantile(h, 0.99) / 1e3,
		 (double)lat_quantile(h, 0.999) / 1e3, (double)h->max / 1e3);
}

#if defined(__x86_64__)
#include <x86intrin.h>

/* ns = (tsc * lat_mult) >> 32; 0 until calibrated (then the clock is
 * CLOCK_MONOTONIC).  Written once, before any iothread starts. */
static uint64_t lat_mult;

void lat_clock_init(void)
{
	struct timespec pause = { 0, 2000000 };
	uint64_t t0, c0, t1, c1;

	if (lat_mult)
		return;
	t0 = mono_ns();
	c0 = __rdtsc();
	nanosleep(&pause, NULL);
	t1 = mono_ns();
	c1 = __rdtsc();
	if (c1 > c0 && t1 > t0)
		lat_mult = (uint64_t)(((double)(t1 - t0) / (double)(c1 - c0)) *
				      4294967296.0);
}

uint64_t lat_now(void)
{
	if (!lat_mult)
		return mono_ns();
	return (uint64_t)(((unsigned __int128)__rdtsc() * lat_mult) >> 32);
}
#else
void lat_clock_init(void)
{
}

uint64_t lat_now(void)
{
	return mono_ns();
}
#endif
