/* arch/arm64/hw/image: the Image header (good, truncated, wrong magic,
 * an x86 bzImage, big-endian, misaligned text_offset, an EFI-stub Image
 * cut short), where kernel, initrd and device tree go, and the copy. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arm64/hw/image.h"

#define MIB (1ull << 20)
#define RAM_BASE 0x40000000ull

static void put(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* An Image of size bytes: header with text_offset, image_size, flags. */
static uint8_t *image(size_t size, uint64_t text, uint64_t isize,
		      uint64_t flags)
{
	uint8_t *p = calloc(1, size);

	for (size_t i = ARM64_IMAGE_HDR; i < size; i++)
		p[i] = (uint8_t)(i * 7);
	put(p + 8, text, 8);
	put(p + 16, isize, 8);
	put(p + 24, flags, 8);
	put(p + 56, ARM64_IMAGE_MAGIC, 4);
	return p;
}

static void expect_refused(const uint8_t *p, size_t size, const char *why)
{
	struct arm64_image im;
	char msg[160] = "";

	assert_int_equal(arm64_image_parse(p, size, &im, msg, sizeof(msg)),
			 -ENOEXEC);
	assert_non_null(strstr(msg, why));
}

static void test_good_image(void **state)
{
	uint8_t *p = image(8192, 0, 4 * MIB, 0xa);
	struct arm64_image im;
	char msg[160];

	(void)state;
	assert_int_equal(arm64_image_parse(p, 8192, &im, msg, sizeof(msg)), 0);
	assert_int_equal(im.text_offset, 0);
	assert_int_equal(im.image_size, 4 * MIB);
	assert_int_equal(im.flags, 0xa);
	free(p);
	/* Before Linux 3.17: image_size 0, text_offset 0x80000. */
	p = image(8192, 0x1234000, 0, 0);
	assert_int_equal(arm64_image_parse(p, 8192, &im, msg, sizeof(msg)), 0);
	assert_int_equal(im.text_offset, 0x80000);
	assert_int_equal(im.image_size, 8192);
	free(p);
}

static void test_bad_headers(void **state)
{
	uint8_t *p = image(8192, 0, 4 * MIB, 0);

	(void)state;
	expect_refused(p, 63, "shorter than its 64-byte header");
	p[56] ^= 1;
	expect_refused(p, 8192, "magic");
	memcpy(p + 0x202, "HdrS", 4); /* an x86 bzImage's setup header */
	expect_refused(p, 8192, "x86 bzImage");
	free(p);
	p = image(8192, 0, 4 * MIB, 1);
	expect_refused(p, 8192, "big-endian");
	free(p);
	p = image(8192, 0x80800, 4 * MIB, 0); /* not on a page */
	expect_refused(p, 8192, "text_offset");
	free(p);
	p = image(8192, 2 * MIB, 4 * MIB, 0); /* past its 2 MiB base */
	expect_refused(p, 8192, "text_offset");
	free(p);
	p = image(8192, 0, 4096, 0); /* the file is larger than the image */
	expect_refused(p, 8192, "image_size");
	free(p);
}

/* An EFI-stub Image ("MZ", PE header at the offset in bytes 60-63) with
 * one section whose raw data ends at `end`. */
static uint8_t *efi_image(size_t size, uint32_t end)
{
	uint8_t *p = image(size, 0, 4 * MIB, 0);

	p[0] = 'M';
	p[1] = 'Z';
	put(p + 60, 0x40, 4);
	put(p + 0x40, 0x00004550, 4);  /* "PE\0\0" */
	put(p + 0x44, 0xaa64, 2);      /* machine */
	put(p + 0x46, 1, 2);           /* one section */
	put(p + 0x54, 0x20, 2);        /* optional header: 32 bytes */
	/* the section table at 0x40 + 24 + 32 */
	put(p + 0x78 + 16, end - 0x1000, 4); /* SizeOfRawData */
	put(p + 0x78 + 20, 0x1000, 4);       /* PointerToRawData */
	return p;
}

