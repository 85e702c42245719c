/* hw/pcie_port: the root port's configuration space as Linux's pciehp
 * reads it (type 1 header, PCI Express and MSI capabilities, slot
 * capabilities), Slot Status's write-1-to-clear bits, the hot-plug MSI
 * on the rising edge of its condition only, the bridge's windows and
 * bus numbers, configuration cycles to its secondary bus (through
 * pci_host_cfg_bus), and garbage from the guest. */
#include <errno.h>
#include <linux/pci_regs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hw/pci_host.h"
#include "hw/pcie_port.h"

#define EXP(r) (PCIE_PORT_EXP_CAP + (r))
#define MSI(r) (PCIE_PORT_MSI_CAP + (r))
#define WIN 0xc0100000u

struct msis {
	int n;
	uint64_t addr;
	uint32_t data;
};

static void on_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct msis *m = opaque;

	m->n++;
	m->addr = addr;
	m->data = data;
}

/* A child function: config reads answer 0xcc000000 | off; MMIO claims
 * [0xc0100000, +0x8000). */
struct child {
	int cfg_writes, mmio;
};

static uint32_t c_read(void *o, uint32_t off, unsigned int size)
{
	(void)o, (void)size;
	return 0xcc000000u | off;
}

static void c_write(void *o, uint32_t off, unsigned int size, uint32_t val)
{
	(void)off, (void)size, (void)val;
	((struct child *)o)->cfg_writes++;
}

static bool c_mmio(void *o, uint64_t addr, uint8_t *data, unsigned int size,
		   bool write)
{
	(void)data, (void)size, (void)write;
	if (addr < WIN || addr >= WIN + 0x8000)
		return false;
	((struct child *)o)->mmio++;
	return true;
}

static const struct pci_dev_ops child_ops = {
	.cfg_read = c_read, .cfg_write = c_write, .mmio = c_mmio,
};

static struct pcie_port port;
static struct msis msis;
static struct child child;

static int setup(void **state)
{
	struct pcie_port_cb cb = { .opaque = &msis, .msi = on_msi };

	(void)state;
	memset(&msis, 0, sizeof(msis));
	memset(&child, 0, sizeof(child));
	return pcie_port_init(&port, 2, 3, WIN, PCIE_PORT_WINDOW, &cb);
}

static int teardown(void **state)
{
	(void)state;
	pcie_port_destroy(&port);
	return 0;
}

static uint32_t rd(uint32_t off, unsigned int size)
{
	return pcie_port_cfg_read(&port, off, size);
}

static void wr(uint32_t off, unsigned int size, uint32_t v)
{
	pcie_port_cfg_write(&port, off, size, v);
}

/* What pciehp needs to bind: the handler the driver enables. */
static void enable_hotplug(void)
{
	wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	wr(MSI(PCI_MSI_ADDRESS_LO), 4, 0xfee00000u);
	wr(MSI(PCI_MSI_ADDRESS_HI), 4, 0);
	wr(MSI(PCI_MSI_DATA_64), 2, 0x4041);
	wr(MSI(PCI_MSI_FLAGS), 2, PCI_MSI_FLAGS_ENABLE);
	/* As pciehp on a slot with an attention button: no PDCE. */
	wr(EXP(PCI_EXP_SLTCTL), 2,
	   rd(EXP(PCI_EXP_SLTCTL), 2) | PCI_EXP_SLTCTL_ABPE |
		   PCI_EXP_SLTCTL_DLLSCE | PCI_EXP_SLTCTL_HPIE);
}

