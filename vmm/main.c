/* vmm: command line, input checks, exit statuses.  The only place that
 * calls exit(). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/affinity.h"
#include "host/sandbox.h"
#include "vmm/cmdline.h"
#include "vmm/ctl.h"
#include "host/log.h"
#include "vmm/machine.h"
#include "vmm/probe.h"
#include "vmm/term.h"

#define VMM_VERSION "0.1.0"
#define MAX_IMAGE (1ull << 31) /* kernel or initrd: 2 GiB at most */

/* Every status the process can end with, for both commands: each
 * VMM_EXIT_* (vmm/machine.h) that run, probe or the command line returns,
 * and the signals run shuts down on.  tests/smoke/run.sh checks that
 * each one is listed. */
#define USAGE_EXIT_STATUS                                                    \
	"Exit status:\n"                                                     \
	"  0    run: the guest reset or powered off the machine (reboot=k),\n" \
	"       or Ctrl-A x; probe: KVM runs guests at hardware speed;\n"     \
	"       --help, --version\n"                                          \
	"  1    host-side failure (KVM, resources, threads, the sandbox's\n"  \
	"       set-up); probe: KVM cannot be used\n"                         \
	"  2    bad command line or input file (kernel, initrd, disk,\n"      \
	"       sizes): one line \"vmm: ...\" and no file changed\n"           \
	"  3    run: the guest panicked (pvpanic, or KVM's crash event)\n"    \
	"  4    run: triple fault\n"                                          \
	"  5    run: KVM internal error, failed entry or an exit the VMM\n"   \
	"       cannot handle\n"                                              \
	"  6    probe: KVM works but only by emulation (too slow for a\n"     \
	"       Linux guest: use the test host)\n"                            \
	"  7    run: the sandbox stopped a system call outside its\n"         \
	"       thread's list\n"                                              \
	"  130, 143  run: stopped by SIGINT, SIGTERM (shut down cleanly)\n"

static const char usage_main[] =
	"Usage: vmm COMMAND [OPTION]...\n"
	"A small KVM virtual machine monitor with fast virtio-blk disks.\n"
	"\n"
	"Commands:\n"
	"  run      boot a Linux kernel (see 'vmm run --help')\n"
	"  ctl      watch and change a running VM (see 'vmm ctl --help')\n"
	"  probe    report KVM's version, capabilities and speed\n"
	"\n"
	"Options:\n"
	"  -h, --help     show this help and exit\n"
	"  -V, --version  show the version and exit\n"
	"\n" USAGE_EXIT_STATUS;

static const char usage_run_head[] =
	"Usage: vmm run -k KERNEL [OPTION]...\n"
	"Boot a Linux kernel under KVM; its console is this terminal.\n"
	"\n";
