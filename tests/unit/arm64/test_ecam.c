/* arch/arm64/hw/pci_ecam: an access reaches the configuration space of
 * the slot its address selects (bus 0, function 0), or on a bus above 0
 * the root port whose secondary bus it is (hw/pcie_port: its slot's
 * device while powered); other functions of bus 0, buses no port has,
 * empty slots, odd sizes and misaligned accesses read all ones and
 * write nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arm64/hw/layout.h"
#include "arch/arm64/hw/pci_ecam.h"
#include "hw/pci_host.h"
#include "hw/pcie_port.h"

#include <linux/pci_regs.h>

struct fakedev {
	uint32_t last_off, last_val;
	unsigned int writes;
};

static uint32_t f_read(void *o, uint32_t off, unsigned int size)
{
	(void)o, (void)size;
	return 0xab000000u | off;
}

static void f_write(void *o, uint32_t off, unsigned int size, uint32_t val)
{
	struct fakedev *d = o;

	(void)size;
	d->last_off = off;
	d->last_val = val;
	d->writes++;
}

static bool f_never(void *o, uint64_t a, uint8_t *data, unsigned int size,
		    bool write)
{
	(void)o, (void)a, (void)data, (void)size, (void)write;
	return false;
}

static const struct pci_dev_ops ops = {
	.cfg_read = f_read, .cfg_write = f_write, .mmio = f_never,
};

static uint32_t rd(struct pci_ecam *e, uint64_t off, unsigned int size)
{
	uint32_t v = 0;

	pci_ecam_mmio(e, ARM64_PCI_ECAM_BASE + off, (uint8_t *)&v, size,
		      false);
	return v;
}

static void test_ecam_selects_the_slot(void **state)
{
	struct pci_host h;
	struct pci_ecam e;
	struct fakedev d = { 0 };
	uint32_t v = 0x1234;

	(void)state;
	pci_host_init(&h, ARM64_PCI_MMIO_BASE,
		      ARM64_PCI_MMIO_BASE + ARM64_PCI_MMIO_SIZE);
	pci_ecam_init(&e, &h, ARM64_PCI_ECAM_BASE);
	assert_int_equal(pci_host_add(&h, &ops, &d), 1);
	assert_int_equal(rd(&e, (1 << 15) | 0x10, 4), 0xab000010u);
	assert_int_equal(rd(&e, (1 << 15) | 0x12, 2), 0x0012);
	assert_int_equal(rd(&e, (1 << 15) | 0x13, 1), 0x13);
	/* the host bridge in slot 0: class 06 00 00 */
	assert_int_equal(rd(&e, 0x0b, 1), 0x06);
	/* function 1, bus 1, an empty slot */
	assert_int_equal(rd(&e, (1 << 15) | (1 << 12) | 0x10, 4), ~0u);
	assert_int_equal(rd(&e, (1 << 20) | (1 << 15), 4), ~0u);
	assert_int_equal(rd(&e, 2 << 15, 4), ~0u);
	/* misaligned, odd sizes */
	assert_int_equal(rd(&e, (1 << 15) | 0x11, 2), 0xffff);
	assert_int_equal(rd(&e, (1 << 15) | 0x12, 4), ~0u);
	assert_int_equal(rd(&e, (1 << 15) | 0x10, 3), 0xffffff);
	/* writes reach the slot's register, or nothing */
	pci_ecam_mmio(&e, ARM64_PCI_ECAM_BASE + ((1 << 15) | 0x04),
		      (uint8_t *)&v, 2, true);
	assert_int_equal(d.writes, 1);
	assert_int_equal(d.last_off, 0x04);
	assert_int_equal(d.last_val, 0x1234);
	pci_ecam_mmio(&e, ARM64_PCI_ECAM_BASE + ((1 << 15) | (3 << 12) | 4),
		      (uint8_t *)&v, 2, true);
	pci_ecam_mmio(&e, ARM64_PCI_ECAM_BASE + ((1 << 15) | 0x05),
		      (uint8_t *)&v, 2, true);
	assert_int_equal(d.writes, 1);
}