static void test_header_and_caps(void **state)
{
	uint32_t sltcap;

	(void)state;
	assert_int_equal(rd(PCI_VENDOR_ID, 2), 0x1b36);
	assert_int_equal(rd(PCI_HEADER_TYPE, 1), PCI_HEADER_TYPE_BRIDGE);
	assert_int_equal(rd(PCI_CLASS_DEVICE, 2), 0x0604);
	assert_true(rd(PCI_STATUS, 2) & PCI_STATUS_CAP_LIST);
	assert_int_equal(rd(PCI_CAPABILITY_LIST, 1), PCIE_PORT_EXP_CAP);
	assert_int_equal(rd(EXP(0), 1), PCI_CAP_ID_EXP);
	assert_int_equal(rd(EXP(1), 1), PCIE_PORT_MSI_CAP);
	assert_int_equal(rd(MSI(0), 1), PCI_CAP_ID_MSI);
	assert_int_equal(rd(MSI(1), 1), 0);
	assert_int_equal(rd(EXP(PCI_EXP_FLAGS), 2) & PCI_EXP_FLAGS_TYPE,
			 PCI_EXP_TYPE_ROOT_PORT << 4);
	assert_true(rd(EXP(PCI_EXP_FLAGS), 2) & PCI_EXP_FLAGS_SLOT);
	sltcap = rd(EXP(PCI_EXP_SLTCAP), 4);
	assert_true(sltcap & PCI_EXP_SLTCAP_HPC);
	assert_true(sltcap & PCI_EXP_SLTCAP_ABP);
	assert_true(sltcap & PCI_EXP_SLTCAP_PCP);
	assert_true(sltcap & PCI_EXP_SLTCAP_NCCS);
	assert_false(sltcap & PCI_EXP_SLTCAP_HPS);
	assert_int_equal(sltcap >> 19, 3); /* port 2: physical slot 3 */
	/* Link active reporting: how pciehp, which enables no presence
	 * interrupt on a slot with a button, learns of a device. */
	assert_true(rd(EXP(PCI_EXP_LNKCAP), 4) & PCI_EXP_LNKCAP_DLLLARC);
	assert_false(rd(EXP(PCI_EXP_LNKSTA), 2) & PCI_EXP_LNKSTA_DLLLA);
	/* Empty and off. */
	assert_false(rd(EXP(PCI_EXP_SLTSTA), 2) & PCI_EXP_SLTSTA_PDS);
	assert_true(rd(EXP(PCI_EXP_SLTCTL), 2) & PCI_EXP_SLTCTL_PCC);
	assert_false(pcie_port_powered(&port));
	assert_true(rd(MSI(PCI_MSI_FLAGS), 2) & PCI_MSI_FLAGS_64BIT);
}

static void test_bridge_windows_and_buses(void **state)
{
	(void)state;
	assert_int_equal(rd(PCI_SECONDARY_BUS, 1), 3);
	assert_int_equal(rd(PCI_SUBORDINATE_BUS, 1), 3);
	assert_int_equal(rd(PCI_MEMORY_BASE, 2), (WIN >> 16) & 0xfff0);
	assert_int_equal(rd(PCI_MEMORY_LIMIT, 2),
			 ((WIN + PCIE_PORT_WINDOW - 1) >> 16) & 0xfff0);
	/* Linux's probe for an I/O and a prefetchable window: none. */
	wr(PCI_IO_BASE, 2, 0xe0f0);
	assert_int_equal(rd(PCI_IO_BASE, 2), 0);
	wr(PCI_PREF_MEMORY_BASE, 4, 0xffe0fff0u);
	assert_int_equal(rd(PCI_PREF_MEMORY_BASE, 4), 0);
	/* The memory window is the guest's to move; its low bits stay 0. */
	wr(PCI_MEMORY_BASE, 4, 0xd0ffd0ffu);
	assert_int_equal(rd(PCI_MEMORY_BASE, 4), 0xd0f0d0f0u);
	wr(PCI_SECONDARY_BUS, 1, 7);
	assert_int_equal(pcie_port_secondary(&port), 7);
	assert_int_equal(rd(PCI_ROM_ADDRESS1, 4), 0);
}

/* On a host with no I/O space: disabled I/O and prefetchable windows
 * (base above limit) that writes do not change. */
static void test_windows_off(void **state)
{
	(void)state;
	pcie_port_windows_off(&port);
	assert_int_equal(rd(PCI_PREF_MEMORY_BASE, 4), 0x0000fff0u);
	wr(PCI_PREF_MEMORY_BASE, 4, 0xffe0fff0u);
	assert_int_equal(rd(PCI_PREF_MEMORY_BASE, 4), 0x0000fff0u);
	wr(PCI_PREF_MEMORY_BASE, 4, 0);
	assert_int_equal(rd(PCI_PREF_MEMORY_BASE, 4), 0x0000fff0u);
	assert_int_equal(rd(PCI_IO_BASE, 2), 0x00f0);
	wr(PCI_IO_BASE, 2, 0xe0f0);
	assert_int_equal(rd(PCI_IO_BASE, 2), 0x00f0);
	wr(PCI_IO_BASE, 2, 0);
	assert_int_equal(rd(PCI_IO_BASE, 1), 0xf0);
	assert_int_equal(rd(PCI_IO_LIMIT, 1), 0);
	assert_int_equal(rd(PCI_IO_BASE_UPPER16, 4), 0);
}

