/* Latency histograms of the device's stages; see latency.h. */
#include <stdbool.h>
#include <time.h>

#include "blk/latency.h"

#include "host/clock.h"

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
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned int b = 0; b < LAT_BUCKETS; b++)
		dst->bucket[b] += src->bucket[b];
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

void lat_queue_json(FILE *f, const struct lat_queue *q)
{
	fputc('{', f);
	for (unsigned int s = 0; s < LAT_STAGES; s++) {
		const struct lat_hist *h = &q->stage[s];

		fprintf(f, "%s\"%s\": {\"count\": %llu, \"mean\": %.1f, "
			"\"p50\": %llu, \"p99\": %llu, \"p999\": %llu, "
			"\"max\": %llu}", s ? ", " : "", lat_stage_name[s],
			(unsigned long long)h->count,
			h->count ? (double)h->sum / (double)h->count : 0.0,
			(unsigned long long)lat_quantile(h, 0.5),
			(unsigned long long)lat_quantile(h, 0.99),
			(unsigned long long)lat_quantile(h, 0.999),
			(unsigned long long)h->max);
	}
	fputc('}', f);
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
