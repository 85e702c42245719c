/* The control socket's commands; see api.h. */
#include <errno.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "host/json.h"

struct call {
	struct api_vm *vm;
	struct json_object *args; /* an object (empty if none given) */
	struct json_object *ret;  /* the answer's "return" */
	char err[256];            /* set: the answer is a GenericError */
};

static int fail(struct call *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct call *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- arguments ------------------------------------------------------- */

/* Every argument must be one the command knows (names, NULL-ended). */
static int args_known(struct call *c, const char *const *names)
{
	json_object_object_foreach(c->args, k, v) {
		const char *const *n = names;

		(void)v;
		while (*n && strcmp(*n, k))
			n++;
		if (!*n)
			return fail(c, "unknown argument '%s'", k);
	}
	return 0;
}

/* A non-negative integer argument; 1 if present, 0 if not, -1 bad. */
static int arg_u64(struct call *c, const char *k, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(c->args, k, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return fail(c, "'%s' must be a non-negative integer", k);
	*out = json_object_get_uint64(v);
	return 1;
}

/* The same, and not 0 (a limit of 0 is none: `off` says that), as
 * `vmm ctl` refuses iops=0 and burst=0. */
static int arg_pos(struct call *c, const char *k, uint64_t *out)
{
	int r = arg_u64(c, k, out);

	if (r > 0 && !*out)
		return fail(c, "'%s' must be at least 1 (no limit: 'off')", k);
	return r;
}

static int arg_bool(struct call *c, const char *k, bool *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(c->args, k, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return fail(c, "'%s' must be true or false", k);
	*out = json_object_get_boolean(v);
	return 1;
}

/* The disk argument: index of the disk, ndisks if none was given (every
 * disk), -1 if it names none. */
static int arg_disk(struct call *c, bool required)
{
	struct json_object *v;
	const char *name;

	if (!json_object_object_get_ex(c->args, "disk", &v)) {
		if (required)
			return fail(c, "'disk' is required");
		return (int)c->vm->ndisks;
	}
	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i >= 0 && i < c->vm->ndisks)
			return (int)i;
		return fail(c, "no disk %lld", (long long)i);
	}
	if (!json_object_is_type(v, json_type_string))
		return fail(c, "'disk' must be a name (vda) or an index");
	name = json_object_get_string(v);
	for (unsigned int i = 0; i < c->vm->ndisks; i++)
		if (!strcmp(c->vm->disk[i].name, name))
			return (int)i;
	return fail(c, "no disk '%.32s'", name);
}

/* The disks a command acts on: [*lo, *hi). */
static int disk_range(struct call *c, bool required, unsigned int *lo,
		      unsigned int *hi)
{
	int d = arg_disk(c, required);

	if (d < 0)
		return -1;
	*lo = d == (int)c->vm->ndisks ? 0 : (unsigned int)d;
	*hi = d == (int)c->vm->ndisks ? c->vm->ndisks : (unsigned int)d + 1;
	return 0;
}

/* ---- info -------------------------------------------------------------- */

static struct json_object *features_json(uint64_t f)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ VIRTIO_BLK_F_SIZE_MAX, "size_max" },
		{ VIRTIO_BLK_F_SEG_MAX, "seg_max" },
		{ VIRTIO_BLK_F_RO, "ro" },
		{ VIRTIO_BLK_F_BLK_SIZE, "blk_size" },
		{ VIRTIO_BLK_F_FLUSH, "flush" },
		{ VIRTIO_BLK_F_MQ, "mq" },
		{ VIRTIO_BLK_F_DISCARD, "discard" },
		{ VIRTIO_BLK_F_WRITE_ZEROES, "write_zeroes" },
		{ VIRTIO_RING_F_INDIRECT_DESC, "indirect_desc" },
		{ VIRTIO_RING_F_EVENT_IDX, "event_idx" },
		{ VIRTIO_F_VERSION_1, "version_1" },
	};
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f & 1ull << names[i].bit)
			json_object_array_add(a,
				json_object_new_string(names[i].name));
	return a;
}

static struct json_object *limit_json(const struct blk_limit *l)
{
	struct json_object *o = json_object_new_object();

