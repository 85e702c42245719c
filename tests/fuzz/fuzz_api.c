/* Fuzz the control socket's commands (api/commands.c): api_execute on
 * arbitrary lines against two live RAM disks (activated, their queues
 * served on this thread: blk_dev_set_sync), so that resize, limit,
 * pause, stats and latency really run.  Every line gets one answer, a
 * JSON object with "return" or "error"; the disks stay usable (a
 * capacity that is a whole number of sectors, at least one).
 *
 * Input: request lines separated by '\n' (at most FZ_LINES), each
 * handed over without its newline and as an exact-size copy (ASan sees
 * a read past its end).  Before each input the disks are put back
 * (no limit, resumed, latency off, and their first size: a RAM disk
 * does not shrink, so one grown by an earlier input stays grown)
 * through the same commands.
 *
 * attach and detach run too, against a fake hot-plug (the VMM's is
 * vmm/hotplug.c): FZ_SPARE more RAM disks, made once, handed out by
 * attach while a slot is free, resumed, with no limit and latency off
 * (the spec is parsed by api_execute itself; the fake never opens a
 * file), taken back by detach (which without force fails, changing
 * nothing, for a timeout under 10 ms).  Before each input every
 * attached disk is put back too and detached, so each input starts
 * with vda and vdb.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "blk/blk.h"
#include "tests/fuzz/fuzz.h"
#include "tests/support/driver.h"
#include "tests/support/fakemem.h"

#define FZ_LINES 16
#define FZ_DISK (1u << 20)
#define FZ_SPARE 2

static unsigned int fz_quits, fz_changes;

static void fz_quit(void *opaque)
{
	(void)opaque;
	fz_quits++;
}

static void fz_changed(void *opaque)
{
	(void)opaque;
	fz_changes++;
}

static uint64_t fz_features(void *opaque)
{
	(void)opaque;
	return 1ull << VIRTIO_BLK_F_FLUSH | 1ull << VIRTIO_BLK_F_MQ;
}

/* A RAM disk with queues queues, activated on rings in fake RAM. */
static struct blk_dev *fz_disk(struct fakemem *fm, unsigned int queues,
			       bool batch)
{
	struct blk_opts o = { .ram_size = FZ_DISK, .queues = queues,
			      .batch = batch };
	struct vdev_queue q[2];
	struct vdev_activation a = { .mem = &fm->gm, .q = q, .nq = queues,
				     .features = fz_features(NULL) };
	static struct drv_vq rings[3 + FZ_SPARE]; /* 1 + 2 + 1 each */
	static unsigned int used;
	struct blk_dev *d;
	char msg[128];

	if (blk_dev_create(&o, &d, msg, sizeof(msg)))
		abort();
	blk_dev_set_sync(d);
	for (unsigned int i = 0; i < queues; i++) {
		struct drv_vq *v = &rings[used++];

		CHECK(used <= 3 + FZ_SPARE &&
		      drv_vq_init(v, fm, 16, false) == 0);
		q[i] = (struct vdev_queue){ .size = 16, .enabled = true,
					    .kick_fd = -1, .call_fd = -1 };
		drv_vq_addrs(v, &q[i].desc, &q[i].avail, &q[i].used);
	}
	CHECK(blk_dev_ops.activate(d, &a) == 0);
	return d;
}

/* The fake hot-plug's disks: attached (in use) or spare. */
static struct blk_dev *fz_spare[FZ_SPARE];
static bool fz_in_use[FZ_SPARE];

static int fz_attach(void *opaque, const char *spec, const char *name,
		     struct api_disk *out, char *msg, unsigned int msglen)
{
	(void)opaque;
	CHECK(spec && name && !strncmp(name, "vd", 2) && strlen(name) == 3);
	for (unsigned int i = 0; i < FZ_SPARE; i++) {
		if (fz_in_use[i])
			continue;
		static const struct blk_limit off = { 0 };

		/* Detached while paused, limited or measured, it kept
		 * that: undone (grown, it stays grown, as vda and vdb do:
		 * a RAM disk does not shrink). */
		blk_dev_resume_io(fz_spare[i]);
		blk_dev_set_limit(fz_spare[i], &off);
		blk_dev_set_latency(fz_spare[i], false);
		fz_in_use[i] = true;
		out->blk = fz_spare[i];
		out->features = fz_features;
		out->config_changed = fz_changed;
		return 0;
	}
	snprintf(msg, msglen, "no free hot-plug slot");
	return -ENOSPC;
}

static int fz_detach(void *opaque, const char *name, bool force,
		     unsigned int timeout_ms, char *msg, unsigned int msglen)
{
	struct api_vm *vm = opaque;

	if (!force && timeout_ms < 10) {
		snprintf(msg, msglen, "%s: the guest did not power the slot "
			 "off in %u ms", name, timeout_ms);
		return -ETIMEDOUT;
	}
	for (unsigned int d = 0; d < vm->ndisks; d++) {
		if (strcmp(vm->disk[d].name, name))
			continue;
		CHECK(vm->disk[d].hotplug);
		for (unsigned int i = 0; i < FZ_SPARE; i++) {
			if (fz_spare[i] == vm->disk[d].blk) {
				CHECK(fz_in_use[i]);
				fz_in_use[i] = false;
				return 0;
			}
		}
	}
	CHECK(0); /* api_execute named a disk that is not attached */
	return -ENOENT;
}

