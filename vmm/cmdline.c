/* `vmm run` option parsing. */
#include "vmm/cmdline.h"

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/arch.h"

static const struct option run_opts[] = {
	{ "kernel", required_argument, NULL, 'k' },
	{ "initrd", required_argument, NULL, 'i' },
	{ "params", required_argument, NULL, 'p' },
	{ "nodefaults", no_argument, NULL, 'n' },
	{ "mem", required_argument, NULL, 'm' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "disk", required_argument, NULL, 'd' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "stats", required_argument, NULL, 'S' },
	{ "sandbox", required_argument, NULL, 'B' },
	{ "pin", required_argument, NULL, 'P' },
	{ "api", required_argument, NULL, 'A' },
	{ "hotplug-slots", required_argument, NULL, 'H' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A decimal number from min to max, nothing else. */
static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned int *n)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v < min || v > max)
		return -1;
	*n = (unsigned int)v;
	return 0;
}

static int add_disk(struct vmm_config *c, char *spec, char *msg,
		    size_t msglen)
{
	char why[160];

	if (c->ndisks >= VMM_MAX_DISKS) {
		snprintf(msg, msglen, "too many disks: at most %d",
			 VMM_MAX_DISKS);
		return -1;
	}
	if (blk_opts_parse(spec, &c->disk[c->ndisks], why, sizeof(why))) {
		snprintf(msg, msglen, "--disk: %s", why);
		return -1;
	}
	c->ndisks++;
	return 0;
}

/* Launch disks in hot-plug slots: after the others, since the guest
 * names the disks on bus 0 first (each found at boot) and those in
 * slots as its pciehp enables them; and room for their ports. */
static int check_hotplug_disks(const struct vmm_config *c, char *msg,
			       size_t msglen)
{
	unsigned int launch;

	for (unsigned int i = 1; i < c->ndisks; i++)
		if (c->disk[i - 1].hotplug && !c->disk[i].hotplug) {
			snprintf(msg, msglen, "--disk: a disk with 'hotplug' "
				 "comes after every disk without it (vd%c "
				 "has it, vd%c not)", 'a' + i - 1, 'a' + i);
			return -1;
		}
	if (cmdline_hotplug_ports(c, &launch) >= 0)
		return 0;
	if (c->hotplug_slots < 0)
		snprintf(msg, msglen, "--disk: %u disks with 'hotplug': at "
			 "most %d", launch, HOTPLUG_MAX_SLOTS);
	else
		snprintf(msg, msglen, "--hotplug-slots: %d empty slots and %u "
			 "disks with 'hotplug' need more than %d root ports",
			 c->hotplug_slots, launch, HOTPLUG_MAX_SLOTS);
	return -1;
}

