/* Disks attached and detached while the guest runs; see hotplug.h. */
#include "vmm/hotplug.h"

#include <errno.h>
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "host/json.h"
#include "host/log.h"
#include "host/sandbox.h"
#include "hw/pcie_port.h"
#include "vmm/cmdline.h"
#include "vmm/machine.h"

#define DETACH_POLL_MS 10
/* --force: how long the rings must stay answered before the device
 * goes, and the most it waits for that. */
#define FORCE_SETTLE_MS 100
#define FORCE_WAIT_MS 5000
#define HP_OFF_GRACE_MS 3000 /* pciehp's own wait after power-off: 1 s */

struct hp_slot {
	struct hotplug *h;
	struct pcie_port port;
	unsigned int pci_slot;    /* on bus 0: the port's requester id */
	uint32_t window;          /* its memory window: the disk's BAR 0 */
	int irq_fd, gsi;          /* the port's MSI: an irqfd on gsi */
	bool routed;
	uint64_t msi_addr;
	uint32_t msi_data;
	/* Owned by the hot-plug thread. */
	struct vdisk *disk;       /* NULL: free */
	char *spec;               /* the disk's opts point into it */
	struct blk_opts opts;
	char name[8];
};

enum hp_req { HP_NONE, HP_ATTACH, HP_DETACH, HP_STOP };

struct hotplug {
	struct machine *m;
	unsigned int nslots;
	struct hp_slot slot[HOTPLUG_MAX_SLOTS];
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* One request at a time (the control socket's thread). */
	enum hp_req req;
	bool done;
	const char *spec, *name;
	bool force;
	unsigned int timeout_ms;
	struct api_disk *out;
	char *msg;
	unsigned int msglen;
	int result;
};

/* The port's MSI, from a vCPU (its config writes) or the hot-plug
 * thread, with the port's lock held: the route follows (addr, data). */
static void hp_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct hp_slot *s = opaque;
	struct vm *vm = &s->h->m->vm;
	uint64_t one = 1;
	int r = 0;

	if (!s->routed || addr != s->msi_addr || data != s->msi_data) {
		r = vm_msi_set(vm, (unsigned int)s->gsi, addr, data,
			       s->pci_slot << 3);
		s->routed = !r;
		s->msi_addr = addr;
		s->msi_data = data;
	}
	if (!r && write(s->irq_fd, &one, sizeof(one)) < 0)
		r = -EIO;
	if (r)
		pr_guest(VLOG_WARN, "pcie port: hot-plug interrupt: %s",
			 strerror(-r));
}

static int hp_slot_init(struct hotplug *h, unsigned int i)
{
	struct machine *m = h->m;
	struct hp_slot *s = &h->slot[i];
	struct pcie_port_cb cb = { .opaque = s, .msi = hp_msi };
	int r;

	s->h = h;
	s->irq_fd = -1;
	s->gsi = -1;
	r = pci_host_alloc_bar(&m->pci, PCIE_PORT_WINDOW, &s->window);
	if (!r)
		r = pcie_port_init(&s->port, i, (uint8_t)(1 + i), s->window,
				   PCIE_PORT_WINDOW, &cb);
	if (r)
		return r;
	/* A bus with no I/O space (arm64): no I/O or prefetchable window
	 * Linux could try to claim (pcie_port.h). */
	if (!m->pci.io_end)
		pcie_port_windows_off(&s->port);
	s->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->irq_fd < 0)
		return -errno;
	s->gsi = vm_msi_alloc(&m->vm);
	if (s->gsi < 0)
		return s->gsi;
	r = vm_irqfd(&m->vm, s->irq_fd, (unsigned int)s->gsi, true);
	if (r)
		return r;
	r = pci_host_add(&m->pci, &pcie_port_pci_ops, &s->port);
	if (r < 0)
		return r;
	s->pci_slot = (unsigned int)r;
	return 0;
}

unsigned int hotplug_nslots(const struct hotplug *h)
{
	return h->nslots;
}

