/* bzImage and ELF vmlinux loader for the 64-bit boot protocol.  Pure. */
#include "arch/x86/hw/boot.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MIN_VERSION 0x020c   /* 2.12: xloadflags, 64-bit entry */
#define ENTRY64 0x200        /* startup_64 from the protected-mode start */
#define PAGE 4096ull
#define TWO_MB (2ull << 20)

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int bad(char *msg, size_t msglen, const char *why)
{
	snprintf(msg, msglen, "not a usable bzImage: %s", why);
	return -ENOEXEC;
}

static int bad_elf(char *msg, size_t msglen, const char *why)
{
	snprintf(msg, msglen, "not a usable vmlinux: %s", why);
	return -ENOEXEC;
}

/* Header fields a vmlinux has no setup header for (boot_params). */
#define ELF_VERSION 0x020f
#define ELF_CMDLINE_SIZE 2047    /* x86 COMMAND_LINE_SIZE - 1 */
#define ELF_INITRD_MAX 0x7fffffff

static const Elf64_Phdr *elf_phdr(const struct boot_kernel *k, unsigned int i)
{
	const Elf64_Ehdr *e = (const void *)k->img;

	return (const void *)(k->img + e->e_phoff + (size_t)i * sizeof(Elf64_Phdr));
}

static int boot_parse_elf(const uint8_t *img, size_t size,
			  struct boot_kernel *k, char *msg, size_t msglen)
{
	const Elf64_Ehdr *e = (const void *)img;
	bool entry_ok = false;
	unsigned int loads = 0;

	if (size < sizeof(*e))
		return bad_elf(msg, msglen, "file too small");
	if (e->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->e_ident[EI_DATA] != ELFDATA2LSB || e->e_machine != EM_X86_64)
		return bad_elf(msg, msglen, "not a 64-bit x86 ELF file");
	if (e->e_type != ET_EXEC)
		return bad_elf(msg, msglen, "not an executable");
	if (e->e_phentsize != sizeof(Elf64_Phdr) || !e->e_phnum ||
	    e->e_phoff % _Alignof(Elf64_Phdr) || e->e_phoff > size ||
	    (size - e->e_phoff) / sizeof(Elf64_Phdr) < e->e_phnum)
		return bad_elf(msg, msglen, "bad program headers");
	memset(k, 0, sizeof(*k));
	k->img = img;
	k->size = size;
	k->elf = true;
	k->entry = e->e_entry;
	k->version = ELF_VERSION;
	k->initrd_max = ELF_INITRD_MAX;
	k->cmdline_size = ELF_CMDLINE_SIZE;
	for (unsigned int i = 0; i < e->e_phnum; i++) {
		const Elf64_Phdr *p = elf_phdr(k, i);

		if (p->p_type != PT_LOAD || !p->p_memsz)
			continue;
		if (p->p_filesz > p->p_memsz || p->p_offset > size ||
		    size - p->p_offset < p->p_filesz)
			return bad_elf(msg, msglen,
				       "a segment lies outside the file");
		if (p->p_paddr < BOOT_KERNEL || p->p_paddr >= BOOT_LOW_MAX ||
		    BOOT_LOW_MAX - p->p_paddr < p->p_memsz)
			return bad_elf(msg, msglen, "a segment's physical "
				       "address is not between 1 MiB and 3 GiB");
		if (p->p_paddr + p->p_memsz > k->load_end)
			k->load_end = p->p_paddr + p->p_memsz;
		if (e->e_entry >= p->p_paddr &&
		    e->e_entry - p->p_paddr < p->p_filesz)
			entry_ok = true;
		loads++;
	}
	if (!loads)
		return bad_elf(msg, msglen, "nothing to load");
	if (!entry_ok)
		return bad_elf(msg, msglen, "the entry point is not in a "
			       "loaded segment (physical addresses)");
	return 0;
}