static void test_plug_sets_presence_and_msi(void **state)
{
	(void)state;
	enable_hotplug();
	assert_int_equal(msis.n, 0);
	assert_int_equal(pcie_port_plug(&port, &child_ops, &child), 0);
	assert_int_equal(pcie_port_plug(&port, &child_ops, &child), -EBUSY);
	assert_true(rd(EXP(PCI_EXP_SLTSTA), 2) & PCI_EXP_SLTSTA_PDS);
	assert_true(rd(EXP(PCI_EXP_SLTSTA), 2) & PCI_EXP_SLTSTA_PDC);
	assert_true(rd(EXP(PCI_EXP_SLTSTA), 2) & PCI_EXP_SLTSTA_DLLSC);
	assert_true(rd(EXP(PCI_EXP_LNKSTA), 2) & PCI_EXP_LNKSTA_DLLLA);
	assert_int_equal(msis.n, 1);
	assert_int_equal(msis.addr, 0xfee00000u);
	assert_int_equal(msis.data, 0x4041);
	/* An event while one is pending: no second message (edge). */
	pcie_port_press_button(&port);
	assert_int_equal(msis.n, 1);
	/* Cleared (both), then a new event: a new message. */
	wr(EXP(PCI_EXP_SLTSTA), 2, PCI_EXP_SLTSTA_PDC | PCI_EXP_SLTSTA_ABP |
					   PCI_EXP_SLTSTA_DLLSC);
	assert_int_equal(rd(EXP(PCI_EXP_SLTSTA), 2) & 0x1ff,
			 PCI_EXP_SLTSTA_PDS);
	pcie_port_press_button(&port);
	assert_int_equal(msis.n, 2);
	wr(EXP(PCI_EXP_SLTSTA), 2, PCI_EXP_SLTSTA_ABP);
	assert_true(pcie_port_occupied(&port));
	assert_ptr_equal(pcie_port_unplug(&port), &child);
	assert_false(pcie_port_occupied(&port));
	assert_null(pcie_port_unplug(&port));
	assert_false(rd(EXP(PCI_EXP_SLTSTA), 2) & PCI_EXP_SLTSTA_PDS);
	assert_false(rd(EXP(PCI_EXP_LNKSTA), 2) & PCI_EXP_LNKSTA_DLLLA);
	/* Unplug raised the link event: one more message. */
	assert_int_equal(msis.n, 3);
}

static void test_sltsta_is_write_one_to_clear(void **state)
{
	(void)state;
	pcie_port_plug(&port, &child_ops, &child);
	pcie_port_press_button(&port);
	/* 0 clears nothing; 1 in PDS (state, not an event) changes nothing. */
	wr(EXP(PCI_EXP_SLTSTA), 2, 0);
	wr(EXP(PCI_EXP_SLTSTA), 2, PCI_EXP_SLTSTA_PDS);
	assert_int_equal(rd(EXP(PCI_EXP_SLTSTA), 2) & 0x1ff,
			 PCI_EXP_SLTSTA_PDS | PCI_EXP_SLTSTA_PDC |
				 PCI_EXP_SLTSTA_ABP | PCI_EXP_SLTSTA_DLLSC);
	/* The high byte alone: Data Link Layer State Changed. */
	wr(EXP(PCI_EXP_SLTSTA) + 1, 1, PCI_EXP_SLTSTA_DLLSC >> 8);
	assert_false(rd(EXP(PCI_EXP_SLTSTA), 2) & PCI_EXP_SLTSTA_DLLSC);
	/* One bit, by a byte write. */
	wr(EXP(PCI_EXP_SLTSTA), 1, PCI_EXP_SLTSTA_ABP);
	assert_int_equal(rd(EXP(PCI_EXP_SLTSTA), 2) & 0x1ff,
			 PCI_EXP_SLTSTA_PDS | PCI_EXP_SLTSTA_PDC);
	/* A dword write at Slot Control reaches Slot Status's bits too. */
	wr(EXP(PCI_EXP_SLTCTL), 4,
	   (uint32_t)PCI_EXP_SLTSTA_PDC << 16 | rd(EXP(PCI_EXP_SLTCTL), 2));
	assert_int_equal(rd(EXP(PCI_EXP_SLTSTA), 2) & 0x1ff,
			 PCI_EXP_SLTSTA_PDS);
}