/* blk into the empty slot s as name: its function behind the port, then
 * the slot occupied (from there the guest may reach it).  0, or -errno
 * with blk still the caller's. */
static int hp_slot_fill(struct hotplug *h, struct hp_slot *s,
			struct blk_dev *blk, const char *name)
{
	/* No I/O BAR: the root ports have no I/O window (vmm/README.md). */
	int r = vdisk_create(&h->m->vm, blk, s->window, 0, &s->disk);

	if (r)
		return r;
	vpci_kvm_set_devid(s->disk->pci, pcie_port_secondary(&s->port), 0);
	/* No INTx behind a root port (it has no pin, the MP table no bus
	 * for it): the function says so, and the guest uses MSI-X only
	 * instead of looking for a line ("can't find IRQ for PCI INT A"). */
	s->disk->pci->pci.func.cfg[PCI_INTERRUPT_PIN] = 0;
	snprintf(s->name, sizeof(s->name), "%s", name);
	pcie_port_plug(&s->port, &vpci_kvm_pci_ops, s->disk->pci);
	return 0;
}

int hotplug_create(struct machine *m, struct blk_dev **disks,
		   struct hotplug **out)
{
	const struct vmm_config *cfg = m->cfg;
	unsigned int launch;
	int nslots = cmdline_hotplug_ports(cfg, &launch), r = 0;
	struct hotplug *h;

	if (nslots <= 0)
		return nslots ? -EINVAL : 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->m = m;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	for (unsigned int i = 0; i < (unsigned int)nslots && !r; i++) {
		r = hp_slot_init(h, i);
		h->nslots = i + 1; /* destroy undoes what is there */
	}
	/* The launch disks with `hotplug` (the last ones) in the first
	 * slots, plugged before the guest runs: its pciehp finds them
	 * present and enables the slots as it would after an attach. */
	for (unsigned int k = 0; k < launch && !r; k++) {
		unsigned int d = cfg->ndisks - launch + k;
		char name[VDISK_NAME_LEN];

		r = hp_slot_fill(h, &h->slot[k], disks[d], vdisk_name(name, d));
		if (!r)
			disks[d] = NULL; /* the slot owns it now */
	}
	if (r) {
		hotplug_destroy(h);
		return r;
	}
	*out = h;
	return 0;
}

unsigned int hotplug_api_disks(struct hotplug *h, struct api_disk *out,
			       unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; h && i < h->nslots && n < max; i++) {
		struct hp_slot *s = &h->slot[i];

		if (!s->disk)
			continue;
		machine_api_disk(&out[n++], s->name, s->disk, true);
	}
	return n;
}

void hotplug_disks_stop(struct hotplug *h)
{
	for (unsigned int i = 0; h && i < h->nslots; i++)
		if (h->slot[i].disk)
			vdisk_stop(h->slot[i].disk);
}

void hotplug_stats_json(struct hotplug *h, struct json_object *disks)
{
	for (unsigned int i = 0; h && i < h->nslots; i++) {
		struct hp_slot *s = &h->slot[i];
		struct json_object *o;

		if (!s->disk)
			continue;
		o = vdisk_stats_json(s->disk);
		json_object_object_add(o, "name",
				       json_object_new_string(s->name));
		json_object_array_add(disks, o);
	}
}

/* ---- on the hot-plug thread ------------------------------------------ */

/* An empty slot, one the guest is done with first: pciehp ignores a
 * device plugged in the second after it powered a slot off (a forced
 * detach's slot may still be there). */
static struct hp_slot *hp_free_slot(struct hotplug *h)
{
	struct hp_slot *any = NULL;

	for (unsigned int i = 0; i < h->nslots; i++) {
		struct hp_slot *s = &h->slot[i];

		if (s->disk || pcie_port_occupied(&s->port))
			continue;
		if (pcie_port_quiescent(&s->port))
			return s;
		if (!any)
			any = s;
	}
	return any;
}

static void hp_slot_clear(struct hp_slot *s)
{
	free(s->spec);
	s->spec = NULL;
	s->disk = NULL;
	s->name[0] = '\0';
}

