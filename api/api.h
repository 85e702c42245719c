/* The control socket (`vmm run --api PATH`): a running VM watched and
 * changed from outside, in the manner of QEMU's QMP.
 *
 * Protocol: a UNIX stream socket; one JSON object per line each way.
 * A request is {"execute": COMMAND, "arguments": {...}} ("arguments" may
 * be left out); the answer is {"return": {...}} or {"error": {"class":
 * CLASS, "desc": MESSAGE}}, CLASS one of GenericError (bad arguments, a
 * refused change), CommandNotFound, ParseError (not a JSON object, or a
 * line over API_LINE_MAX bytes, after which the connection is closed).
 *
 * Commands (DISK: "vda", "vdb", ... or its index; left out: every disk):
 *   info                      vCPUs, memory, disks and their settings,
 *                             features the guest accepted, state;
 *                             active_queues: those the guest's driver
 *                             has set up (0 before, and after it let the
 *                             device go: its driver unbound, or the
 *                             device removed on its side)
 *   stats [disk] [reset]      per disk and queue: counters and latency
 *                             breakdown since start or the last reset
 *   latency on                keep the latency breakdown (or off)
 *   resize disk size [shrink] capacity in bytes; the guest is told
 *   limit disk [iops] [bw] [burst] | limit disk off
 *                             each at least 1; what a request costs:
 *                             one op (iops), answered ones too (GET_ID,
 *                             out of range, a bad chain); its bytes (bw)
 *                             if it moves data: reads, writes and
 *                             WRITE_ZEROES (as QEMU charges them); a
 *                             DISCARD moves none (one op, no bytes)
 *   pause [disk] / resume [disk]
 *                             pause waits for what is in flight (at most
 *                             pause_ms), once: a disk paused already is
 *                             answered as it is, at once
 *   attach spec               a disk from spec (as `vmm run -d`) in a free
 *                             hot-plug slot; answers its name (the
 *                             lowest vdX free), which the guest's
 *                             virtio_blk gives it too
 *   detach disk [force] [timeout_ms]
 *                             a hot-plugged disk out: the attention
 *                             button, then (at most timeout_ms,
 *                             API_DETACH_TIMEOUT_MS if left out) the wait
 *                             for the guest to power its slot off; force:
 *                             removed at once, as a surprise removal.  A
 *                             disk given at launch is detachable if it
 *                             was given with `hotplug` (it is then in a
 *                             slot); one on bus 0: refused
 *   quit                      end the VM as SIGTERM would (status 143)
 *
 * Connections: API_MAX_CLIENTS at once, and one more kept for `info`
 * and `quit` (its client gets nothing else, and goes after a second
 * without a line); one line of each client answered in turn.
 */
#ifndef API_API_H
#define API_API_H

#include <stdbool.h>
#include <stdint.h>

#include "blk/blk.h"

#define API_LINE_MAX 4096   /* longest request line */
#define API_MAX_CLIENTS 8   /* connected at once; more are refused */
#define API_MAX_DISKS 16
#define API_PAUSE_TIMEOUT_MS 10000
#define API_DETACH_TIMEOUT_MS 30000 /* Linux's pciehp waits 5 s itself */

/* One disk as the commands see it. */
struct api_disk {
	char name[8];           /* vda, vdb, ... */
	struct blk_dev *blk;
	/* The transport: features the driver accepted (0 before
	 * FEATURES_OK), and the configuration-change interrupt. */
	uint64_t (*features)(void *opaque);
	void (*config_changed)(void *opaque);
	void *opaque;
	bool hotplug;           /* in a hot-plug slot (attached, or given
				 * at launch with `hotplug`): detachable */
};

struct api_vm {
	unsigned int cpus;
	uint64_t mem;
	unsigned int ndisks;
	struct api_disk disk[API_MAX_DISKS];
	void (*quit)(void *opaque);
	void *opaque;
	/* Hot-plug; NULL: the VM has no slot.  attach: a disk from spec
	 * (as -d), named name, in a free slot; fills *out but its name.
	 * detach: the hot-plugged disk name out (force: at once; else the
	 * guest is asked and waited for, at most timeout_ms).  Each: 0, or
	 * -errno with one line in msg, and nothing changed. */
	int (*attach)(void *opaque, const char *spec, const char *name,
		      struct api_disk *out, char *msg, unsigned int msglen);
	int (*detach)(void *opaque, const char *name, bool force,
		      unsigned int timeout_ms, char *msg, unsigned int msglen);
	void *hp_opaque;
	/* Longest wait of pause and of a shrink for requests in flight;
	 * 0: API_PAUSE_TIMEOUT_MS. */
	unsigned int pause_ms;
};

/* One request line (len bytes, no newline) -> the answer, a string
 * the caller frees (no newline).  Pure but for what the commands do. */
char *api_execute(struct api_vm *vm, const char *line, size_t len);
/* Is the line a request the spare connection is served (info, quit)? */
bool api_spare_allowed(const char *line, size_t len);

/* ---- the socket ----------------------------------------------------- */

/* Bind PATH (mode 0600) and listen.  PATH may exist only as a stale
 * socket (nobody listening), which is replaced.  The fd, or -errno with
 * one line in msg. */
int api_listen(const char *path, char *msg, unsigned int msglen);

struct api_server;
/* Serve connections on the listening fd in a thread of its own (named
 * "api", under the sandbox's api filter); the server takes the fd. */
int api_server_start(int fd, struct api_vm *vm, struct api_server **out);
/* Stop the thread, close every connection and the socket, and remove
 * path (if not NULL). */
void api_server_stop(struct api_server *s, const char *path);

#endif
