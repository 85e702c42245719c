/* A virtio-blk disk of the machine: the blk device (blk/) on its
 * virtio-pci transport under KVM (vmm/vpci_kvm), and what it reports at
 * exit.
 */
#ifndef VMM_VDISK_H
#define VMM_VDISK_H

#include <stdint.h>
#include <stdio.h>

#include "blk/blk.h"
#include "vmm/vpci_kvm.h"

struct vdisk {
	struct blk_dev *blk;
	struct vpci_kvm *pci;
};

/* The guest's name of the disk at index i of the command line: vda,
 * vdb, ... (attached disks take the first name free).  Returns out. */
#define VDISK_NAME_LEN 8
char *vdisk_name(char out[VDISK_NAME_LEN], unsigned int i);

/* Takes over blk (destroyed by vdisk_destroy); BAR 0 at bar, the I/O
 * BAR at port io_bar.  0 or -errno. */
int vdisk_create(struct vm *vm, struct blk_dev *blk, uint32_t bar,
		 uint32_t io_bar, struct vdisk **out);
/* Reset the device: its iothreads have stopped serving (in-flight I/O
 * done) and its figures are final. */
void vdisk_stop(struct vdisk *d);
/* Its counters and each queue's latency breakdown as one JSON object
 * (complete once vdisk_stop() returned). */
struct json_object;
struct json_object *vdisk_stats_json(struct vdisk *d);
/* Reset the device, log its counters (-v), then free everything. */
void vdisk_destroy(struct vdisk *d);

#endif
