/* Where `--pin on` puts the VMM's threads: vCPU i on one host CPU, each
 * queue's iothread beside the vCPU its queue serves (vmm/main.c).  CPU
 * sets are sized at run time (CPU_ALLOC): a host may have more CPUs
 * than a fixed cpu_set_t holds (1024). */
#ifndef HOST_AFFINITY_H
#define HOST_AFFINITY_H

#include <sched.h>
#include <stddef.h>

/* The highest CPU number we bind to, plus one: a mask this wide is
 * 8 KiB; Linux builds for at most 8192 CPUs. */
#define AFFINITY_MAX_CPUS 65536

/* The CPUs this process may use, in *set (CPU_FREE it) of *size bytes:
 * the set grows until the kernel accepts its size.  getter is
 * sched_getaffinity, or a stand-in in tests.  0 or -errno. */
int affinity_allowed(int (*getter)(pid_t, size_t, cpu_set_t *),
		     cpu_set_t **set, size_t *size);

/* cpu[i], for i < n: the CPUs of allowed (size bytes) in order, again
 * from the first once they run out.  0, or -EINVAL when it is empty. */
int affinity_spread(const cpu_set_t *allowed, size_t size, unsigned int n,
		    int *cpu);

/* Binds the calling thread to host CPU cpu; a negative cpu leaves it
 * where it may run.  0, -ERANGE from AFFINITY_MAX_CPUS on, or the
 * kernel's -errno. */
int affinity_pin_self(int cpu);

/* The same for thread tid of this process (0: the caller). */
int affinity_pin_tid(pid_t tid, int cpu);

/* The CPU a thread last ran on, from the text of its
 * /proc/self/task/TID/stat (field 39, "processor"), or -1 if the text
 * does not have one. */
int affinity_stat_cpu(const char *stat);

/* affinity_pin_self for the thread called name, said at -v; where the
 * host refuses (the CPU went offline, a cpuset changed), a warning, and
 * the thread runs where the scheduler puts it. */
void affinity_pin_thread(int cpu, const char *name);

#endif
