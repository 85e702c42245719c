#include "blk/blk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number with an optional K, M or G suffix (powers of 1024); a plain
 * number is shifted by shift. */
static int blk_parse_scaled(const char *s, unsigned int shift,
			    uint64_t *bytes)
{
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

int blk_parse_size(const char *s, uint64_t *bytes)
{
	return blk_parse_scaled(s, 20, bytes); /* a plain number is MiB */
}

int blk_parse_rate(const char *s, uint64_t *bytes)
{
	return blk_parse_scaled(s, 0, bytes); /* a plain number is bytes */
}

/* A decimal number from lo to hi, digits only. */
static int blk_opt_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!v || *v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return -EINVAL;
	*out = n;
	return 0;
}

int blk_limit_set(struct blk_limit *l, const char *name, const char *v)
{
	if (!strcmp(name, "iops"))
		return blk_opt_u64(v, 1, BLK_IOPS_MAX, &l->iops);
	if (!strcmp(name, "bw"))
		return v ? blk_parse_rate(v, &l->bw) : -EINVAL;
	if (!strcmp(name, "burst"))
		return blk_opt_u64(v, 1, BLK_BURST_MS_MAX, &l->burst_ms);
	return -EINVAL;
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

/* The options a disk spec may name, each at most once. */
enum blk_opt { OPT_RO, OPT_DIRECT, OPT_BATCH, OPT_QUEUES, OPT_POLL,
	       OPT_ENGINE, OPT_SERIAL, OPT_IOPS, OPT_BW, OPT_BURST, OPT_HOTPLUG,
	       OPT_COUNT };

static const char *const blk_opt_name[OPT_COUNT] = {
	[OPT_RO] = "ro", [OPT_DIRECT] = "direct", [OPT_BATCH] = "batch",
	[OPT_QUEUES] = "queues", [OPT_POLL] = "poll", [OPT_ENGINE] = "engine",
	[OPT_SERIAL] = "serial", [OPT_IOPS] = "iops", [OPT_BW] = "bw",
	[OPT_BURST] = "burst", [OPT_HOTPLUG] = "hotplug",
};

/* Which option opt names (the part before any '='), or OPT_COUNT. */
static enum blk_opt blk_opt_find(const char *opt)
{
	size_t n = strcspn(opt, "=");

	for (unsigned int i = 0; i < OPT_COUNT; i++)
		if (strlen(blk_opt_name[i]) == n &&
		    !strncmp(opt, blk_opt_name[i], n))
			return (enum blk_opt)i;
	return OPT_COUNT;
}

/* Option which, with value v (NULL: none given).  0 or -EINVAL. */
static int blk_opt_set(enum blk_opt which, const char *v, struct blk_opts *o,
		       bool ram)
{
	switch (which) {
	case OPT_RO:
	case OPT_DIRECT:
		/* Flags of a file disk: no value, not on ram:. */
		if (v || ram)
			return -EINVAL;
		*(which == OPT_RO ? &o->ro : &o->direct) = true;
		return 0;
	case OPT_HOTPLUG:
		if (v)
			return -EINVAL;
		o->hotplug = true;
		return 0;
	case OPT_BATCH:
		if (v && (!strcmp(v, "on") || !strcmp(v, "off"))) {
			o->batch = !strcmp(v, "on");
			return 0;
		}
		return -EINVAL;
	case OPT_QUEUES:
		return v ? blk_opt_uint(v, 1, BLK_MAX_QUEUES, &o->queues)
			 : -EINVAL;
	case OPT_POLL:
		return v ? blk_opt_uint(v, 0, BLK_POLL_US_MAX, &o->poll_us)
			 : -EINVAL;
	case OPT_ENGINE:
		if (!v || ram)
			return -EINVAL;
		if (!strcmp(v, "uring"))
			o->engine = BLK_ENGINE_URING;
		else if (!strcmp(v, "sync"))
			o->engine = BLK_ENGINE_SYNC;
		else
			return -EINVAL;
		return 0;
	case OPT_SERIAL:
		if (!v || !*v || strlen(v) > BLK_ID_BYTES)
			return -EINVAL;
		strcpy(o->serial, v);
		return 0;
	case OPT_IOPS:
	case OPT_BW:
	case OPT_BURST: {
		struct blk_limit l = { o->iops, o->bw, o->burst_ms };
		int r = blk_limit_set(&l, blk_opt_name[which], v);

		o->iops = l.iops;
		o->bw = l.bw;
		o->burst_ms = l.burst_ms;
		return r;
	}
	case OPT_COUNT:
		break;
	}
	return -EINVAL;
}

/* "bad disk option 'OPT'", with the limit where there is one. */
static int blk_opt_bad(char *msg, unsigned int msglen, enum blk_opt which,
		       const char *opt)
{
	if (msg && which == OPT_QUEUES)
		snprintf(msg, msglen, "bad disk option '%s' (queues: 1 to %d)",
			 opt, BLK_MAX_QUEUES);
	else if (msg)
		snprintf(msg, msglen, "bad disk option '%s'", opt);
	return -EINVAL;
}

int blk_opts_parse(char *spec, struct blk_opts *o, char *msg,
		   unsigned int msglen)
{
	char *opt, *rest = spec, *first;
	unsigned int seen = 0; /* bit per enum blk_opt */
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
		enum blk_opt which = blk_opt_find(opt);
		char *v = strchr(opt, '=');

		/* The same option twice is refused, not silently the last. */
		if (which != OPT_COUNT && (seen & 1u << which))
			return blk_opt_err(msg, msglen, "disk option given twice",
					   opt);
		if (which == OPT_COUNT ||
		    blk_opt_set(which, v ? v + 1 : NULL, o, ram))
			return blk_opt_bad(msg, msglen, which, opt);
		seen |= 1u << which;
	}
	return 0;
}
