/* Where `--pin on` puts the VMM's threads: vCPU i on one host CPU, each
 * queue's iothread beside the vCPU its queue serves (vmm/main.c). */
#ifndef HOST_AFFINITY_H
#define HOST_AFFINITY_H

#include <sched.h>

/* cpu[i], for i < n: the CPUs of allowed in order, again from the first
 * once they run out.  0, or -EINVAL when allowed is empty. */
int affinity_spread(const cpu_set_t *allowed, unsigned int n, int *cpu);

/* Binds the calling thread to host CPU cpu; a negative cpu leaves it
 * where it may run.  0 or -errno. */
int affinity_pin_self(int cpu);

/* affinity_pin_self for the thread called name, said at -v; where the
 * host refuses (the CPU went offline, a cpuset changed), a warning, and
 * the thread runs where the scheduler puts it. */
void affinity_pin_thread(int cpu, const char *name);

#endif
