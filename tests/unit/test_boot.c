/* vmm/boot.c (pure, compiled in here): bzImage header checks on
 * synthetic headers, the e820 layout, initrd placement, boot_params,
 * the command line limit and the identity page tables. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <elf.h>

#include "arch/x86/hw/boot.h"


#define IMG_SIZE 0x3000
#define MIB (1ull << 20)

struct ctx {
	uint8_t img[IMG_SIZE];
	char msg[256];
	struct boot_kernel k;
};

/* A minimal valid image: setup_sects 1, protocol 2.15. */
static void make_image(uint8_t *img)
{
	struct setup_header *h = (void *)(img + HDR_OFF);

	memset(img, 0, IMG_SIZE);
	img[0x200] = 0xeb;
	img[0x201] = 0x66;
	h->setup_sects = 1;
	h->boot_flag = BOOT_FLAG;
	h->header = HDR_MAGIC;
	h->version = 0x020f;
	h->loadflags = LOADED_HIGH;
	h->relocatable_kernel = 1;
	h->xloadflags = XLF_KERNEL_64;
	h->initrd_addr_max = 0x7fffffff;
	h->cmdline_size = 2047;
	h->pref_address = 16 * MIB;
	h->init_size = 8 * MIB;
	h->kernel_alignment = 2 * MIB;
	memset(img + 1024 + 0x200, 0x90, 16); /* "code" at the 64-bit entry */
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	make_image(c->img);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static struct setup_header *hdr(struct ctx *c)
{
	return (void *)(c->img + HDR_OFF);
}

static int parse(struct ctx *c)
{
	c->msg[0] = 0;
	return boot_parse(c->img, IMG_SIZE, &c->k, c->msg, sizeof(c->msg));
}

static void test_valid(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(parse(c), 0);
	assert_int_equal(c->k.setup_size, 1024);
	assert_int_equal(c->k.version, 0x020f);
	assert_int_equal(c->k.init_size, 8 * MIB);
	assert_int_equal(c->k.pref_address, 16 * MIB);
}

static void test_bad_magic(void **state)
{
	struct ctx *c = *state;

	hdr(c)->header = 0x12345678;
	assert_int_equal(parse(c), -ENOEXEC);
	assert_non_null(strstr(c->msg, "HdrS"));
}

static void test_bad_boot_flag(void **state)
{
	struct ctx *c = *state;

	hdr(c)->boot_flag = 0;
	assert_int_equal(parse(c), -ENOEXEC);
}

static void test_old_protocol(void **state)
{
	struct ctx *c = *state;

	hdr(c)->version = 0x020b;
	assert_int_equal(parse(c), -ENOEXEC);
	assert_non_null(strstr(c->msg, "2.12"));
}

/* A kernel built without CONFIG_RELOCATABLE (the small guest kernel)
 * loads at 1 MiB like any other; its decompressor needs init_size at
 * pref_address, which is what the RAM check asks for. */
static void test_not_relocatable_loads(void **state)
{
	struct ctx *c = *state;

	hdr(c)->relocatable_kernel = 0;
	assert_int_equal(parse(c), 0);
	assert_int_equal(boot_kernel_needs(&c->k), 24 * MIB);
}

static void test_no_64bit_entry(void **state)
{
	struct ctx *c = *state;

	hdr(c)->xloadflags = 0;
	assert_int_equal(parse(c), -ENOEXEC);
	assert_non_null(strstr(c->msg, "64-bit"));
}

static void test_truncated(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(boot_parse(c->img, 0x800, &c->k, c->msg,
				    sizeof(c->msg)), -ENOEXEC);
	hdr(c)->setup_sects = 60; /* setup larger than the file */
	assert_int_equal(parse(c), -ENOEXEC);
	hdr(c)->setup_sects = 7; /* setup is 4 KiB: no payload left */
	assert_int_equal(boot_parse(c->img, 0x1000, &c->k, c->msg,
				    sizeof(c->msg)), -ENOEXEC);
	hdr(c)->setup_sects = 1;
	hdr(c)->init_size = 0x100; /* smaller than the payload */
	assert_int_equal(parse(c), -ENOEXEC);
}

static void test_setup_sects_zero_means_four(void **state)
{
	struct ctx *c = *state;

	hdr(c)->setup_sects = 0;
	assert_int_equal(parse(c), 0);
	assert_int_equal(c->k.setup_size, 5 * 512);
}

static void test_e820_low_only(void **state)
{
	struct boot_e820_entry e[8];
	uint64_t low, high;

	(void)state;
	boot_split(512 * MIB, &low, &high);
	assert_int_equal(low, 512 * MIB);
	assert_int_equal(high, 0);
	assert_int_equal(boot_e820(low, high, e, 8), 3);
	assert_int_equal(e[0].addr, 0);
	assert_int_equal(e[0].size, BOOT_EBDA);
	assert_int_equal(e[0].type, E820_RAM);
	assert_int_equal(e[1].addr, BOOT_EBDA);
	assert_int_equal(e[1].addr + e[1].size, BOOT_KERNEL);
	assert_int_equal(e[1].type, E820_RESERVED);
	assert_int_equal(e[2].addr, BOOT_KERNEL);
	assert_int_equal(e[2].addr + e[2].size, 512 * MIB);
	/* the MP table and boot structures sit in the reserved range or
	 * below the first RAM entry's end */
	assert_true(BOOT_MPTABLE >= e[1].addr &&
		    BOOT_MPTABLE < e[1].addr + e[1].size);
}

static void test_e820_split_around_mmio(void **state)
{
	struct boot_e820_entry e[8];
	uint64_t low, high, total = 0;
	unsigned int n;

	(void)state;
	boot_split(5ull << 30, &low, &high);
	assert_int_equal(low, BOOT_LOW_MAX);
	assert_int_equal(high, (5ull << 30) - BOOT_LOW_MAX);
	n = boot_e820(low, high, e, 8);
	assert_int_equal(n, 4);
	assert_int_equal(e[3].addr, BOOT_HIGH_START);
	for (unsigned int i = 0; i < n; i++) {
		if (e[i].type == E820_RAM)
			total += e[i].size;
		/* nothing overlaps the PCI window */
		assert_true(e[i].addr + e[i].size <= BOOT_MMIO_START ||
			    e[i].addr >= BOOT_MMIO_END);
	}
	assert_int_equal(total, (5ull << 30) - (BOOT_KERNEL - BOOT_EBDA));
}

static void test_initrd_placement(void **state)
{
	struct ctx *c = *state;
	uint64_t a;

	assert_int_equal(parse(c), 0);
	/* needs: pref 16 MiB + init 8 MiB = 24 MiB */
	assert_int_equal(boot_kernel_needs(&c->k), 24 * MIB);
	a = boot_initrd_addr(&c->k, 64 * MIB, 5 * MIB + 123);
	assert_int_not_equal(a, 0);
	assert_int_equal(a & 0xfff, 0);
	assert_true(a + 5 * MIB + 123 <= 64 * MIB);
	assert_true(a >= 24 * MIB);
	assert_int_equal(boot_initrd_addr(&c->k, 26 * MIB, 4 * MIB), 0);
	/* initrd_addr_max caps it */
	hdr(c)->initrd_addr_max = 48 * MIB - 1;
	assert_int_equal(parse(c), 0);
	a = boot_initrd_addr(&c->k, 64 * MIB, MIB);
	assert_true(a + MIB <= 48 * MIB);
}

static void test_load(void **state)
{
	struct ctx *c = *state;
	uint64_t low = 64 * MIB;
	uint8_t *ram = calloc(1, low), rd[8192];
	struct boot_params *bp = (void *)(ram + BOOT_ZERO_PAGE);
	struct boot_regs r;
	uint64_t *pd;

	memset(rd, 0x5a, sizeof(rd));
	assert_int_equal(parse(c), 0);
	assert_int_equal(boot_load(ram, low, 0, &c->k, rd, sizeof(rd),
				   "console=ttyS0", &r, c->msg, sizeof(c->msg)),
			 0);
	assert_int_equal(r.rip, BOOT_KERNEL + 0x200);
	assert_int_equal(r.rsi, BOOT_ZERO_PAGE);
	assert_int_equal(r.cr3, BOOT_PML4);
	assert_memory_equal(ram + BOOT_KERNEL, c->img + 1024, IMG_SIZE - 1024);
	assert_int_equal(bp->hdr.header, HDR_MAGIC);
	assert_int_equal(bp->hdr.type_of_loader, 0xff);
	assert_int_equal(bp->hdr.cmd_line_ptr, BOOT_CMDLINE);
	assert_string_equal((char *)ram + BOOT_CMDLINE, "console=ttyS0");
	assert_int_equal(bp->hdr.ramdisk_size, sizeof(rd));
	assert_memory_equal(ram + bp->hdr.ramdisk_image, rd, sizeof(rd));
	assert_int_equal(bp->e820_entries, 3);
	pd = (uint64_t *)(ram + BOOT_PD);
	assert_int_equal(pd[0], 0x83);
	assert_int_equal(pd[2047], (2047ull << 21) | 0x83);
	assert_int_equal(*(uint64_t *)(ram + BOOT_PML4), BOOT_PDPT | 3);
	free(ram);
}

static void test_load_errors(void **state)
{
	struct ctx *c = *state;
	uint64_t low = 32 * MIB;
	uint8_t *ram = calloc(1, low), rd[16];
	char *longcmd = malloc(4096);
	struct boot_regs r;

	assert_int_equal(parse(c), 0);
	memset(longcmd, 'a', 4095);
	longcmd[4095] = 0;
	assert_int_equal(boot_load(ram, low, 0, &c->k, NULL, 0, longcmd, &r,
				   c->msg, sizeof(c->msg)), -E2BIG);
	assert_non_null(strstr(c->msg, "too long"));
	assert_int_equal(boot_load(ram, 16 * MIB, 0, &c->k, NULL, 0, "", &r,
				   c->msg, sizeof(c->msg)), -ENOMEM);
	/* initrd that does not fit above the kernel */
	assert_int_equal(boot_load(ram, 25 * MIB, 0, &c->k, rd, 2 * MIB, "",
				   &r, c->msg, sizeof(c->msg)), -ENOMEM);
	(void)rd;
	free(longcmd);
	free(ram);
}

/* ---- ELF vmlinux ---- */

#define ELF_SIZE 0x3000

/* A vmlinux-like ELF: text (0x1000 bytes of 0xcc at 16 MiB, entry 16 MiB
 * + 0x10), data with 0x800 bytes in the file and 1 MiB of bss at 18 MiB,
 * and a NOTE that is not loaded. */
struct elf_img {
	union {
		uint8_t b[ELF_SIZE];
		Elf64_Ehdr e;
	};
};

static Elf64_Phdr *eph(struct elf_img *x, unsigned int i)
{
	return (Elf64_Phdr *)(x->b + x->e.e_phoff) + i;
}

static void make_elf(struct elf_img *x)
{
	Elf64_Phdr *p;

	memset(x, 0, sizeof(*x));
	memcpy(x->e.e_ident, ELFMAG, SELFMAG);
	x->e.e_ident[EI_CLASS] = ELFCLASS64;
	x->e.e_ident[EI_DATA] = ELFDATA2LSB;
	x->e.e_ident[EI_VERSION] = EV_CURRENT;
	x->e.e_type = ET_EXEC;
	x->e.e_machine = EM_X86_64;
	x->e.e_version = EV_CURRENT;
	x->e.e_entry = 16 * MIB + 0x10;
	x->e.e_phoff = sizeof(Elf64_Ehdr);
	x->e.e_phentsize = sizeof(Elf64_Phdr);
	x->e.e_phnum = 3;
	p = eph(x, 0);
	*p = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = 0x1000,
			   .p_vaddr = 0xffffffff81000000ull,
			   .p_paddr = 16 * MIB, .p_filesz = 0x1000,
			   .p_memsz = 0x1000 };
	p = eph(x, 1);
	*p = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = 0x2000,
			   .p_vaddr = 0xffffffff81200000ull,
			   .p_paddr = 18 * MIB, .p_filesz = 0x800,
			   .p_memsz = MIB };
	p = eph(x, 2);
	*p = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = 0x2800,
			   .p_paddr = 0, .p_filesz = 0x10, .p_memsz = 0x10 };
	memset(x->b + 0x1000, 0xcc, 0x1000);
	memset(x->b + 0x2000, 0xdd, 0x800);
}

