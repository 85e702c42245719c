/* Disk options: blk_opts_parse and blk_parse_size, every accepted form
 * and every refused one (one clear line in msg). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "blk/blk.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

struct parsed {
	char spec[256];
	char msg[256];
	struct blk_opts o;
	int ret;
};

static void parse(struct parsed *p, const char *spec)
{
	snprintf(p->spec, sizeof(p->spec), "%s", spec);
	memset(p->msg, 0, sizeof(p->msg));
	memset(&p->o, 0xa5, sizeof(p->o));
	p->ret = blk_opts_parse(p->spec, &p->o, p->msg, sizeof(p->msg));
}

static void test_path_all_options(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "/dev/sdz9,ro,direct,queues=4,serial=abc,batch=on,poll=7");
	assert_int_equal(p.ret, 0);
	assert_ptr_equal(p.o.path, p.spec); /* points into the spec */
	assert_string_equal(p.o.path, "/dev/sdz9");
	assert_true(p.o.ro);
	assert_true(p.o.direct);
	assert_true(p.o.batch);
	assert_int_equal(p.o.queues, 4);
	assert_int_equal(p.o.poll_us, 7);
	assert_string_equal(p.o.serial, "abc");
	assert_int_equal(p.o.ram_size, 0);
	assert_false(p.o.hotplug);
}

static void test_path_defaults(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "disk.img");
	assert_int_equal(p.ret, 0);
	assert_string_equal(p.o.path, "disk.img");
	assert_false(p.o.ro);
	assert_false(p.o.direct);
	assert_false(p.o.batch);
	assert_true(p.o.queues <= 1); /* 0 means the default, one queue */
	assert_int_equal(p.o.poll_us, BLK_POLL_US_DEFAULT);
	assert_string_equal(p.o.serial, "");
	assert_int_equal(p.o.ram_size, 0);
}

static void test_path_each_option(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "a,batch=off");
	assert_int_equal(p.ret, 0);
	assert_false(p.o.batch);
	parse(&p, "a,batch=on");
	assert_int_equal(p.ret, 0);
	assert_true(p.o.batch);
	parse(&p, "a,poll=0");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.poll_us, 0);
	parse(&p, "ram:1G,poll=1000000");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.poll_us, 1000000);
	parse(&p, "a,queues=16");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.queues, 16);
	parse(&p, "a,queues=1");
	assert_int_equal(p.o.queues, 1);
	parse(&p, "a,serial=01234567890123456789"); /* exactly 20 */
	assert_int_equal(p.ret, 0);
	assert_string_equal(p.o.serial, "01234567890123456789");
	parse(&p, "a,direct");
	assert_int_equal(p.ret, 0);
	assert_true(p.o.direct);
	assert_false(p.o.ro);
	assert_int_equal(p.o.engine, BLK_ENGINE_AUTO);
	parse(&p, "a,engine=sync");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.engine, BLK_ENGINE_SYNC);
	parse(&p, "a,engine=uring");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.engine, BLK_ENGINE_URING);
	parse(&p, "a,hotplug");
	assert_int_equal(p.ret, 0);
	assert_true(p.o.hotplug);
	parse(&p, "ram:1G,hotplug,queues=2"); /* RAM disks too */
	assert_int_equal(p.ret, 0);
	assert_true(p.o.hotplug);
	assert_int_equal(p.o.queues, 2);
}

static void expect_ram(const char *spec, uint64_t size)
{
	struct parsed p;

	parse(&p, spec);
	assert_int_equal(p.ret, 0);
	assert_null(p.o.path);
	assert_int_equal(p.o.ram_size, size);
	assert_false(p.o.ro);
}

static void test_ram_sizes(void **state)
{
	(void)state;
	expect_ram("ram:1G", GIB);
	expect_ram("ram:512", 512 * MIB); /* a plain number is MiB */
	expect_ram("ram:64K", 64 << 10);
	expect_ram("ram:64k", 64 << 10);
	expect_ram("ram:3M", 3 * MIB);
	expect_ram("ram:2g", 2 * GIB);
	expect_ram("ram:1", MIB);
}