static void test_truncated_efi_image(void **state)
{
	uint8_t *p = efi_image(8192, 8192);
	struct arm64_image im;
	char msg[160];

	(void)state;
	assert_int_equal(arm64_image_parse(p, 8192, &im, msg, sizeof(msg)), 0);
	expect_refused(p, 8191, "truncated");
	expect_refused(p, 0x60, "truncated"); /* the section table cut */
	expect_refused(p, 0x42, "PE header"); /* the PE header cut */
	free(p);
}

static void test_layout(void **state)
{
	struct arm64_image im = { .text_offset = 0x80000,
				  .image_size = 30 * MIB };
	struct arm64_boot b;
	char msg[200] = "";

	(void)state;
	assert_int_equal(arm64_boot_layout(&im, RAM_BASE, 512 * MIB, 5 * MIB,
					   &b, msg, sizeof(msg)), 0);
	assert_int_equal(b.kernel, RAM_BASE + 0x80000);
	assert_int_equal(b.kernel % 4096, 0);
	assert_int_equal(b.kernel_end, RAM_BASE + 0x80000 + 30 * MIB);
	/* the tree in the last 2 MiB, the initrd right below it */
	assert_int_equal(b.fdt, RAM_BASE + 510 * MIB);
	assert_int_equal(b.fdt % ARM64_ALIGN_2M, 0);
	assert_int_equal(b.initrd, RAM_BASE + 505 * MIB);
	assert_int_equal(b.initrd_end, RAM_BASE + 510 * MIB);
	/* no initrd: an empty range */
	assert_int_equal(arm64_boot_layout(&im, RAM_BASE, 512 * MIB, 0, &b,
					   msg, sizeof(msg)), 0);
	assert_int_equal(b.initrd, b.initrd_end);
	/* RAM past the 32 GiB window the initrd must share with the
	 * kernel: initrd and tree stay inside it */
	assert_int_equal(arm64_boot_layout(&im, RAM_BASE, 64ull << 30, MIB, &b,
					   msg, sizeof(msg)), 0);
	assert_int_equal(b.fdt, (1ull << 30) + (32ull << 30) - 2 * MIB);
	/* too small: the kernel, the initrd and the tree do not fit */
	assert_int_equal(arm64_boot_layout(&im, RAM_BASE, 32 * MIB, 0, &b,
					   msg, sizeof(msg)), -ENOMEM);
	assert_non_null(strstr(msg, "not enough memory"));
	/* 64 MiB: 30.5 MiB of kernel, 2 of tree, 31 of initrd fit; 32 not */
	assert_int_equal(arm64_boot_layout(&im, RAM_BASE, 64 * MIB, 32 * MIB,
					   &b, msg, sizeof(msg)), -ENOMEM);
	assert_int_equal(arm64_boot_layout(&im, RAM_BASE, 64 * MIB, 31 * MIB,
					   &b, msg, sizeof(msg)), 0);
	assert_true(b.initrd >= b.kernel_end);
}

static void test_load(void **state)
{
	const size_t ram_size = 64 * MIB;
	uint8_t *ram = calloc(1, ram_size), *img = image(8192, 0x80000,
							 4 * MIB, 0);
	uint8_t initrd[3000];
	struct arm64_image im;
	struct arm64_boot b;
	char msg[160];

	(void)state;
	memset(initrd, 0x5c, sizeof(initrd));
	assert_int_equal(arm64_image_parse(img, 8192, &im, msg, sizeof(msg)), 0);
	assert_int_equal(arm64_boot_layout(&im, RAM_BASE, ram_size,
					   sizeof(initrd), &b, msg,
					   sizeof(msg)), 0);
	arm64_boot_load(ram, RAM_BASE, &b, img, 8192, initrd, sizeof(initrd));
	assert_memory_equal(ram + 0x80000, img, 8192);
	assert_int_equal(ram[0x80000 - 1], 0);
	assert_memory_equal(ram + (b.initrd - RAM_BASE), initrd,
			    sizeof(initrd));
	assert_int_equal(ram[b.initrd - RAM_BASE + sizeof(initrd)], 0);
	free(img);
	free(ram);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_image),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_truncated_efi_image),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_load),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("arm64_image", tests, NULL, NULL);
}