static int hp_do_attach(struct hotplug *h)
{
	const struct vmm_config *cfg = h->m->cfg;
	struct hp_slot *s = hp_free_slot(h);
	struct blk_dev *blk = NULL;
	char why[200];
	int r;

	if (!s) {
		snprintf(h->msg, h->msglen, "no free hot-plug slot (%u, all "
			 "in use)", h->nslots);
		return -ENOSPC;
	}
	s->spec = strdup(h->spec);
	if (!s->spec)
		return -ENOMEM;
	memset(&s->opts, 0, sizeof(s->opts));
	r = blk_opts_parse(s->spec, &s->opts, why, sizeof(why));
	if (r) {
		snprintf(h->msg, h->msglen, "%s", why);
		goto fail;
	}
	cmdline_disk_defaults(&s->opts, cfg->cpus,
			      vlog_get_level() >= VLOG_INFO || cfg->stats_path);
	r = blk_dev_create(&s->opts, &blk, why, sizeof(why));
	if (r) {
		snprintf(h->msg, h->msglen, "%s", why);
		goto fail;
	}
	if (*blk_dev_note(blk))
		pr_warn("disk %s: %s", h->name, blk_dev_note(blk));
	r = hp_slot_fill(h, s, blk, h->name);
	if (r) {
		blk_dev_destroy(blk);
		snprintf(h->msg, h->msglen, "cannot create the device: %s",
			 strerror(-r));
		goto fail;
	}
	machine_api_disk(h->out, h->name, s->disk, true);
	return 0;
fail:
	hp_slot_clear(s);
	return r;
}

