/* bench/fiojson: what devbench reads from fio's JSON output, through
 * json-c.  A real fio 3.33 output (the fixture
 * tests/unit/data/fio-3.33-randread.json, made by devbench's fio command
 * line on a 4 MiB tmpfs file) read whole, after notes, with a member
 * missing or of the wrong type, with trailing characters, and cut at
 * every byte.  Run from the repository root (make check does). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/fiojson.h"

#define FIO_FIXTURE "tests/unit/data/fio-3.33-randread.json"

static char *fixture(void)
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
	return buf;
}

/* The fixture with the first from after the first after in it replaced
 * by to (after: NULL for the start). */
static char *edited(const char *after, const char *from, const char *to)
{
	char *text = fixture(), *out, *at = text;

	if (after) {
		at = strstr(text, after);
		assert_non_null(at);
	}
	at = strstr(at, from);
	if (!at)
		fail_msg("no %s after %s in the fixture", from, after);
	if (asprintf(&out, "%.*s%s%s", (int)(at - text), text, to,
		     at + strlen(from)) < 0)
		fail_msg("asprintf");
	free(text);
	return out;
}

/* fiojson_read of text: its return, with a reason exactly when the JSON
 * did not parse. */
static int read_of(const char *text, bool write, struct fiojson *f,
		   struct fiojson_error *err)
{
	int ret;

	memset(f, 0, sizeof(*f));
	ret = fiojson_read(text, write, f, err);
	assert_true(ret == 0 || ret == -EINVAL);
	return ret;
}

static void assert_fixture_read(const struct fiojson *f)
{
	assert_true(f->iops == 346019.900498);
	assert_true(f->total_ios == 69550);
	assert_true(f->mean_ns == 91523.939222);
	assert_true(f->p50_ns == 84480);  /* lat_ns, not clat_ns (82432) */
	assert_true(f->p99_ns == 168960); /* clat_ns: 164864 */
	assert_true(f->usr_cpu == 33.0);
	assert_true(f->sys_cpu == 64.0);
	assert_true(f->job_runtime_ms == 200);
}

static void test_fio_output(void **state)
{
	struct fiojson_error err;
	struct fiojson f;
	char *text = fixture();

	(void)state;
	assert_int_equal(read_of(text, false, &f, &err), 0);
	assert_null(err.msg);
	assert_fixture_read(&f);
	/* a randread job did no writes: no write percentiles */
	assert_int_equal(read_of(text, true, &f, &err), -EINVAL);
	assert_null(err.msg);
	free(text);
}

/* fio may print notes before its JSON: read from the first line that
 * starts with '{', and say where a fault is from the start of the text. */
static void test_notes_before(void **state)
{
	static const char note[] = "fio: note {not JSON}\n";
	struct fiojson_error err;
	struct fiojson f;
	char *text = fixture(), *all;
	size_t len = strlen(text);

	(void)state;
	assert_true(asprintf(&all, "%s%s", note, text) > 0);
	assert_int_equal(read_of(all, false, &f, &err), 0);
	assert_fixture_read(&f);
	all[strlen(note) + len / 2] = '\0';
	assert_int_equal(read_of(all, false, &f, &err), -EINVAL);
	assert_non_null(err.msg);
	assert_int_equal(err.offset, strlen(note) + len / 2);
	assert_int_equal(read_of(note, false, &f, &err), -EINVAL);
	assert_null(err.msg);
	assert_int_equal(read_of("", false, &f, &err), -EINVAL);
	assert_null(err.msg);
	free(all);
	free(text);
}

/* Each member devbench cannot do without, gone or of another type: refused,
 * as JSON that parsed. */
static void test_missing(void **state)
{
	static const struct {
		const char *after, *from, *to;
	} c[] = {
		{ NULL, "\"jobs\"", "\"jobz\"" },
		{ NULL, "\"jobs\" : [", "\"jobs\" : [], \"x\" : [" },
		{ NULL, "\"read\"", "\"reed\"" },
		{ "\"read\"", "\"lat_ns\"", "\"lat_us\"" },
		{ "\"lat_ns\"", "\"percentile\"", "\"percentiles\"" },
		{ "\"lat_ns\"", "\"99.000000\"", "\"99.000001\"" },
		{ "\"read\"", "\"iops\"", "\"iop\"" },
		/* json-c would read these as numbers */
		{ "\"read\"", "346019.900498", "\"346019.900498\"" },
		{ "\"lat_ns\"", "168960", "true" },
	};
	struct fiojson_error err;
	struct fiojson f;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *text = edited(c[i].after, c[i].from, c[i].to);

		if (read_of(text, false, &f, &err) != -EINVAL || err.msg)
			fail_msg("%s -> %s read: %s", c[i].from, c[i].to,
				 err.msg ? err.msg : "no error");
		free(text);
	}
}

/* The figures devbench can do without are NAN when missing: only iops
 * and p99 are required. */
static void test_optional(void **state)
{
	struct fiojson_error err;
	struct fiojson f;
	char *text = edited("\"lat_ns\"", "\"50.000000\"", "\"50.000001\"");

	(void)state;
	assert_int_equal(read_of(text, false, &f, &err), 0);
	assert_true(isnan(f.p50_ns));
	assert_true(f.p99_ns == 168960);
	free(text);
	text = edited(NULL, "\"usr_cpu\"", "\"usr\"");
	assert_int_equal(read_of(text, false, &f, &err), 0);
	assert_true(isnan(f.usr_cpu));
	assert_true(f.sys_cpu == 64.0);
	free(text);
}

/* Every proper prefix of fio's output is refused where it ends, up to
 * the closing brace; after it only whitespace follows.  Anything else
 * after the brace is refused too. */
static void test_cut(void **state)
{
	struct fiojson_error err;
	struct fiojson f;
	char *text = fixture(), *more;
	size_t len = strlen(text), end;

	(void)state;
	end = (size_t)(strrchr(text, '}') - text) + 1;
	for (size_t cut = 1; cut <= len; cut++) {
		char *part = strndup(text, cut);
		int ret = read_of(part, false, &f, &err);

		assert_non_null(part);
		if (cut < end && (ret != -EINVAL || !err.msg ||
				  err.offset != cut))
			fail_msg("cut at %zu: %d %s at %zu", cut, ret,
				 err.msg ? err.msg : "", err.offset);
		if (cut >= end && ret)
			fail_msg("cut at %zu (after the JSON): %d %s", cut,
				 ret, err.msg ? err.msg : "");
		free(part);
	}
	assert_true(asprintf(&more, "%s{}", text) > 0);
	assert_int_equal(read_of(more, false, &f, &err), -EINVAL);
	assert_non_null(err.msg);
	assert_int_equal(err.offset, len);
	free(more);
	free(text);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fio_output),
		cmocka_unit_test(test_notes_before),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_optional),
		cmocka_unit_test(test_cut),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("fiojson", tests, NULL, NULL);
}
