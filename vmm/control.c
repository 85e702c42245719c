/* The machine as the control socket sees it (--api; api/api.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/log.h"
#include "vmm/machine.h"

static uint64_t disk_features(void *opaque)
{
	struct vdisk *d = opaque;

	return vpci_features(&d->pci->pci);
}

static void disk_config_changed(void *opaque)
{
	struct vdisk *d = opaque;

	vpci_config_changed(&d->pci->pci);
}

void machine_api_disk(struct api_disk *out, const char *name,
		      struct vdisk *d, bool hotplug)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->blk = d->blk;
	out->features = disk_features;
	out->config_changed = disk_config_changed;
	out->opaque = d;
	out->hotplug = hotplug;
}

static void vm_quit(void *opaque)
{
	machine_exit(opaque, VMM_EXIT_SIGNAL + SIGTERM,
		     "quit through the control socket");
}

int machine_api_start(struct machine *m)
{
	struct api_vm *v = &m->api_vm;
	int r;

	if (m->cfg->api_fd < 0)
		return 0;
	v->cpus = m->ncpus;
	v->mem = m->cfg->mem;
	v->ndisks = m->ndisks;
	for (unsigned int i = 0; i < m->ndisks; i++) {
		char name[VDISK_NAME_LEN];

		machine_api_disk(&v->disk[i], vdisk_name(name, i), m->disk[i],
				 false);
	}
	v->ndisks += hotplug_api_disks(m->hp, &v->disk[v->ndisks],
				       API_MAX_DISKS - v->ndisks);
	v->quit = vm_quit;
	v->opaque = m;
	if (m->hp) {
		v->attach = hotplug_attach;
		v->detach = hotplug_detach;
		v->hp_opaque = m->hp;
		r = hotplug_start(m->hp);
		if (r) {
			pr_err("--hotplug-slots: cannot start its thread: %s",
			       strerror(-r));
			return r;
		}
	}
	r = api_server_start(m->cfg->api_fd, v, &m->api);
	if (r)
		pr_err("--api: cannot start its thread: %s", strerror(-r));
	return r;
}

void machine_api_stop(struct machine *m)
{
	/* A wait for the guest (detach) ends once the machine is ending. */
	if (m->api)
		api_server_stop(m->api, m->cfg->api_path);
	else if (m->cfg->api_fd >= 0) { /* set-up failed before it started */
		close(m->cfg->api_fd);
		unlink(m->cfg->api_path);
	}
	m->api = NULL;
	hotplug_stop(m->hp);
}
