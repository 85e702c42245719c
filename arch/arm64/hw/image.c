/* arm64 Image header, placement in RAM and the copy. */
#include "arch/arm64/hw/image.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define OLD_TEXT_OFFSET 0x80000ull /* image_size 0: before Linux 3.17 */
#define FLAG_BE 1ull               /* bit 0: a big-endian kernel */
#define PE_MAGIC 0x00004550u        /* "PE\0\0" */
#define PE_SECTION 40
#define WINDOW (32ull << 30)        /* initrd window size, 1 GiB aligned */
#define PAGE 4096ull

static uint64_t le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = n; i--;)
		v = (v << 8) | p[i];
	return v;
}

static int bad(char *msg, size_t msglen, const char *why)
{
	snprintf(msg, msglen, "not an arm64 Image: %s", why);
	return -ENOEXEC;
}

/* An EFI-stub Image is also a PE file: every section's raw data must be
 * in the file, or the file was cut short. */
static int check_pe(const uint8_t *img, size_t size, char *msg, size_t msglen)
{
	uint64_t pe = le(img + 60, 4), nsec, opt, sec, end;

	if (img[0] != 'M' || img[1] != 'Z')
		return 0; /* no EFI stub: nothing more to check */
	if (pe > size || size - pe < 24 || le(img + pe, 4) != PE_MAGIC)
		return bad(msg, msglen, "its PE header is missing (truncated?)");
	nsec = le(img + pe + 6, 2);
	opt = le(img + pe + 20, 2);
	sec = pe + 24 + opt;
	if (sec > size || (size - sec) / PE_SECTION < nsec)
		return bad(msg, msglen, "truncated (PE section table)");
	for (uint64_t i = 0; i < nsec; i++) {
		const uint8_t *s = img + sec + i * PE_SECTION;

		end = le(s + 20, 4) + le(s + 16, 4);
		if (end > size) {
			snprintf(msg, msglen,
				 "arm64 Image truncated: a section ends at "
				 "byte %llu, the file has %zu",
				 (unsigned long long)end, size);
			return -ENOEXEC;
		}
	}
	return 0;
}

int arm64_image_parse(const uint8_t *img, size_t size, struct arm64_image *im,
		      char *msg, size_t msglen)
{
	memset(im, 0, sizeof(*im));
	if (size < ARM64_IMAGE_HDR)
		return bad(msg, msglen, "shorter than its 64-byte header");
	if (le(img + 56, 4) != ARM64_IMAGE_MAGIC) {
		if (size > 0x206 && !memcmp(img + 0x202, "HdrS", 4))
			return bad(msg, msglen, "an x86 bzImage");
		return bad(msg, msglen, "no \"ARM\\x64\" magic at offset 56");
	}
	im->text_offset = le(img + 8, 8);
	im->image_size = le(img + 16, 8);
	im->flags = le(img + 24, 8);
	im->file_size = size;
	if (!im->image_size) {
		im->text_offset = OLD_TEXT_OFFSET;
		im->image_size = size;
	}
	if (im->flags & FLAG_BE)
		return bad(msg, msglen, "a big-endian kernel");
	if (im->text_offset % PAGE || im->text_offset >= ARM64_ALIGN_2M)
		return bad(msg, msglen, "text_offset out of range");
	if (im->image_size < size)
		return bad(msg, msglen, "image_size smaller than the file");
	return check_pe(img, size, msg, msglen);
}

int arm64_boot_layout(const struct arm64_image *im, uint64_t ram_base,
		      uint64_t ram_size, uint64_t initrd_size,
		      struct arm64_boot *b, char *msg, size_t msglen)
{
	uint64_t top = ram_base + ram_size, window, end;

	memset(b, 0, sizeof(*b));
	b->kernel = ram_base + im->text_offset;
	/* image_size is the file's word: one near 2^64 must not wrap. */
	if (__builtin_add_overflow(b->kernel, im->image_size, &end) ||
	    __builtin_add_overflow(end, PAGE - 1, &end))
		goto small;
	b->kernel_end = end & ~(PAGE - 1);
	/* The initrd must share a 1 GiB-aligned 32 GiB window with the
	 * kernel; the tree goes with it. */
	window = (b->kernel & ~((1ull << 30) - 1)) + WINDOW;
	if (top > window)
		top = window;
	if (top < b->kernel_end + ARM64_FDT_MAX + initrd_size)
		goto small;
	b->fdt = (top - ARM64_FDT_MAX) & ~(ARM64_ALIGN_2M - 1);
	b->initrd_end = b->fdt;
	b->initrd = (b->fdt - initrd_size) & ~(PAGE - 1);
	if (b->initrd < b->kernel_end || b->fdt < b->kernel_end)
		goto small;
	if (!initrd_size)
		b->initrd = b->initrd_end;
	else
		b->initrd_end = b->initrd + initrd_size;
	return 0;
small:
	snprintf(msg, msglen, "not enough memory: --mem %llu MiB, the kernel%s "
		 "and device tree need at least %llu MiB",
		 (unsigned long long)(ram_size >> 20),
		 initrd_size ? ", initrd" : "",
		 (unsigned long long)((im->text_offset + im->image_size +
				       initrd_size + 2 * ARM64_FDT_MAX) >> 20) + 1);
	return -ENOMEM;
}

void arm64_boot_load(uint8_t *ram, uint64_t ram_base,
		     const struct arm64_boot *b, const uint8_t *img,
		     size_t size, const uint8_t *initrd, size_t initrd_size)
{
	memcpy(ram + (b->kernel - ram_base), img, size);
	if (initrd_size)
		memcpy(ram + (b->initrd - ram_base), initrd, initrd_size);
}
