/* Fuzz the arm64 device-tree writer (arch/arm64/hw/fdt.c) with random
 * machine descriptions: RAM base and size, vCPU count and MPIDRs, the
 * command line, the initrd, the PCI slots with INTx, the last PCI bus,
 * and the buffer's size.  The tree is valid for libfdt (fdt_check_full, and its nodes
 * found again) or refused with one line in msg; the writer never
 * writes past the buffer (ASan: an exact-size allocation).
 *
 * Input: ncpus byte (any: 0 and more than the maximum are refused),
 * pci_intx (4 bytes), ram_base, ram_size, initrd, initrd_end (8 bytes
 * each), a buffer size (2 bytes, in 16-byte units, modulo 64 KiB), an MPIDR byte
 * pattern (also the last PCI bus, modulo one past the ECAM window's),
 * then the command line (the rest).
 */
#include <libfdt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/hw/fdt.h"
#include "arch/arm64/hw/layout.h"
#include "tests/fuzz/fuzz.h"

static uint64_t fz_get(const uint8_t **p, const uint8_t *end, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)(*p < end ? *(*p)++ : 0) << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct arm64_fdt c;
	char msg[256] = "", *args;
	size_t len, bootlen;
	uint8_t pat;
	void *buf;

	memset(&c, 0, sizeof(c));
	c.ncpus = (unsigned int)fz_get(&p, end, 1);
	c.pci_intx = (uint32_t)fz_get(&p, end, 4);
	c.ram_base = fz_get(&p, end, 8);
	c.ram_size = fz_get(&p, end, 8);
	c.initrd = fz_get(&p, end, 8);
	c.initrd_end = fz_get(&p, end, 8);
	len = 16 * (size_t)(fz_get(&p, end, 2) % 4096);
	pat = (uint8_t)fz_get(&p, end, 1);
	/* up to one bus past the ECAM window: refused */
	c.pci_last_bus = pat % (ARM64_PCI_ECAM_BUSES + 1);
	for (unsigned int i = 0; i < ARM64_FDT_MAX_CPUS; i++)
		c.mpidr[i] = (uint64_t)(pat * i) << (pat & 0x18);
	bootlen = (size_t)(end - p);
	args = malloc(bootlen + 1);
	buf = malloc(len ? len : 1);
	if (!args || !buf)
		abort();
	memcpy(args, p, bootlen);
	args[bootlen] = 0;
	c.bootargs = args;
	if (arm64_fdt_build(buf, len, &c, msg, sizeof(msg))) {
		CHECK(msg[0]);
	} else {
		CHECK(fdt_check_full(buf, len) == 0);
		CHECK(fdt_path_offset(buf, "/chosen") >= 0);
		CHECK(fdt_path_offset(buf, "/cpus") >= 0);
		CHECK(fdt_totalsize(buf) <= len);
	}
	free(buf);
	free(args);
	return 0;
}
