/* bench/json: the JSON parser devbench reads fio's output with.  Every
 * kind of value, every escape, lookup by path, each refused input with
 * its reason, the depth bound, and a real fio 3.33 output (the fixture
 * tests/unit/data/fio-3.33-randread.json, made by devbench's fio command
 * line on a 4 MiB tmpfs file), whole and cut at every byte.
 * Run from the repository root (make check does). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/json.h"

#define FIO_FIXTURE "tests/unit/data/fio-3.33-randread.json"

static struct json *parse_ok(const char *text)
{
	struct json_error err = { 0, NULL };
	struct json *j = NULL;
	int ret = json_parse(text, strlen(text), &j, &err);

	if (ret)
		fail_msg("%s: refused at %zu: %s", text, err.offset, err.msg);
	assert_non_null(j);
	return j;
}

static double num_of(const char *text)
{
	struct json *j = parse_ok(text);
	double v;

	assert_int_equal(j->type, JSON_NUMBER);
	v = j->num;
	json_free(j);
	return v;
}

static void test_literals(void **state)
{
	static const struct {
		const char *text;
		enum json_type type;
	} c[] = { { "null", JSON_NULL },   { " true ", JSON_TRUE },
		  { "\tfalse\r\n", JSON_FALSE }, { "[]", JSON_ARRAY },
		  { "{}", JSON_OBJECT },   { "\"\"", JSON_STRING } };

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct json *j = parse_ok(c[i].text);

		assert_int_equal(j->type, c[i].type);
		assert_int_equal(j->n, 0);
		json_free(j);
	}
}

static void test_numbers(void **state)
{
	(void)state;
	assert_true(num_of("0") == 0.0);
	assert_true(signbit(num_of("-0")));
	assert_true(num_of("7") == 7.0);
	assert_true(num_of("-12") == -12.0);
	assert_true(num_of("3.25") == 3.25);
	assert_true(num_of("1.5e3") == 1500.0);
	assert_true(num_of("15E+2") == 1500.0);
	assert_true(num_of("-2e-2") == -0.02);
	assert_true(num_of("346019.900498") == 346019.900498);
	assert_true(num_of("9007199254740993") == 9007199254740992.0);
	assert_true(num_of("1e308") == 1e308);
	assert_true(num_of("1e-400") == 0.0);
	/* longer than the parser's small buffer */
	static const char longnum[] =
		"-1234567890.1234567890123456789012345678901234567890"
		"1234567890123456789012345678901234567890e-5";
	assert_true(num_of(longnum) == strtod(longnum, NULL));
	assert_true(num_of(longnum) < -12345.6);
}

static void assert_str(const struct json *j, const char *want, size_t len)
{
	assert_non_null(j);
	assert_int_equal(j->type, JSON_STRING);
	assert_int_equal(j->str_len, len);
	assert_memory_equal(j->str, want, len);
	assert_int_equal(j->str[len], '\0');
}

static void test_strings(void **state)
{
	struct json *j;

	(void)state;
	j = parse_ok("[\"plain\", \"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"a\\u0041\","
		     "\"\\u00e9\\u20AC\", \"\\ud83d\\ude00\", \"x\\u0000y\","
		     "\"\xc3\xa9 as is\"]");
	assert_int_equal(j->n, 7);
	assert_str(&j->kids[0], "plain", 5);
	assert_str(&j->kids[1], "\"\\/\b\f\n\r\t", 8);
	assert_str(&j->kids[2], "aA", 2);
	assert_str(&j->kids[3], "\xc3\xa9\xe2\x82\xac", 5);
	assert_str(&j->kids[4], "\xf0\x9f\x98\x80", 4);
	assert_str(&j->kids[5], "x\0y", 3);
	assert_str(&j->kids[6], "\xc3\xa9 as is", 8);
	json_free(j);
}

static void test_containers(void **state)
{
	struct json *j;

	(void)state;
	j = parse_ok(" { \"a\" : [1, [2, {}], {\"b\": null}] , \"c\":true,"
		     "\"a\": 9, \"\\u0064\": \"e\" } ");
	assert_int_equal(j->type, JSON_OBJECT);
	assert_int_equal(j->n, 4);
	assert_int_equal(j->kids[0].key_len, 1);
	assert_string_equal(j->kids[0].key, "a");
	assert_int_equal(j->kids[0].type, JSON_ARRAY);
	assert_int_equal(j->kids[0].n, 3);
	assert_null(j->kids[0].kids[0].key);
	assert_int_equal(j->kids[0].kids[1].kids[1].type, JSON_OBJECT);
	assert_int_equal(j->kids[1].type, JSON_TRUE);
	/* a repeated name: the first one wins */
	assert_int_equal(json_get(j, "a")->type, JSON_ARRAY);
	assert_str(json_get(j, "d"), "e", 1);
	json_free(j);
}

