/* A small recursive-descent JSON parser; see json.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench/json.h"

struct jp {
	const char *s, *at, *end;
	const char *msg; /* the first failure */
	size_t err_at;
	bool nomem;
};

static int jp_fail(struct jp *p, const char *at, const char *msg)
{
	if (!p->msg) {
		p->msg = msg;
		p->err_at = (size_t)(at - p->s);
	}
	return -1;
}

static int jp_nomem(struct jp *p)
{
	p->nomem = true;
	return jp_fail(p, p->at, "out of memory");
}

/* The failure at q: the text ended there, or it holds what is not allowed. */
static int jp_bad(struct jp *p, const char *q, const char *msg)
{
	return jp_fail(p, q, q == p->end ? "truncated" : msg);
}

static void jp_ws(struct jp *p)
{
	while (p->at < p->end && (*p->at == ' ' || *p->at == '\t' ||
				  *p->at == '\n' || *p->at == '\r'))
		p->at++;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *q, const char *end)
{
	while (q < end && is_digit(*q))
		q++;
	return q;
}

static int parse_lit(struct jp *p, struct json *v)
{
	static const struct {
		const char *word;
		enum json_type type;
	} lit[] = { { "null", JSON_NULL },
		    { "false", JSON_FALSE },
		    { "true", JSON_TRUE } };
	size_t left = (size_t)(p->end - p->at);

	for (size_t i = 0; i < sizeof(lit) / sizeof(lit[0]); i++) {
		size_t l = strlen(lit[i].word);

		if (left >= l && !memcmp(p->at, lit[i].word, l)) {
			v->type = lit[i].type;
			p->at += l;
			return 0;
		}
		if (left < l && !memcmp(p->at, lit[i].word, left))
			return jp_fail(p, p->end, "truncated");
	}
	return jp_fail(p, p->at, "unexpected character");
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int parse_num(struct jp *p, struct json *v)
{
	const char *q = p->at, *d;
	char small[64], *buf = small;
	size_t len;

	if (q < p->end && *q == '-')
		q++;
	d = q < p->end && *q == '0' ? q + 1 : skip_digits(q, p->end);
	if (d == q)
		return jp_bad(p, q, "bad number");
	q = d;
	if (q < p->end && *q == '.') {
		d = skip_digits(++q, p->end);
		if (d == q)
			return jp_bad(p, q, "bad number");
		q = d;
	}
	if (q < p->end && (*q == 'e' || *q == 'E')) {
		if (++q < p->end && (*q == '+' || *q == '-'))
			q++;
		d = skip_digits(q, p->end);
		if (d == q)
			return jp_bad(p, q, "bad number");
		q = d;
	}
	/* strtod needs a NUL after the number, which the text may lack */
	len = (size_t)(q - p->at);
	if (len >= sizeof(small) && !(buf = malloc(len + 1)))
		return jp_nomem(p);
	memcpy(buf, p->at, len);
	buf[len] = '\0';
	v->num = strtod(buf, NULL);
	if (buf != small)
		free(buf);
	if (isinf(v->num))
		return jp_fail(p, p->at, "number out of range");
	v->type = JSON_NUMBER;
	p->at = q;
	return 0;
}

static int hex4(const char *q, const char *e, unsigned int *cp)
{
	*cp = 0;
	if (e - q < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = q[i];
		unsigned int d;

		if (is_digit(c))
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			return -1;
		*cp = *cp << 4 | d;
	}
	return 0;
}

static char *put_utf8(char *w, unsigned int cp)
{
	if (cp < 0x80) {
		*w++ = (char)cp;
	} else if (cp < 0x800) {
		*w++ = (char)(0xc0 | cp >> 6);
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*w++ = (char)(0xe0 | cp >> 12);
		*w++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*w++ = (char)(0xf0 | cp >> 18);
		*w++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*w++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	}
	return w;
}

/* \uXXXX at *qp (after the u), a surrogate pair as one code point. */
static int unicode_escape(const char **qp, const char *e, unsigned int *cp)
{
	const char *q = *qp;
	unsigned int lo;

	if (hex4(q, e, cp) || (*cp >= 0xdc00 && *cp < 0xe000))
		return -1;
	q += 4;
	if (*cp >= 0xd800 && *cp < 0xdc00) {
		if (e - q < 2 || q[0] != '\\' || q[1] != 'u' ||
		    hex4(q + 2, e, &lo) || lo < 0xdc00 || lo >= 0xe000)
			return -1;
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
		q += 6;
	}
	*qp = q;
	return 0;
}

/* Decode the string between q and its closing quote e into w. */
static int decode_str(struct jp *p, const char *q, const char *e, char *w,
		      size_t *len)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	char *w0 = w;
	unsigned int cp;
	const char *c;

	while (q < e) {
		if ((unsigned char)*q < 0x20)
			return jp_fail(p, q, "control character in string");
		if (*q != '\\') {
			*w++ = *q++;
			continue;
		}
		if (q[1] == 'u') {
			q += 2;
			if (unicode_escape(&q, e, &cp))
				return jp_fail(p, q - 2, "bad escape");
			w = put_utf8(w, cp);
		} else if (q[1] && (c = strchr(from, q[1]))) {
			*w++ = to[c - from];
			q += 2;
		} else {
			return jp_fail(p, q, "bad escape");
		}
	}
	*w = '\0';
	*len = (size_t)(w - w0);
	return 0;
}

