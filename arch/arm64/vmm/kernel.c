/* The arm64 kernel: a raw Image (arch/arm64/hw/image.h), and what the
 * command line asks of it and of the machine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arm64/hw/fdt.h"
#include "arch/arm64/hw/image.h"
#include "arch/arm64/hw/layout.h"
#include "arch/arm64/vmm/arm64.h"
#include "vmm/arch.h"
#include "vmm/machine.h"

#define CMDLINE_MAX 2048 /* arm64's COMMAND_LINE_SIZE */
/* KVM's guest physical address space without KVM_CAP_ARM_VM_IPA_SIZE
 * asked for: 40 bits. */
#define IPA_DEFAULT_BITS 40

const char arch_kernel_format[] = "Image";
const char arch_usage_kernel[] =
	"  -k, --kernel IMAGE    kernel: an arm64 Image (raw, uncompressed: the\n"
	"                        arm64 boot protocol; Debian's\n"
	"                        /boot/vmlinuz-*-arm64 is one)\n";

int arch_kernel_parse(const uint8_t *img, size_t size, struct arch_kernel **k,
		      char *msg, size_t msglen)
{
	*k = calloc(1, sizeof(**k));
	if (!*k) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	if (arm64_image_parse(img, size, &(*k)->im, msg, msglen)) {
		free(*k);
		*k = NULL;
		return -ENOEXEC;
	}
	(*k)->img = img;
	return 0;
}

void arch_kernel_free(struct arch_kernel *k)
{
	free(k);
}

int arch_check_inputs(const struct vmm_config *c, const struct arch_kernel *k,
		      size_t initrd_size, char *msg, size_t msglen)
{
	uint64_t host = (uint64_t)sysconf(_SC_PHYS_PAGES) *
			(uint64_t)sysconf(_SC_PAGESIZE);
	struct arm64_boot b;

	if (strlen(c->params) >= CMDLINE_MAX) {
		snprintf(msg, msglen, "--params: command line too long (%zu "
			 "bytes, the kernel takes %d)", strlen(c->params),
			 CMDLINE_MAX - 1);
		return -1;
	}
	if (c->cpus > ARM64_MAX_CPUS) {
		snprintf(msg, msglen, "--cpus %u: the GICv3 model takes at "
			 "most %u", c->cpus, ARM64_MAX_CPUS);
		return -1;
	}
	if (host && c->mem > host) {
		snprintf(msg, msglen, "--mem %llu MiB: more than the host's "
			 "%llu MiB", (unsigned long long)(c->mem >> 20),
			 (unsigned long long)(host >> 20));
		return -1;
	}
	if (ARM64_RAM_BASE + c->mem > 1ull << IPA_DEFAULT_BITS) {
		snprintf(msg, msglen, "--mem %llu MiB: RAM would end past the "
			 "guest's %d-bit physical address space",
			 (unsigned long long)(c->mem >> 20), IPA_DEFAULT_BITS);
		return -1;
	}
	return arm64_boot_layout(&k->im, ARM64_RAM_BASE, c->mem, initrd_size,
				 &b, msg, msglen) ? -1 : 0;
}