static void test_no_msi_until_allowed(void **state)
{
	(void)state;
	/* Events and enables but MSI off: nothing; then MSI on without bus
	 * master: nothing; bus master on: the one message. */
	wr(MSI(PCI_MSI_ADDRESS_LO), 4, 0xfee01000u);
	wr(MSI(PCI_MSI_DATA_64), 2, 0x22);
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PDCE |
					   PCI_EXP_SLTCTL_HPIE);
	pcie_port_plug(&port, &child_ops, &child);
	assert_int_equal(msis.n, 0);
	wr(MSI(PCI_MSI_FLAGS), 2, PCI_MSI_FLAGS_ENABLE);
	assert_int_equal(msis.n, 0);
	wr(PCI_COMMAND, 2, PCI_COMMAND_MASTER);
	assert_int_equal(msis.n, 1);
	assert_int_equal(msis.addr, 0xfee01000u);
	/* HPIE off: an event sends nothing. */
	wr(EXP(PCI_EXP_SLTSTA), 2, PCI_EXP_SLTSTA_PDC);
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_PDCE);
	pcie_port_unplug(&port);
	assert_int_equal(msis.n, 1);
	/* The button with its enable off: nothing either; its enable on:
	 * the message (the pressed status is still set). */
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_HPIE);
	pcie_port_press_button(&port);
	assert_int_equal(msis.n, 1);
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_HPIE | PCI_EXP_SLTCTL_ABPE);
	assert_int_equal(msis.n, 2);
}

static void test_power_gates_the_slot(void **state)
{
	struct pci_host h;
	uint8_t b[4];
	uint8_t d = 0;

	(void)state;
	pci_host_init(&h, 0xc0000000, 0xd0000000);
	assert_int_equal(pci_host_add(&h, &pcie_port_pci_ops, &port), 1);
	pcie_port_plug(&port, &child_ops, &child);
	/* Powered off: the bus answers all ones, the BAR nothing. */
	pci_host_cfg_bus(&h, 3, 0, 0, b, 4, false);
	assert_int_equal(b[0] & b[1] & b[2] & b[3], 0xff);
	assert_false(pci_host_mmio(&h, WIN, &d, 1, false));
	/* The link is up (a device is in), x1: pciehp's check after power-on. */
	assert_int_equal(rd(EXP(PCI_EXP_LNKSTA), 2) & PCI_EXP_LNKSTA_NLW,
			 1 << 4);
	assert_false(rd(EXP(PCI_EXP_LNKSTA), 2) & PCI_EXP_LNKSTA_LT);
	/* The guest powers it on. */
	wr(EXP(PCI_EXP_SLTCTL), 2, 0);
	assert_true(pcie_port_powered(&port));
	pci_host_cfg_bus(&h, 3, 0, 0x10, b, 4, false);
	assert_int_equal(b[3], 0xcc);
	assert_int_equal(b[0], 0x10);
	pci_host_cfg_bus(&h, 3, 0, 0x10, b, 4, true);
	assert_int_equal(child.cfg_writes, 1);
	/* Other functions and devices on its bus: none; another bus: none. */
	pci_host_cfg_bus(&h, 3, 1, 0, b, 2, false);
	assert_int_equal(b[0] & b[1], 0xff);
	pci_host_cfg_bus(&h, 3, 8, 0, b, 2, false);
	assert_int_equal(b[0] & b[1], 0xff);
	assert_false(pcie_port_bus_cfg(&port, 4, 0, 0, b, 2, false));
	assert_true(pci_host_mmio(&h, WIN + 4, &d, 1, false));
	assert_int_equal(child.mmio, 1);
	/* Off again: unreachable again. */
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_PCC);
	assert_false(pci_host_mmio(&h, WIN + 4, &d, 1, false));
	pci_host_cfg_bus(&h, 3, 0, 0x10, b, 4, true);
	assert_int_equal(child.cfg_writes, 1);
	/* Unplugged while on: unreachable. */
	wr(EXP(PCI_EXP_SLTCTL), 2, 0);
	pcie_port_unplug(&port);
	assert_false(pci_host_mmio(&h, WIN + 4, &d, 1, false));
	/* With memory space on, the window with nothing decoding it reads
	 * 0 and drops writes (a surprise removal's vp_reset ends); the
	 * device behind is not reached, an address outside is not taken. */
	wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	d = 0xaa;
	assert_true(pci_host_mmio(&h, WIN + 4, &d, 1, false));
	assert_int_equal(d, 0);
	assert_true(pci_host_mmio(&h, WIN + 4, &d, 1, true));
	assert_false(pci_host_mmio(&h, WIN - 4, &d, 1, false));
	assert_int_equal(child.mmio, 1);
	wr(PCI_COMMAND, 2, 0);
	assert_false(pci_host_mmio(&h, WIN + 4, &d, 1, false));
	/* Secondary bus 0 (the guest's garbage) routes nothing. */
	wr(PCI_SECONDARY_BUS, 1, 0);
	assert_false(pcie_port_bus_cfg(&port, 0, 0, 0, b, 2, false));
}

