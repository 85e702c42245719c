/* arch/arm64/hw/fdt: the tree is built, read back with libfdt, and every
 * node and property the guest needs is checked; a buffer too small or a
 * bad vCPU count is refused with a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libfdt.h>

#include "arch/arm64/hw/fdt.h"
#include "arch/arm64/hw/layout.h"

#define BUF 65536
#define MIB (1ull << 20)

static uint8_t tree[BUF];

static void build(unsigned int ncpus, uint64_t initrd, uint64_t initrd_end,
		  uint32_t intx)
{
	struct arm64_fdt c = {
		.ram_base = ARM64_RAM_BASE, .ram_size = 512 * MIB,
		.ncpus = ncpus, .bootargs = "console=ttyS0 quiet",
		.initrd = initrd, .initrd_end = initrd_end, .pci_intx = intx,
	};
	char msg[128];

	for (unsigned int i = 0; i < ncpus; i++)
		c.mpidr[i] = 0x80000000ull | ((i / 16) << 8) | (i % 16);
	assert_int_equal(arm64_fdt_build(tree, BUF, &c, msg, sizeof(msg)), 0);
	assert_int_equal(fdt_check_full(tree, BUF), 0);
}

static int node(const char *path)
{
	int off = fdt_path_offset(tree, path);

	if (off < 0)
		fail_msg("no node %s", path);
	return off;
}

static const char *str(int off, const char *name)
{
	const char *s = fdt_getprop(tree, off, name, NULL);

	if (!s)
		fail_msg("no property %s", name);
	return s;
}

static uint32_t cell(int off, const char *name, int i)
{
	int len = 0;
	const fdt32_t *p = fdt_getprop(tree, off, name, &len);

	if (!p || (i + 1) * 4 > len)
		fail_msg("property %s has no cell %d", name, i);
	return fdt32_to_cpu(p[i]);
}

static uint64_t u64(int off, const char *name, int i)
{
	return ((uint64_t)cell(off, name, 2 * i) << 32) |
	       cell(off, name, 2 * i + 1);
}

static int len(int off, const char *name)
{
	int n = -1;

	return fdt_getprop(tree, off, name, &n) ? n : -1;
}

static void test_root_memory_chosen(void **state)
{
	int root, c;

	(void)state;
	build(2, 0x5e000000, 0x5e123456, 0);
	root = node("/");
	assert_string_equal(str(root, "compatible"), "linux,dummy-virt");
	assert_int_equal(cell(root, "#address-cells", 0), 2);
	assert_int_equal(cell(root, "#size-cells", 0), 2);
	assert_int_equal(cell(root, "interrupt-parent", 0),
			 ARM64_FDT_PHANDLE_GIC);
	c = node("/memory@40000000");
	assert_string_equal(str(c, "device_type"), "memory");
	assert_int_equal(u64(c, "reg", 0), ARM64_RAM_BASE);
	assert_int_equal(u64(c, "reg", 1), 512 * MIB);
	c = node("/chosen");
	assert_string_equal(str(c, "bootargs"), "console=ttyS0 quiet");
	/* stdout-path names the UART's node */
	assert_string_equal(str(c, "stdout-path"), "/uart@9000000");
	node(str(c, "stdout-path"));
	assert_int_equal(u64(c, "linux,initrd-start", 0), 0x5e000000);
	assert_int_equal(u64(c, "linux,initrd-end", 0), 0x5e123456);
	assert_int_equal(cell(c, "linux,pci-probe-only", 0), 1);
	/* without an initrd, no initrd properties */
	build(1, 0x5e000000, 0x5e000000, 0);
	c = node("/chosen");
	assert_int_equal(len(c, "linux,initrd-start"), -1);
	assert_int_equal(len(c, "linux,initrd-end"), -1);
}

