/* Disks attached and detached while the guest runs (`vmm ctl attach`,
 * `detach`): PCI Express root ports with native hot-plug (hw/pcie_port)
 * on bus 0, each with one slot, and a thread of its own that opens and
 * closes the disks (under the sandbox's hot-plug filter, which the
 * iothreads it starts inherit).  vmm/README.md has the design.
 */
#ifndef VMM_HOTPLUG_H
#define VMM_HOTPLUG_H

#include <stdbool.h>

#include <json-c/json.h>

#include "api/api.h"

#define HOTPLUG_MAX_SLOTS 8
#define HOTPLUG_DEFAULT_SLOTS 4 /* with --api; without it none */

struct blk_dev;
struct machine;
struct hotplug;
struct vmm_config;

/* The machine's slots as root ports on m->pci, each with a memory
 * window of PCIE_PORT_WINDOW from the MMIO window and secondary bus
 * 1 + i; their interrupts routed.  How many: cmdline_hotplug_ports (none:
 * *out stays NULL).  The launch disks with `hotplug` (the last of
 * disks, which the slots take: NULL there after) in the first slots,
 * the rest empty.  The same rule on every architecture.  Before the
 * vCPUs run.  0 or -errno. */
int hotplug_create(struct machine *m, struct blk_dev **disks,
		   struct hotplug **out);
/* The disks in slots, for the control socket's list (after the disks
 * on bus 0), marked detachable: how many were written (max at most).
 * h may be NULL. */
unsigned int hotplug_api_disks(struct hotplug *h, struct api_disk *out,
			       unsigned int max);
/* At exit, after hotplug_stop: the disks in slots stopped (their
 * figures final), then their stats appended to disks, each with its
 * name.  h may be NULL. */
void hotplug_disks_stop(struct hotplug *h);
void hotplug_stats_json(struct hotplug *h, struct json_object *disks);
/* Its slots: the last secondary bus. */
unsigned int hotplug_nslots(const struct hotplug *h);
/* Its thread, before the main thread's filter (it takes its own). */
int hotplug_start(struct hotplug *h);
/* Stop the thread (a wait for the guest ends early once the machine is
 * ending); the disks stay. */
void hotplug_stop(struct hotplug *h);
/* Every disk still attached destroyed (as at exit), the ports' fds
 * closed, h freed.  After the vCPUs have stopped. */
void hotplug_destroy(struct hotplug *h);

/* struct api_vm's attach and detach (opaque: the struct hotplug): run
 * on the hot-plug thread, the caller waiting. */
int hotplug_attach(void *opaque, const char *spec, const char *name,
		   struct api_disk *out, char *msg, unsigned int msglen);
int hotplug_detach(void *opaque, const char *name, bool force,
		   unsigned int timeout_ms, char *msg, unsigned int msglen);

#endif
