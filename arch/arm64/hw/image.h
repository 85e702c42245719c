/* The arm64 Linux boot protocol (Documentation/arm64/booting.rst) for a
 * raw Image: its 64-byte header, where the kernel, the initrd and the
 * device tree go in RAM, and their copy.  Entry: x0 = the device tree's
 * address, MMU off, at the Image's first byte.
 *
 * Pure: works on guest RAM as a host buffer, so it is unit-tested on
 * any host (tests/unit/arm64/test_image.c).
 */
#ifndef ARM64_HW_IMAGE_H
#define ARM64_HW_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define ARM64_IMAGE_MAGIC 0x644d5241u /* "ARM\x64", at offset 56 */
#define ARM64_IMAGE_HDR 64
#define ARM64_FDT_MAX (2ull << 20)     /* the protocol's limit */
#define ARM64_ALIGN_2M (2ull << 20)

struct arm64_image {
	uint64_t text_offset; /* from a 2 MiB-aligned base */
	uint64_t image_size;  /* bytes the kernel uses from its start */
	uint64_t flags;
	size_t file_size;
};

/* Where everything goes (guest-physical). */
struct arm64_boot {
	uint64_t kernel, kernel_end;
	uint64_t initrd, initrd_end; /* equal: no initrd */
	uint64_t fdt;                /* ARM64_FDT_MAX bytes, 2 MiB aligned */
};

/* Check an Image's header (and, for an EFI-stub Image, that its PE
 * sections are all in the file).  0 or -ENOEXEC with one line in msg. */
int arm64_image_parse(const uint8_t *img, size_t size, struct arm64_image *im,
		      char *msg, size_t msglen);
/* Place the kernel at ram_base + text_offset (ram_base 2 MiB aligned),
 * the device tree in the last 2 MiB of RAM the initrd may use (the
 * kernel's 1 GiB-aligned 32 GiB window), the initrd just below it.
 * 0 or -ENOMEM with one line in msg when RAM is too small. */
int arm64_boot_layout(const struct arm64_image *im, uint64_t ram_base,
		      uint64_t ram_size, uint64_t initrd_size,
		      struct arm64_boot *b, char *msg, size_t msglen);
/* Copy kernel and initrd into ram (the host mapping of guest RAM from
 * ram_base) where b says. */
void arm64_boot_load(uint8_t *ram, uint64_t ram_base,
		     const struct arm64_boot *b, const uint8_t *img,
		     size_t size, const uint8_t *initrd, size_t initrd_size);

#endif
