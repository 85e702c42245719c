/* vmm/cmdline.c: `vmm run`'s options, above all the kernel command line
 * (-p appends to the defaults, as kvmtool's -p does; --nodefaults leaves
 * them out), and one clear line for each refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "vmm/cmdline.h"
#include "vmm/hotplug.h"

/* The architecture's, which build/vmm links from arch/ARCH/vmm. */
const char arch_kernel_format[] = "bzImage";

struct run {
	struct vmm_config c;
	char msg[256];
	int verbose;
	enum cmdline_result r;
};

/* Parse "run" followed by the NULL-ended words. */
static void parse(struct run *p, ...)
{
	static char words[32][128];
	char *argv[33];
	int argc = 0;
	va_list ap;
	const char *w;

	argv[argc] = words[argc];
	snprintf(words[argc++], sizeof(words[0]), "run");
	va_start(ap, p);
	while ((w = va_arg(ap, const char *))) {
		snprintf(words[argc], sizeof(words[0]), "%s", w);
		argv[argc] = words[argc];
		argc++;
	}
	va_end(ap);
	argv[argc] = NULL;
	memset(p, 0, sizeof(*p));
	p->r = cmdline_parse(argc, argv, &p->c, &p->verbose, p->msg,
			     sizeof(p->msg));
}

static void test_defaults_alone(void **state)
{
	struct run p;

	(void)state;
	parse(&p, "-k", "bz", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params, VMM_DEFAULT_PARAMS);
	assert_string_equal(p.c.kernel, "bz");
	assert_int_equal(p.c.cpus, 1);
}

/* kvmtool's -p: the words follow the defaults, not replace them. */
static void test_params_append(void **state)
{
	struct run p;

	(void)state;
	parse(&p, "-k", "bz", "-p", "quiet fio=randread-4k", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params,
			    VMM_DEFAULT_PARAMS " quiet fio=randread-4k");
	parse(&p, "--params", "quiet", "-k", "bz", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params, VMM_DEFAULT_PARAMS " quiet");
}

static void test_params_repeated_in_order(void **state)
{
	struct run p;

	(void)state;
	parse(&p, "-p", "a=1", "-k", "bz", "-p", "b=2", "--params=c", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params, VMM_DEFAULT_PARAMS " a=1 b=2 c");
}

/* The whole command line replaced: --nodefaults (kvmtool's -n). */
static void test_nodefaults(void **state)
{
	struct run p;

	(void)state;
	parse(&p, "-n", "-k", "bz", "-p", "console=hvc0 quiet", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params, "console=hvc0 quiet");
	parse(&p, "-k", "bz", "-p", "x", "-p", "y", "--nodefaults", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params, "x y");
	parse(&p, "-k", "bz", "--nodefaults", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params, "");
}