static void test_cpus_psci_timer(void **state)
{
	char path[32];
	int c, n = 0;

	(void)state;
	build(17, 0, 0, 0);
	c = node("/cpus");
	assert_int_equal(cell(c, "#address-cells", 0), 1);
	assert_int_equal(cell(c, "#size-cells", 0), 0);
	fdt_for_each_subnode(n, tree, c) {
		assert_string_equal(str(n, "device_type"), "cpu");
		assert_string_equal(str(n, "enable-method"), "psci");
	}
	/* reg is each vCPU's MPIDR affinity: the 17th is Aff1 1, Aff0 0 */
	c = node("/cpus/cpu@100");
	assert_int_equal(cell(c, "reg", 0), 0x100);
	for (unsigned int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/cpus/cpu@%x", i);
		assert_int_equal(cell(node(path), "reg", 0), i);
	}
	assert_true(fdt_path_offset(tree, "/cpus/cpu@101") < 0);
	c = node("/psci");
	assert_string_equal(str(c, "compatible"), "arm,psci-0.2");
	assert_string_equal(str(c, "method"), "hvc");
	c = node("/timer");
	assert_string_equal(str(c, "compatible"), "arm,armv8-timer");
	assert_int_equal(len(c, "interrupts"), 12 * 4);
	assert_int_equal(cell(c, "interrupts", 0), 1); /* a PPI */
	assert_int_equal(cell(c, "interrupts", 1), 13);
	assert_int_equal(cell(c, "interrupts", 4), 14);
	assert_int_equal(cell(c, "interrupts", 7), 11); /* the virtual timer */
	assert_int_equal(cell(c, "interrupts", 10), 10);
	assert_int_equal(cell(c, "interrupts", 2), 8); /* level, low */
}

static void test_gic_its_uart(void **state)
{
	int g, i, u;

	(void)state;
	build(3, 0, 0, 0);
	g = node("/intc@8000000");
	assert_string_equal(str(g, "compatible"), "arm,gic-v3");
	assert_int_equal(len(g, "interrupt-controller"), 0);
	assert_int_equal(cell(g, "#interrupt-cells", 0), 3);
	assert_int_equal(cell(g, "phandle", 0), ARM64_FDT_PHANDLE_GIC);
	assert_int_equal(u64(g, "reg", 0), ARM64_GICD_BASE);
	assert_int_equal(u64(g, "reg", 1), ARM64_GICD_SIZE);
	assert_int_equal(u64(g, "reg", 2), ARM64_GICR_BASE);
	assert_int_equal(u64(g, "reg", 3), 3 * ARM64_GICR_STRIDE);
	i = node("/intc@8000000/its@8080000");
	assert_string_equal(str(i, "compatible"), "arm,gic-v3-its");
	assert_int_equal(len(i, "msi-controller"), 0);
	assert_int_equal(cell(i, "#msi-cells", 0), 1);
	assert_int_equal(cell(i, "phandle", 0), ARM64_FDT_PHANDLE_ITS);
	assert_int_equal(u64(i, "reg", 0), ARM64_ITS_BASE);
	u = node("/uart@9000000");
	assert_string_equal(str(u, "compatible"), "ns16550a");
	assert_int_equal(u64(u, "reg", 0), ARM64_UART_BASE);
	assert_int_equal(cell(u, "interrupts", 0), 0); /* an SPI */
	assert_int_equal(cell(u, "interrupts", 1), ARM64_SPI_UART);
	assert_int_equal(cell(u, "interrupts", 2), 4); /* level, high */
	assert_true(cell(u, "clock-frequency", 0) > 0);
}

