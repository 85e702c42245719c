/* json-c helpers shared by the stats writers (the exit file, the control
 * socket) and readers (vmm ctl). */
#ifndef HOST_JSON_H
#define HOST_JSON_H

#include <json-c/json.h>
#include <stdint.h>

static inline void json_put_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

/* o's member k, or 0 / NULL where there is none. */
static inline uint64_t json_get_u64(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v)
						   : 0;
}

static inline const char *json_get_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ?
		       json_object_get_string(v) : NULL;
}

#endif
