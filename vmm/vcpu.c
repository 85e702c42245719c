/* vCPU threads: KVM_RUN and exit dispatch. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "host/affinity.h"
#include "host/sandbox.h"
#include "host/log.h"
#include "vmm/machine.h"

#define SIG_KICK SIGUSR1

static void vcpu_io(struct vcpu *c)
{
	struct kvm_run *run = c->run;
	uint8_t *p = (uint8_t *)run + run->io.data_offset;
	bool write = run->io.direction == KVM_EXIT_IO_OUT;

	for (uint32_t i = 0; i < run->io.count; i++) {
		bus_access(&c->m->pio, run->io.port, p, run->io.size, write);
		p += run->io.size;
	}
}

static void vcpu_mmio(struct vcpu *c)
{
	struct kvm_run *run = c->run;
	unsigned int len = run->mmio.len;

	if (len > sizeof(run->mmio.data))
		len = sizeof(run->mmio.data);
	bus_access(&c->m->mmio, run->mmio.phys_addr, run->mmio.data, len,
		   run->mmio.is_write);
}

static void vcpu_system_event(struct vcpu *c)
{
	switch (c->run->system_event.type) {
	case KVM_SYSTEM_EVENT_RESET:
		machine_exit(c->m, VMM_EXIT_RESET, "guest reset");
		break;
	case KVM_SYSTEM_EVENT_CRASH:
		machine_exit(c->m, VMM_EXIT_PANIC, "guest crashed");
		break;
	default:
		machine_exit(c->m, VMM_EXIT_RESET, "guest powered off");
		break;
	}
}

/* Returns false when the loop should end. */
static bool vcpu_exit(struct vcpu *c)
{
	struct kvm_run *run = c->run;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		vcpu_io(c);
		return true;
	case KVM_EXIT_MMIO:
		vcpu_mmio(c);
		return true;
	case KVM_EXIT_INTR:
		return true;
	case KVM_EXIT_HLT:
		return true; /* not with the in-kernel LAPIC */
	case KVM_EXIT_SHUTDOWN:
		machine_exit(c->m, VMM_EXIT_TRIPLE_FAULT,
			     "vCPU %u: triple fault (KVM_EXIT_SHUTDOWN)", c->id);
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		vcpu_system_event(c);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		machine_exit(c->m, VMM_EXIT_INTERNAL,
			     "vCPU %u: KVM internal error, suberror %u", c->id,
			     run->internal.suberror);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		machine_exit(c->m, VMM_EXIT_INTERNAL,
			     "vCPU %u: entry failed, reason 0x%llx", c->id,
			     (unsigned long long)
				     run->fail_entry.hardware_entry_failure_reason);
		return false;
	default:
		machine_exit(c->m, VMM_EXIT_INTERNAL,
			     "vCPU %u: unhandled exit reason %u", c->id,
			     run->exit_reason);
		return false;
	}
}

static void *vcpu_main(void *arg)
{
	struct vcpu *c = arg;
	char name[16];
	sigset_t set;

	/* Named so that per-thread figures in /proc say which is which. */
	snprintf(name, sizeof(name), "vcpu%u", c->id);
	pthread_setname_np(pthread_self(), name);
	__atomic_store_n(&c->tid, gettid(), __ATOMIC_RELAXED);
	sigemptyset(&set);
	sigaddset(&set, SIG_KICK);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	affinity_pin_thread(c->cpu, name);
	sandbox_enter(SANDBOX_VCPU);
	if (c->id == 0)
		startup_mark("first KVM_RUN");
	while (!machine_exiting(c->m)) {
		if (ioctl(c->fd, KVM_RUN, 0) < 0) {
			int e = errno;

			if (e == EINTR || e == EAGAIN) {
				/* kicked: immediate_exit is set only to stop */
				continue;
			}
			machine_exit(c->m, VMM_EXIT_INTERNAL,
				     "vCPU %u: KVM_RUN: %s", c->id, strerror(e));
			break;
		}
		if (!vcpu_exit(c))
			break;
	}
	return NULL;
}

static void vcpu_sig(int sig)
{
	(void)sig;
}

int vcpu_start(struct vcpu *c)
{
	struct sigaction sa;
	int r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vcpu_sig;
	sigaction(SIG_KICK, &sa, NULL);
	r = pthread_create(&c->thread, NULL, vcpu_main, c);
	if (r)
		return -r;
	c->started = true;
	return 0;
}

void vcpu_kick(struct vcpu *c)
{
	if (!c->started)
		return;
	/* Makes a KVM_RUN that has not started yet return at once, so the
	 * signal cannot be lost between the check and the ioctl. */
	__atomic_store_n(&c->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(c->thread, SIG_KICK);
}

void vcpu_join(struct vcpu *c)
{
	if (!c->started)
		return;
	pthread_join(c->thread, NULL);
	c->started = false;
}
