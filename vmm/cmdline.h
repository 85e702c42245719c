/* `vmm run` options into a struct vmm_config.  Pure (no I/O besides
 * the error message). */
#ifndef VMM_CMDLINE_H
#define VMM_CMDLINE_H

#include <stddef.h>

#include "vmm/machine.h"

/* The kernel command line's defaults; -p's words follow them (as
 * kvmtool's -p follows its own), --nodefaults leaves them out. */
#define VMM_DEFAULT_PARAMS "console=ttyS0 reboot=k panic=-1"
/* More than any kernel takes (x86: the setup header's cmdline_size,
 * 2048 for Debian's; arm64: 2048): the architecture's check says how
 * much its kernel takes. */
#define VMM_CMDLINE_MAX 8192
#define CMDLINE_MAX_PARAMS 64

enum cmdline_result { CMDLINE_OK, CMDLINE_HELP, CMDLINE_ERROR };

/* What a disk spec leaves open, for a disk given at launch or attached
 * later: one queue per vCPU (BLK_MAX_QUEUES at most), and the latency
 * breakdown kept only where it will be shown (it costs clock reads on
 * every request). */
void cmdline_disk_defaults(struct blk_opts *o, unsigned int cpus, bool latency);

/* The hot-plug root ports c asks for: one for each launch disk with
 * `hotplug` (*launch of them), then the empty ones: --hotplug-slots, or
 * by default HOTPLUG_DEFAULT_SLOTS with --api (as many as fit beside
 * the launch disks' ports), else none.  -1 past HOTPLUG_MAX_SLOTS. */
int cmdline_hotplug_ports(const struct vmm_config *c, unsigned int *launch);

/* Parses argv[1..] of `vmm run` (argv[0] is "run"); disk specs are
 * parsed in place.  c->params points to a buffer of this module's, the
 * last call's.  On CMDLINE_ERROR msg holds one line. */
enum cmdline_result cmdline_parse(int argc, char **argv, struct vmm_config *c,
				  int *verbose, char *msg, size_t msglen);

#endif
