/* Logging with levels.  Messages a guest can trigger go through
 * pr_guest(), which is rate-limited per call site and counted.
 */
#ifndef HOST_LOG_H
#define HOST_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum vlog_level { VLOG_ERR, VLOG_WARN, VLOG_INFO, VLOG_DEBUG };

struct vlog_rl {
	uint64_t window;   /* second of the current window */
	unsigned int n;    /* messages in it */
	uint64_t dropped;  /* messages suppressed, in total */
};

void vlog_set_level(enum vlog_level l);
enum vlog_level vlog_get_level(void);
/* The terminal is in raw mode: end lines with \r\n. */
void vlog_set_raw(bool raw);
void vlog(enum vlog_level l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void vlog_limited(struct vlog_rl *rl, enum vlog_level l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Total of guest-triggered messages suppressed so far. */
uint64_t vlog_dropped(void);

#define pr_err(...) vlog(VLOG_ERR, __VA_ARGS__)
#define pr_warn(...) vlog(VLOG_WARN, __VA_ARGS__)
#define pr_info(...) vlog(VLOG_INFO, __VA_ARGS__)
#define pr_debug(...) vlog(VLOG_DEBUG, __VA_ARGS__)
#define pr_guest(lvl, ...)                                          \
	do {                                                        \
		static struct vlog_rl rl_;                          \
		vlog_limited(&rl_, lvl, __VA_ARGS__);               \
	} while (0)

#endif