static int parse_elf(struct ctx *c, struct elf_img *x, size_t size)
{
	c->msg[0] = 0;
	return boot_parse(x->b, size, &c->k, c->msg, sizeof(c->msg));
}

static void test_elf_load(void **state)
{
	struct ctx *c = *state;
	struct elf_img *x = calloc(1, sizeof(*x));
	uint64_t low = 64 * MIB;
	uint8_t *ram = malloc(low), rd[4096];
	struct boot_params *bp = (void *)(ram + BOOT_ZERO_PAGE);
	struct boot_regs r;

	make_elf(x);
	memset(ram, 0xee, low); /* the bss must come out zeroed */
	memset(rd, 0x5a, sizeof(rd));
	assert_int_equal(parse_elf(c, x, ELF_SIZE), 0);
	assert_true(c->k.elf);
	/* Kernel up to 19 MiB, rounded to 2 MiB; the initrd goes above. */
	assert_int_equal(boot_kernel_needs(&c->k), 20 * MIB);
	assert_int_equal(boot_load(ram, low, 0, &c->k, rd, sizeof(rd),
				   "console=ttyS0", &r, c->msg, sizeof(c->msg)),
			 0);
	assert_int_equal(r.rip, 16 * MIB + 0x10);
	assert_int_equal(r.rsi, BOOT_ZERO_PAGE);
	assert_int_equal(r.cr3, BOOT_PML4);
	assert_memory_equal(ram + 16 * MIB, x->b + 0x1000, 0x1000);
	assert_memory_equal(ram + 18 * MIB, x->b + 0x2000, 0x800);
	for (uint64_t a = 18 * MIB + 0x800; a < 19 * MIB; a++)
		if (ram[a]) {
			print_error("bss not zero at %#llx\n",
				    (unsigned long long)a);
			fail();
		}
	assert_int_equal(ram[19 * MIB], 0xee); /* nothing beyond memsz */
	/* The zero page: a setup header of our own. */
	assert_int_equal(bp->hdr.boot_flag, BOOT_FLAG);
	assert_int_equal(bp->hdr.header, HDR_MAGIC);
	assert_true(bp->hdr.version >= 0x020c);
	assert_int_equal(bp->hdr.type_of_loader, 0xff);
	assert_int_equal(bp->hdr.cmd_line_ptr, BOOT_CMDLINE);
	assert_int_equal(bp->hdr.cmdline_size, 2047);
	assert_string_equal((char *)ram + BOOT_CMDLINE, "console=ttyS0");
	assert_int_equal(bp->hdr.ramdisk_size, sizeof(rd));
	assert_true(bp->hdr.ramdisk_image >= 20 * MIB);
	assert_memory_equal(ram + bp->hdr.ramdisk_image, rd, sizeof(rd));
	assert_int_equal(bp->e820_entries, 3);
	/* Too little RAM for the segments. */
	assert_int_equal(boot_load(ram, 18 * MIB, 0, &c->k, NULL, 0, "", &r,
				   c->msg, sizeof(c->msg)), -ENOMEM);
	free(ram);
	free(x);
}

