/* The machine's end (one status and reason, whoever asks first) and the
 * start-up clock of -vv: what the vCPUs, the main loop and main() share,
 * below all of them. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "host/clock.h"
#include "host/log.h"
#include "vmm/machine.h"

void machine_exit(struct machine *m, int status, const char *fmt, ...)
{
	uint64_t one = 1;
	va_list ap;

	pthread_mutex_lock(&m->exit_lock);
	if (m->exiting) {
		pthread_mutex_unlock(&m->exit_lock);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
	m->exit_status = status;
	__atomic_store_n(&m->exiting, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&m->exit_lock);
	if (write(m->stop_fd, &one, sizeof(one)) < 0) {
		/* cannot fail for an eventfd below its limit */
	}
}

bool machine_exiting(struct machine *m)
{
	return __atomic_load_n(&m->exiting, __ATOMIC_ACQUIRE);
}

static uint64_t startup_t0;

void startup_begin(void)
{
	startup_t0 = mono_ns();
}

void startup_mark(const char *stage)
{
	pr_debug("startup: %s at %.1f ms", stage,
		 (double)(mono_ns() - startup_t0) / 1e6);
}
