/* Build the machine and run it until something ends it. */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "host/clock.h"
#include "host/sandbox.h"
#include "host/log.h"
#include "vmm/follow.h"
#include "vmm/machine.h"
#include "vmm/term.h"

static void on_serial_irq(void *opaque, int level)
{
	struct machine *m = opaque;

	vm_irq_line(&m->vm, m->serial_irq, level);
}

static void on_quit(void *opaque)
{
	machine_exit(opaque, VMM_EXIT_RESET, "quit (Ctrl-A x)");
}

static void on_panic(void *opaque, uint8_t events)
{
	machine_exit(opaque, VMM_EXIT_PANIC,
		     "guest panicked (pvpanic event 0x%x)", events);
}

void machine_serial(struct machine *m, unsigned int irq)
{
	m->serial_irq = irq;
	serial_init(&m->serial, STDOUT_FILENO, on_serial_irq, m);
}

int machine_pci(struct machine *m, struct blk_dev **disks, bool io_bars,
		unsigned int (*intx_irq)(unsigned int slot))
{
	uint32_t bar, io_bar = 0;
	int r;

	m->mmio.fallback = pci_host_mmio;
	m->mmio.fallback_opaque = &m->pci;
	m->pio.fallback = pci_host_pio;
	m->pio.fallback_opaque = &m->pci;
	/* The disks with `hotplug` (the last) go in slots (hotplug_create). */
	for (unsigned int i = 0; i < m->cfg->ndisks && !m->cfg->disk[i].hotplug;
	     i++) {
		r = pci_host_alloc_bar(&m->pci, VPCI_BAR_SIZE, &bar);
		if (!r && io_bars)
			r = pci_host_alloc_io(&m->pci, VPCI_IO_BAR_SIZE, &io_bar);
		if (!r)
			r = vdisk_create(&m->vm, disks[i], bar, io_bar,
					 &m->disk[i]);
		if (r)
			return r;
		disks[i] = NULL; /* the vdisk owns it now */
		m->ndisks++;
		r = pci_host_add(&m->pci, &vpci_kvm_pci_ops, m->disk[i]->pci);
		if (r < 0)
			return r;
		vpci_kvm_set_devid(m->disk[i]->pci, 0, (unsigned int)r);
		/* INTA# for a guest without MSI-X (pci=nomsi). */
		m->pci_intx |= 1u << r;
		vpci_kvm_set_intx_gsi(m->disk[i]->pci,
				      intx_irq((unsigned int)r));
	}
	r = pci_host_alloc_bar(&m->pci, PVPANIC_BAR_SIZE, &bar);
	if (!r)
		r = pvpanic_init(&m->pvpanic, bar, on_panic, m);
	if (!r)
		r = pci_host_add(&m->pci, &pvpanic_ops, &m->pvpanic);
	return r < 0 ? r : 0;
}

int machine_vcpus(struct machine *m)
{
	int r;

	if (m->cfg->cpus > (unsigned int)vm_max_vcpus(&m->vm)) {
		pr_err("%u vCPUs requested, KVM supports %d", m->cfg->cpus,
		       vm_max_vcpus(&m->vm));
		return -EINVAL;
	}
	for (unsigned int i = 0; i < m->cfg->cpus; i++) {
		struct vcpu *c = &m->vcpu[i];

		c->m = m;
		c->id = i;
		c->cpu = m->cfg->pin == VMM_PIN_ON ? m->cfg->vcpu_cpu[i] : -1;
		r = vm_vcpu_create(&m->vm, i, &c->fd, &c->run);
		if (r) {
			pr_err("cannot create vCPU %u: %s", i, strerror(-r));
			return r;
		}
		m->ncpus++;
	}
	return 0;
}

static int machine_build(struct machine *m, struct blk_dev **disks,
			 const struct arch_kernel *k, const uint8_t *initrd,
			 size_t initrd_size)
{
	char msg[256];
	int r;

	r = vm_open(&m->vm, msg, sizeof(msg));
	if (r) {
		pr_err("%s", msg);
		return r;
	}
	r = arch_machine_build(m, disks, k, initrd, initrd_size);
	if (!r)
		startup_mark("vCPUs");
	return r;
}

/* Wait for the end: a device, a vCPU, or a signal; with --pin follow,
 * move the iothreads after their vCPUs meanwhile. */
static void machine_wait(struct machine *m, int sfd)
{
	struct pollfd p[2] = { { .fd = m->stop_fd, .events = POLLIN },
			       { .fd = sfd, .events = POLLIN } };
	struct signalfd_siginfo si;
	struct follow f;
	int timeout = follow_init(&f, m), r;

	while (!machine_exiting(m)) {
		r = poll(p, 2, timeout);
		if (r < 0 && errno != EINTR)
			break;
		if (r == 0)
			follow_step(&f);
		if (p[1].revents && read(sfd, &si, sizeof(si)) == sizeof(si))
			machine_exit(m, VMM_EXIT_SIGNAL + (int)si.ssi_signo,
				     "stopped by signal %u", si.ssi_signo);
	}
	follow_end(&f);
}

