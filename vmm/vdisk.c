/* A virtio-blk disk: blk_dev_ops on a virtio-pci function under KVM. */
#include "vmm/vdisk.h"

#include <errno.h>
#include <stdlib.h>

#include "host/json.h"
#include "host/log.h"

char *vdisk_name(char out[VDISK_NAME_LEN], unsigned int i)
{
	snprintf(out, VDISK_NAME_LEN, "vd%c", 'a' + i);
	return out;
}

int vdisk_create(struct vm *vm, struct blk_dev *blk, uint32_t bar,
		 uint32_t io_bar, struct vdisk **out)
{
	struct vdisk *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	r = vpci_kvm_create(vm, &blk_dev_ops, blk, bar, io_bar, &d->pci);
	if (r) {
		free(d); /* the caller still owns blk */
		return r;
	}
	d->blk = blk;
	*out = d;
	return 0;
}

void vdisk_stop(struct vdisk *d)
{
	vpci_kvm_reset(d->pci);
}

struct json_object *vdisk_stats_json(struct vdisk *d)
{
	struct json_object *o = json_object_new_object();
	struct json_object *qs = json_object_new_array();
	unsigned int nq = blk_dev_ops.num_queues(d->blk);
	struct blk_stats st;

	blk_dev_stats(d->blk, &st);
	json_put_u64(o, "requests", st.requests);
	json_put_u64(o, "notifies", st.notifies);
	json_put_u64(o, "bad_chains", st.bad_chains);
	json_put_u64(o, "ring_errors", st.ring_errors);
	json_put_u64(o, "io_errors", st.io_errors);
	for (unsigned int q = 0; q < nq; q++) {
		const struct lat_queue *l = blk_dev_latency(d->blk, q);

		/* null: not kept (blk_opts.latency) */
		json_object_array_add(qs, l ? lat_queue_json(l) : NULL);
	}
	json_object_object_add(o, "queues", qs);
	return o;
}

/* Each queue's latency breakdown, one log line per stage. */
static void vdisk_print_latency(const struct vdisk *d)
{
	unsigned int nq = blk_dev_ops.num_queues(d->blk);
	char line[160];

	for (unsigned int q = 0; q < nq; q++) {
		const struct lat_queue *l = blk_dev_latency(d->blk, q);

		for (unsigned int s = 0; l && s < LAT_STAGES; s++) {
			lat_hist_format(&l->stage[s], line, sizeof(line));
			pr_info("virtio-blk q%u: %s %s", q, lat_stage_name[s],
				line);
		}
	}
}

void vdisk_destroy(struct vdisk *d)
{
	struct blk_stats st;

	if (!d)
		return;
	/* The transport first: it resets the device, whose figures are
	 * final after that. */
	vpci_kvm_reset(d->pci);
	blk_dev_stats(d->blk, &st);
	pr_info("virtio-blk: %llu requests, %llu notifies, %llu kicks "
		"through a vCPU exit, %llu bad chains, %llu ring errors, "
		"%llu I/O errors, %llu bad register accesses",
		(unsigned long long)st.requests,
		(unsigned long long)st.notifies,
		(unsigned long long)d->pci->slow_kicks,
		(unsigned long long)st.bad_chains,
		(unsigned long long)st.ring_errors,
		(unsigned long long)st.io_errors,
		(unsigned long long)d->pci->pci.bad_access);
	if (vlog_get_level() >= VLOG_INFO)
		vdisk_print_latency(d);
	vpci_kvm_destroy(d->pci);
	blk_dev_destroy(d->blk);
	free(d);
}
