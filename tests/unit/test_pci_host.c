/* hw/pci_host: BAR placement in the MMIO and I/O windows (aligned,
 * refused when full) and the bus fallbacks that hand an access to the
 * device whose BAR decodes it (devices without an I/O BAR skipped). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hw/pci_host.h"

/* A device that claims [base, base + len) in one space. */
struct fakedev {
	uint64_t base, len;
	int hits;
	bool last_write;
};

static uint32_t f_cfg_read(void *o, uint32_t off, unsigned int size)
{
	(void)o, (void)off, (void)size;
	return 0;
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
	assert_int_equal(pci_host_alloc_io(&h, 64, &a), 0);
	assert_int_equal(a, PCI_HOST_IO_START);
	assert_int_equal(pci_host_alloc_io(&h, 16, &b), 0);
	assert_int_equal(b, PCI_HOST_IO_START + 64);
	assert_int_equal(pci_host_alloc_io(&h, 64, &c), 0);
	assert_int_equal(c, PCI_HOST_IO_START + 128); /* aligned up */
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_io),
		cmocka_unit_test(test_pio_reaches_the_io_bar),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("pci_host", tests, NULL, NULL);
}
