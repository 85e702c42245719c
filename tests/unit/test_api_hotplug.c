/* api/commands.c's attach and detach against a fake machine: the name
 * the guest will give (the lowest vdX free), the spec checked before the
 * machine sees it, a refusal of the machine passed on in one line with
 * nothing changed, a disk given at launch on bus 0 refused and one given
 * in a slot (`hotplug`) detached, detach of an unknown name and detach
 * twice, and a VM without slots. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"

struct fake {
	struct api_vm vm;
	struct blk_dev *launch, *spare[4];
	unsigned int nspare;
	int attaches, detaches;
	int attach_result, detach_result;
	char last_spec[128], last_name[8];
	bool last_force;
	unsigned int last_timeout;
};

static int f_attach(void *opaque, const char *spec, const char *name,
		    struct api_disk *out, char *msg, unsigned int msglen)
{
	struct fake *f = opaque;

	f->attaches++;
	snprintf(f->last_spec, sizeof(f->last_spec), "%s", spec);
	snprintf(f->last_name, sizeof(f->last_name), "%s", name);
	if (f->attach_result) {
		snprintf(msg, msglen, "refused by the machine");
		return f->attach_result;
	}
	out->blk = f->spare[f->nspare++ % 4];
	return 0;
}

static int f_detach(void *opaque, const char *name, bool force,
		    unsigned int timeout_ms, char *msg, unsigned int msglen)
{
	struct fake *f = opaque;

	f->detaches++;
	snprintf(f->last_name, sizeof(f->last_name), "%s", name);
	f->last_force = force;
	f->last_timeout = timeout_ms;
	if (f->detach_result) {
		snprintf(msg, msglen, "%s: the guest did not let go", name);
		return f->detach_result;
	}
	return 0;
}

static struct blk_dev *ram_disk(void)
{
	struct blk_opts o = { .queues = 1, .ram_size = 1 << 20 };
	struct blk_dev *d = NULL;
	char msg[200];

	if (blk_dev_create(&o, &d, msg, sizeof(msg)))
		fail_msg("%s", msg);
	return d;
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->launch = ram_disk();
	for (int i = 0; i < 4; i++)
		f->spare[i] = ram_disk();
	f->vm.cpus = 1;
	f->vm.mem = 64 << 20;
	f->vm.ndisks = 1;
	snprintf(f->vm.disk[0].name, sizeof(f->vm.disk[0].name), "vda");
	f->vm.disk[0].blk = f->launch;
	f->vm.attach = f_attach;
	f->vm.detach = f_detach;
	f->vm.hp_opaque = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	blk_dev_destroy(f->launch);
	for (int i = 0; i < 4; i++)
		blk_dev_destroy(f->spare[i]);
	free(f);
	return 0;
}

/* The answer to line, which must contain want. */
static void expect(struct fake *f, const char *line, const char *want)
{
	char *a = api_execute(&f->vm, line, strlen(line));

	if (!strstr(a, want))
		fail_msg("%s -> %s (wanted %s)", line, a, want);
	assert_null(strchr(a, '\n'));
	free(a);
}

#define ATTACH(spec) "{\"execute\":\"attach\",\"arguments\":{\"spec\":\"" spec "\"}}"
#define DETACH(args) "{\"execute\":\"detach\",\"arguments\":{" args "}}"

static void test_attach_names_lowest_free(void **state)
{
	struct fake *f = *state;

	expect(f, ATTACH("ram:4M,queues=2"), "{\"return\":{\"name\":\"vdb\"}}");
	assert_string_equal(f->last_spec, "ram:4M,queues=2");
	assert_string_equal(f->last_name, "vdb");
	expect(f, ATTACH("ram:4M"), "\"vdc\"");
	assert_int_equal(f->vm.ndisks, 3);
	assert_true(f->vm.disk[2].hotplug);
	expect(f, DETACH("\"disk\":\"vdb\""), "{\"return\":{\"name\":\"vdb\"}}");
	assert_int_equal(f->last_timeout, API_DETACH_TIMEOUT_MS);
	assert_false(f->last_force);
	assert_int_equal(f->vm.ndisks, 2);
	assert_string_equal(f->vm.disk[1].name, "vdc");
	/* vdb is free again: the guest's virtio_blk takes it too. */
	expect(f, ATTACH("ram:4M"), "\"vdb\"");
	expect(f, "{\"execute\":\"info\"}", "\"name\":\"vdb\"");
}

