#include "blk/blk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int blk_parse_size(const char *s, uint64_t *bytes)
{
	unsigned int shift = 20; /* a plain number is MiB */
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end || !v || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

static int blk_opt_err(char *msg, unsigned int msglen, const char *what,
		       const char *arg)
{
	if (msg)
		snprintf(msg, msglen, "%s%s%s%s", what, *arg ? " '" : "", arg,
			 *arg ? "'" : "");
	return -EINVAL;
}

/* A decimal number from lo to hi, digits only, into *out. */
static int blk_opt_uint(const char *v, unsigned long lo, unsigned long hi,
			unsigned int *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (*v < '0' || *v > '9' || *end || n < lo || n > hi)
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

static int blk_opt_one(char *opt, struct blk_opts *o, bool ram)
{
	char *v = strchr(opt, '=');

	if (v)
		*v++ = '\0';
	if (!strcmp(opt, "ro") && !v && !ram)
		o->ro = true;
	else if (!strcmp(opt, "direct") && !v && !ram)
		o->direct = true;
	else if (!strcmp(opt, "batch") && v && !strcmp(v, "on"))
		o->batch = true;
	else if (!strcmp(opt, "batch") && v && !strcmp(v, "off"))
		o->batch = false;
	else if (!strcmp(opt, "queues") && v)
		return blk_opt_uint(v, 1, BLK_MAX_QUEUES, &o->queues);
	else if (!strcmp(opt, "poll") && v)
		return blk_opt_uint(v, 0, BLK_POLL_US_MAX, &o->poll_us);
	else if (!strcmp(opt, "engine") && v && !strcmp(v, "uring") && !ram)
		o->engine = BLK_ENGINE_URING;
	else if (!strcmp(opt, "engine") && v && !strcmp(v, "sync") && !ram)
		o->engine = BLK_ENGINE_SYNC;
	else if (!strcmp(opt, "serial") && v && *v && strlen(v) <= BLK_ID_BYTES)
		strcpy(o->serial, v);
	else
		return -EINVAL;
	return 0;
}

int blk_opts_parse(char *spec, struct blk_opts *o, char *msg,
		   unsigned int msglen)
{
	char *opt, *rest = spec, *first;
	char seen[256] = ","; /* ",name,name," of the options so far */
	bool ram;

	memset(o, 0, sizeof(*o));
	o->poll_us = BLK_POLL_US_DEFAULT;
	/* strsep, not strtok: an empty path or option is an error. */
	first = strsep(&rest, ",");
	if (!*first)
		return blk_opt_err(msg, msglen, "empty disk path", "");
	ram = !strncmp(first, "ram:", 4);
	if (ram && blk_parse_size(first + 4, &o->ram_size))
		return blk_opt_err(msg, msglen, "bad RAM disk size",
				   first + 4);
	if (!ram)
		o->path = first;
	while ((opt = strsep(&rest, ","))) {
		char copy[64], name[64];

		snprintf(copy, sizeof(copy), "%s", opt);
		/* The same option twice is refused, not silently the last. */
		snprintf(name, sizeof(name), ",%.*s,", (int)strcspn(opt, "="),
			 opt);
		if (strstr(seen, name))
			return blk_opt_err(msg, msglen, "disk option given twice",
					   copy);
		if (strlen(seen) + strlen(name) < sizeof(seen))
			strcat(seen, name + 1);
		if (blk_opt_one(opt, o, ram))
			return blk_opt_err(msg, msglen, "bad disk option",
					   copy);
	}
	return 0;
}