/* An empty -p adds no stray space. */
static void test_params_empty(void **state)
{
	struct run p;

	(void)state;
	parse(&p, "-k", "bz", "-p", "", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_string_equal(p.c.params, VMM_DEFAULT_PARAMS);
}

/* Longer than any kernel takes: refused in one line, not cut. */
static void test_params_too_long(void **state)
{
	static char big[VMM_CMDLINE_MAX];
	char *argv[] = { "run", "-k", "bz", "-p", big, NULL };
	struct run p;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	memset(&p, 0, sizeof(p));
	p.r = cmdline_parse(5, argv, &p.c, &p.verbose, p.msg, sizeof(p.msg));
	assert_int_equal(p.r, CMDLINE_ERROR);
	assert_non_null(strstr(p.msg, "too long"));
	/* Just under the buffer with --nodefaults still fits. */
	big[VMM_CMDLINE_MAX - 2] = 0;
	argv[2] = "-n";
	argv[1] = "-kbz";
	p.r = cmdline_parse(5, argv, &p.c, &p.verbose, p.msg, sizeof(p.msg));
	assert_int_equal(p.r, CMDLINE_OK);
	assert_int_equal(strlen(p.c.params), VMM_CMDLINE_MAX - 2);
}

static void test_refusals(void **state)
{
	struct run p;

	(void)state;
	parse(&p, "-p", "quiet", NULL);
	assert_int_equal(p.r, CMDLINE_ERROR);
	assert_string_equal(p.msg, "missing --kernel bzImage");
	parse(&p, "-k", "bz", "-p", NULL);
	assert_int_equal(p.r, CMDLINE_ERROR);
	assert_string_equal(p.msg, "option '-p' needs an argument");
	parse(&p, "-k", "bz", "--nodefaults=yes", NULL);
	assert_int_equal(p.r, CMDLINE_ERROR);
	parse(&p, "-k", "bz", "-c", "0", NULL);
	assert_int_equal(p.r, CMDLINE_ERROR);
	assert_non_null(strstr(p.msg, "--cpus"));
}

static void test_help(void **state)
{
	struct run p;

	(void)state;
	parse(&p, "-p", "x", "--help", NULL);
	assert_int_equal(p.r, CMDLINE_HELP);
}

/* --hotplug-slots: 0 to HOTPLUG_MAX_SLOTS, a number and nothing else. */
static void test_hotplug_slots(void **state)
{
	static const char *const bad[] = { "9", "-1", "x", "", "2x", "+1" };
	struct run p;
	char max[8];

	(void)state;
	snprintf(max, sizeof(max), "%d", HOTPLUG_MAX_SLOTS);
	parse(&p, "-k", "bz", "--hotplug-slots", "0", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_int_equal(p.c.hotplug_slots, 0);
	parse(&p, "-k", "bz", "--hotplug-slots", max, NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_int_equal(p.c.hotplug_slots, HOTPLUG_MAX_SLOTS);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(&p, "-k", "bz", "--hotplug-slots", bad[i], NULL);
		assert_int_equal(p.r, CMDLINE_ERROR);
		assert_non_null(strstr(p.msg, "--hotplug-slots"));
	}
}

/* Launch disks with 'hotplug': each takes a root port of its own beside
 * the empty ones; they come after the disks on bus 0. */
static void test_hotplug_launch_disks(void **state)
{
	struct run p;
	unsigned int launch;

	(void)state;
	parse(&p, "-k", "bz", "-d", "ram:1M", "-d", "ram:1M,hotplug", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_int_equal(cmdline_hotplug_ports(&p.c, &launch), 1);
	assert_int_equal(launch, 1);
	/* With --api the default empty slots come beside it... */
	parse(&p, "-k", "bz", "--api", "s", "-d", "ram:1M,hotplug", NULL);
	assert_int_equal(cmdline_hotplug_ports(&p.c, &launch),
			 1 + HOTPLUG_DEFAULT_SLOTS);
	/* ...as many as fit. */
	parse(&p, "-k", "bz", "--api", "s", "-d", "ram:1M,hotplug", "-d",
	      "ram:1M,hotplug", "-d", "ram:1M,hotplug", "-d", "ram:1M,hotplug",
	      "-d", "ram:1M,hotplug", "-d", "ram:1M,hotplug", NULL);
	assert_int_equal(p.r, CMDLINE_OK);
	assert_int_equal(cmdline_hotplug_ports(&p.c, &launch),
			 HOTPLUG_MAX_SLOTS);
	assert_int_equal(launch, 6);
	parse(&p, "-k", "bz", "--hotplug-slots", "0", "-d", "ram:1M,hotplug",
	      NULL);
	assert_int_equal(cmdline_hotplug_ports(&p.c, &launch), 1);
	/* Past the ports there are: refused, both ways. */
	parse(&p, "-k", "bz", "--hotplug-slots", "8", "-d", "ram:1M,hotplug",
	      NULL);
	assert_int_equal(p.r, CMDLINE_ERROR);
	assert_non_null(strstr(p.msg, "root ports"));
	parse(&p, "-k", "bz", "-d", "a,hotplug", "-d", "a,hotplug", "-d",
	      "a,hotplug", "-d", "a,hotplug", "-d", "a,hotplug", "-d",
	      "a,hotplug", "-d", "a,hotplug", "-d", "a,hotplug", "-d",
	      "a,hotplug", NULL);
	assert_int_equal(p.r, CMDLINE_ERROR);
	assert_non_null(strstr(p.msg, "9 disks with 'hotplug': at most 8"));
	/* Before a disk on bus 0: refused, naming both. */
	parse(&p, "-k", "bz", "-d", "ram:1M,hotplug", "-d", "ram:1M", NULL);
	assert_int_equal(p.r, CMDLINE_ERROR);
	assert_non_null(strstr(p.msg, "vda has it, vdb not"));
	/* None: no port. */
	parse(&p, "-k", "bz", "-d", "ram:1M", NULL);
	assert_int_equal(cmdline_hotplug_ports(&p.c, &launch), 0);
	assert_int_equal(launch, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_alone),
		cmocka_unit_test(test_params_append),
		cmocka_unit_test(test_params_repeated_in_order),
		cmocka_unit_test(test_nodefaults),
		cmocka_unit_test(test_params_empty),
		cmocka_unit_test(test_params_too_long),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_hotplug_slots),
		cmocka_unit_test(test_hotplug_launch_disks),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