	json_put_u64(o, "iops", l->iops);
	json_put_u64(o, "bw", l->bw);
	json_put_u64(o, "burst", l->burst_ms ? l->burst_ms : BLK_BURST_MS_DEFAULT);
	return o;
}

static int cmd_info(struct call *c)
{
	static const char *const known[] = { NULL };
	struct json_object *disks = json_object_new_array();

	if (args_known(c, known)) {
		json_object_put(disks);
		return -1;
	}
	json_put_u64(c->ret, "cpus", c->vm->cpus);
	json_put_u64(c->ret, "mem", c->vm->mem);
	json_object_object_add(c->ret, "state",
			       json_object_new_string("running"));
	for (unsigned int i = 0; i < c->vm->ndisks; i++) {
		const struct api_disk *ad = &c->vm->disk[i];
		const struct blk_opts *o = blk_dev_opts(ad->blk);
		struct json_object *d = json_object_new_object();
		struct blk_limit l;
		static const char *const engine[] = { "auto", "uring", "sync" };

		json_object_object_add(d, "name",
				       json_object_new_string(ad->name));
		json_object_object_add(d, "path", o->path ?
				       json_object_new_string(o->path) : NULL);
		json_put_u64(d, "size", blk_dev_capacity(ad->blk) << 9);
		json_put_u64(d, "queues", o->queues ? o->queues : 1);
		json_object_object_add(d, "ro", json_object_new_boolean(o->ro));
		json_object_object_add(d, "direct",
				       json_object_new_boolean(o->direct));
		json_object_object_add(d, "batch",
				       json_object_new_boolean(o->batch));
		json_put_u64(d, "poll_us", o->poll_us);
		json_object_object_add(d, "engine", o->path ?
				       json_object_new_string(engine[o->engine])
				       : NULL);
		json_object_object_add(d, "serial",
				       json_object_new_string(o->serial));
		json_object_object_add(d, "features",
				       features_json(ad->features ?
						     ad->features(ad->opaque) : 0));
		blk_dev_get_limit(ad->blk, &l);
		json_object_object_add(d, "limit", l.iops || l.bw ?
				       limit_json(&l) : NULL);
		json_object_object_add(d, "paused",
				       json_object_new_boolean(blk_dev_paused(ad->blk)));
		json_put_u64(d, "active_queues",
			     blk_dev_serving_queues(ad->blk));
		json_object_object_add(d, "latency",
				       json_object_new_boolean(blk_dev_latency_kept(ad->blk)));
		json_object_object_add(d, "hotplug",
				       json_object_new_boolean(ad->hotplug));
		json_object_array_add(disks, d);
	}
	json_object_object_add(c->ret, "disks", disks);
	return 0;
}

/* ---- stats ------------------------------------------------------------- */

static struct json_object *qstats_json(const struct blk_qstats *s)
{
	struct json_object *o = json_object_new_object();

	json_put_u64(o, "completed", s->completed);
	json_put_u64(o, "reads", s->reads);
	json_put_u64(o, "writes", s->writes);
	json_put_u64(o, "flushes", s->flushes);
	json_put_u64(o, "discards", s->discards);
	json_put_u64(o, "write_zeroes", s->write_zeroes);
	json_put_u64(o, "others", s->others);
	json_put_u64(o, "bytes_read", s->bytes_read);
	json_put_u64(o, "bytes_written", s->bytes_written);
	json_put_u64(o, "io_errors", s->io_errors);
	json_put_u64(o, "bad_chains", s->bad_chains);
	json_put_u64(o, "ring_errors", s->ring_errors);
	json_put_u64(o, "inflight", s->inflight);
	json_put_u64(o, "kicks", s->kicks);
	json_put_u64(o, "interrupts", s->interrupts);
	json_put_u64(o, "poll_hits", s->poll_hits);
	json_put_u64(o, "throttle_waits", s->throttle_waits);
	return o;
}

static void qstats_add(struct blk_qstats *t, const struct blk_qstats *s)
{
	const uint64_t *a = (const uint64_t *)s;
	uint64_t *b = (uint64_t *)t;

	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		b[i] += a[i];
}