static void test_paths(void **state)
{
	struct json *j;

	(void)state;
	j = parse_ok("{\"jobs\": [{\"read\": {\"iops\": 5, \"lat\": {\"p\": "
		     "{\"99.000000\": 7, \"a[b]\": 8}}}}, 3],"
		     "\"x.y\": {\"z\": 1}, \"\": 2}");
	assert_true(json_get(j, "") == j);
	assert_true(json_get_num(j, "jobs[0].read.iops") == 5);
	assert_true(json_get_num(j, "jobs[1]") == 3);
	assert_true(json_get_num(j,
				 "jobs[0].read.lat.p[\"99.000000\"]") == 7);
	assert_true(json_get_num(j, "jobs[0].read.lat.p[\"a[b]\"]") == 8);
	assert_true(json_get_num(j, "[\"x.y\"].z") == 1);
	assert_true(json_get_num(j, "[\"\"]") == 2);
	assert_true(json_get(j, "jobs[0].read") ==
		    &j->kids[0].kids[0].kids[0]);
	/* absent, or not what the path says, or a malformed path */
	static const char *const none[] = {
		"jobs[2]", "jobs[-1]", "jobs[0].write", "jobs.read",
		"jobs[0][0]", "x.y", "jobs[0].read.iops.x", "jobs[0",
		"jobs[x]", "jobs[0]read", ".jobs", "jobs..read",
		"jobs[0].read.", "[\"x.y\"", "jobs[99999999999999999999]",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		if (json_get(j, none[i]))
			fail_msg("path %s found something", none[i]);
	assert_true(isnan(json_get_num(j, "jobs[0].read")));
	assert_true(isnan(json_get_num(j, "nothing")));
	assert_null(json_get(NULL, "jobs"));
	json_free(j);
}

struct bad {
	const char *text;
	size_t len; /* 0: strlen */
	const char *msg;
	size_t offset;
};

static const struct bad bad[] = {
	{ "", 0, "truncated", 0 },
	{ "   ", 0, "truncated", 3 },
	{ "[1, 2", 0, "truncated", 5 },
	{ "{\"a\": 1", 0, "truncated", 7 },
	{ "{\"a\"", 0, "truncated", 4 },
	{ "\"abc", 0, "truncated", 4 },
	{ "\"ab\\", 0, "truncated", 4 },
	{ "tru", 0, "truncated", 3 },
	{ "-", 0, "truncated", 1 },
	{ "1.", 0, "truncated", 2 },
	{ "1e+", 0, "truncated", 3 },
	{ "[1] x", 0, "trailing garbage", 4 },
	{ "{} {}", 0, "trailing garbage", 3 },
	{ "01", 0, "trailing garbage", 1 },
	{ "1 2", 0, "trailing garbage", 2 },
	{ "[1]\0", 4, "trailing garbage", 3 },
	{ "\"a\\x\"", 0, "bad escape", 2 },
	{ "\"\\u12g4\"", 0, "bad escape", 1 },
	{ "\"\\u12\"", 0, "bad escape", 1 },
	{ "\"\\ud800\"", 0, "bad escape", 1 },
	{ "\"\\ud800\\u0041\"", 0, "bad escape", 1 },
	{ "\"\\udc00\\ud800\"", 0, "bad escape", 1 },
	{ "\"\\U0041\"", 0, "bad escape", 1 },
	{ "\"a\tb\"", 0, "control character in string", 2 },
	{ "\"a\nb\"", 0, "control character in string", 2 },
	{ "1.e5", 0, "bad number", 2 },
	{ "-x", 0, "bad number", 1 },
	{ "1e999", 0, "number out of range", 0 },
	{ "-1e999", 0, "number out of range", 0 },
	{ "+1", 0, "unexpected character", 0 },
	{ ".5", 0, "unexpected character", 0 },
	{ "nulx", 0, "unexpected character", 0 },
	{ "True", 0, "unexpected character", 0 },
	{ "[1,]", 0, "unexpected character", 3 },
	{ "[1 2]", 0, "expected ',' or ']'", 3 },
	{ "{\"a\":1 \"b\":2}", 0, "expected ',' or '}'", 7 },
	{ "{\"a\" 1}", 0, "expected ':'", 5 },
	{ "{1:2}", 0, "expected a member name", 1 },
	{ "{\"a\":1,}", 0, "expected a member name", 7 },
	{ "{'a':1}", 0, "expected a member name", 1 },
};

static void test_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct bad *b = &bad[i];
		size_t len = b->len ? b->len : strlen(b->text);
		struct json_error err = { 0, NULL };
		struct json *j = (struct json *)1;
		int ret = json_parse(b->text, len, &j, &err);

		if (ret != -EINVAL || j || !err.msg ||
		    strcmp(err.msg, b->msg) || err.offset != b->offset)
			fail_msg("%s: got %d %s at %zu, want %s at %zu",
				 b->text, ret, err.msg ? err.msg : "(none)",
				 err.offset, b->msg, b->offset);
	}
}