int boot_parse(const uint8_t *img, size_t size, struct boot_kernel *k,
	       char *msg, size_t msglen)
{
	const struct setup_header *h;
	unsigned int sects;

	if (size >= SELFMAG && !memcmp(img, ELFMAG, SELFMAG))
		return boot_parse_elf(img, size, k, msg, msglen);
	if (size < 0x1000)
		return bad(msg, msglen, "file too small");
	h = (const void *)(img + HDR_OFF);
	if (h->boot_flag != BOOT_FLAG || h->header != HDR_MAGIC)
		return bad(msg, msglen, "no boot signature (HdrS)");
	if (h->version < MIN_VERSION)
		return bad(msg, msglen, "boot protocol older than 2.12");
	/* relocatable_kernel is not checked: the protected-mode part is
	 * always loaded at 1 MiB, the default code32_start, which is where a
	 * kernel that is not relocatable must be; its decompressor then
	 * places the kernel at pref_address (boot_kernel_needs). */
	if (!(h->xloadflags & XLF_KERNEL_64))
		return bad(msg, msglen, "no 64-bit entry point");
	if (!(h->loadflags & LOADED_HIGH))
		return bad(msg, msglen, "kernel does not load high");
	sects = h->setup_sects ? h->setup_sects : 4;
	memset(k, 0, sizeof(*k));
	k->setup_size = (sects + 1u) * 512u;
	if (k->setup_size >= size || 0x202u + img[0x201] > k->setup_size)
		return bad(msg, msglen, "truncated");
	/* A file cut short would load and die in the guest (triple fault):
	 * syssize is the protected-mode part in 16-byte units (2.04+), the
	 * payload lies inside it (2.08+; 0 where a tool leaves them out). */
	if ((uint64_t)h->syssize * 16 > size - k->setup_size ||
	    (uint64_t)h->payload_offset + h->payload_length >
		    size - k->setup_size)
		return bad(msg, msglen, "truncated (shorter than its header "
			   "says)");
	k->img = img;
	k->size = size;
	k->version = h->version;
	k->init_size = h->init_size;
	k->pref_address = h->pref_address;
	k->initrd_max = h->initrd_addr_max;
	k->cmdline_size = h->cmdline_size;
	if (k->init_size < size - k->setup_size)
		return bad(msg, msglen, "init_size smaller than the kernel");
	return 0;
}

void boot_split(uint64_t mem, uint64_t *low, uint64_t *high)
{
	*low = mem < BOOT_LOW_MAX ? mem : BOOT_LOW_MAX;
	*high = mem - *low;
}

unsigned int boot_e820(uint64_t low, uint64_t high,
		       struct boot_e820_entry *e, unsigned int max)
{
	struct boot_e820_entry m[4] = {
		{ 0, BOOT_EBDA, E820_RAM },
		{ BOOT_EBDA, BOOT_KERNEL - BOOT_EBDA, E820_RESERVED },
		{ BOOT_KERNEL, low - BOOT_KERNEL, E820_RAM },
		{ BOOT_HIGH_START, high, E820_RAM },
	};
	unsigned int n = high ? 4 : 3;

	if (low <= BOOT_KERNEL)
		return 0;
	if (n > max)
		n = max;
	memcpy(e, m, n * sizeof(*e));
	return n;
}

uint64_t boot_kernel_needs(const struct boot_kernel *k)
{
	if (k->elf)
		return align_up(k->load_end, TWO_MB);

	/* The decompressor runs at max(load address aligned, pref_address)
	 * and needs init_size there; the loaded image sits at 1 MiB. */
	uint64_t start = k->pref_address > BOOT_KERNEL ? k->pref_address :
							 BOOT_KERNEL;
	uint64_t end = align_up(start + k->init_size, TWO_MB);
	uint64_t img_end = BOOT_KERNEL + (k->size - k->setup_size);

	return end > img_end ? end : img_end;
}

uint64_t boot_initrd_addr(const struct boot_kernel *k, uint64_t low,
			  uint64_t initrd_size)
{
	uint64_t top = low, addr;

	if (k->initrd_max && (uint64_t)k->initrd_max + 1 < top)
		top = (uint64_t)k->initrd_max + 1;
	if (initrd_size > top)
		return 0;
	addr = (top - initrd_size) & ~(PAGE - 1);
	if (addr < boot_kernel_needs(k))
		return 0;
	return addr;
}

/* Identity map of the first 4 GiB with 2 MiB pages. */
static void boot_page_tables(uint8_t *ram)
{
	uint64_t *pml4 = (uint64_t *)(ram + BOOT_PML4);
	uint64_t *pdpt = (uint64_t *)(ram + BOOT_PDPT);
	uint64_t *pd = (uint64_t *)(ram + BOOT_PD);

	memset(pml4, 0, PAGE);
	memset(pdpt, 0, PAGE);
	pml4[0] = BOOT_PDPT | 0x3; /* present, writable */
	for (unsigned int i = 0; i < 4; i++)
		pdpt[i] = (BOOT_PD + i * PAGE) | 0x3;
	for (uint64_t i = 0; i < 4 * 512; i++)
		pd[i] = (i * TWO_MB) | 0x83; /* present, writable, 2 MiB */
}

static void boot_gdt(uint8_t *ram)
{
	static const uint64_t gdt[4] = {
		0, 0,
		0x00af9b000000ffffull, /* 0x10: 64-bit code */
		0x00cf93000000ffffull, /* 0x18: data */
	};

	memcpy(ram + BOOT_GDT, gdt, sizeof(gdt));
}

