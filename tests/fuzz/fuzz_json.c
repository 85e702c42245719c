/* Fuzz bench/json, the parser devbench reads fio's output with.  The
 * input is the JSON text.  Checks:
 *
 *  - a refusal has a reason and an offset inside the text, and no tree;
 *  - an accepted text gives a well-formed tree (members have names,
 *    elements none, strings end in NUL after their length, nesting within
 *    JSON_MAX_DEPTH, numbers finite);
 *  - the tree written back as JSON parses to the same tree;
 *  - json_get with the input as a path does not go wrong.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/json.h"
#include "tests/fuzz/fuzz.h"

static void check_tree(const struct json *j, unsigned int depth, bool member)
{
	CHECK(member == (j->key != NULL));
	CHECK(!j->key || j->key[j->key_len] == '\0');
	switch (j->type) {
	case JSON_STRING:
		CHECK(j->str && j->str[j->str_len] == '\0');
		break;
	case JSON_NUMBER:
		CHECK(isfinite(j->num));
		break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		CHECK(depth < JSON_MAX_DEPTH);
		CHECK(!j->n || j->kids);
		for (size_t i = 0; i < j->n; i++)
			check_tree(&j->kids[i], depth + 1,
				   j->type == JSON_OBJECT);
		break;
	default:
		CHECK(!j->n && !j->str);
	}
}

static void put_str(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == '"' || c == '\\')
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void put_json(FILE *f, const struct json *j)
{
	static const char *const word[] = { "null", "false", "true" };

	switch (j->type) {
	case JSON_NUMBER:
		fprintf(f, "%.17g", j->num);
		break;
	case JSON_STRING:
		put_str(f, j->str, j->str_len);
		break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		fputc(j->type == JSON_ARRAY ? '[' : '{', f);
		for (size_t i = 0; i < j->n; i++) {
			if (i)
				fputc(',', f);
			if (j->type == JSON_OBJECT) {
				put_str(f, j->kids[i].key, j->kids[i].key_len);
				fputc(':', f);
			}
			put_json(f, &j->kids[i]);
		}
		fputc(j->type == JSON_ARRAY ? ']' : '}', f);
		break;
	default:
		fputs(word[j->type], f);
	}
}

static bool same(const struct json *a, const struct json *b)
{
	if (a->type != b->type || a->n != b->n || a->key_len != b->key_len ||
	    (a->key && memcmp(a->key, b->key, a->key_len)))
		return false;
	if (a->type == JSON_NUMBER)
		return a->num == b->num && signbit(a->num) == signbit(b->num);
	if (a->type == JSON_STRING)
		return a->str_len == b->str_len &&
		       !memcmp(a->str, b->str, a->str_len);
	for (size_t i = 0; i < a->n; i++)
		if (!same(&a->kids[i], &b->kids[i]))
			return false;
	return true;
}

static void round_trip(const struct json *j)
{
	struct json_error err;
	struct json *again;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f);
	put_json(f, j);
	CHECK(!fclose(f));
	if (json_parse(buf, len, &again, &err)) {
		fprintf(stderr, "written back: %s\nrefused at %zu: %s\n", buf,
			err.offset, err.msg);
		CHECK(!"the tree written back parses");
	}
	CHECK(same(j, again));
	json_free(again);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_error err = { 0, NULL };
	struct json *j = NULL;
	char *path;
	int ret = json_parse((const char *)data, size, &j, &err);

	if (ret) {
		CHECK(!j && err.msg && err.offset <= size);
		return 0;
	}
	check_tree(j, 0, false);
	round_trip(j);
	path = malloc(size + 1);
	CHECK(path);
	memcpy(path, data, size);
	path[size] = '\0';
	(void)json_get(j, path);
	free(path);
	json_free(j);
	return 0;
}