static void test_ram_options(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "ram:1G,queues=2,serial=xyz,batch=on");
	assert_int_equal(p.ret, 0);
	assert_null(p.o.path);
	assert_int_equal(p.o.ram_size, GIB);
	assert_int_equal(p.o.queues, 2);
	assert_string_equal(p.o.serial, "xyz");
	assert_true(p.o.batch);
}

/* Refused: -EINVAL and one non-empty line that names the culprit. */
static void expect_refused(const char *spec, const char *culprit)
{
	struct parsed p;

	parse(&p, spec);
	if (p.ret != -EINVAL)
		fail_msg("'%s' gave %d, not -EINVAL", spec, p.ret);
	assert_true(strlen(p.msg) > 0);
	assert_null(strchr(p.msg, '\n'));
	if (culprit && !strstr(p.msg, culprit))
		fail_msg("'%s': message '%s' does not name '%s'", spec, p.msg,
			 culprit);
}

static void test_refused_spec(void **state)
{
	(void)state;
	expect_refused("", NULL);
	expect_refused(",", NULL);
	expect_refused("ram:", NULL);
	expect_refused("ram:0", "0");
	expect_refused("ram:1T", "1T");
	expect_refused("ram:-1", "-1");
	expect_refused("ram:1.5G", "1.5G");
	expect_refused("ram:99999999999999999G", "99999999999999999G");
	expect_refused("ram:99999999999999999999999", NULL); /* > 2^64 */
	expect_refused("ram:17179869184G", NULL);          /* 2^64 exactly */
	expect_refused("ram:G", NULL);
	expect_refused("ram: 1G", NULL);
	expect_refused("ram:1GB", NULL);
	expect_refused("ram:0x10", NULL);
}

static void test_refused_options(void **state)
{
	(void)state;
	expect_refused("a,queues=0", "queues=0");
	expect_refused("a,queues=17", "queues=17");
	/* The limit is said, not only the culprit. */
	expect_refused("a,queues=17", "1 to 16");
	expect_refused("a,queues=x", "queues=x");
	expect_refused("a,queues=", NULL);
	expect_refused("a,queues", NULL);
	expect_refused("a,queues=4x", NULL);
	expect_refused("a,queues=-1", NULL);
	expect_refused("a,queues= 4", NULL);
	expect_refused("a,queues=99999999999999999999999", NULL);
	expect_refused("a,serial=012345678901234567890", "serial"); /* 21 */
	expect_refused("a,serial=", NULL);
	expect_refused("a,serial", NULL);
	expect_refused("a,frobnicate", "frobnicate");
	expect_refused("a,ro=1", NULL);
	expect_refused("a,direct=on", NULL);
	expect_refused("a,batch", NULL);
	expect_refused("a,batch=yes", NULL);
	expect_refused("a,poll", NULL);
	expect_refused("a,poll=", NULL);
	expect_refused("a,poll=-1", NULL);
	expect_refused("a,poll=1000001", NULL);
	expect_refused("a,poll=32us", NULL);
	expect_refused("a,RO", NULL);
	expect_refused("ram:1G,ro", "ro");
	expect_refused("ram:1G,direct", "direct");
	expect_refused("ram:1G,queues=17", NULL);
	expect_refused("a,engine=aio", "engine=aio");
	expect_refused("a,engine", NULL);
	expect_refused("ram:1G,engine=sync", "engine"); /* RAM has none */
	expect_refused("a,hotplug=on", "hotplug=on");
	expect_refused("a,hotplug,hotplug", "given twice");
}

/* Each option named twice is refused, whatever the values and whatever
 * stands between, and the message names the second one: the last one
 * silently winning would hide a typo in a long command line. */
