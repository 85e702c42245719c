/* `vmm ctl PATH COMMAND [ARGS]`: the control socket's client (api/api.h
 * has the protocol).  Human-readable answers, or --json: each answer
 * line as the VMM sent it. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "blk/blk.h"
#include "host/clock.h"
#include "host/json.h"
#include "api/ctlfmt.h"
#include "vmm/ctl.h"

static const char usage_ctl[] =
	"Usage: vmm ctl [--json] PATH COMMAND [ARGS]\n"
	"--json: each answer as the VMM sent it, one JSON object a line.\n"
	"Watch and change a VM started with 'vmm run --api PATH'.\n"
	"\n"
	"Commands (DISK: vda, vdb, ...; left out: every disk):\n"
	"  info                       vCPUs, memory, disks, negotiated features\n"
	"  stats [DISK] [--reset] [--every INTERVAL]\n"
	"                             counters and latency breakdown per queue,\n"
	"                             since start or the last --reset; --every\n"
	"                             (e.g. 1s, 500ms): one line per disk and\n"
	"                             interval, rates over it, until interrupted\n"
	"  latency on|off [DISK]      keep the latency breakdown or not\n"
	"  resize DISK SIZE [--shrink]  new capacity (SIZE: MiB, or K/M/G\n"
	"                             suffix); the guest is told; smaller needs\n"
	"                             --shrink\n"
	"  limit DISK [iops=N] [bw=RATE] [burst=MS] | limit DISK off\n"
	"                             rate limit (RATE: bytes/s, or K/M/G\n"
	"                             suffix; burst default 10 ms)\n"
	"  pause [DISK]               stop taking requests; returns once those\n"
	"                             in flight are done (a file is then\n"
	"                             consistent for a copy)\n"
	"  resume [DISK]\n"
	"  attach SPEC                a disk (SPEC as 'vmm run -d') into a free\n"
	"                             hot-plug slot (vmm run --hotplug-slots);\n"
	"                             prints the name the guest gives it\n"
	"  detach DISK [--force] [--timeout MS]\n"
	"                             take a disk in a slot out (attached, or\n"
	"                             given at launch with 'vmm run -d\n"
	"                             SPEC,hotplug'; info marks them hotplug):\n"
	"                             the guest is asked (attention button) and\n"
	"                             waited for (default 30000 ms; its kernel\n"
	"                             waits 5 s); --force: at once, a surprise\n"
	"                             removal\n"
	"  quit                       end the VM as SIGTERM would\n"
	"\n"
	"Exit status: 0 done, 1 the VMM refused or is not there, 2 bad usage.\n";

/* One line on stderr; status 2. */
#define usage(...) \
	(fprintf(stderr, "vmm ctl: " __VA_ARGS__), fputc('\n', stderr))