static void hp_sleep_ms(unsigned int ms)
{
	struct timespec t = { .tv_sec = ms / 1000,
			      .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

/* The guest asked, and waited for until it is done with the slot: its
 * driver gone, the power off, then (pciehp, a second later) the power
 * indicator off; a guest that leaves the indicator alone is taken as
 * done HP_OFF_GRACE_MS after the power went off.  True, or false after
 * timeout_ms or once the machine is ending. */
static bool hp_wait_release(struct hotplug *h, struct hp_slot *s)
{
	unsigned int waited = 0, off = 0;

	if (!pcie_port_powered(&s->port))
		return true; /* never powered on: the guest never used it */
	pcie_port_press_button(&s->port);
	while (!pcie_port_quiescent(&s->port)) {
		if (!pcie_port_powered(&s->port) && off >= HP_OFF_GRACE_MS)
			break;
		if (waited >= h->timeout_ms || machine_exiting(h->m))
			return false;
		hp_sleep_ms(DETACH_POLL_MS);
		waited += DETACH_POLL_MS;
		off = pcie_port_powered(&s->port) ? 0 : off + DETACH_POLL_MS;
	}
	return true;
}

/* --force, before the device goes: every request the guest has made or
 * makes is answered IOERR (in-flight ones complete as they do), until
 * its rings have stayed answered, and (EVENT_IDX) every answer taken,
 * for FORCE_SETTLE_MS (the guest's users of the disk have seen their
 * errors and stopped) or FORCE_WAIT_MS have passed.  What a Linux guest
 * would wait for at the removal is then answered already: 6.1's
 * virtio_blk, removed with requests it still has, waits for them for
 * good (del_gendisk after virtio_break_device). */
static void hp_fail_and_settle(struct hotplug *h, struct hp_slot *s)
{
	unsigned int waited = 0, idle = 0;

	blk_dev_fail_io(s->disk->blk);
	while (idle < FORCE_SETTLE_MS && waited < FORCE_WAIT_MS &&
	       !machine_exiting(h->m)) {
		hp_sleep_ms(DETACH_POLL_MS);
		waited += DETACH_POLL_MS;
		idle = blk_dev_rings_idle(s->disk->blk) ? idle + DETACH_POLL_MS : 0;
	}
}

static int hp_do_detach(struct hotplug *h)
{
	struct hp_slot *s = NULL;

	for (unsigned int i = 0; i < h->nslots && !s; i++)
		if (h->slot[i].disk && !strcmp(h->slot[i].name, h->name))
			s = &h->slot[i];
	if (!s) {
		snprintf(h->msg, h->msglen, "no attached disk '%.16s'",
			 h->name);
		return -ENOENT;
	}
	if (h->force) {
		hp_fail_and_settle(h, s);
	} else if (!hp_wait_release(h, s)) {
		snprintf(h->msg, h->msglen, "%s: the guest did not power its "
			 "slot off within %u ms; still attached (--force "
			 "removes it)", s->name, h->timeout_ms);
		return -ETIMEDOUT;
	}
	/* Its queues stopped first (in-flight requests complete and are
	 * published while the guest still has the device), then out of
	 * the guest's reach, then freed. */
	vdisk_stop(s->disk);
	pcie_port_unplug(&s->port);
	vdisk_destroy(s->disk);
	hp_slot_clear(s);
	return 0;
}

static void *hp_main(void *arg)
{
	struct hotplug *h = arg;

	pthread_setname_np(pthread_self(), "hotplug");
	sandbox_enter(SANDBOX_HOTPLUG);
	pthread_mutex_lock(&h->lock);
	for (;;) {
		enum hp_req req;
		int r;

		while (h->req == HP_NONE || h->done)
			pthread_cond_wait(&h->cond, &h->lock);
		req = h->req;
		if (req == HP_STOP)
			break;
		pthread_mutex_unlock(&h->lock);
		r = req == HP_ATTACH ? hp_do_attach(h) : hp_do_detach(h);
		pthread_mutex_lock(&h->lock);
		h->result = r;
		h->done = true;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

int hotplug_start(struct hotplug *h)
{
	int r = -pthread_create(&h->thread, NULL, hp_main, h);

	h->started = !r;
	return r;
}

/* Hand a request to the thread and wait for its answer. */
static int hp_call(struct hotplug *h, enum hp_req req)
{
	int r;

	pthread_mutex_lock(&h->lock);
	if (!h->started || h->req == HP_STOP) {
		pthread_mutex_unlock(&h->lock);
		snprintf(h->msg, h->msglen, "the machine is ending");
		return -ESHUTDOWN;
	}
	h->req = req;
	h->done = false;
	pthread_cond_broadcast(&h->cond);
	while (!h->done)
		pthread_cond_wait(&h->cond, &h->lock);
	r = h->result;
	h->req = HP_NONE;
	pthread_mutex_unlock(&h->lock);
	return r;
}

int hotplug_attach(void *opaque, const char *spec, const char *name,
		   struct api_disk *out, char *msg, unsigned int msglen)
{
	struct hotplug *h = opaque;

	h->spec = spec;
	h->name = name;
	h->out = out;
	h->msg = msg;
	h->msglen = msglen;
	return hp_call(h, HP_ATTACH);
}

int hotplug_detach(void *opaque, const char *name, bool force,
		   unsigned int timeout_ms, char *msg, unsigned int msglen)
{
	struct hotplug *h = opaque;

	h->name = name;
	h->force = force;
	h->timeout_ms = timeout_ms;
	h->msg = msg;
	h->msglen = msglen;
	return hp_call(h, HP_DETACH);
}

void hotplug_stop(struct hotplug *h)
{
	if (!h || !h->started)
		return;
	pthread_mutex_lock(&h->lock);
	h->req = HP_STOP;
	h->done = false;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	h->started = false;
}

void hotplug_destroy(struct hotplug *h)
{
	if (!h)
		return;
	hotplug_stop(h);
	for (unsigned int i = 0; i < h->nslots; i++) {
		struct hp_slot *s = &h->slot[i];

		if (s->disk) {
			pcie_port_unplug(&s->port);
			vdisk_destroy(s->disk);
			hp_slot_clear(s);
		}
		if (s->irq_fd >= 0)
			close(s->irq_fd);
		if (s->port.cb.msi)
			pcie_port_destroy(&s->port);
	}
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	free(h);
}