static struct api_vm *fz_vm(void)
{
	static struct api_vm vm;
	static struct fakemem fm;
	static bool ready;

	if (ready)
		return &vm;
	if (fakemem_create(&fm, 0x100000, 64 << 10))
		abort();
	vm.cpus = 2;
	vm.mem = 256u << 20;
	vm.ndisks = 2;
	vm.quit = fz_quit;
	for (unsigned int i = 0; i < vm.ndisks; i++) {
		struct api_disk *d = &vm.disk[i];

		memcpy(d->name, i ? "vdb" : "vda", 4);
		d->blk = fz_disk(&fm, i + 1, i);
		d->features = fz_features;
		d->config_changed = fz_changed;
	}
	for (unsigned int i = 0; i < FZ_SPARE; i++)
		fz_spare[i] = fz_disk(&fm, 1, i);
	vm.attach = fz_attach;
	vm.detach = fz_detach;
	vm.hp_opaque = &vm;
	ready = true;
	return &vm;
}

/* Run one line; the answer must be one JSON object, return or error. */
static void fz_line(struct api_vm *vm, const char *line, size_t len)
{
	char *copy = malloc(len ? len : 1);
	struct json_object *o, *x;
	char *ans;

	if (!copy)
		abort();
	memcpy(copy, line, len);
	ans = api_execute(vm, copy, len);
	free(copy);
	if (getenv("FZ_VERBOSE"))
		fprintf(stderr, "%.*s\n-> %s\n", (int)len, line, ans);
	CHECK(ans && !strchr(ans, '\n'));
	o = json_tokener_parse(ans);
	CHECK(o && json_object_is_type(o, json_type_object));
	CHECK(json_object_object_get_ex(o, "return", &x) !=
	      json_object_object_get_ex(o, "error", &x));
	json_object_put(o);
	free(ans);
}

static void fz_put_back(struct api_vm *vm)
{
	static const char *const cmds[] = {
		"{\"execute\":\"resume\"}",
		"{\"execute\":\"latency\",\"arguments\":{\"on\":false}}",
		"{\"execute\":\"limit\",\"arguments\":{\"disk\":\"vda\","
		"\"off\":true}}",
		"{\"execute\":\"limit\",\"arguments\":{\"disk\":\"vdb\","
		"\"off\":true}}",
		"{\"execute\":\"resize\",\"arguments\":{\"disk\":\"vda\","
		"\"size\":1048576,\"shrink\":true}}",
		"{\"execute\":\"resize\",\"arguments\":{\"disk\":\"vdb\","
		"\"size\":1048576,\"shrink\":true}}",
	};

	char line[160];

	for (unsigned int i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fz_line(vm, cmds[i], strlen(cmds[i]));
	/* Attached disks: put back the same way, then detached. */
	while (vm->ndisks > 2) {
		const char *n = vm->disk[vm->ndisks - 1].name;
		unsigned int before = vm->ndisks;

		snprintf(line, sizeof(line), "{\"execute\":\"limit\","
			 "\"arguments\":{\"disk\":\"%s\",\"off\":true}}", n);
		fz_line(vm, line, strlen(line));
		snprintf(line, sizeof(line), "{\"execute\":\"resize\","
			 "\"arguments\":{\"disk\":\"%s\",\"size\":%u,"
			 "\"shrink\":true}}", n, FZ_DISK);
		fz_line(vm, line, strlen(line));
		snprintf(line, sizeof(line), "{\"execute\":\"detach\","
			 "\"arguments\":{\"disk\":\"%s\",\"force\":true}}",
			 n);
		fz_line(vm, line, strlen(line));
		CHECK(vm->ndisks == before - 1);
	}
	CHECK(!strcmp(vm->disk[0].name, "vda") &&
	      !strcmp(vm->disk[1].name, "vdb"));
	for (unsigned int i = 0; i < FZ_SPARE; i++)
		CHECK(!fz_in_use[i]);
	for (unsigned int i = 0; i < vm->ndisks; i++)
		CHECK(blk_dev_capacity(vm->disk[i].blk) >= FZ_DISK >> 9);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_vm *vm = fz_vm();
	const char *p = (const char *)data, *end = p + size;
	unsigned int n = 0;

	fz_put_back(vm);
	while (p < end && n++ < FZ_LINES) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);

		fz_line(vm, p, len);
		for (unsigned int i = 0; i < vm->ndisks; i++)
			CHECK(blk_dev_capacity(vm->disk[i].blk) >=
			      FZ_DISK >> 9);
		blk_dev_serve(vm->disk[n % vm->ndisks].blk);
		p += len + 1;
	}
	return 0;
}
