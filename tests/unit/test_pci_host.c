/* hw/pci_host and arch/x86/hw/pci_cf8: BAR placement in the MMIO and I/O windows (aligned,
 * refused when full) and the bus fallbacks that hand an access to the
 * device whose BAR decodes it (devices without an I/O BAR skipped). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch/x86/hw/pci_cf8.h"
#include "hw/pci_host.h"

/* A device that claims [base, base + len) in one space. */
struct fakedev {
	uint64_t base, len;
	int hits;
	bool last_write;
};

static uint32_t f_cfg_read(void *o, uint32_t off, unsigned int size)
{
	(void)o, (void)size;
	return 0xab000000u | off;
}

static void f_cfg_write(void *o, uint32_t off, unsigned int size,
			uint32_t val)
{
	(void)o, (void)off, (void)size, (void)val;
}

static bool f_claim(void *o, uint64_t addr, uint8_t *data, unsigned int size,
		    bool write)
{
	struct fakedev *d = o;

	if (addr < d->base || addr - d->base >= d->len)
		return false;
	d->hits++;
	d->last_write = write;
	if (!write)
		memset(data, 0x5a, size);
	return true;
}

static bool f_never(void *o, uint64_t addr, uint8_t *data, unsigned int size,
		    bool write)
{
	(void)o, (void)addr, (void)data, (void)size, (void)write;
	return false;
}

static const struct pci_dev_ops io_ops = {
	.cfg_read = f_cfg_read, .cfg_write = f_cfg_write,
	.mmio = f_never, .pio = f_claim,
};
static const struct pci_dev_ops mem_ops = { /* no I/O BAR: pio NULL */
	.cfg_read = f_cfg_read, .cfg_write = f_cfg_write, .mmio = f_claim,
};

static void test_alloc_io(void **state)
{
	struct pci_host h;
	uint32_t a = ~0u, b = ~0u, c = ~0u; /* ~0: not written */

	(void)state;
	pci_host_init(&h, 0xc0000000, 0xc0100000);
	/* No I/O window until one is given (arm64 has none). */
	assert_int_equal(pci_host_alloc_io(&h, 4, &a), -ENOSPC);
	assert_int_equal(a, ~0u);
	pci_host_set_io(&h, PCI_CF8_IO_START, PCI_CF8_IO_END);
	assert_int_equal(pci_host_alloc_io(&h, 64, &a), 0);
	assert_int_equal(a, PCI_CF8_IO_START);
	assert_int_equal(pci_host_alloc_io(&h, 16, &b), 0);
	assert_int_equal(b, PCI_CF8_IO_START + 64);
	assert_int_equal(pci_host_alloc_io(&h, 64, &c), 0);
	assert_int_equal(c, PCI_CF8_IO_START + 128); /* aligned up */
	/* The windows are apart: the MMIO one starts where it was told. */
	assert_int_equal(pci_host_alloc_bar(&h, 0x8000, &a), 0);
	assert_int_equal(a, 0xc0000000);
	/* The I/O window ends at 64 KiB. */
	assert_int_equal(pci_host_alloc_io(&h, 0x2000, &a), 0);
	assert_int_equal(a, 0xe000);
	assert_int_equal(pci_host_alloc_io(&h, 4, &a), -ENOSPC);
	assert_int_equal(pci_host_alloc_bar(&h, 0x100000, &a), -ENOSPC);
}

static void test_pio_reaches_the_io_bar(void **state)
{
	struct pci_host h;
	struct fakedev mem = { .base = 0xc040, .len = 64 };
	struct fakedev io = { .base = 0xc040, .len = 64 };
	uint8_t buf[2] = { 0, 0 };

	(void)state;
	pci_host_init(&h, 0xc0000000, 0xc0100000);
	/* The memory-only device comes first and would claim the port if
	 * its (missing) pio were called. */
	assert_int_equal(pci_host_add(&h, &mem_ops, &mem), 1);
	assert_int_equal(pci_host_add(&h, &io_ops, &io), 2);
	assert_true(pci_host_pio(&h, 0xc042, buf, 2, false));
	assert_int_equal(buf[0], 0x5a);
	assert_true(pci_host_pio(&h, 0xc040, buf, 2, true));
	assert_int_equal(io.hits, 2);
	assert_true(io.last_write);
	assert_int_equal(mem.hits, 0);
	assert_false(pci_host_pio(&h, 0xc080, buf, 2, true));
	/* and memory space goes to mmio only */
	assert_true(pci_host_mmio(&h, 0xc040, buf, 2, false));
	assert_int_equal(mem.hits, 1);
	assert_int_equal(io.hits, 2);
}

static uint32_t cf8_read(struct pci_cf8 *c, uint32_t addr, unsigned int byte,
			 unsigned int size)
{
	uint32_t v = 0;

	pci_cf8_io(c, PCI_CF8_ADDR, (uint8_t *)&addr, 4, true);
	pci_cf8_io(c, PCI_CF8_DATA + byte, (uint8_t *)&v, size, false);
	return v;
}

/* Mechanism #1 selects bus 0, function 0 of a slot with the enable bit;
 * anything else (disabled, another bus or function, an empty slot)
 * reads all ones. */
static void test_cf8_selects_the_slot(void **state)
{
	struct pci_host h;
	struct pci_cf8 c;
	struct fakedev d = { 0 };
	uint32_t a = 0;

	(void)state;
	pci_host_init(&h, 0xc0000000, 0xc0100000);
	pci_cf8_init(&c, &h);
	assert_int_equal(pci_host_add(&h, &mem_ops, &d), 1);
	assert_int_equal(cf8_read(&c, 0x80000800u | 0x10, 0, 4), 0xab000010u);
	assert_int_equal(cf8_read(&c, 0x80000800u | 0x10, 2, 2), 0xab000012u & 0xffff);
	assert_int_equal(cf8_read(&c, 0x00000800u | 0x10, 0, 4), ~0u);
	assert_int_equal(cf8_read(&c, 0x80010800u | 0x10, 0, 4), ~0u);
	assert_int_equal(cf8_read(&c, 0x80000900u | 0x10, 0, 4), ~0u);
	assert_int_equal(cf8_read(&c, 0x80001000u | 0x10, 0, 4), ~0u);
	/* the address register reads back */
	pci_cf8_io(&c, PCI_CF8_ADDR, (uint8_t *)&a, 4, false);
	assert_int_equal(a, 0x80001010u);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_io),
		cmocka_unit_test(test_pio_reaches_the_io_bar),
		cmocka_unit_test(test_cf8_selects_the_slot),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("pci_host", tests, NULL, NULL);
}