static int connect_to(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "vmm ctl: %s: path too long\n", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "vmm ctl: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Send req, read one answer line.  The parsed answer, or NULL (said). */
static struct json_object *call(int fd, struct json_object *req,
				char **raw)
{
	const char *s = json_object_to_json_string_ext(req,
						       JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s), cap = 4096, n = 0;
	char *buf = malloc(cap), *nl = NULL;
	struct json_object *ans;

	if (!buf || send(fd, s, len, MSG_NOSIGNAL) != (ssize_t)len ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		fprintf(stderr, "vmm ctl: send: %s\n", strerror(errno));
		free(buf);
		return NULL;
	}
	while (!nl) {
		ssize_t r;

		if (n == cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				break;
			buf = b;
		}
		r = recv(fd, buf + n, cap - n, 0);
		if (r <= 0)
			break;
		nl = memchr(buf + n, '\n', (size_t)r);
		n += (size_t)r;
	}
	if (!nl) {
		fprintf(stderr, "vmm ctl: the VMM closed the connection\n");
		free(buf);
		return NULL;
	}
	*nl = '\0';
	ans = json_tokener_parse(buf);
	if (!ans)
		fprintf(stderr, "vmm ctl: not JSON: %s\n", buf);
	*raw = buf;
	return ans;
}

static void print_info(struct json_object *r)
{
	struct json_object *disks;

	printf("%llu vCPUs, %llu MiB of memory, %s\n",
	       (unsigned long long)json_get_u64(r, "cpus"),
	       (unsigned long long)(json_get_u64(r, "mem") >> 20),
	       json_get_str(r, "state"));
	if (!json_object_object_get_ex(r, "disks", &disks))
		return;
	for (size_t i = 0; i < json_object_array_length(disks); i++) {
		struct json_object *d = json_object_array_get_idx(disks, i);
		struct json_object *f, *l, *b;
		const char *path = json_get_str(d, "path");

		printf("%s  %s  %llu bytes  %llu queues (%llu active)%s%s%s%s\n",
		       json_get_str(d, "name"), path ? path : "ram",
		       (unsigned long long)json_get_u64(d, "size"),
		       (unsigned long long)json_get_u64(d, "queues"),
		       (unsigned long long)json_get_u64(d, "active_queues"),
		       json_object_object_get_ex(d, "ro", &b) &&
				       json_object_get_boolean(b) ? "  ro" : "",
		       json_object_object_get_ex(d, "paused", &b) &&
				       json_object_get_boolean(b) ? "  paused" : "",
		       json_object_object_get_ex(d, "latency", &b) &&
				       json_object_get_boolean(b) ? "  latency on" : "",
		       json_object_object_get_ex(d, "hotplug", &b) &&
				       json_object_get_boolean(b) ? "  hotplug" : "");
		if (json_object_object_get_ex(d, "limit", &l) && l)
			printf("    limit: iops %llu, bw %llu bytes/s, burst %llu ms\n",
			       (unsigned long long)json_get_u64(l, "iops"),
			       (unsigned long long)json_get_u64(l, "bw"),
			       (unsigned long long)json_get_u64(l, "burst"));
		if (json_object_object_get_ex(d, "features", &f)) {
			printf("    features:");
			for (size_t j = 0; j < json_object_array_length(f); j++)
				printf(" %s", json_object_get_string(
					json_object_array_get_idx(f, j)));
			printf("%s\n", json_object_array_length(f) ? "" :
			       " (none accepted yet)");
		}
	}
}

static void print_queue(const char *name, struct json_object *q)
{
	struct json_object *lat;

	printf("%s: %llu requests (%llu reads, %llu writes, %llu flushes, "
	       "%llu other), %llu bytes read, %llu written, %llu I/O errors, "
	       "%llu in flight, %llu kicks, %llu interrupts, %llu poll hits, "
	       "%llu throttle waits\n",
	       name, (unsigned long long)json_get_u64(q, "completed"),
	       (unsigned long long)json_get_u64(q, "reads"),
	       (unsigned long long)json_get_u64(q, "writes"),
	       (unsigned long long)json_get_u64(q, "flushes"),
	       (unsigned long long)(json_get_u64(q, "others") +
				    json_get_u64(q, "discards") +
				    json_get_u64(q, "write_zeroes")),
	       (unsigned long long)json_get_u64(q, "bytes_read"),
	       (unsigned long long)json_get_u64(q, "bytes_written"),
	       (unsigned long long)json_get_u64(q, "io_errors"),
	       (unsigned long long)json_get_u64(q, "inflight"),
	       (unsigned long long)json_get_u64(q, "kicks"),
	       (unsigned long long)json_get_u64(q, "interrupts"),
	       (unsigned long long)json_get_u64(q, "poll_hits"),
	       (unsigned long long)json_get_u64(q, "throttle_waits"));
	if (!json_object_object_get_ex(q, "latency", &lat) || !lat)
		return;
	for (unsigned int st = 0; st < LAT_STAGES; st++) {
		struct json_object *h;

		if (!json_object_object_get_ex(lat, lat_stage_name[st], &h))
			continue;
		printf("    %-19s n=%llu p50=%.1fus p99=%.1fus p99.9=%.1fus "
		       "max=%.1fus\n", lat_stage_name[st],
		       (unsigned long long)json_get_u64(h, "count"),
		       (double)json_get_u64(h, "p50") / 1e3,
		       (double)json_get_u64(h, "p99") / 1e3,
		       (double)json_get_u64(h, "p999") / 1e3,
		       (double)json_get_u64(h, "max") / 1e3);
	}
}

static void print_stats(struct json_object *r)
{
	struct json_object *disks;

	if (!json_object_object_get_ex(r, "disks", &disks))
		return;
	for (size_t i = 0; i < json_object_array_length(disks); i++) {
		struct json_object *d = json_object_array_get_idx(disks, i);
		struct json_object *qs;
		char name[32];

		if (!json_object_object_get_ex(d, "queues", &qs))
			continue;
		for (size_t q = 0; q < json_object_array_length(qs); q++) {
			snprintf(name, sizeof(name), "%s q%zu",
				 json_get_str(d, "name"), q);
			print_queue(name, json_object_array_get_idx(qs, q));
		}
	}
}

/* The answer: printed (or the raw line with --json); 0 or 1 (an error
 * answer, said on stderr). */
static int show(struct json_object *ans, const char *raw, const char *cmd,
		bool json)
{
	struct json_object *r, *e;

	if (json_object_object_get_ex(ans, "error", &e)) {
		fprintf(stderr, "vmm ctl: %s: %s\n", cmd, json_get_str(e, "desc"));
		if (json)
			puts(raw);
		return 1;
	}
	if (json) {
		puts(raw);
		return 0;
	}
	if (!json_object_object_get_ex(ans, "return", &r))
		return 1;
	if (!strcmp(cmd, "info"))
		print_info(r);
	else if (!strcmp(cmd, "stats"))
		print_stats(r);
	else if (!strcmp(cmd, "resize"))
		printf("%llu bytes\n", (unsigned long long)json_get_u64(r, "size"));
	else if (!strcmp(cmd, "attach") || !strcmp(cmd, "detach"))
		printf("%s\n", json_get_str(r, "name"));
	else
		puts("ok");
	return 0;
}

static int stats_every(int fd, struct json_object *req, uint64_t ns,
		       bool json)
{
	struct json_object *prev = NULL, *args = NULL;
	uint64_t t_prev = 0;

	json_object_object_get_ex(req, "arguments", &args);

	for (uint64_t next = mono_ns();; next += ns) {
		struct json_object *ans, *r;
		char *raw = NULL;
		uint64_t now;

		ans = call(fd, req, &raw);
		now = mono_ns();
		if (!ans || json_object_object_get_ex(ans, "error", &r)) {
			int st = ans ? show(ans, raw, "stats", json) : 1;

			json_object_put(ans);
			free(raw);
			json_object_put(prev);
			return st ? st : 1;
		}
		json_object_object_get_ex(ans, "return", &r);
		if (json)
			puts(raw);
		else if (prev)
			ctl_print_rates(stdout, prev, r, (double)(now - t_prev) / 1e9,
				    json_object_object_get_ex(args, "reset", NULL));
		fflush(stdout);
		free(raw);
		json_object_get(r);
		json_object_put(prev);
		json_object_put(ans);
		prev = r;
		t_prev = now;
		now = mono_ns();
		if (next + ns > now) {
			uint64_t w = next + ns - now;

			nanosleep(&(struct timespec){ .tv_sec = (time_t)(w / 1000000000),
						      .tv_nsec = (long)(w % 1000000000) },
				  NULL);
		}
	}
}

/* The request for COMMAND ARGS; NULL after saying why (status 2). */
static struct json_object *build(int argc, char **argv, uint64_t *every)
{
	const char *cmd = argv[0];
	struct json_object *req = json_object_new_object();
	struct json_object *a = json_object_new_object();
	int i = 1;

	json_object_object_add(req, "execute", json_object_new_string(cmd));
	json_object_object_add(req, "arguments", a);
#define DISK_ARG() \
	(i < argc && argv[i][0] != '-' && !strchr(argv[i], '=') ? \
	 (json_object_object_add(a, "disk", json_object_new_string(argv[i++])), 1) : 0)
	if (!strcmp(cmd, "info") || !strcmp(cmd, "quit")) {
		/* no arguments */
	} else if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume")) {
		DISK_ARG();
	} else if (!strcmp(cmd, "stats")) {
		DISK_ARG();
		for (; i < argc; i++) {
			if (!strcmp(argv[i], "--reset")) {
				json_object_object_add(a, "reset",
						       json_object_new_boolean(1));
			} else if (!strcmp(argv[i], "--every") && i + 1 < argc) {
				if (ctl_parse_interval(argv[++i], every)) {
					usage("bad interval '%s' (e.g. 1s, 500ms)",
					      argv[i]);
					goto bad;
				}
			} else {
				usage("stats: unexpected '%s'", argv[i]);
				goto bad;
			}
		}
	} else if (!strcmp(cmd, "latency")) {
		if (i >= argc || (strcmp(argv[i], "on") && strcmp(argv[i], "off"))) {
			usage("%s", "latency on|off [DISK]");
			goto bad;
		}
		json_object_object_add(a, "on",
				       json_object_new_boolean(!strcmp(argv[i++], "on")));
		DISK_ARG();
	} else if (!strcmp(cmd, "resize")) {
		uint64_t size;

		if (!DISK_ARG() || i >= argc ||
		    blk_parse_size(argv[i], &size)) {
			usage("%s", "resize DISK SIZE [--shrink]");
			goto bad;
		}
		i++;
		json_put_u64(a, "size", size);
		if (i < argc && !strcmp(argv[i], "--shrink")) {
			json_object_object_add(a, "shrink",
					       json_object_new_boolean(1));
			i++;
		}
	} else if (!strcmp(cmd, "limit")) {
		struct blk_limit l = { 0 };
		bool any = false;

		if (!DISK_ARG() || i >= argc) {
			usage("%s", "limit DISK [iops=N] [bw=RATE] [burst=MS] | "
			      "limit DISK off");
			goto bad;
		}
		if (!strcmp(argv[i], "off")) {
			json_object_object_add(a, "off", json_object_new_boolean(1));
			i++;
		}
		for (; i < argc && !json_object_object_get_ex(a, "off", NULL); i++) {
			char *eq = strchr(argv[i], '=');
			char name[8];

			if (!eq || (size_t)(eq - argv[i]) >= sizeof(name))
				break;
			memcpy(name, argv[i], (size_t)(eq - argv[i]));
			name[eq - argv[i]] = '\0';
			if (blk_limit_set(&l, name, eq + 1)) {
				usage("bad limit '%s'", argv[i]);
				goto bad;
			}
			any = true;
		}
		if (any) {
			if (l.iops)
				json_put_u64(a, "iops", l.iops);
			if (l.bw)
				json_put_u64(a, "bw", l.bw);
			if (l.burst_ms)
				json_put_u64(a, "burst", l.burst_ms);
		}
	} else if (!strcmp(cmd, "attach")) {
		if (i >= argc) {
			usage("%s", "attach SPEC");
			goto bad;
		}
		json_object_object_add(a, "spec",
				       json_object_new_string(argv[i++]));
	} else if (!strcmp(cmd, "detach")) {
		if (!DISK_ARG()) {
			usage("%s", "detach DISK [--force] [--timeout MS]");
			goto bad;
		}
		for (; i < argc; i++) {
			char *end;
			unsigned long ms;

			if (!strcmp(argv[i], "--force")) {
				json_object_object_add(a, "force",
						       json_object_new_boolean(1));
			} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
				ms = strtoul(argv[++i], &end, 10);
				if (*end || !ms || argv[i][0] == '-') {
					usage("bad timeout '%s' (ms)", argv[i]);
					goto bad;
				}
				json_put_u64(a, "timeout_ms", ms);
			} else {
				usage("detach: unexpected '%s'", argv[i]);
				goto bad;
			}
		}
	} else {
		usage("unknown command '%s'; see 'vmm ctl --help'", cmd);
		goto bad;
	}
