/* Fuzz the kernel loaders: the x86 bzImage and ELF vmlinux parser and
 * loader (arch/x86/hw/boot.c) and the arm64 Image header, layout and
 * copy (arch/arm64/hw/image.c).  A file either is refused with one line
 * in msg, or everything the loader then writes lands inside the RAM it
 * was given (ASan: RAM is one exact-size allocation, the image too).
 *
 * Input: a selector byte (bit 0: arm64, else x86; bits 1-7: how much
 * RAM, an initrd's size, a command line's length), then the file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/hw/image.h"
#include "arch/x86/hw/boot.h"
#include "tests/fuzz/fuzz.h"

/* x86: low RAM, enough for a small kernel at 1 MiB, tables below. */
#define FZ_LOW (8u << 20)
/* arm64: RAM from 1 GiB on, as the machine's (layout.h). */
#define FZ_A64_BASE (1ull << 30)
#define FZ_A64_RAM (8u << 20)

static uint8_t *fz_ram(size_t size)
{
	static uint8_t *ram;

	if (!ram) {
		ram = malloc(size);
		if (!ram)
			abort();
	}
	return ram;
}

static void fz_x86(const uint8_t *img, size_t size, uint8_t sel)
{
	static const uint8_t initrd[4096];
	static char cmdline[BOOT_CMDLINE_MAX + 16];
	struct boot_kernel k;
	struct boot_regs regs;
	char msg[256] = "";
	uint64_t low = FZ_LOW >> (sel >> 6); /* 8, 4, 2 or 1 MiB */
	size_t rd = (sel >> 1 & 3) * 1024u;
	size_t cl = (sel >> 3 & 7) ? 1u << (4 + 2 * (sel >> 3 & 7)) : 0;
	int r;

	memset(&k, 0, sizeof(k));
	r = boot_parse(img, size, &k, msg, sizeof(msg));
	if (r) {
		CHECK(r == -ENOEXEC && msg[0]);
		return;
	}
	if (cl > sizeof(cmdline) - 1)
		cl = sizeof(cmdline) - 1;
	memset(cmdline, 'c', cl);
	cmdline[cl] = 0;
	(void)boot_kernel_needs(&k);
	r = boot_load(fz_ram(FZ_LOW), low, 0, &k, initrd, rd, cmdline, &regs,
		      msg, sizeof(msg));
	if (r) {
		CHECK(msg[0]);
		return;
	}
	CHECK(regs.rsi == BOOT_ZERO_PAGE && regs.cr3 == BOOT_PML4);
}

static void fz_arm64(const uint8_t *img, size_t size, uint8_t sel)
{
	static const uint8_t initrd[4096];
	struct arm64_image im;
	struct arm64_boot b;
	char msg[256] = "";
	uint64_t ram = (uint64_t)FZ_A64_RAM >> (sel >> 6);
	size_t rd = (sel >> 1 & 3) * 1024u;
	int r;

	r = arm64_image_parse(img, size, &im, msg, sizeof(msg));
	if (r) {
		CHECK(r == -ENOEXEC && msg[0]);
		return;
	}
	r = arm64_boot_layout(&im, FZ_A64_BASE, ram, rd, &b, msg, sizeof(msg));
	if (r) {
		CHECK(r == -ENOMEM && msg[0]);
		return;
	}
	/* Everything inside RAM, nothing overlapping. */
	CHECK(b.kernel >= FZ_A64_BASE && b.kernel_end >= b.kernel + size);
	CHECK(b.kernel_end <= b.initrd && b.initrd <= b.initrd_end);
	CHECK(b.initrd_end <= b.fdt);
	CHECK(b.fdt + ARM64_FDT_MAX <= FZ_A64_BASE + ram);
	arm64_boot_load(fz_ram(FZ_LOW), FZ_A64_BASE, &b, img, size, initrd,
			rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *img;

	if (size < 1)
		return 0;
	/* An exact-size copy: ASan sees a read past the file's end. */
	img = malloc(size - 1 ? size - 1 : 1);
	if (!img)
		abort();
	memcpy(img, data + 1, size - 1);
	if (data[0] & 1)
		fz_arm64(img, size - 1, data[0]);
	else
		fz_x86(img, size - 1, data[0]);
	free(img);
	return 0;
}