static int cmd_stats(struct call *c)
{
	static const char *const known[] = { "disk", "reset", NULL };
	unsigned int lo, hi;
	bool reset = false;
	struct json_object *disks;

	if (args_known(c, known) || disk_range(c, false, &lo, &hi) ||
	    arg_bool(c, "reset", &reset) < 0)
		return -1;
	disks = json_object_new_array();
	for (unsigned int i = lo; i < hi; i++) {
		struct blk_dev *b = c->vm->disk[i].blk;
		struct json_object *d = json_object_new_object();
		struct json_object *qs = json_object_new_array();
		struct blk_qstats total = { 0 };
		bool lat_kept = blk_dev_latency(b, 0) != NULL;

		json_object_object_add(d, "name",
				       json_object_new_string(c->vm->disk[i].name));
		for (unsigned int q = 0;; q++) {
			struct blk_qstats s;
			struct lat_queue lat;
			struct json_object *qo;

			if (!blk_dev_queue_stats(b, q, &s, &lat, reset))
				break;
			qstats_add(&total, &s);
			qo = qstats_json(&s);
			json_object_object_add(qo, "latency", lat_kept ?
					       lat_queue_json(&lat) : NULL);
			json_object_array_add(qs, qo);
		}
		json_object_object_add(d, "total", qstats_json(&total));
		json_object_object_add(d, "queues", qs);
		json_object_array_add(disks, d);
	}
	json_object_object_add(c->ret, "disks", disks);
	return 0;
}

/* ---- changes ------------------------------------------------------------ */

static int cmd_latency(struct call *c)
{
	static const char *const known[] = { "on", "disk", NULL };
	unsigned int lo, hi;
	bool on;
	int r;

	if (args_known(c, known) || disk_range(c, false, &lo, &hi))
		return -1;
	r = arg_bool(c, "on", &on);
	if (r <= 0)
		return r < 0 ? -1 : fail(c, "'on' (true or false) is required");
	for (unsigned int i = lo; i < hi; i++)
		blk_dev_set_latency(c->vm->disk[i].blk, on);
	return 0;
}

static unsigned int pause_ms(const struct api_vm *vm)
{
	return vm->pause_ms ? vm->pause_ms : API_PAUSE_TIMEOUT_MS;
}

static int cmd_resize(struct call *c)
{
	static const char *const known[] = { "disk", "size", "shrink", NULL };
	struct api_disk *ad;
	uint64_t size;
	bool shrink = false;
	char msg[200];
	int d, r;

	if (args_known(c, known))
		return -1;
	d = arg_disk(c, true);
	if (d < 0)
		return -1;
	r = arg_u64(c, "size", &size);
	if (r <= 0)
		return r < 0 ? -1 : fail(c, "'size' (bytes) is required");
	if (arg_bool(c, "shrink", &shrink) < 0)
		return -1;
	ad = &c->vm->disk[d];
	if (blk_dev_resize(ad->blk, size, shrink, pause_ms(c->vm), msg,
			   sizeof(msg)))
		return fail(c, "%s: %s", ad->name, msg);
	if (ad->config_changed)
		ad->config_changed(ad->opaque);
	json_put_u64(c->ret, "size", blk_dev_capacity(ad->blk) << 9);
	return 0;
}

static int cmd_limit(struct call *c)
{
	static const char *const known[] = { "disk", "iops", "bw", "burst",
					     "off", NULL };
	struct blk_limit l = { 0 };
	bool off = false;
	int d, n = 0, r;

	if (args_known(c, known))
		return -1;
	d = arg_disk(c, true);
	if (d < 0 || arg_bool(c, "off", &off) < 0)
		return -1;
	if ((r = arg_pos(c, "iops", &l.iops)) < 0)
		return -1;
	n += r;
	if ((r = arg_pos(c, "bw", &l.bw)) < 0)
		return -1;
	n += r;
	if ((r = arg_pos(c, "burst", &l.burst_ms)) < 0)
		return -1;
	if (off && (n || r))
		return fail(c, "'off' takes no other limit");
	if (!off && !n)
		return fail(c, "give 'iops', 'bw' (bytes/s), or 'off'");
	if (l.iops > BLK_IOPS_MAX || l.burst_ms > BLK_BURST_MS_MAX)
		return fail(c, "iops at most %llu, burst at most %u ms",
			    (unsigned long long)BLK_IOPS_MAX, BLK_BURST_MS_MAX);
	blk_dev_set_limit(c->vm->disk[d].blk, &l);
	return 0;
}

