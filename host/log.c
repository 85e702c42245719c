/* Logging to stderr with levels and per-site rate limits. */
#include "host/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#define VLOG_BURST 5 /* messages per call site per second */

static enum vlog_level vlog_level = VLOG_WARN;
static bool vlog_raw;
static uint64_t vlog_total_dropped;
static pthread_mutex_t vlog_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const vlog_names[] = { "error", "warning", "info",
					  "debug" };

void vlog_set_level(enum vlog_level l)
{
	vlog_level = l;
}

enum vlog_level vlog_get_level(void)
{
	return vlog_level;
}

void vlog_set_raw(bool raw)
{
	vlog_raw = raw;
}

static void vlog_v(enum vlog_level l, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "vmm: %s: %s%s", vlog_names[l], buf,
		vlog_raw ? "\r\n" : "\n");
}

void vlog(enum vlog_level l, const char *fmt, ...)
{
	va_list ap;

	if (l > vlog_level)
		return;
	va_start(ap, fmt);
	vlog_v(l, fmt, ap);
	va_end(ap);
}

void vlog_limited(struct vlog_rl *rl, enum vlog_level l, const char *fmt, ...)
{
	struct timespec ts;
	bool emit;
	va_list ap;

	if (l > vlog_level)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&vlog_lock);
	if ((uint64_t)ts.tv_sec != rl->window) {
		rl->window = (uint64_t)ts.tv_sec;
		rl->n = 0;
	}
	emit = rl->n++ < VLOG_BURST;
	if (!emit) {
		rl->dropped++;
		vlog_total_dropped++;
	}
	pthread_mutex_unlock(&vlog_lock);
	if (!emit)
		return;
	va_start(ap, fmt);
	vlog_v(l, fmt, ap);
	va_end(ap);
}

uint64_t vlog_dropped(void)
{
	uint64_t n;

	pthread_mutex_lock(&vlog_lock);
	n = vlog_total_dropped;
	pthread_mutex_unlock(&vlog_lock);
	return n;
}