/* What pciehp leaves when done: power off, then the indicator off. */
static void test_quiescent(void **state)
{
	(void)state;
	assert_true(pcie_port_quiescent(&port));
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_PWR_IND_ON);
	assert_false(pcie_port_quiescent(&port));
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_PWR_OFF | PCI_EXP_SLTCTL_PWR_IND_BLINK);
	assert_false(pcie_port_powered(&port));
	assert_false(pcie_port_quiescent(&port));
	wr(EXP(PCI_EXP_SLTCTL), 2, PCI_EXP_SLTCTL_PWR_OFF | PCI_EXP_SLTCTL_PWR_IND_OFF);
	assert_true(pcie_port_quiescent(&port));
}

static void test_garbage_writes(void **state)
{
	static const uint32_t vals[] = { 0, 0xffffffffu, 0xa5a5a5a5u };
	uint32_t sltcap = rd(EXP(PCI_EXP_SLTCAP), 4);

	(void)state;
	pcie_port_plug(&port, &child_ops, &child);
	/* Misaligned, odd sizes, past the end: all ones, counted, ignored. */
	assert_int_equal(rd(1, 2), 0xffffffffu);
	assert_int_equal(rd(0xfe, 4), 0xffffffffu);
	assert_int_equal(rd(0x100, 1), 0xffffffffu);
	assert_int_equal(rd(0, 3), 0xffffffffu);
	wr(EXP(PCI_EXP_SLTCTL) + 1, 2, 0);
	wr(0x100, 4, 0);
	assert_int_equal(port.bad_access, 6);
	assert_true(rd(EXP(PCI_EXP_SLTCTL), 2) & PCI_EXP_SLTCTL_PCC);
	/* Every value at every offset and size: the identity, the
	 * capabilities and presence stay what they are. */
	for (unsigned int v = 0; v < 3; v++)
		for (unsigned int size = 1; size <= 4; size *= 2)
			for (uint32_t off = 0; off < 256; off += size)
				wr(off, size, vals[v]);
	assert_int_equal(rd(PCI_VENDOR_ID, 4), 0x000c1b36u);
	assert_int_equal(rd(PCI_HEADER_TYPE, 1), PCI_HEADER_TYPE_BRIDGE);
	assert_int_equal(rd(PCI_CLASS_DEVICE, 2), 0x0604);
	assert_int_equal(rd(PCI_CAPABILITY_LIST, 1), PCIE_PORT_EXP_CAP);
	assert_int_equal(rd(EXP(1), 1), PCIE_PORT_MSI_CAP);
	assert_int_equal(rd(EXP(PCI_EXP_SLTCAP), 4), sltcap);
	assert_true(rd(EXP(PCI_EXP_SLTSTA), 2) & PCI_EXP_SLTSTA_PDS);
	assert_int_equal(rd(PCI_IO_BASE, 2), 0);
	/* MSI: one vector whatever was asked (Multiple Message Enable 0). */
	assert_int_equal(rd(MSI(PCI_MSI_FLAGS), 2) & PCI_MSI_FLAGS_QSIZE, 0);
	/* The slot still works: the VMM takes the device out. */
	assert_ptr_equal(pcie_port_unplug(&port), &child);
}

static void test_init_refuses_bad_windows(void **state)
{
	struct pcie_port p;

	(void)state;
	assert_int_equal(pcie_port_init(&p, 0, 0, WIN, PCIE_PORT_WINDOW, NULL),
			 -EINVAL);
	assert_int_equal(pcie_port_init(&p, 0, 1, WIN + 4096,
					 PCIE_PORT_WINDOW, NULL), -EINVAL);
	assert_int_equal(pcie_port_init(&p, 0, 1, 0xfff00000u,
					 2 * PCIE_PORT_WINDOW, NULL), -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_header_and_caps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bridge_windows_and_buses,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows_off, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plug_sets_presence_and_msi,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sltsta_is_write_one_to_clear,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_msi_until_allowed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_gates_the_slot,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiescent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_writes, setup,
						teardown),
		cmocka_unit_test(test_init_refuses_bad_windows),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("pcie_port", tests, NULL, NULL);
}