/* The text is not read past len and needs no NUL. */
static void test_length(void **state)
{
	struct json *j = NULL;

	(void)state;
	assert_int_equal(json_parse("123456", 3, &j, NULL), 0);
	assert_true(j->num == 123.0);
	json_free(j);
	assert_int_equal(json_parse("[1]]]", 3, &j, NULL), 0);
	json_free(j);
	assert_int_equal(json_parse("\"ab\"", 3, &j, NULL), -EINVAL);
	assert_null(j);
	assert_int_equal(json_parse(NULL, 0, &j, NULL), -EINVAL);
}

static char *nested(unsigned int depth, char open, char close)
{
	char *s = malloc(2 * depth + 2);

	assert_non_null(s);
	for (unsigned int i = 0; i < depth; i++) {
		s[i] = open;
		s[2 * depth - 1 - i] = close;
	}
	s[2 * depth] = '\0';
	return s;
}

static void test_depth(void **state)
{
	struct json_error err;
	struct json *j;
	char *s;

	(void)state;
	s = nested(JSON_MAX_DEPTH, '[', ']');
	j = parse_ok(s);
	json_free(j);
	free(s);

	s = nested(JSON_MAX_DEPTH + 1, '[', ']');
	assert_int_equal(json_parse(s, strlen(s), &j, &err), -EINVAL);
	assert_string_equal(err.msg, "too deep");
	assert_int_equal(err.offset, JSON_MAX_DEPTH);
	free(s);

	/* far deeper, and objects: refused the same way, no stack overflow */
	s = malloc(7 * 100000 + 1);
	assert_non_null(s);
	for (unsigned int i = 0; i < 100000; i++)
		memcpy(s + 7 * i, "{\"a\": [", 7);
	s[7 * 100000] = '\0';
	assert_int_equal(json_parse(s, strlen(s), &j, &err), -EINVAL);
	assert_string_equal(err.msg, "too deep");
	free(s);
}

static char *fixture(size_t *len)
{
	FILE *f = fopen(FIO_FIXTURE, "rb");
	char *buf;
	long l;

	if (!f)
		fail_msg("%s: cannot open (run from the repository root)",
			 FIO_FIXTURE);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	l = ftell(f);
	assert_true(l > 0);
	rewind(f);
	buf = malloc((size_t)l + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)l, f), (size_t)l);
	buf[l] = '\0';
	fclose(f);
	*len = (size_t)l;
	return buf;
}

/* What devbench reads from it (bench/devbench.c: fio_parse). */
static void test_fio_output(void **state)
{
	const struct json *rd, *opts;
	struct json *j;
	size_t len;
	char *text = fixture(&len);

	(void)state;
	j = parse_ok(text);
	rd = json_get(j, "jobs[0].read");
	assert_non_null(rd);
	assert_true(json_get_num(rd, "iops") == 346019.900498);
	assert_true(json_get_num(rd, "total_ios") == 69550);
	assert_true(json_get_num(rd, "lat_ns.mean") == 91523.939222);
	assert_true(json_get_num(rd, "lat_ns.percentile[\"50.000000\"]") ==
		    84480);
	assert_true(json_get_num(rd, "lat_ns.percentile[\"99.000000\"]") ==
		    168960);
	assert_true(json_get_num(rd, "clat_ns.percentile[\"99.000000\"]") ==
		    164864);
	assert_true(json_get_num(j, "jobs[0].usr_cpu") == 33.0);
	assert_true(json_get_num(j, "jobs[0].sys_cpu") == 64.0);
	assert_true(json_get_num(j, "jobs[0].job_runtime") == 200);
	assert_true(json_get_num(j, "jobs[0].write.iops") == 0);
	assert_null(json_get(j, "jobs[1]"));
	assert_str(json_get(j, "[\"fio version\"]"), "fio-3.33", 8);
	opts = json_get(j, "jobs[0][\"job options\"]");
	assert_str(json_get(opts, "rw"), "randread", 8);
	assert_str(json_get(opts, "ioengine"), "io_uring", 8);
	assert_str(json_get(j, "disk_util[0].name"), "vda", 3);
	json_free(j);
	free(text);
}

/* Every proper prefix of fio's output is refused as truncated, up to the
 * closing brace; after it only whitespace follows. */
static void test_fio_output_cut(void **state)
{
	struct json_error err;
	struct json *j;
	size_t len, end;
	char *text = fixture(&len);

	(void)state;
	end = (size_t)(strrchr(text, '}') - text) + 1;
	for (size_t cut = 0; cut < end; cut++) {
		int ret = json_parse(text, cut, &j, &err);

		if (ret != -EINVAL || strcmp(err.msg, "truncated") ||
		    err.offset != cut)
			fail_msg("cut at %zu: %d %s at %zu", cut, ret,
				 ret ? err.msg : "", ret ? err.offset : 0);
	}
	for (size_t cut = end; cut <= len; cut++) {
		assert_int_equal(json_parse(text, cut, &j, NULL), 0);
		json_free(j);
	}
	free(text);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_fio_output),
		cmocka_unit_test(test_fio_output_cut),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
