/* A small JSON parser (RFC 8259) for the bench tools: devbench reads the
 * host fio's --output-format=json through it.
 *
 * json_parse() reads one JSON text (objects, arrays, strings with every
 * escape including \uXXXX and surrogate pairs, numbers, true, false,
 * null; whitespace around it) into a tree, or fails with the offset and
 * a one-line reason: truncated input, trailing garbage, a bad escape, a
 * control character in a string, a bad number, nesting deeper than
 * JSON_MAX_DEPTH.  Numbers are doubles (strtod of the number's text); one
 * outside the range of a double is refused.  Strings may hold NUL (from
 * \u0000): each carries its length.  Bytes >= 0x80 are taken as they are.
 *
 * json_get() finds a value by path: members by name after a dot, array
 * elements by index in brackets, and names that hold dots or brackets
 * quoted in brackets:
 *
 *	jobs[0].read.lat_ns.percentile["99.000000"]
 *
 * The first member of a name wins if an object repeats it.
 */
#ifndef BENCH_JSON_H
#define BENCH_JSON_H

#include <stddef.h>

#define JSON_MAX_DEPTH 64 /* arrays and objects inside each other */

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json {
	enum json_type type;
	char *key;         /* as a member of an object: its name, else NULL */
	size_t key_len;
	double num;        /* JSON_NUMBER */
	char *str;         /* JSON_STRING: NUL-terminated, str_len bytes */
	size_t str_len;
	struct json *kids; /* JSON_ARRAY, JSON_OBJECT: n elements or members */
	size_t n;
};

struct json_error {
	size_t offset;   /* where in the text */
	const char *msg; /* a static string */
};

/* 0 and *out (free it with json_free), or -EINVAL or -ENOMEM and, if
 * err is not NULL, where and why in *err. */
int json_parse(const char *text, size_t len, struct json **out,
	       struct json_error *err);
void json_free(struct json *j);

/* The value at path under j; NULL if there is none or path is malformed. */
const struct json *json_get(const struct json *j, const char *path);
/* The number at path; NAN if there is none or it is not a number. */
double json_get_num(const struct json *j, const char *path);

#endif
