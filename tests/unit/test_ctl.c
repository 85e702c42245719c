/* `vmm ctl`'s own parsing and printing (api/ctlfmt.c): --every's
 * interval, and the rates it prints with and without --reset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctlfmt.h"

static void test_interval(void **state)
{
	uint64_t ns = 0;

	(void)state;
	assert_int_equal(ctl_parse_interval("1s", &ns), 0);
	assert_int_equal(ns, 1000000000ull);
	assert_int_equal(ctl_parse_interval("500ms", &ns), 0);
	assert_int_equal(ns, 500000000ull);
	assert_int_equal(ctl_parse_interval("0.5", &ns), 0);
	assert_int_equal(ns, 500000000ull);
	assert_int_equal(ctl_parse_interval("nan", &ns), -1);
	assert_int_equal(ctl_parse_interval("nans", &ns), -1);
	assert_int_equal(ctl_parse_interval("-nan", &ns), -1);
	assert_int_equal(ctl_parse_interval("inf", &ns), -1);
	assert_int_equal(ctl_parse_interval("0", &ns), -1);
	assert_int_equal(ctl_parse_interval("-1s", &ns), -1);
	assert_int_equal(ctl_parse_interval("5ms", &ns), -1);
	assert_int_equal(ctl_parse_interval("2d", &ns), -1);
}

/* A stats answer with one disk whose total read n requests. */
static struct json_object *sample(uint64_t reads)
{
	char buf[200];

	snprintf(buf, sizeof(buf), "{\"disks\": [{\"name\": \"vda\", "
		 "\"total\": {\"reads\": %llu}, \"queues\": []}]}",
		 (unsigned long long)reads);
	return json_tokener_parse(buf);
}

static char *rates(uint64_t prev, uint64_t cur, bool reset)
{
	struct json_object *p = sample(prev), *c = sample(cur);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	ctl_print_rates(out, p, c, 2.0, reset);
	fclose(out);
	json_object_put(p);
	json_object_put(c);
	return buf;
}

static void test_rates(void **state)
{
	char *s;

	(void)state;
	/* Since start: the difference over the interval. */
	s = rates(1000, 1600, false);
	assert_non_null(strstr(s, "vda  reads/s 300 "));
	free(s);
	/* --reset: each sample is its own interval's. */
	s = rates(1000, 600, true);
	if (!strstr(s, "vda  reads/s 300 "))
		fail_msg("%s", s);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_rates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
