/* fio's JSON output through json-c; see fiojson.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include <json.h>

#include "bench/fiojson.h"

/* The member key of o; NULL if o is not an object or has none. */
static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* The number at key in o; NAN if there is none or it is not a number
 * (json_object_get_double would turn a string, a boolean or null into
 * one). */
static double number(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key);

	return json_object_is_type(v, json_type_double) ||
			       json_object_is_type(v, json_type_int)
		       ? json_object_get_double(v)
		       : NAN;
}

/* The one JSON text of s (len bytes, NUL-terminated), or NULL and
 * -EINVAL (*err says where and why) or -ENOMEM in *ret. */
static struct json_object *parse(const char *s, size_t len,
				 struct fiojson_error *err, int *ret)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root;
	enum json_tokener_error jerr;

	if (!tok) {
		*ret = -ENOMEM;
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* with its NUL, so that the end of the text ends the JSON */
	root = json_tokener_parse_ex(tok, s, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	if (!root) {
		/* past the end where json-c took the NUL into a string */
		err->offset = json_tokener_get_parse_end(tok);
		if (err->offset > len)
			err->offset = len;
		err->msg = json_tokener_error_desc(jerr);
		*ret = -EINVAL;
	}
	json_tokener_free(tok);
	return root;
}

int fiojson_read(const char *text, bool write, struct fiojson *out,
		 struct fiojson_error *err)
{
	const char *start = *text == '{' ? text : strstr(text, "\n{");
	struct json_object *root, *jobs, *job, *sec, *lat, *pct;
	size_t len;
	int ret = 0;

	err->offset = 0;
	err->msg = NULL;
	if (!start || (len = strlen(start)) >= INT_MAX)
		return -EINVAL;
	root = parse(start, len, err, &ret);
	if (!root) {
		err->offset += (size_t)(start - text);
		return ret;
	}
	jobs = member(root, "jobs");
	job = json_object_is_type(jobs, json_type_array)
		      ? json_object_array_get_idx(jobs, 0)
		      : NULL;
	sec = member(job, write ? "write" : "read");
	lat = member(sec, "lat_ns");
	pct = member(lat, "percentile");
	if (!json_object_is_type(pct, json_type_object)) {
		json_object_put(root);
		return -EINVAL;
	}
	out->iops = number(sec, "iops");
	out->total_ios = number(sec, "total_ios");
	out->mean_ns = number(lat, "mean");
	out->p50_ns = number(pct, "50.000000");
	out->p99_ns = number(pct, "99.000000");
	out->usr_cpu = number(job, "usr_cpu");
	out->sys_cpu = number(job, "sys_cpu");
	out->job_runtime_ms = number(job, "job_runtime");
	json_object_put(root);
	return isnan(out->iops) || isnan(out->p99_ns) ? -EINVAL : 0;
}
