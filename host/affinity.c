#include "host/affinity.h"

#include <errno.h>
#include <string.h>

#include "host/log.h"

int affinity_spread(const cpu_set_t *allowed, unsigned int n, int *cpu)
{
	int list[CPU_SETSIZE];
	unsigned int count = 0;

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, allowed))
			list[count++] = c;
	if (!count)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		cpu[i] = list[i % count];
	return 0;
}

int affinity_pin_self(int cpu)
{
	cpu_set_t one;

	if (cpu < 0)
		return 0;
	if (cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
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