static const char usage_run[] =
	"  -i, --initrd FILE     initial RAM disk\n"
	"  -p, --params WORDS    kernel parameters, after the defaults\n"
	"                        \"" VMM_DEFAULT_PARAMS "\"\n"
	"                        (as kvmtool's -p: a later panic= overrides);\n"
	"                        -p again appends more\n"
	"  -n, --nodefaults      leave the defaults out: the kernel command\n"
	"                        line is -p's words alone\n"
	"  -m, --mem SIZE        guest RAM (default 512M)\n"
	"  -c, --cpus N          vCPUs (default 1, at most 64)\n"
	"  -d, --disk SPEC       add a virtio-blk disk (vda, vdb, ... in order):\n"
	"      PATH[,ro][,direct][,queues=N][,serial=ID][,batch=on][,poll=US]\n"
	"          [,engine=uring|sync][,iops=N][,bw=RATE][,burst=MS][,hotplug]\n"
	"      ram:SIZE[,queues=N][,serial=ID][,batch=on][,poll=US][,iops=N]...\n"
	"                        queues: 1 to 16, default the vCPU count (16 at\n"
	"                        most); at most 16 disks;\n"
	"                        poll: most microseconds an idle iothread polls\n"
	"                        before it sleeps (default 32, 0 = never)\n"
	"                        engine: io_uring (the default; where the host\n"
	"                        refuses it, synchronous calls, said in one line)\n"
	"                        or synchronous calls in the iothreads\n"
	"                        iops, bw: a rate limit, requests and bytes per\n"
	"                        second (RATE: bytes, or a K/M/G suffix); burst:\n"
	"                        how far ahead of the rate, in ms (default 10);\n"
	"                        a request over it waits, never fails\n"
	"                        hotplug: in a hot-plug root port of its own\n"
	"                        (beside --hotplug-slots' empty ones, 8 in all),\n"
	"                        where 'vmm ctl detach' can take it out; such\n"
	"                        disks come after the others\n"
	"  -v, --verbose         more log messages (repeat for debug); at exit,\n"
	"                        each disk's counters and per-queue latency:\n"
	"                        pop to submit, submit to completion, completion\n"
	"                        to publish (p50, p99, p99.9, max)\n"
	"      --stats FILE      at exit, write the same as JSON to FILE\n"
	"                        (latency is measured only with -v or --stats)\n"
	"      --sandbox on|off  after set-up, each thread runs under a seccomp\n"
	"                        filter that allows only the system calls its\n"
	"                        kind needs (default on; off is for debugging)\n"
	"      --api PATH        a control socket at PATH (mode 0600, removed at\n"
	"                        exit): watch and change the running VM with\n"
	"                        'vmm ctl PATH COMMAND' (see 'vmm ctl --help')\n"
	"      --hotplug-slots N  N empty PCI Express root ports (0 to 8;\n"
	"                        default 4 with --api, else 0) where 'vmm ctl\n"
	"                        PATH attach SPEC' plugs a disk while the guest\n"
	"                        runs and 'detach' takes it out\n"
	"      --pin follow|on|off  where the VMM's threads run (default\n"
	"                        follow).  On a disk with a queue per vCPU or\n"
	"                        more (the default, up to 16 vCPUs), Linux puts\n"
	"                        vCPU q's requests on queue q and asks for its\n"
	"                        interrupt there; follow: the host places the\n"
	"                        vCPUs, and queue q's iothread moves to the CPU\n"
	"                        vCPU q (modulo the vCPU count) last ran on,\n"
	"                        looked at every 20 ms; on: vCPU i is bound to\n"
	"                        the i-th host CPU this process may use (see\n"
	"                        taskset) and queue q's iothread beside vCPU q;\n"
	"                        off: every thread runs where the host puts it\n"
	"  -h, --help            show this help and exit\n"
	"\n"
	"SIZE is a number of MiB, or a number with a K, M or G suffix.\n"
	"On a terminal, Ctrl-A x quits; Ctrl-A Ctrl-A sends Ctrl-A.  Started in\n"
	"the background ('&'), the VMM leaves the terminal alone: no raw mode,\n"
	"no console input.\n"
	"\n"
	USAGE_EXIT_STATUS;

static int usage_error(const char *msg)
{
	fprintf(stderr, "vmm: %s\n", msg);
	return VMM_EXIT_USAGE;
}

static const char *file_problem(int fd, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (!st->st_size)
		return "empty file";
	if ((uint64_t)st->st_size > MAX_IMAGE)
		return "too large";
	(void)fd;
	return NULL;
}

/* A whole file, mapped private (kernel and initrd are only copied into
 * guest RAM: no buffer to fault in and fill first, which costs as much as
 * the copy where page faults are dear, as in the test host).  Read into
 * memory where the filesystem cannot map it.  One line in msg on failure.
 * A file truncated while mapped would end the VMM with SIGBUS. */