static int cmd_pause(struct call *c, bool pause)
{
	static const char *const known[] = { "disk", NULL };
	unsigned int lo, hi;

	if (args_known(c, known) || disk_range(c, false, &lo, &hi))
		return -1;
	for (unsigned int i = lo; i < hi; i++) {
		struct blk_dev *b = c->vm->disk[i].blk;

		if (!pause)
			blk_dev_resume_io(b);
		else if (blk_dev_pause_io(b, pause_ms(c->vm)))
			return fail(c, "%s: requests still in flight after "
				    "%u ms (it stays paused; resume to undo)",
				    c->vm->disk[i].name, pause_ms(c->vm));
	}
	return 0;
}

/* ---- attach, detach -------------------------------------------------- */

/* The lowest vdX no disk has: the name the guest's virtio_blk gives a
 * new disk (it takes the lowest index free). */
static void free_name(const struct api_vm *vm, char *name, size_t len)
{
	for (unsigned int i = 0;; i++) {
		bool used = false;

		snprintf(name, len, "vd%c", 'a' + i);
		for (unsigned int d = 0; d < vm->ndisks && !used; d++)
			used = !strcmp(vm->disk[d].name, name);
		if (!used)
			return;
	}
}

static int cmd_attach(struct call *c)
{
	static const char *const known[] = { "spec", NULL };
	struct api_disk *ad;
	struct json_object *v;
	struct blk_opts o;
	char name[8], msg[200], *spec;

	if (args_known(c, known))
		return -1;
	if (!c->vm->attach)
		return fail(c, "this VM has no hot-plug slot (vmm run "
			    "--hotplug-slots N)");
	if (!json_object_object_get_ex(c->args, "spec", &v) ||
	    !json_object_is_type(v, json_type_string))
		return fail(c, "'spec' (a disk spec, as -d) is required");
	if (c->vm->ndisks >= API_MAX_DISKS)
		return fail(c, "at most %d disks", API_MAX_DISKS);
	/* Checked here too: a bad spec never reaches the machine. */
	spec = strdup(json_object_get_string(v));
	if (!spec)
		return fail(c, "out of memory");
	if (blk_opts_parse(spec, &o, msg, sizeof(msg))) {
		free(spec);
		return fail(c, "%s", msg);
	}
	free(spec);
	free_name(c->vm, name, sizeof(name));
	ad = &c->vm->disk[c->vm->ndisks];
	memset(ad, 0, sizeof(*ad));
	if (c->vm->attach(c->vm->hp_opaque, json_object_get_string(v), name, ad,
			  msg, sizeof(msg)))
		return fail(c, "%s", msg);
	snprintf(ad->name, sizeof(ad->name), "%s", name);
	ad->hotplug = true;
	c->vm->ndisks++;
	json_object_object_add(c->ret, "name", json_object_new_string(name));
	return 0;
}

static int cmd_detach(struct call *c)
{
	static const char *const known[] = { "disk", "force", "timeout_ms",
					     NULL };
	uint64_t timeout = API_DETACH_TIMEOUT_MS;
	bool force = false;
	char msg[200];
	int d;

	if (args_known(c, known))
		return -1;
	d = arg_disk(c, true);
	if (d < 0 || arg_bool(c, "force", &force) < 0 ||
	    arg_u64(c, "timeout_ms", &timeout) < 0)
		return -1;
	if (!timeout || timeout > 3600000)
		return fail(c, "'timeout_ms' is from 1 to 3600000");
	if (!c->vm->disk[d].hotplug)
		return fail(c, "%s was given at launch on bus 0, which has "
			    "no hot-plug: '-d SPEC,hotplug' puts a launch "
			    "disk in a slot, where detach can take it out",
			    c->vm->disk[d].name);
	if (c->vm->detach(c->vm->hp_opaque, c->vm->disk[d].name, force,
			  (unsigned int)timeout, msg, sizeof(msg)))
		return fail(c, "%s", msg);
	json_object_object_add(c->ret, "name",
			       json_object_new_string(c->vm->disk[d].name));
	memmove(&c->vm->disk[d], &c->vm->disk[d + 1],
		(c->vm->ndisks - (unsigned int)d - 1) * sizeof(c->vm->disk[0]));
	c->vm->ndisks--;
	return 0;
}