static int boot_params(uint8_t *ram, uint64_t low, uint64_t high,
		       const struct boot_kernel *k, uint64_t initrd,
		       size_t initrd_size)
{
	struct boot_params *bp = (struct boot_params *)(ram + BOOT_ZERO_PAGE);

	memset(bp, 0, sizeof(*bp));
	if (k->elf) {
		/* What the kernel reads of a setup header after its
		 * decompressor would have run. */
		bp->hdr.boot_flag = BOOT_FLAG;
		bp->hdr.header = HDR_MAGIC;
		bp->hdr.version = k->version;
		bp->hdr.loadflags = LOADED_HIGH;
		bp->hdr.kernel_alignment = TWO_MB;
		bp->hdr.cmdline_size = k->cmdline_size;
		bp->hdr.initrd_addr_max = k->initrd_max;
	} else {
		size_t hdr_end = 0x202u + k->img[0x201];

		memcpy((uint8_t *)bp + HDR_OFF, k->img + HDR_OFF,
		       hdr_end - HDR_OFF);
	}
	bp->hdr.type_of_loader = 0xff;
	bp->hdr.loadflags &= (uint8_t)~(KEEP_SEGMENTS | QUIET_FLAG);
	bp->hdr.cmd_line_ptr = BOOT_CMDLINE;
	bp->hdr.ramdisk_image = (uint32_t)initrd;
	bp->hdr.ramdisk_size = (uint32_t)initrd_size;
	bp->ext_ramdisk_image = (uint32_t)(initrd >> 32);
	bp->ext_ramdisk_size = (uint32_t)((uint64_t)initrd_size >> 32);
	bp->e820_entries = (uint8_t)boot_e820(low, high, bp->e820_table,
					      E820_MAX_ENTRIES_ZEROPAGE);
	return bp->e820_entries ? 0 : -ENOMEM;
}

static int boot_cmdline(uint8_t *ram, const struct boot_kernel *k,
			const char *cmdline, char *msg, size_t msglen)
{
	size_t len = strlen(cmdline), max = BOOT_CMDLINE_MAX - 1;

	if (k->cmdline_size && k->cmdline_size < max)
		max = k->cmdline_size;
	if (len > max) {
		snprintf(msg, msglen,
			 "kernel command line too long (%zu bytes, at most %zu)",
			 len, max);
		return -E2BIG;
	}
	memcpy(ram + BOOT_CMDLINE, cmdline, len + 1);
	return 0;
}

/* The segments at their physical addresses (checked by boot_parse and,
 * against low, by boot_load's caller through boot_kernel_needs). */
static void boot_load_elf(uint8_t *ram, const struct boot_kernel *k)
{
	const Elf64_Ehdr *e = (const void *)k->img;

	for (unsigned int i = 0; i < e->e_phnum; i++) {
		const Elf64_Phdr *p = elf_phdr(k, i);

		if (p->p_type != PT_LOAD || !p->p_memsz)
			continue;
		memcpy(ram + p->p_paddr, k->img + p->p_offset, p->p_filesz);
		memset(ram + p->p_paddr + p->p_filesz, 0,
		       p->p_memsz - p->p_filesz);
	}
}

int boot_load(uint8_t *ram, uint64_t low, uint64_t high,
	      const struct boot_kernel *k, const uint8_t *initrd,
	      size_t initrd_size, const char *cmdline, struct boot_regs *regs,
	      char *msg, size_t msglen)
{
	uint64_t pm_size = k->size - k->setup_size, rd = 0;
	int r;

	if (low < boot_kernel_needs(k)) {
		snprintf(msg, msglen, "not enough memory for the kernel");
		return -ENOMEM;
	}
	if (initrd_size) {
		rd = boot_initrd_addr(k, low, initrd_size);
		if (!rd) {
			snprintf(msg, msglen,
				 "not enough memory for kernel and initrd");
			return -ENOMEM;
		}
		memcpy(ram + rd, initrd, initrd_size);
	}
	r = boot_cmdline(ram, k, cmdline, msg, msglen);
	if (r)
		return r;
	if (k->elf)
		boot_load_elf(ram, k);
	else
		memcpy(ram + BOOT_KERNEL, k->img + k->setup_size, pm_size);
	r = boot_params(ram, low, high, k, rd, initrd_size);
	if (r) {
		snprintf(msg, msglen, "not enough memory");
		return r;
	}
	boot_gdt(ram);
	boot_page_tables(ram);
	regs->rip = k->elf ? k->entry : BOOT_KERNEL + ENTRY64;
	regs->rsi = BOOT_ZERO_PAGE;
	regs->rsp = BOOT_STACK;
	regs->cr3 = BOOT_PML4;
	return 0;
}