/* --stats FILE is written at exit: refuse now what could not be. */
static int check_stats_path(const char *path, char *msg, size_t msglen)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!*path || (slash && !slash[1])) {
		snprintf(msg, msglen, "--stats: '%s' is not a file name", path);
		return -1;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(msg, msglen, "--stats: '%s' is a directory", path);
		return -1;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + 1), path);
	if (access(dir, W_OK | X_OK)) {
		snprintf(msg, msglen, "--stats: cannot write in '%s': %s", dir,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* The kernel command line: the defaults (none with --nodefaults), then
 * each -p in the order given, one space between, as kvmtool builds its
 * own.  Kept here: vmm_config points into it. */
static char cmdline_buf[VMM_CMDLINE_MAX];

static int cmdline_join(struct vmm_config *c, const char *const *params,
			unsigned int nparams, bool nodefaults, char *msg,
			size_t msglen)
{
	size_t n = 0, len;

	cmdline_buf[0] = 0;
	if (!nodefaults)
		n = (size_t)snprintf(cmdline_buf, sizeof(cmdline_buf), "%s",
				     VMM_DEFAULT_PARAMS);
	for (unsigned int i = 0; i < nparams; i++) {
		len = strlen(params[i]);
		if (!len)
			continue;
		if (n + !!n + len >= sizeof(cmdline_buf)) {
			snprintf(msg, msglen, "--params: command line too long "
				 "(over %d bytes)", VMM_CMDLINE_MAX - 1);
			return -1;
		}
		if (n)
			cmdline_buf[n++] = ' ';
		memcpy(cmdline_buf + n, params[i], len + 1);
		n += len;
	}
	c->params = cmdline_buf;
	return 0;
}

/* optarg of option name, "on" or "off", into *on. */
static int parse_on_off(const char *name, bool *on, char *msg, size_t msglen)
{
	if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
		snprintf(msg, msglen, "%s: '%s' is not on or off", name, optarg);
		return -1;
	}
	*on = !strcmp(optarg, "on");
	return 0;
}

static int parse_pin(struct vmm_config *c, char *msg, size_t msglen)
{
	static const char *const words[] = {
		[VMM_PIN_OFF] = "off", [VMM_PIN_ON] = "on",
		[VMM_PIN_FOLLOW] = "follow",
	};

	for (unsigned int i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(optarg, words[i])) {
			c->pin = (enum vmm_pin)i;
			return 0;
		}
	snprintf(msg, msglen, "--pin: '%s' is not on, off or follow", optarg);
	return -1;
}

static int run_opt(int o, struct vmm_config *c, int *verbose, char *msg,
		   size_t msglen)
{
	unsigned int n;
	bool on;

	switch (o) {
	case 'k': c->kernel = optarg; return 0;
	case 'i': c->initrd = optarg; return 0;
	case 'v': (*verbose)++; return 0;
	case 'm':
		if (!blk_parse_size(optarg, &c->mem))
			return 0;
		snprintf(msg, msglen, "--mem: bad size '%s'", optarg);
		return -1;
	case 'c':
		if (!parse_uint(optarg, 1, VMM_MAX_CPUS, &c->cpus))
			return 0;
		snprintf(msg, msglen, "--cpus: '%s' is not a number of vCPUs "
			 "from 1 to %d", optarg, VMM_MAX_CPUS);
		return -1;
	case 'd':
		return add_disk(c, optarg, msg, msglen);
	case 'S':
		c->stats_path = optarg;
		return check_stats_path(optarg, msg, msglen);
	case 'B':
		if (parse_on_off("--sandbox", &on, msg, msglen))
			return -1;
		c->no_sandbox = !on;
		return 0;
	case 'P':
		return parse_pin(c, msg, msglen);
	case 'H':
		if (!parse_uint(optarg, 0, HOTPLUG_MAX_SLOTS, &n)) {
			c->hotplug_slots = (int)n;
			return 0;
		}
		snprintf(msg, msglen, "--hotplug-slots: '%s' is not a number "
			 "from 0 to %d", optarg, HOTPLUG_MAX_SLOTS);
		return -1;
	case 'A':
		if (!*optarg) {
			snprintf(msg, msglen, "--api: empty path");
			return -1;
		}
		c->api_path = optarg;
		return 0;
	default:
		return -1;
	}
}

enum cmdline_result cmdline_parse(int argc, char **argv, struct vmm_config *c,
				  int *verbose, char *msg, size_t msglen)
{
	const char *params[CMDLINE_MAX_PARAMS];
	unsigned int nparams = 0;
	bool nodefaults = false;
	int o;

	memset(c, 0, sizeof(*c));
	c->mem = VMM_DEFAULT_MEM;
	c->pin = VMM_PIN_FOLLOW;
	c->cpus = 1;
	c->api_fd = -1;
	c->hotplug_slots = -1;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":k:i:p:nm:c:d:vh", run_opts,
				NULL)) != -1) {
		if (o == 'h')
			return CMDLINE_HELP;
		if (o == 'n') {
			nodefaults = true;
			continue;
		}
		if (o == 'p') {
			if (nparams == CMDLINE_MAX_PARAMS) {
				snprintf(msg, msglen, "--params: at most %d",
					 CMDLINE_MAX_PARAMS);
				return CMDLINE_ERROR;
			}
			params[nparams++] = optarg;
			continue;
		}
		if (o == ':' || o == '?') {
			snprintf(msg, msglen, o == ':' ?
				 "option '%s' needs an argument" :
				 "unknown option '%s'; see 'vmm run --help'",
				 argv[optind - 1]);
			return CMDLINE_ERROR;
		}
		if (run_opt(o, c, verbose, msg, msglen))
			return CMDLINE_ERROR;
	}
	if (optind < argc) {
		snprintf(msg, msglen, "unexpected argument '%s'", argv[optind]);
		return CMDLINE_ERROR;
	}
	if (!c->kernel) {
		snprintf(msg, msglen, "missing --kernel %s", arch_kernel_format);
		return CMDLINE_ERROR;
	}
	if (cmdline_join(c, params, nparams, nodefaults, msg, msglen) ||
	    check_hotplug_disks(c, msg, msglen))
		return CMDLINE_ERROR;
	for (unsigned int i = 0; i < c->ndisks; i++)
		cmdline_disk_defaults(&c->disk[i], c->cpus,
				      *verbose || c->stats_path);
	return CMDLINE_OK;
}

int cmdline_hotplug_ports(const struct vmm_config *c, unsigned int *launch)
{
	unsigned int n = 0, empty;

	for (unsigned int i = 0; i < c->ndisks; i++)
		n += c->disk[i].hotplug;
	*launch = n;
	if (c->hotplug_slots >= 0)
		empty = (unsigned int)c->hotplug_slots;
	else if (!c->api_path || n >= HOTPLUG_MAX_SLOTS)
		empty = 0;
	else
		empty = HOTPLUG_MAX_SLOTS - n < HOTPLUG_DEFAULT_SLOTS ?
			HOTPLUG_MAX_SLOTS - n : HOTPLUG_DEFAULT_SLOTS;
	return n + empty > HOTPLUG_MAX_SLOTS ? -1 : (int)(n + empty);
}

void cmdline_disk_defaults(struct blk_opts *o, unsigned int cpus, bool latency)
{
	if (!o->queues)
		o->queues = cpus < BLK_MAX_QUEUES ? cpus : BLK_MAX_QUEUES;
	o->latency = latency;
}