static int cmd_quit(struct call *c)
{
	static const char *const known[] = { NULL };

	if (args_known(c, known))
		return -1;
	if (c->vm->quit)
		c->vm->quit(c->vm->opaque);
	return 0;
}

/* ---- requests ------------------------------------------------------------ */

static char *answer_error(const char *cls, const char *desc)
{
	struct json_object *o = json_object_new_object();
	struct json_object *e = json_object_new_object();
	char *s;

	json_object_object_add(e, "class", json_object_new_string(cls));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(o, "error", e);
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

static int dispatch(struct call *c, const char *cmd)
{
	if (!strcmp(cmd, "info"))
		return cmd_info(c);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(c);
	if (!strcmp(cmd, "latency"))
		return cmd_latency(c);
	if (!strcmp(cmd, "resize"))
		return cmd_resize(c);
	if (!strcmp(cmd, "limit"))
		return cmd_limit(c);
	if (!strcmp(cmd, "pause"))
		return cmd_pause(c, true);
	if (!strcmp(cmd, "resume"))
		return cmd_pause(c, false);
	if (!strcmp(cmd, "quit"))
		return cmd_quit(c);
	if (!strcmp(cmd, "attach"))
		return cmd_attach(c);
	if (!strcmp(cmd, "detach"))
		return cmd_detach(c);
	return -2;
}

/* The line as one JSON object, all of it; NULL if it is not. */
static struct json_object *parse_line(const char *line, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *req;

	if (!tok)
		return NULL;
	req = json_tokener_parse_ex(tok, line, (int)len);
	if (req && (json_tokener_get_error(tok) != json_tokener_success ||
		    (size_t)json_tokener_get_parse_end(tok) != len ||
		    !json_object_is_type(req, json_type_object))) {
		json_object_put(req);
		req = NULL;
	}
	json_tokener_free(tok);
	return req;
}

bool api_spare_allowed(const char *line, size_t len)
{
	struct json_object *req = parse_line(line, len), *cmd;
	bool ok = false;

	if (req && json_object_object_get_ex(req, "execute", &cmd) &&
	    json_object_is_type(cmd, json_type_string))
		ok = !strcmp(json_object_get_string(cmd), "info") ||
		     !strcmp(json_object_get_string(cmd), "quit");
	json_object_put(req);
	return ok;
}

char *api_execute(struct api_vm *vm, const char *line, size_t len)
{
	struct json_object *req = parse_line(line, len), *cmd, *args = NULL;
	struct call c = { .vm = vm };
	char *s;
	int r;

	if (!req)
		return answer_error("ParseError", "expected one JSON object "
				    "per line");
	if (!json_object_object_get_ex(req, "execute", &cmd) ||
	    !json_object_is_type(cmd, json_type_string)) {
		json_object_put(req);
		return answer_error("GenericError",
				    "'execute' (a command name) is required");
	}
	json_object_object_foreach(req, k, v) {
		(void)v;
		if (strcmp(k, "execute") && strcmp(k, "arguments")) {
			snprintf(c.err, sizeof(c.err), "unknown member '%.64s'",
				 k);
			break;
		}
	}
	if (!c.err[0] && json_object_object_get_ex(req, "arguments", &args) &&
	    !json_object_is_type(args, json_type_object))
		snprintf(c.err, sizeof(c.err), "'arguments' must be an object");
	if (c.err[0]) {
		json_object_put(req);
		return answer_error("GenericError", c.err);
	}
	c.args = args ? json_object_get(args) : json_object_new_object();
	c.ret = json_object_new_object();
	r = dispatch(&c, json_object_get_string(cmd));
	if (r == -2) {
		snprintf(c.err, sizeof(c.err), "unknown command '%.64s'",
			 json_object_get_string(cmd));
		s = answer_error("CommandNotFound", c.err);
	} else if (r) {
		s = answer_error("GenericError", c.err);
	} else {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "return", json_object_get(c.ret));
		s = strdup(json_object_to_json_string_ext(o,
						JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	json_object_put(c.ret);
	json_object_put(c.args);
	json_object_put(req);
	return s;
}
