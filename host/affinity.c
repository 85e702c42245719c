#include "host/affinity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "host/log.h"

int affinity_allowed(int (*getter)(pid_t, size_t, cpu_set_t *),
		     cpu_set_t **set, size_t *size)
{
	/* The kernel refuses (EINVAL) a mask narrower than its CPU ids;
	 * glibc zeroes what the kernel leaves of a wider one. */
	for (int n = 1024; n <= AFFINITY_MAX_CPUS; n *= 2) {
		cpu_set_t *s = CPU_ALLOC(n);
		size_t sz = CPU_ALLOC_SIZE(n);

		if (!s)
			return -ENOMEM;
		if (!getter(0, sz, s)) {
			*set = s;
			*size = sz;
			return 0;
		}
		CPU_FREE(s);
		if (errno != EINVAL)
			return -errno;
	}
	return -EINVAL;
}

int affinity_spread(const cpu_set_t *allowed, size_t size, unsigned int n,
		    int *cpu)
{
	int bits = (int)(size * 8), c = -1;

	if (!CPU_COUNT_S(size, allowed))
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		do
			c = (c + 1) % bits;
		while (!CPU_ISSET_S((size_t)c, size, allowed));
		cpu[i] = c;
	}
	return 0;
}

int affinity_pin_tid(pid_t tid, int cpu)
{
	cpu_set_t *one;
	size_t sz;
	int r = 0;

	if (cpu < 0)
		return 0;
	if (cpu >= AFFINITY_MAX_CPUS)
		return -ERANGE; /* no mask that wide is allocated */
	one = CPU_ALLOC(cpu + 1);
	if (!one)
		return -ENOMEM;
	sz = CPU_ALLOC_SIZE(cpu + 1);
	CPU_ZERO_S(sz, one);
	CPU_SET_S((size_t)cpu, sz, one);
	if (sched_setaffinity(tid, sz, one))
		r = -errno;
	CPU_FREE(one);
	return r;
}

int affinity_pin_self(int cpu)
{
	return affinity_pin_tid(0, cpu);
}

int affinity_stat_cpu(const char *stat)
{
	/* The name (field 2) may hold spaces and parentheses: count from
	 * the last ')'; field 3 follows it. */
	const char *p = strrchr(stat, ')');
	char *end;
	long cpu;

	if (!p)
		return -1;
	for (int field = 2; field < 39; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	errno = 0;
	cpu = strtol(p + 1, &end, 10);
	if (errno || end == p + 1 || (*end != ' ' && *end != '\n' && *end) ||
	    cpu < 0 || cpu >= AFFINITY_MAX_CPUS)
		return -1;
	return (int)cpu;
}

void affinity_pin_thread(int cpu, const char *name)
{
	int r = affinity_pin_self(cpu);

	if (r)
		pr_warn("%s: cannot bind to host CPU %d (%s); it runs on any",
			name, cpu, strerror(-r));
	else if (cpu >= 0)
		pr_info("%s: on host CPU %d", name, cpu);
}
