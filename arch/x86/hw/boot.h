/* Linux x86 boot protocol (Documentation/x86/boot.rst), 64-bit entry,
 * for a bzImage or for an uncompressed ELF vmlinux (as Firecracker boots
 * it: segments at their physical addresses, entered at e_entry with a
 * zero page we fill in; no decompressor, so no KASLR).
 *
 * Pure: works on the guest's low RAM as a host buffer, so it can be
 * unit-tested.  Guest-physical layout it uses:
 *
 *   0x00500  GDT (null, null, 0x10 code64, 0x18 data)
 *   0x07000  boot_params ("zero page")
 *   0x08ff0  initial stack top
 *   0x09000  PML4, 0x0a000 PDPT, 0x0b000-0x0efff four PDs (4 GiB, 2 MiB pages)
 *   0x20000  command line
 *   0x9fc00-0xfffff reserved in e820 (MP table at 0xf0000)
 *   0x100000 protected-mode kernel (bzImage), or the vmlinux's segments
 *            where its program headers say (16 MiB for Linux)
 *   initrd at the top of low RAM
 */
#ifndef HW_BOOT_H
#define HW_BOOT_H

#include <asm/bootparam.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Boot protocol facts (boot.rst): where the setup header sits in the
 * image, its magic and flag, the e820 types used. */
#define HDR_OFF 0x1f1
#define HDR_MAGIC 0x53726448 /* "HdrS" */
#define BOOT_FLAG 0xaa55
#define E820_RAM 1
#define E820_RESERVED 2

#define BOOT_GDT 0x500
#define BOOT_ZERO_PAGE 0x7000
#define BOOT_STACK 0x8ff0
#define BOOT_PML4 0x9000
#define BOOT_PDPT 0xa000
#define BOOT_PD 0xb000
#define BOOT_CMDLINE 0x20000
#define BOOT_CMDLINE_MAX 0x10000
#define BOOT_EBDA 0x9fc00
#define BOOT_MPTABLE 0xf0000
#define BOOT_KERNEL 0x100000
#define BOOT_LOW_MAX 0xc0000000ull  /* low RAM ends here at most */
#define BOOT_HIGH_START 0x100000000ull
#define BOOT_MMIO_START 0xc0000000ull /* PCI window, free in e820 */
#define BOOT_MMIO_END 0xfec00000ull

#define BOOT_CS 0x10
#define BOOT_DS 0x18

struct boot_kernel {
	const uint8_t *img;  /* the whole bzImage or vmlinux */
	size_t size;
	bool elf;            /* an ELF vmlinux: the fields below are ours */
	uint64_t entry;      /* ELF: e_entry, a physical address */
	uint64_t load_end;   /* ELF: end of the highest segment (memsz) */
	size_t setup_size;   /* real-mode part, (setup_sects + 1) * 512 */
	uint16_t version;
	uint32_t init_size;
	uint64_t pref_address;
	uint32_t initrd_max;  /* highest address the initrd may end at, +1 */
	uint32_t cmdline_size;
};

struct boot_regs {
	uint64_t rip, rsi, rsp, cr3;
};

/* Check a bzImage header or an ELF vmlinux's headers.  0 or -ENOEXEC
 * with one line in msg. */
int boot_parse(const uint8_t *img, size_t size, struct boot_kernel *k,
	       char *msg, size_t msglen);
/* Low/high RAM split for mem bytes. */
void boot_split(uint64_t mem, uint64_t *low, uint64_t *high);
/* The e820 map for that RAM; returns the number of entries. */
unsigned int boot_e820(uint64_t low, uint64_t high,
		       struct boot_e820_entry *e, unsigned int max);
/* Guest RAM the kernel needs below the initrd (bytes). */
uint64_t boot_kernel_needs(const struct boot_kernel *k);
/* Where the initrd goes, or 0 if it does not fit above the kernel. */
uint64_t boot_initrd_addr(const struct boot_kernel *k, uint64_t low,
			  uint64_t initrd_size);
/* Load kernel, initrd, command line, boot_params, GDT and page tables
 * into low RAM (ram, low bytes).  0 or -errno with one line in msg. */
int boot_load(uint8_t *ram, uint64_t low, uint64_t high,
	      const struct boot_kernel *k, const uint8_t *initrd,
	      size_t initrd_size, const char *cmdline, struct boot_regs *regs,
	      char *msg, size_t msglen);

#endif
