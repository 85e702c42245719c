/* CLOCK_MONOTONIC in nanoseconds: one helper for every module that
 * measures a span (the iothreads' poll window, the latency clock's
 * calibration, the console's last byte, the VMM's stop). */
#ifndef HOST_CLOCK_H
#define HOST_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
