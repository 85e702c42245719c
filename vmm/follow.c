#include "vmm/follow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/affinity.h"
#include "host/log.h"

int follow_init(struct follow *f, struct machine *m)
{
	const struct vmm_config *cfg = m->cfg;

	memset(f, 0, sizeof(*f));
	f->m = m;
	for (unsigned int i = 0; i < VMM_MAX_CPUS; i++)
		f->stat_fd[i] = -1;
	if (cfg->pin != VMM_PIN_FOLLOW)
		return -1;
	for (unsigned int d = 0; d < m->ndisks; d++) {
		for (unsigned int q = 0; q < cfg->disk[d].queues; q++) {
			int v = vmm_queue_vcpu(cfg, d, q);
			struct follow_pair *p;

			if (v < 0)
				break; /* its iothreads run where a CPU is idle */
			p = &f->pair[f->npairs++];
			p->blk = m->disk[d]->blk;
			p->queue = q;
			p->vcpu = (unsigned int)v;
			p->cpu = -1;
		}
	}
	return f->npairs ? FOLLOW_PERIOD_MS : -1;
}

/* Where vCPU i last ran, or -1 (not started yet, or unreadable). */
static int follow_vcpu_cpu(struct follow *f, unsigned int i)
{
	pid_t tid = __atomic_load_n(&f->m->vcpu[i].tid, __ATOMIC_RELAXED);
	char buf[1024];
	ssize_t n;

	if (f->stat_fd[i] < 0) {
		if (!tid)
			return -1;
		snprintf(buf, sizeof(buf), "/proc/self/task/%d/stat", (int)tid);
		f->stat_fd[i] = open(buf, O_RDONLY | O_CLOEXEC);
		if (f->stat_fd[i] < 0)
			return -1;
	}
	/* The file is made anew at each read from offset 0. */
	n = pread(f->stat_fd[i], buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return affinity_stat_cpu(buf);
}

void follow_step(struct follow *f)
{
	int vcpu_cpu[VMM_MAX_CPUS];

	for (unsigned int i = 0; i < f->m->ncpus; i++)
		vcpu_cpu[i] = follow_vcpu_cpu(f, i);
	for (unsigned int k = 0; k < f->npairs; k++) {
		struct follow_pair *p = &f->pair[k];
		int cpu = vcpu_cpu[p->vcpu], r;

		if (!p->tid)
			p->tid = blk_dev_queue_tid(p->blk, p->queue);
		if (p->tid <= 0 || cpu < 0 || cpu == p->cpu)
			continue;
		r = affinity_pin_tid(p->tid, cpu);
		if (r == -EINVAL)
			continue; /* that CPU left our set: look again later */
		if (r) {
			/* It keeps the CPUs it may use now. */
			pr_warn("--pin follow: cannot move iothread-q%u to host "
				"CPU %d (%s); it is no longer moved",
				p->queue, cpu, strerror(-r));
			p->tid = -1;
			continue;
		}
		if (p->cpu < 0)
			f->placed++;
		else
			f->moves++;
		p->cpu = cpu;
	}
}

void follow_end(struct follow *f)
{
	for (unsigned int i = 0; i < VMM_MAX_CPUS; i++)
		if (f->stat_fd[i] >= 0)
			close(f->stat_fd[i]);
	if (f->npairs)
		pr_info("--pin follow: %u iothreads placed, then moved %llu "
			"times", f->placed, (unsigned long long)f->moves);
}
