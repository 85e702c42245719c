/* json-c helpers shared by the stats writers (the exit file, the control socket). */
#ifndef HOST_JSON_H
#define HOST_JSON_H

#include <json-c/json.h>
#include <stdint.h>

static inline void json_put_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

#endif