static int machine_start(struct machine *m)
{
	enum term_state tty = term_take(STDIN_FILENO);
	int r;

	/* A terminal in another's hands is not read either (SIGTTIN would
	 * stop the VMM): the console has no input then (fd -1). */
	if (tty == TERM_AWAY)
		pr_info("console: stdin is a terminal this process does not "
			"own (in the background?): no console input");
	r = serial_start_input(&m->serial,
			       tty == TERM_AWAY ? -1 : STDIN_FILENO,
			       tty == TERM_RAW, on_quit, m);
	if (r) {
		pr_err("cannot start the console input: %s", strerror(-r));
		return r;
	}
	for (unsigned int i = 0; i < m->ncpus; i++) {
		r = vcpu_start(&m->vcpu[i]);
		if (r) {
			machine_exit(m, VMM_EXIT_ERROR,
				     "cannot start vCPU %u: %s", i,
				     strerror(-r));
			return r;
		}
	}
	return 0;
}

/* --stats FILE: every disk's counters and latency breakdown, written to
 * a temporary file renamed over FILE, so a reader never sees half. */
static void machine_write_stats(struct machine *m)
{
	struct json_object *root = json_object_new_object();
	struct json_object *disks = json_object_new_array();
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", m->cfg->stats_path);
	for (unsigned int i = 0; i < m->ndisks; i++) {
		struct json_object *o = vdisk_stats_json(m->disk[i]);
		char name[VDISK_NAME_LEN];

		json_object_object_add(o, "name",
				       json_object_new_string(vdisk_name(name, i)));
		json_object_array_add(disks, o);
	}
	hotplug_stats_json(m->hp, disks);
	json_object_object_add(root, "disks", disks);
	f = fopen(tmp, "w");
	if (!f) {
		pr_err("--stats: %s: %s", tmp, strerror(errno));
		json_object_put(root);
		return;
	}
	fprintf(f, "%s\n", json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_SPACED));
	json_object_put(root);
	if (fclose(f) || rename(tmp, m->cfg->stats_path)) {
		pr_err("--stats: %s: %s", m->cfg->stats_path, strerror(errno));
		unlink(tmp);
	}
}

static void machine_teardown(struct machine *m)
{
	machine_exit(m, VMM_EXIT_ERROR, "teardown"); /* no-op if ending */
	machine_api_stop(m); /* nothing changes the disks after this */
	for (unsigned int i = 0; i < m->ncpus; i++)
		vcpu_kick(&m->vcpu[i]);
	for (unsigned int i = 0; i < m->ncpus; i++)
		vcpu_join(&m->vcpu[i]);
	serial_stop_input(&m->serial);
	/* Stopped from outside: often a guest that looks hung.  Whether
	 * the console stopped with its interrupt pending tells a guest
	 * that stopped serving it from one that stopped writing; each
	 * vCPU's run state and rip, one that spins from one that waits. */
	if (m->exit_status > VMM_EXIT_SIGNAL) {
		char line[512];

		serial_describe(&m->serial, mono_ns(), line, sizeof(line));
		pr_info("%s", line);
		for (unsigned int i = 0; i < m->ncpus; i++) {
			arch_vcpu_describe(&m->vcpu[i], line, sizeof(line));
			pr_info("%s", line);
		}
	}
	if (m->pio.unclaimed || m->mmio.unclaimed)
		pr_info("accesses nothing decoded: %llu port, %llu MMIO",
			(unsigned long long)m->pio.unclaimed,
			(unsigned long long)m->mmio.unclaimed);
	for (unsigned int i = 0; i < m->ndisks; i++)
		vdisk_stop(m->disk[i]);
	hotplug_disks_stop(m->hp);
	if (m->cfg->stats_path)
		machine_write_stats(m);
	for (unsigned int i = 0; i < m->ndisks; i++)
		vdisk_destroy(m->disk[i]);
	hotplug_destroy(m->hp); /* and the disks in its slots */
	m->hp = NULL;
	for (unsigned int i = 0; i < m->ncpus; i++)
		close(m->vcpu[i].fd);
	term_restore();
	arch_machine_free(m);
	vm_close(&m->vm);
}

int machine_run(const struct vmm_config *cfg, struct blk_dev **disks,
		const struct arch_kernel *k, const uint8_t *initrd,
		size_t initrd_size)
{
	struct machine *m = calloc(1, sizeof(*m));
	sigset_t set;
	int sfd, status;

	if (!m)
		return VMM_EXIT_ERROR;
	m->cfg = cfg;
	m->vm.vm_fd = m->vm.kvm_fd = -1;
	pthread_mutex_init(&m->exit_lock, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	m->stop_fd = eventfd(0, EFD_CLOEXEC);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (m->stop_fd < 0 || sfd < 0) {
		pr_err("eventfd/signalfd: %s", strerror(errno));
		status = VMM_EXIT_ERROR;
	} else if (machine_build(m, disks, k, initrd, initrd_size) ||
		   machine_api_start(m) || machine_start(m)) {
		machine_exit(m, VMM_EXIT_ERROR, "setup failed");
		status = VMM_EXIT_ERROR;
	} else {
		/* Set-up is over: every thread now runs under its filter. */
		sandbox_enter(SANDBOX_MAIN);
		machine_wait(m, sfd);
		status = -1;
	}
	machine_teardown(m);
	if (status < 0) {
		status = m->exit_status;
		if (status != VMM_EXIT_RESET)
			pr_err("%s", m->reason);
		else /* -v: which way the guest ended it */
			pr_info("%s", m->reason);
	}
	if (sfd >= 0)
		close(sfd);
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	free(m);
	return status;
}