#undef DISK_ARG
	if (i < argc) {
		usage("unexpected argument '%s'", argv[i]);
		goto bad;
	}
	return req;
bad:
	json_object_put(req);
	return NULL;
}

int ctl_main(int argc, char **argv)
{
	struct json_object *req, *ans;
	bool json = false;
	uint64_t every = 0;
	char *raw = NULL;
	int fd, st;

	argc--, argv++; /* "ctl" */
	if (argc && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
		fputs(usage_ctl, stdout);
		return 0;
	}
	/* --json anywhere: taken out of the arguments. */
	for (int i = 0, j = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			argv[j++] = argv[i];
		if (i == argc - 1)
			argc = j;
	}
	if (argc < 2) {
		usage("%s", "needs PATH and COMMAND; see 'vmm ctl --help'");
		return 2;
	}
	req = build(argc - 1, argv + 1, &every);
	if (!req)
		return 2;
	fd = connect_to(argv[0]);
	if (fd < 0) {
		json_object_put(req);
		return 1;
	}
	if (every) {
		st = stats_every(fd, req, every, json);
	} else {
		ans = call(fd, req, &raw);
		st = ans ? show(ans, raw, argv[1], json) : 1;
		json_object_put(ans);
		free(raw);
	}
	json_object_put(req);
	close(fd);
	return st;
}