/* Each broken header: refused with its reason. */
static void test_elf_bad(void **state)
{
	struct ctx *c = *state;
	struct elf_img *x = calloc(1, sizeof(*x));

	make_elf(x);
	assert_int_equal(parse_elf(c, x, 40), -ENOEXEC);
	assert_non_null(strstr(c->msg, "not a usable vmlinux: file too small"));

#define BAD(what, expect)                                                      \
	do {                                                                   \
		make_elf(x);                                                   \
		what;                                                          \
		assert_int_equal(parse_elf(c, x, ELF_SIZE), -ENOEXEC);         \
		if (!strstr(c->msg, expect)) {                                 \
			print_error("%s: got '%s'\n", #what, c->msg);          \
			fail();                                                \
		}                                                              \
	} while (0)
	BAD(x->e.e_ident[EI_CLASS] = ELFCLASS32, "not a 64-bit x86");
	BAD(x->e.e_machine = EM_AARCH64, "not a 64-bit x86");
	BAD(x->e.e_type = ET_DYN, "not an executable");
	BAD(x->e.e_phentsize = 32, "bad program headers");
	BAD(x->e.e_phnum = 0, "bad program headers");
	BAD(x->e.e_phoff = ELF_SIZE - 8, "bad program headers");
	BAD(x->e.e_phoff = ~0ull, "bad program headers");
	BAD(eph(x, 0)->p_offset = ELF_SIZE - 8, "outside the file");
	BAD(eph(x, 0)->p_offset = ~0ull - 8, "outside the file");
	BAD(eph(x, 1)->p_filesz = 2 * MIB, "outside the file");
	BAD(eph(x, 0)->p_paddr = 0x8000, "between 1 MiB and 3 GiB");
	BAD(eph(x, 1)->p_paddr = 0xbff80000ull, "between 1 MiB and 3 GiB");
	BAD(eph(x, 1)->p_paddr = ~0ull - 0x100, "between 1 MiB and 3 GiB");
	BAD(x->e.e_entry = 18 * MIB + 0x900, "entry point"); /* in bss */
	BAD(x->e.e_entry = 0xffffffff81000010ull, "entry point"); /* virtual */
	BAD(eph(x, 0)->p_type = PT_NOTE; eph(x, 1)->p_type = PT_NULL,
	    "nothing to load");
#undef BAD
	free(x);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(test_valid),
		T(test_bad_magic),
		T(test_bad_boot_flag),
		T(test_old_protocol),
		T(test_not_relocatable_loads),
		T(test_no_64bit_entry),
		T(test_truncated),
		T(test_setup_sects_zero_means_four),
		T(test_e820_low_only),
		T(test_e820_split_around_mmio),
		T(test_initrd_placement),
		T(test_load),
		T(test_load_errors),
		T(test_elf_load),
		T(test_elf_bad),
#undef T
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("boot", tests, NULL, NULL);
}
