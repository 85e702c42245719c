/* The sandbox: after set-up, each thread of the VMM runs under a
 * seccomp-bpf allowlist made for its kind.  A system call outside the
 * list stops the whole VMM with one line naming the call and the kind.
 *
 * The filters are compiled once, by sandbox_init(); sandbox_enter()
 * loads one into the calling thread.  Until sandbox_init() is called
 * (unit tests, `--sandbox off`) sandbox_enter() does nothing.
 *
 * Filters are inherited by threads a thread creates and stack with their
 * own: a thread created by a vCPU (the INTx thread) is held to both lists.
 * That is why iothreads are created at start-up, before any filter, and
 * live as long as their disk.
 */
#ifndef HOST_SANDBOX_H
#define HOST_SANDBOX_H

#include <stdbool.h>

enum sandbox_kind {
	SANDBOX_MAIN,     /* waits for the end, tears down, writes --stats */
	SANDBOX_VCPU,     /* KVM_RUN and the devices' registers */
	SANDBOX_IOTHREAD, /* one virtqueue: io_uring or the sync engine */
	SANDBOX_CONSOLE,  /* the UART's input: stdin */
	SANDBOX_INTX,     /* a disk's INTx line (guests without MSI-X) */
	SANDBOX_API,      /* the control socket (vmm run --api) */
	SANDBOX_HOTPLUG,  /* attach and detach: opens disks, starts iothreads */
	SANDBOX_KINDS
};

/* `vmm run` exits with this status when the sandbox stops it. */
#define SANDBOX_EXIT_STATUS 7

/* Compile every kind's filter and catch SIGSYS; also sets no_new_privs
 * for the process.  on_stop, if not NULL, runs (async-signal-safe) in
 * the stopped thread before the process exits: the terminal's restore.
 * 0, or -errno with the reason in msg. */
int sandbox_init(void (*on_stop)(void), char *msg, unsigned int msglen);

/* Load kind's filter into the calling thread; nothing without
 * sandbox_init().  A filter the kernel refuses (out of memory: the
 * filters were checked by sandbox_init) ends the process with status 1
 * and one line: never a thread left unconfined. */
void sandbox_enter(enum sandbox_kind kind);

bool sandbox_active(void);
const char *sandbox_kind_name(enum sandbox_kind kind);

#endif