static int read_file(const char *what, const char *path, uint8_t **buf,
		     size_t *size, char *msg, size_t msglen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *why = NULL;
	struct stat st;
	size_t done = 0;
	void *map;

	*buf = NULL;
	if (fd < 0 || fstat(fd, &st) < 0)
		why = strerror(errno);
	else
		why = file_problem(fd, &st);
	if (!why) {
		/* Populated at once: it is all copied into guest RAM next,
		 * and one call costs less than a fault per page. */
		map = mmap(NULL, (size_t)st.st_size, PROT_READ,
			   MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (map != MAP_FAILED) {
			close(fd);
			*buf = map;
			*size = (size_t)st.st_size;
			return 0;
		}
		map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			why = "out of memory";
		else
			*buf = map;
	}
	while (!why && done < (size_t)st.st_size) {
		ssize_t r = read(fd, *buf + done, (size_t)st.st_size - done);

		if (r <= 0)
			why = r < 0 ? strerror(errno) : "short read";
		else
			done += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (why) {
		snprintf(msg, msglen, "%s '%s': %s", what, path, why);
		if (*buf)
			munmap(*buf, (size_t)st.st_size);
		*buf = NULL;
		return -1;
	}
	*size = done;
	return 0;
}

static void free_file(uint8_t *buf, size_t size)
{
	if (buf)
		munmap(buf, size);
}

struct inputs {
	uint8_t *kernel, *initrd;
	size_t kernel_size, initrd_size;
	struct arch_kernel *k;
	struct blk_dev *disk[VMM_MAX_DISKS];
};

static void inputs_free(struct inputs *in)
{
	for (unsigned int i = 0; i < VMM_MAX_DISKS; i++)
		blk_dev_destroy(in->disk[i]);
	arch_kernel_free(in->k);
	free_file(in->kernel, in->kernel_size);
	free_file(in->initrd, in->initrd_size);
}

static int open_disks(const struct vmm_config *c, struct inputs *in,
		      char *msg, size_t msglen)
{
	char why[200], name[VDISK_NAME_LEN];

	for (unsigned int i = 0; i < c->ndisks; i++) {
		vdisk_name(name, i);
		if (blk_dev_create(&c->disk[i], &in->disk[i], why,
				   sizeof(why))) {
			snprintf(msg, msglen, "disk %s: %s", name, why);
			return -1;
		}
		if (*blk_dev_note(in->disk[i]))
			pr_warn("disk %s: %s", name, blk_dev_note(in->disk[i]));
	}
	return 0;
}

/* Everything that can be wrong with the input, before the vCPUs. */
static int load_inputs(const struct vmm_config *c, struct inputs *in,
		       char *msg, size_t msglen)
{
	if (read_file("kernel", c->kernel, &in->kernel, &in->kernel_size, msg,
		      msglen))
		return -1;
	if (arch_kernel_parse(in->kernel, in->kernel_size, &in->k, msg,
			      msglen)) {
		size_t n = strlen(msg);

		snprintf(msg + n, msglen - n, " ('%s')", c->kernel);
		return -1;
	}
	if (c->initrd && read_file("initrd", c->initrd, &in->initrd,
				   &in->initrd_size, msg, msglen))
		return -1;
	if (arch_check_inputs(c, in->k, in->initrd_size, msg, msglen))
		return -1;
	return open_disks(c, in, msg, msglen);
}

/* --pin on: vCPU i on the i-th CPU this process may use (from the first
 * again when there are more vCPUs than CPUs), and queue q of a disk
 * with a queue per vCPU (the default) or more beside vCPU q mod cpus,
 * the vCPU whose requests Linux's virtio-blk puts on that queue and
 * whose interrupt it asks for.  A kick then wakes an iothread on the
 * CPU of the vCPU that sent it, and the interrupt goes to a vCPU that
 * is not running (bench/JOURNAL.md: no more host interrupts between the
 * CPUs).  A disk with fewer queues than vCPUs has queues that serve
 * several vCPUs: its iothreads stay free to run where a CPU is idle
 * (measured: one queue for two vCPUs, bound beside vCPU 0, was not
 * faster). */
static int plan_pins(struct vmm_config *c)
{
	cpu_set_t *allowed = NULL;
	size_t size = 0;
	int count;

	if (c->pin != VMM_PIN_ON)
		return 0;
	if (affinity_allowed(sched_getaffinity, &allowed, &size) ||
	    affinity_spread(allowed, size, c->cpus, c->vcpu_cpu)) {
		pr_err("--pin on: cannot read the CPUs this process may use");
		if (allowed)
			CPU_FREE(allowed);
		return -1;
	}
	count = CPU_COUNT_S(size, allowed);
	CPU_FREE(allowed);
	if ((unsigned int)count < c->cpus)
		pr_warn("--pin on: %u vCPUs on %d CPUs: some share a CPU",
			c->cpus, count);
	for (unsigned int d = 0; d < c->ndisks; d++) {
		c->disk[d].pin = vmm_queue_vcpu(c, d, 0) >= 0;
		for (unsigned int q = 0; q < c->disk[d].queues; q++) {
			int v = vmm_queue_vcpu(c, d, q);

			c->disk[d].queue_cpu[q] = v >= 0 ? c->vcpu_cpu[v] : -1;
		}
	}
	return 0;
}

static void block_signals(void)
{
	sigset_t set;

	/* Threads inherit the mask; the main thread takes these through a
	 * signalfd and shuts the VM down cleanly. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A write past RLIMIT_FSIZE must fail with EFBIG (IOERR to the guest),
	 * not kill the VMM. */
	signal(SIGXFSZ, SIG_IGN);
}

static int cmd_run(int argc, char **argv)
{
	struct vmm_config cfg;
	struct inputs in;
	char msg[512];
	int verbose = 0, status;

	switch (cmdline_parse(argc, argv, &cfg, &verbose, msg, sizeof(msg))) {
	case CMDLINE_HELP:
		fputs(usage_run_head, stdout);
		fputs(arch_usage_kernel, stdout);
		fputs(usage_run, stdout);
		return 0;
	case CMDLINE_ERROR:
		return usage_error(msg);
	case CMDLINE_OK:
		break;
	}
	vlog_set_level(verbose > 1 ? VLOG_DEBUG :
		       verbose ? VLOG_INFO : VLOG_WARN);
	startup_begin();
	if (plan_pins(&cfg))
		return VMM_EXIT_ERROR;
	memset(&in, 0, sizeof(in));
	/* Before the disks: their iothreads start with them and take their
	 * filters at once, and take the signal mask. */
	block_signals();
	if (!cfg.no_sandbox && sandbox_init(term_restore, msg, sizeof(msg))) {
		pr_err("%s; --sandbox off runs without it", msg);
		return VMM_EXIT_ERROR;
	}
	/* The socket last: bad input creates nothing. */
	if (load_inputs(&cfg, &in, msg, sizeof(msg)) ||
	    (cfg.api_path &&
	     (cfg.api_fd = api_listen(cfg.api_path, msg, sizeof(msg))) < 0)) {
		inputs_free(&in);
		return usage_error(msg);
	}
	startup_mark("inputs read, disks open");
	status = machine_run(&cfg, in.disk, in.k, in.initrd, in.initrd_size);
	inputs_free(&in); /* disks the machine took are NULL here */
	return status;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	int status;

	if (!cmd) {
		fputs(usage_main, stderr);
		return VMM_EXIT_USAGE;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("vmm " VMM_VERSION "\n");
		return 0;
	}
	if (!strcmp(cmd, "run"))
		status = cmd_run(argc - 1, argv + 1);
	else if (!strcmp(cmd, "ctl"))
		status = ctl_main(argc - 1, argv + 1);
	else if (!strcmp(cmd, "probe") && argc == 2)
		status = probe_run();
	else
		status = usage_error(!strcmp(cmd, "probe") ?
			"probe takes no arguments" :
			"unknown command; see 'vmm --help'");
	term_restore();
	fflush(stdout);
	exit(status);
}