static void no_msi(void *o, uint64_t addr, uint32_t data)
{
	(void)o, (void)addr, (void)data;
}

static void wr(struct pci_ecam *e, uint64_t off, unsigned int size,
	       uint32_t v)
{
	pci_ecam_mmio(e, ARM64_PCI_ECAM_BASE + off, (uint8_t *)&v, size,
		      true);
}

/* Bus 1 is the secondary bus of the root port in slot 1: its slot's
 * device once plugged and powered, all ones before and elsewhere. */
static void test_ecam_bus_behind_port(void **state)
{
	const struct pcie_port_cb cb = { .msi = no_msi };
	const uint64_t bus1 = 1 << 20, bus2 = 2 << 20;
	const uint32_t sltctl = PCIE_PORT_EXP_CAP + PCI_EXP_SLTCTL;
	struct pci_host h;
	struct pci_ecam e;
	struct pcie_port port;
	struct fakedev d = { 0 };

	(void)state;
	pci_host_init(&h, ARM64_PCI_MMIO_BASE,
		      ARM64_PCI_MMIO_BASE + ARM64_PCI_MMIO_SIZE);
	pci_ecam_init(&e, &h, ARM64_PCI_ECAM_BASE);
	assert_int_equal(pcie_port_init(&port, 0, 1, ARM64_PCI_MMIO_BASE,
					 PCIE_PORT_WINDOW, &cb), 0);
	assert_int_equal(pci_host_add(&h, &pcie_port_pci_ops, &port), 1);
	/* the port on bus 0: a type 1 header, secondary bus 1 */
	assert_int_equal(rd(&e, (1 << 15) | PCI_HEADER_TYPE, 1) & 0x7f, 1);
	assert_int_equal(rd(&e, (1 << 15) | PCI_SECONDARY_BUS, 1), 1);
	/* empty slot */
	assert_int_equal(rd(&e, bus1, 4), ~0u);
	assert_int_equal(pcie_port_plug(&port, &ops, &d), 0);
	/* plugged, the power still off */
	assert_int_equal(rd(&e, bus1 | 0x10, 4), ~0u);
	wr(&e, bus1 | 0x04, 2, 0x1234);
	assert_int_equal(d.writes, 0);
	/* the guest powers the slot on (Power Controller Control 0) */
	wr(&e, (1 << 15) | sltctl, 2,
	   rd(&e, (1 << 15) | sltctl, 2) & ~PCI_EXP_SLTCTL_PCC);
	assert_true(pcie_port_powered(&port));
	assert_int_equal(rd(&e, bus1 | 0x10, 4), 0xab000010u);
	assert_int_equal(rd(&e, bus1 | 0x12, 2), 0x0012);
	wr(&e, bus1 | 0x04, 2, 0x0406);
	assert_int_equal(d.writes, 1);
	assert_int_equal(d.last_val, 0x0406);
	/* devfn 0 only, no bus 2; odd sizes as on bus 0 */
	assert_int_equal(rd(&e, bus1 | (1 << 15), 4), ~0u);
	assert_int_equal(rd(&e, bus1 | (1 << 12), 4), ~0u);
	assert_int_equal(rd(&e, bus2, 4), ~0u);
	assert_int_equal(rd(&e, bus1 | 0x11, 2), 0xffff);
	assert_int_equal(rd(&e, bus1 | 0x10, 3), 0xffffff);
	/* the last bus the window holds answers too (no port: all ones) */
	assert_int_equal(rd(&e, ARM64_PCI_ECAM_SIZE - 4, 4), ~0u);
	assert_ptr_equal(pcie_port_unplug(&port), &d);
	assert_int_equal(rd(&e, bus1 | 0x10, 4), ~0u);
	pcie_port_destroy(&port);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ecam_selects_the_slot),
		cmocka_unit_test(test_ecam_bus_behind_port),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("arm64_ecam", tests, NULL, NULL);
}