/* The string at p->at (its opening quote): no escape makes it longer. */
static int parse_str(struct jp *p, char **out, size_t *len)
{
	const char *q = p->at + 1, *e = q;

	while (e < p->end && *e != '"')
		e += *e == '\\' && e + 1 < p->end ? 2 : 1;
	if (e >= p->end)
		return jp_fail(p, p->end, "truncated");
	*out = malloc((size_t)(e - q) + 1);
	if (!*out)
		return jp_nomem(p);
	if (decode_str(p, q, e, *out, len))
		return -1;
	p->at = e + 1;
	return 0;
}

static int parse_value(struct jp *p, struct json *v, unsigned int depth);

static void json_clear(struct json *j)
{
	for (size_t i = 0; i < j->n; i++)
		json_clear(&j->kids[i]);
	free(j->kids);
	free(j->key);
	free(j->str);
}

static int push(struct jp *p, struct json *v, size_t *cap, struct json *kid)
{
	if (v->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct json *k = realloc(v->kids, ncap * sizeof(*k));

		if (!k)
			return jp_nomem(p);
		v->kids = k;
		*cap = ncap;
	}
	v->kids[v->n++] = *kid;
	return 0;
}

static int parse_key(struct jp *p, struct json *kid)
{
	jp_ws(p);
	if (p->at == p->end || *p->at != '"')
		return jp_bad(p, p->at, "expected a member name");
	if (parse_str(p, &kid->key, &kid->key_len))
		return -1;
	jp_ws(p);
	if (p->at == p->end || *p->at != ':')
		return jp_bad(p, p->at, "expected ':'");
	p->at++;
	return 0;
}

static int parse_container(struct jp *p, struct json *v, unsigned int depth)
{
	bool obj = *p->at == '{';
	char close = obj ? '}' : ']';
	size_t cap = 0;
	struct json kid;

	if (depth >= JSON_MAX_DEPTH)
		return jp_fail(p, p->at, "too deep");
	v->type = obj ? JSON_OBJECT : JSON_ARRAY;
	p->at++;
	jp_ws(p);
	if (p->at < p->end && *p->at == close) {
		p->at++;
		return 0;
	}
	for (;;) {
		memset(&kid, 0, sizeof(kid));
		if ((obj && parse_key(p, &kid)) ||
		    parse_value(p, &kid, depth + 1) || push(p, v, &cap, &kid)) {
			json_clear(&kid);
			return -1;
		}
		jp_ws(p);
		if (p->at < p->end && *p->at == close) {
			p->at++;
			return 0;
		}
		if (p->at == p->end || *p->at != ',')
			return jp_bad(p, p->at,
				      obj ? "expected ',' or '}'"
					  : "expected ',' or ']'");
		p->at++;
	}
}

static int parse_value(struct jp *p, struct json *v, unsigned int depth)
{
	jp_ws(p);
	if (p->at == p->end)
		return jp_fail(p, p->at, "truncated");
	switch (*p->at) {
	case '{':
	case '[':
		return parse_container(p, v, depth);
	case '"':
		v->type = JSON_STRING;
		return parse_str(p, &v->str, &v->str_len);
	case '-':
	case '0' ... '9':
		return parse_num(p, v);
	default:
		return parse_lit(p, v);
	}
}

int json_parse(const char *text, size_t len, struct json **out,
	       struct json_error *err)
{
	struct jp p = { .s = text ? text : "" };
	struct json *root = calloc(1, sizeof(*root));

	p.at = p.s;
	p.end = p.s + (text ? len : 0);
	*out = NULL;
	if (!root) {
		jp_nomem(&p);
	} else if (!parse_value(&p, root, 0)) {
		jp_ws(&p);
		if (p.at == p.end) {
			*out = root;
			return 0;
		}
		jp_fail(&p, p.at, "trailing garbage");
	}
	if (err) {
		err->offset = p.err_at;
		err->msg = p.msg;
	}
	json_free(root);
	return p.nomem ? -ENOMEM : -EINVAL;
}

void json_free(struct json *j)
{
	if (j) {
		json_clear(j);
		free(j);
	}
}

static const struct json *member(const struct json *j, const char *name,
				 size_t len)
{
	if (j->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		if (j->kids[i].key_len == len &&
		    !memcmp(j->kids[i].key, name, len))
			return &j->kids[i];
	return NULL;
}

/* One step of a path: [N], ["name"] or (after the first) .name */
static const struct json *step(const struct json *j, const char *path,
			       const char **qp)
{
	const char *q = *qp, *e;
	unsigned long i;
	char *ie;
	size_t l;

	if (q[0] == '[' && q[1] == '"') {
		e = strstr(q + 2, "\"]");
		*qp = e ? e + 2 : q;
		return e ? member(j, q + 2, (size_t)(e - q - 2)) : NULL;
	}
	if (q[0] == '[') {
		if (!is_digit(q[1]))
			return NULL;
		i = strtoul(q + 1, &ie, 10);
		*qp = ie + 1;
		return *ie == ']' && j->type == JSON_ARRAY && i < j->n
			       ? &j->kids[i]
			       : NULL;
	}
	if (q != path && *q++ != '.')
		return NULL;
	l = strcspn(q, ".[");
	*qp = q + l;
	return l ? member(j, q, l) : NULL;
}

const struct json *json_get(const struct json *j, const char *path)
{
	const char *q = path;

	while (j && *q)
		j = step(j, path, &q);
	return j;
}

double json_get_num(const struct json *j, const char *path)
{
	const struct json *v = json_get(j, path);

	return v && v->type == JSON_NUMBER ? v->num : NAN;
}
