/* cpuid-dump [msr]: the CPUID leaves every CPU of the guest sees, or
 * (with "msr") a few of its MSRs, one line each, for comparing what two
 * VMMs give the same guest (bench/vmbench cpuid; issue 10).  Built static
 * into the guest's initrd.
 *
 *   cpu N leaf 0xLLLLLLLL sub S: EAX EBX ECX EDX
 *   cpu N msr 0xMMMMMMMM: VALUE        (or "unreadable"; needs msr.ko)
 *
 * Each MSR line is on the console before the next MSR is read (tcdrain):
 * a guest that dies on a read shows which one.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* MSRs whose value the VMM decides or the guest sets by what it was
 * offered: APIC base, PAT, MISC_ENABLE, EFER, the syscall entry MSRs,
 * TSC_AUX, the KVM paravirtual MSRs. */
static const uint32_t msrs[] = {
	0x1b, 0x277, 0x1a0, 0xc0000080, 0xc0000081, 0xc0000082, 0xc0000084,
	0xc0000103, 0x4b564d00, 0x4b564d01, 0x4b564d02, 0x4b564d03,
	0x4b564d04, 0x4b564d05, 0x4b564d06,
};

static void leaf(int cpu, uint32_t l, uint32_t s)
{
	unsigned int a, b, c, d;

	__cpuid_count(l, s, a, b, c, d);
	/* Subleaves past the first that say nothing are left out. */
	if (s && !a && !b && !c && !d)
		return;
	printf("cpu %d leaf 0x%08x sub %u: %08x %08x %08x %08x\n", cpu, l, s,
	       a, b, c, d);
}

/* Leaves with subleaves, and how many to look at. */
static unsigned int subleaves(uint32_t l)
{
	switch (l) {
	case 0x4: case 0xb: case 0xf: case 0x10: case 0x12: case 0x14:
	case 0x17: case 0x18: case 0x1d: case 0x1e: case 0x1f:
	case 0x8000001d: case 0x80000020:
		return 8;
	case 0x7:
		return 4;
	case 0xd:
		return 64;
	default:
		return 1;
	}
}

static void range(int cpu, uint32_t base)
{
	unsigned int max, b, c, d;

	__cpuid(base, max, b, c, d);
	if (base == 0x40000000 && max < base)
		max = base + 1; /* hypervisors that leave EAX 0 */
	if (max - base > 0xff)
		max = base + 0xff; /* not a range: garbage */
	for (uint32_t l = base; l <= max; l++)
		for (uint32_t s = 0; s < subleaves(l); s++)
			leaf(cpu, l, s);
}

static void dump_msrs(int cpu)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	fd = open(path, O_RDONLY);
	for (unsigned int i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
		uint64_t v;

		if (fd >= 0 && pread(fd, &v, 8, msrs[i]) == 8)
			printf("cpu %d msr 0x%08x: %016" PRIx64 "\n", cpu,
			       msrs[i], v);
		else
			printf("cpu %d msr 0x%08x: unreadable\n", cpu, msrs[i]);
		fflush(stdout);
		tcdrain(1);
	}
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int msr = argc > 1 && !strcmp(argv[1], "msr");

	for (int cpu = 0; cpu < n; cpu++) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			printf("cpu %d: cannot run there\n", cpu);
			continue;
		}
		if (msr) {
			dump_msrs(cpu);
			continue;
		}
		range(cpu, 0);
		range(cpu, 0x40000000);
		range(cpu, 0x80000000);
	}
	return 0;
}
