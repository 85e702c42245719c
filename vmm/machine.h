/* The whole VM: configuration, devices, vCPU threads, and how it ends.
 *
 * Exit statuses of `vmm run` (also in `vmm --help`):
 *   0   the guest reset or powered off the machine (i8042 reset, e.g.
 *       reboot=k, on x86; PSCI on arm64), or the user quit with Ctrl-A x
 *   1   host-side failure (KVM unavailable, out of resources, I/O setup)
 *   2   bad command line or input (kernel, initrd, disk, sizes)
 *   3   the guest panicked (pvpanic)
 *   4   triple fault (KVM_EXIT_SHUTDOWN, x86)
 *   5   KVM internal error, failed entry or an exit the VMM cannot handle
 *   7   the sandbox stopped a system call outside its thread's list
 *       (host/sandbox.h; a VMM bug, or a VMM the guest took over)
 *   130 / 143  stopped by SIGINT / SIGTERM (shut down cleanly)
 * `vmm probe`: 0 KVM runs guests at hardware speed, 6 only by emulation
 * (slow), 1 KVM unusable.
 */
#ifndef VMM_MACHINE_H
#define VMM_MACHINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"
#include "blk/blk.h"
#include "host/sandbox.h"
#include "hw/bus.h"
#include "hw/pci_host.h"
#include "hw/pvpanic.h"
#include "hw/serial.h"
#include "vmm/arch.h"
#include "vmm/hotplug.h"
#include "vmm/kvm.h"
#include "vmm/vdisk.h"

enum vmm_exit {
	VMM_EXIT_RESET = 0,
	VMM_EXIT_ERROR = 1,
	VMM_EXIT_USAGE = 2,
	VMM_EXIT_PANIC = 3,
	VMM_EXIT_TRIPLE_FAULT = 4,
	VMM_EXIT_INTERNAL = 5,
	VMM_EXIT_SLOW = 6,
	VMM_EXIT_SANDBOX = SANDBOX_EXIT_STATUS, /* 7, host/sandbox.h */
	VMM_EXIT_SIGNAL = 128, /* + signal number */
};

#define VMM_MAX_DISKS 16
#define VMM_MAX_CPUS 64
#define VMM_DEFAULT_MEM (512ull << 20)

/* --pin: where the VMM's threads run (vmm/main.c, vmm/follow.h). */
enum vmm_pin {
	VMM_PIN_OFF,    /* wherever the host's scheduler puts them */
	VMM_PIN_ON,     /* vCPU i bound to a CPU, iothreads beside them */
	VMM_PIN_FOLLOW, /* vCPUs free; each iothread moves to its vCPU's CPU */
};

struct vmm_config {
	const char *kernel, *initrd, *params;
	const char *stats_path; /* --stats FILE, or NULL */
	const char *api_path;   /* --api PATH, or NULL */
	int api_fd;             /* its listening socket (vmm/main.c) */
	uint64_t mem;
	unsigned int cpus;
	unsigned int ndisks;
	struct blk_opts disk[VMM_MAX_DISKS];
	bool quiet_console; /* no terminal handling: stdin not a tty */
	bool no_sandbox;    /* --sandbox off */
	enum vmm_pin pin;
	int vcpu_cpu[VMM_MAX_CPUS]; /* host CPU of vCPU i, with --pin on */
	int hotplug_slots; /* --hotplug-slots; -1: the default (vmm/hotplug.h) */
};

/* The vCPU whose requests Linux's virtio-blk puts on queue q of disk d
 * and whose interrupt it asks for: q mod vCPUs on a disk with a queue
 * per vCPU or more; -1 on a disk with fewer, whose queues each serve
 * several vCPUs.  --pin on and --pin follow place iothreads by it. */
static inline int vmm_queue_vcpu(const struct vmm_config *c, unsigned int d,
				 unsigned int q)
{
	return c->disk[d].queues >= c->cpus ? (int)(q % c->cpus) : -1;
}

struct vcpu {
	struct machine *m;
	unsigned int id;
	int cpu; /* host CPU it is bound to (--pin on), or -1 */
	pid_t tid; /* its thread's id once it runs (atomic; vmm/follow.c) */
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool started;
};

struct machine {
	const struct vmm_config *cfg;
	struct vm vm;
	struct bus pio, mmio;
	struct serial serial;
	unsigned int serial_irq;   /* KVM's number for the console's line */
	struct pci_host pci;
	struct pvpanic pvpanic;
	struct vdisk *disk[VMM_MAX_DISKS];
	unsigned int ndisks;
	struct api_server *api;   /* --api: the control socket's thread */
	struct api_vm api_vm;     /* what it sees of the machine */
	struct hotplug *hp;       /* --hotplug-slots: the root ports, or NULL */
	uint32_t pci_intx;         /* slots with an INTA# line (machine_pci) */
	struct machine_arch *arch; /* the architecture's devices and state */
	struct vcpu vcpu[VMM_MAX_CPUS];
	unsigned int ncpus;
	int stop_fd;             /* eventfd: the VM should end */
	int exit_status;         /* first request wins */
	bool exiting;
	char reason[160];
	pthread_mutex_t exit_lock;
};

/* Ask the VM to end with status; the first request wins.  Any thread. */
void machine_exit(struct machine *m, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool machine_exiting(struct machine *m);

/* run.c: at -vv, each set-up stage's time since startup_begin() (the
 * start of `vmm run`), for the boot benchmark's "launch to first
 * instruction". */
void startup_begin(void);
void startup_mark(const char *stage);

/* vcpu.c */
int vcpu_start(struct vcpu *c);
void vcpu_kick(struct vcpu *c);
void vcpu_join(struct vcpu *c);

/* run.c: build the machine from cfg and run it (blk devices already
 * opened: they are handed over); returns the exit status. */
int machine_run(const struct vmm_config *cfg, struct blk_dev **disks,
		const struct arch_kernel *k, const uint8_t *initrd,
		size_t initrd_size);

/* For the architectures' builds (run.c). */
/* The disks (each BAR 0 in the MMIO window; with io_bars, an I/O BAR
 * too) and pvpanic on m->pci, set up by the caller; intx_irq(slot) is
 * KVM's irq number for a disk slot's INTA# line (m->pci_intx says
 * which slots have one). */
int machine_pci(struct machine *m, struct blk_dev **disks, bool io_bars,
		unsigned int (*intx_irq)(unsigned int slot));
/* A vCPU fd and kvm_run for each of cfg->cpus (m->ncpus counts them). */
int machine_vcpus(struct machine *m);
/* The console on fd 1, its interrupt raised through irq. */
void machine_serial(struct machine *m, unsigned int irq);
/* control.c: --api's thread, started once the machine is built (before
 * the main thread's filter: it takes its own), stopped first at
 * teardown; the socket file is removed then. */
int machine_api_start(struct machine *m);
/* The socket's view of disk d, named name, for launch disks and
 * attached ones alike (hotplug: in a slot, so detachable). */
struct api_disk;
struct vdisk;
void machine_api_disk(struct api_disk *out, const char *name,
		      struct vdisk *d, bool hotplug);
void machine_api_stop(struct machine *m);

#endif
