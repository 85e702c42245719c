/* The x86 kernel: a bzImage or an ELF vmlinux (arch/x86/hw/boot.h), and
 * what the command line asks of it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/hw/boot.h"
#include "arch/x86/vmm/kvm_x86.h"
#include "vmm/arch.h"
#include "vmm/machine.h"

struct arch_kernel {
	struct boot_kernel k;
};

const char arch_kernel_format[] = "bzImage";
const char arch_usage_kernel[] =
	"  -k, --kernel BZIMAGE  kernel: a bzImage (64-bit boot protocol, 2.12 or\n"
	"                        later) or an uncompressed ELF vmlinux (boots\n"
	"                        faster: no decompression in the guest)\n";

int arch_kernel_parse(const uint8_t *img, size_t size, struct arch_kernel **k,
		      char *msg, size_t msglen)
{
	*k = calloc(1, sizeof(**k));
	if (!*k) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	if (boot_parse(img, size, &(*k)->k, msg, msglen)) {
		free(*k);
		*k = NULL;
		return -ENOEXEC;
	}
	return 0;
}

void arch_kernel_free(struct arch_kernel *k)
{
	free(k);
}

const struct boot_kernel *x86_boot_kernel(const struct arch_kernel *k)
{
	return &k->k;
}

static int check_mem(const struct vmm_config *c, const struct boot_kernel *k,
		     size_t initrd_size, char *msg, size_t msglen)
{
	uint64_t low, high, host = (uint64_t)sysconf(_SC_PHYS_PAGES) *
				   (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t need = boot_kernel_needs(k) + initrd_size;

	boot_split(c->mem, &low, &high);
	if (host && c->mem > host) {
		snprintf(msg, msglen, "--mem %llu MiB: more than the host's "
			 "%llu MiB", (unsigned long long)(c->mem >> 20),
			 (unsigned long long)(host >> 20));
		return -1;
	}
	if (low < need || (initrd_size &&
			   !boot_initrd_addr(k, low, initrd_size))) {
		snprintf(msg, msglen, "not enough memory: --mem %llu MiB, the "
			 "kernel%s need%s at least %llu MiB",
			 (unsigned long long)(c->mem >> 20),
			 initrd_size ? " and initrd" : "",
			 initrd_size ? "" : "s",
			 (unsigned long long)((need >> 20) + 2));
		return -1;
	}
	return 0;
}

static int check_params(const struct vmm_config *c, const struct boot_kernel *k,
			char *msg, size_t msglen)
{
	size_t max = k->cmdline_size ? k->cmdline_size : 255;

	if (max > BOOT_CMDLINE_MAX - 1)
		max = BOOT_CMDLINE_MAX - 1;
	if (strlen(c->params) <= max)
		return 0;
	snprintf(msg, msglen, "--params: command line too long (%zu bytes, "
		 "the kernel takes %zu)", strlen(c->params), max);
	return -1;
}

int arch_check_inputs(const struct vmm_config *c, const struct arch_kernel *k,
		      size_t initrd_size, char *msg, size_t msglen)
{
	if (check_params(c, &k->k, msg, msglen) ||
	    check_mem(c, &k->k, initrd_size, msg, msglen))
		return -1;
	return 0;
}