static void test_option_twice(void **state)
{
	static const char *const path_opt[] = {
		"ro", "direct", "queues=2", "serial=x", "batch=on", "poll=1",
		"engine=sync",
	};
	static const char *const again[] = {
		"ro", "direct", "queues=4", "serial=y", "batch=off", "poll=2",
		"engine=uring",
	};
	char spec[128];
	struct parsed p;

	(void)state;
	for (unsigned int i = 0; i < sizeof(path_opt) / sizeof(*path_opt);
	     i++) {
		snprintf(spec, sizeof(spec), "a,%s,%s", path_opt[i],
			 path_opt[i]);
		expect_refused(spec, "given twice");
		snprintf(spec, sizeof(spec), "a,%s,%s", path_opt[i], again[i]);
		expect_refused(spec, again[i]);
		expect_refused(spec, "given twice");
		/* Once each, all of them together: accepted. */
		snprintf(spec, sizeof(spec), "a,%s", path_opt[i]);
		parse(&p, spec);
		assert_int_equal(p.ret, 0);
	}
	expect_refused("a,queues=2,queues=4", "given twice 'queues=4'");
	expect_refused("a,batch=on,poll=1,batch=off", "given twice");
	expect_refused("a,queues=2,queues=x", "given twice"); /* even bad */
	expect_refused("ram:1G,serial=x,serial=y", "given twice");
	expect_refused("ram:1G,queues=1,poll=3,queues=1", "given twice");
	parse(&p, "a,ro,direct,queues=2,serial=x,batch=on,poll=1,engine=sync");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.o.engine, BLK_ENGINE_SYNC);
}

/* A NULL or tiny message buffer is fine. */
static void test_msg_buffer(void **state)
{
	char spec[] = "a,frobnicate", tiny[4];
	struct blk_opts o;

	(void)state;
	assert_int_equal(blk_opts_parse(spec, &o, NULL, 0), -EINVAL);
	memcpy(spec, "a,frobnicate", sizeof(spec));
	memset(tiny, 'x', sizeof(tiny));
	assert_int_equal(blk_opts_parse(spec, &o, tiny, sizeof(tiny)),
			 -EINVAL);
	assert_int_equal(tiny[3], '\0');
}

static void expect_size(const char *s, uint64_t want)
{
	uint64_t got = 0;

	if (blk_parse_size(s, &got))
		fail_msg("'%s' refused", s);
	assert_int_equal(got, want);
}

static void expect_bad_size(const char *s)
{
	uint64_t got = 12345;

	if (blk_parse_size(s, &got) != -EINVAL)
		fail_msg("'%s' accepted", s);
	assert_int_equal(got, 12345); /* untouched */
}

static void test_parse_size(void **state)
{
	static const char *const bad[] = {
		"", "0", "0K", "0G", "-1", "+1", " 1", "1 ", "1T", "1P", "1.5G",
		"1e3", "0x10", "K", "1KK", "1GB", "99999999999999999G",
		"17179869184G", "17592186044416M", "18014398509481984K",
		"17592186044416", "99999999999999999999999",
	};

	(void)state;
	expect_size("1", MIB);
	expect_size("512", 512 * MIB);
	expect_size("64K", 64 << 10);
	expect_size("1k", 1024);
	expect_size("7M", 7 * MIB);
	expect_size("1G", GIB);
	expect_size("4096", 4 * GIB);
	expect_size("17179869183G", UINT64_MAX - GIB + 1); /* largest G */
	expect_size("18014398509481983K", UINT64_MAX - 1023);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		expect_bad_size(bad[i]);
	expect_bad_size(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_all_options),
		cmocka_unit_test(test_path_defaults),
		cmocka_unit_test(test_path_each_option),
		cmocka_unit_test(test_ram_sizes),
		cmocka_unit_test(test_ram_options),
		cmocka_unit_test(test_refused_spec),
		cmocka_unit_test(test_refused_options),
		cmocka_unit_test(test_option_twice),
		cmocka_unit_test(test_msg_buffer),
		cmocka_unit_test(test_parse_size),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("opts", tests, NULL, NULL);
}