static void test_bad_spec_never_reaches_the_machine(void **state)
{
	struct fake *f = *state;

	expect(f, ATTACH("ram:4M,bogus=1"), "bad disk option 'bogus=1'");
	expect(f, ATTACH(""), "GenericError");
	expect(f, ATTACH("ram:0"), "GenericError");
	expect(f, "{\"execute\":\"attach\"}", "'spec' (a disk spec, as -d) is required");
	expect(f, "{\"execute\":\"attach\",\"arguments\":{\"spec\":7}}", "'spec'");
	expect(f, "{\"execute\":\"attach\",\"arguments\":{\"spec\":\"ram:4M\",\"x\":1}}",
	       "unknown argument 'x'");
	assert_int_equal(f->attaches, 0);
	assert_int_equal(f->vm.ndisks, 1);
}

static void test_machine_refusal_changes_nothing(void **state)
{
	struct fake *f = *state;

	f->attach_result = -ENOSPC;
	expect(f, ATTACH("ram:4M"), "\"desc\":\"refused by the machine\"");
	assert_int_equal(f->vm.ndisks, 1);
	f->attach_result = 0;
	expect(f, ATTACH("ram:4M"), "\"vdb\"");
	f->detach_result = -ETIMEDOUT;
	expect(f, DETACH("\"disk\":\"vdb\""), "vdb: the guest did not let go");
	assert_int_equal(f->vm.ndisks, 2);
	expect(f, "{\"execute\":\"info\"}", "\"name\":\"vdb\"");
}

static void test_detach_refusals(void **state)
{
	struct fake *f = *state;

	expect(f, DETACH("\"disk\":\"vda\""), "vda was given at launch");
	expect(f, DETACH("\"disk\":\"vdq\""), "no disk 'vdq'");
	expect(f, DETACH(""), "'disk' is required");
	expect(f, ATTACH("ram:4M"), "\"vdb\"");
	expect(f, DETACH("\"disk\":\"vdb\",\"timeout_ms\":0"), "'timeout_ms' is from 1");
	expect(f, DETACH("\"disk\":\"vdb\",\"force\":1"), "'force' must be true or false");
	assert_int_equal(f->detaches, 0);
	expect(f, DETACH("\"disk\":\"vdb\",\"force\":true,\"timeout_ms\":5"), "\"vdb\"");
	assert_true(f->last_force);
	assert_int_equal(f->last_timeout, 5);
	/* Twice: the second names no disk, the machine is not asked. */
	expect(f, DETACH("\"disk\":\"vdb\""), "no disk 'vdb'");
	assert_int_equal(f->detaches, 1);
	assert_int_equal(f->vm.ndisks, 1);
}

/* A launch disk given with `hotplug` is in a slot (vmm/control.c marks
 * it so): info says which disks are, and detach takes that one out as an
 * attached one; the disk on bus 0 is still refused, with the way to
 * make it detachable. */
static void test_launch_disk_in_slot(void **state)
{
	struct fake *f = *state;

	snprintf(f->vm.disk[1].name, sizeof(f->vm.disk[1].name), "vdb");
	f->vm.disk[1].blk = f->spare[3];
	f->vm.disk[1].hotplug = true;
	f->vm.ndisks = 2;
	expect(f, "{\"execute\":\"info\"}", "\"name\":\"vdb\"");
	expect(f, "{\"execute\":\"info\"}", "\"hotplug\":true");
	expect(f, "{\"execute\":\"info\"}", "\"hotplug\":false");
	expect(f, DETACH("\"disk\":\"vda\""),
	       "'-d SPEC,hotplug' puts a launch disk in a slot");
	assert_int_equal(f->detaches, 0);
	expect(f, DETACH("\"disk\":\"vdb\""), "{\"return\":{\"name\":\"vdb\"}}");
	assert_int_equal(f->detaches, 1);
	assert_string_equal(f->last_name, "vdb");
	assert_int_equal(f->vm.ndisks, 1);
	/* Its name is free again for an attach. */
	f->nspare = 0;
	expect(f, ATTACH("ram:4M"), "\"vdb\"");
}

static void test_no_slots(void **state)
{
	struct fake *f = *state;

	f->vm.attach = NULL;
	f->vm.detach = NULL;
	expect(f, ATTACH("ram:4M"), "this VM has no hot-plug slot");
	expect(f, DETACH("\"disk\":\"vda\""), "vda was given at launch");
}

static void test_at_most_16_disks(void **state)
{
	struct fake *f = *state;

	for (unsigned int i = 1; i < API_MAX_DISKS; i++)
		expect(f, ATTACH("ram:4M"), "return");
	expect(f, ATTACH("ram:4M"), "at most 16 disks");
	assert_int_equal(f->vm.ndisks, API_MAX_DISKS);
	f->vm.ndisks = 1; /* the spares are shared: forget them */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_attach_names_lowest_free,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_spec_never_reaches_the_machine,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_machine_refusal_changes_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_detach_refusals, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_launch_disk_in_slot,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_at_most_16_disks, setup,
						teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("api_hotplug", tests, NULL, NULL);
}
