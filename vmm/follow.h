/* --pin follow: each iothread of a disk with a queue per vCPU moves to
 * the host CPU its vCPU last ran on; the vCPUs stay where the host's
 * scheduler puts them.
 *
 * Why: an iothread on its vCPU's CPU is woken there by a kick and
 * interrupts a vCPU that is not running, with no interrupt between the
 * host's CPUs (measured in the test host: twice the IOPS, a third of
 * the exits).  `--pin on` gets that by binding the vCPUs
 * too, which puts every VM of a host on the same first CPUs; following
 * moves only the iothreads, after vCPUs that the host balances.
 *
 * The main thread looks every FOLLOW_PERIOD_MS: it reads each vCPU's
 * last CPU from /proc/self/task/TID/stat and moves an iothread whose
 * vCPU has moved (sched_setaffinity).  The datapath does nothing. */
#ifndef VMM_FOLLOW_H
#define VMM_FOLLOW_H

#include <stdint.h>
#include <sys/types.h>

#include "vmm/machine.h"

#define FOLLOW_PERIOD_MS 20

struct follow_pair {
	struct blk_dev *blk;
	unsigned int queue, vcpu;
	pid_t tid;  /* the iothread's, once known; -1: no longer followed */
	int cpu;    /* where it was last moved to, or -1 */
};

struct follow {
	struct machine *m;
	int stat_fd[VMM_MAX_CPUS]; /* each vCPU's stat file, once opened */
	struct follow_pair pair[VMM_MAX_DISKS * BLK_MAX_QUEUES];
	unsigned int npairs;
	unsigned int placed;       /* iothreads placed a first time, for -v */
	uint64_t moves;            /* moved after their vCPU since, for -v */
};

/* Pairs queue q of each disk with a queue per vCPU or more with vCPU
 * q mod vCPUs, whose requests Linux puts on that queue; none unless
 * --pin follow.  The poll timeout for the main thread's wait: -1 when
 * there is nothing to follow, else FOLLOW_PERIOD_MS. */
int follow_init(struct follow *f, struct machine *m);
/* Look once and move the iothreads whose vCPU moved. */
void follow_step(struct follow *f);
/* Close the stat files; -v: how many placed and moved. */
void follow_end(struct follow *f);

#endif