static void test_pci_host(void **state)
{
	int p;

	(void)state;
	build(2, 0, 0, (1u << 1) | (1u << 3));
	p = node("/pci@3f000000");
	assert_string_equal(str(p, "compatible"), "pci-host-ecam-generic");
	assert_string_equal(str(p, "device_type"), "pci");
	assert_int_equal(cell(p, "#address-cells", 0), 3);
	assert_int_equal(cell(p, "#size-cells", 0), 2);
	assert_int_equal(cell(p, "#interrupt-cells", 0), 1);
	assert_int_equal(u64(p, "reg", 0), ARM64_PCI_ECAM_BASE);
	assert_int_equal(u64(p, "reg", 1), MIB); /* bus 0 only */
	assert_int_equal(cell(p, "bus-range", 0), 0);
	assert_int_equal(cell(p, "bus-range", 1), 0);
	/* one 32-bit memory window, identity mapped */
	assert_int_equal(len(p, "ranges"), 7 * 4);
	assert_int_equal(cell(p, "ranges", 0), 0x02000000);
	assert_int_equal(cell(p, "ranges", 2), ARM64_PCI_MMIO_BASE);
	assert_int_equal(cell(p, "ranges", 4), ARM64_PCI_MMIO_BASE);
	assert_int_equal(cell(p, "ranges", 6), ARM64_PCI_MMIO_SIZE);
	/* MSIs: requester id r is the ITS's device id r */
	assert_int_equal(cell(p, "msi-map", 0), 0);
	assert_int_equal(cell(p, "msi-map", 1), ARM64_FDT_PHANDLE_ITS);
	assert_int_equal(cell(p, "msi-map", 2), 0);
	assert_int_equal(cell(p, "msi-map", 3), 0x10000);
	/* INTA# of slots 1 and 3, each on its own SPI */
	assert_int_equal(cell(p, "interrupt-map-mask", 0), 0xf800);
	assert_int_equal(cell(p, "interrupt-map-mask", 3), 7);
	assert_int_equal(len(p, "interrupt-map"), 2 * 10 * 4);
	assert_int_equal(cell(p, "interrupt-map", 0), 1 << 11);
	assert_int_equal(cell(p, "interrupt-map", 3), 1); /* INTA# */
	assert_int_equal(cell(p, "interrupt-map", 4), ARM64_FDT_PHANDLE_GIC);
	assert_int_equal(cell(p, "interrupt-map", 7), 0); /* SPI */
	assert_int_equal(cell(p, "interrupt-map", 8), ARM64_SPI_PCI + 1);
	assert_int_equal(cell(p, "interrupt-map", 9), 4);
	assert_int_equal(cell(p, "interrupt-map", 10), 3 << 11);
	assert_int_equal(cell(p, "interrupt-map", 18), ARM64_SPI_PCI + 3);
}

/* Root ports behind bus 0 (hot-plug slots): bus-range and the ECAM
 * window in reg reach their secondary buses 1..last, and msi-map gives
 * every requester id on them (bus << 8 | devfn) its ITS device id. */
static void test_pci_buses(void **state)
{
	struct arm64_fdt c = { .ram_base = ARM64_RAM_BASE, .ram_size = MIB,
			       .ncpus = 1, .bootargs = "", .pci_last_bus = 4 };
	char msg[128] = "";
	uint32_t base, len_;
	int p;

	(void)state;
	assert_int_equal(arm64_fdt_build(tree, BUF, &c, msg, sizeof(msg)), 0);
	p = node("/pci@3f000000");
	assert_int_equal(cell(p, "bus-range", 0), 0);
	assert_int_equal(cell(p, "bus-range", 1), 4);
	assert_int_equal(u64(p, "reg", 0), ARM64_PCI_ECAM_BASE);
	assert_int_equal(u64(p, "reg", 1), 5 * MIB);
	base = cell(p, "msi-map", 0);
	len_ = cell(p, "msi-map", 3);
	assert_int_equal(cell(p, "msi-map", 2), base); /* identity */
	assert_true(base == 0 && len_ >= (4u << 8 | 0xff) + 1);
	/* the most buses the ECAM window holds, and one more */
	c.pci_last_bus = ARM64_PCI_ECAM_BUSES - 1;
	assert_int_equal(arm64_fdt_build(tree, BUF, &c, msg, sizeof(msg)), 0);
	p = node("/pci@3f000000");
	assert_int_equal(u64(p, "reg", 1), ARM64_PCI_ECAM_SIZE);
	c.pci_last_bus = ARM64_PCI_ECAM_BUSES;
	assert_int_equal(arm64_fdt_build(tree, BUF, &c, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "bus"));
}

static void test_refusals(void **state)
{
	struct arm64_fdt c = { .ram_base = ARM64_RAM_BASE, .ram_size = MIB,
			       .ncpus = 1, .bootargs = "" };
	char msg[128] = "";

	(void)state;
	assert_int_equal(arm64_fdt_build(tree, 256, &c, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "device tree"));
	c.ncpus = 0;
	assert_int_equal(arm64_fdt_build(tree, BUF, &c, msg, sizeof(msg)), -1);
	c.ncpus = ARM64_FDT_MAX_CPUS + 1;
	assert_int_equal(arm64_fdt_build(tree, BUF, &c, msg, sizeof(msg)), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_memory_chosen),
		cmocka_unit_test(test_cpus_psci_timer),
		cmocka_unit_test(test_gic_its_uart),
		cmocka_unit_test(test_pci_host),
		cmocka_unit_test(test_pci_buses),
		cmocka_unit_test(test_refusals),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("arm64_fdt", tests, NULL, NULL);
}
