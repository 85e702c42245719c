/* Fuzz a PCIe root port with its hot-plug slot (hw/pcie_port.c) as the
 * guest and the VMM reach it together: the guest's configuration reads
 * and writes of the port (any offset, 1, 2 or 4 bytes: the bridge
 * header, the PCI Express capability with its slot registers, MSI) and
 * of the bus behind it, and the VMM's plug, unplug and attention button
 * in any order.
 *
 * Checks: no crash, no access outside the port's state (ASan); a
 * device's configuration space is reached only while it is in the slot
 * and the slot is powered; every interrupt is sent with MSI enabled and
 * bus mastering on; the slot's occupancy follows plug and unplug; what
 * unplug gives back is the device plugged.
 *
 * Input: accesses of 7 bytes each: op (bits 0-1 size 1 << n, capped at
 * 4; bits 2-4: 0-3 a port config access (bit 2 write), 4 and 5 a config
 * access to the secondary bus (5 write, devfn from the offset's high
 * byte), 6 plug, unplug or button (by the offset byte), 7 a port config
 * write of the value at a slot register), 2 offset bytes, 4 value bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "hw/pcie_port.h"
#include "tests/fuzz/fuzz.h"

#define FZ_SEC 1
#define FZ_MEM 0xc0000000u

struct fz_child {
	unsigned int cfg_reads, cfg_writes;
	struct pcie_port *port;
};

struct fz_state {
	struct pcie_port port;
	unsigned int msis;
};

static uint32_t child_cfg_read(void *opaque, uint32_t off, unsigned int size)
{
	struct fz_child *c = opaque;

	CHECK(off < 4096 && size >= 1 && size <= 4);
	/* Reached only while the slot is powered. */
	CHECK(pcie_port_powered(c->port));
	c->cfg_reads++;
	return 0x10011af4u; /* a virtio vendor and device id */
}

static void child_cfg_write(void *opaque, uint32_t off, unsigned int size,
			    uint32_t val)
{
	struct fz_child *c = opaque;

	(void)val;
	CHECK(off < 4096 && size >= 1 && size <= 4);
	CHECK(pcie_port_powered(c->port));
	c->cfg_writes++;
}

static bool child_mmio(void *opaque, uint64_t addr, uint8_t *data,
		       unsigned int size, bool write)
{
	(void)opaque, (void)addr, (void)data, (void)size, (void)write;
	return false;
}

static const struct pci_dev_ops child_ops = {
	.cfg_read = child_cfg_read,
	.cfg_write = child_cfg_write,
	.mmio = child_mmio,
};

static void fz_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct fz_state *s = opaque;
	/* The port's own registers, read back as the guest would (the
	 * port's lock is held: its function's raw bytes, not the API). */
	uint16_t cmd = (uint16_t)(s->port.func.cfg[4] | s->port.func.cfg[5] << 8);
	uint16_t msi_ctl = (uint16_t)(s->port.func.cfg[PCIE_PORT_MSI_CAP + 2] |
				      s->port.func.cfg[PCIE_PORT_MSI_CAP + 3] << 8);

	(void)addr, (void)data;
	CHECK(cmd & 0x4);     /* Bus Master Enable */
	CHECK(msi_ctl & 0x1); /* MSI Enable */
	s->msis++;
}

/* Slot registers of the PCI Express capability a write may aim at. */
static const uint16_t slot_regs[] = {
	PCIE_PORT_EXP_CAP + 0x18, /* Slot Control */
	PCIE_PORT_EXP_CAP + 0x1a, /* Slot Status (RW1C) */
	PCIE_PORT_EXP_CAP + 0x10, /* Link Control */
	PCIE_PORT_MSI_CAP + 2,    /* MSI Control */
	0x04,                     /* Command */
	0x18,                     /* bus numbers */
	0x20,                     /* memory window */
	0x3e,                     /* Bridge Control */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_state s;
	struct fz_child child = { .port = &s.port };
	const struct pcie_port_cb cb = { .opaque = &s, .msi = fz_msi };
	bool plugged = false;

	memset(&s, 0, sizeof(s));
	if (pcie_port_init(&s.port, 0, FZ_SEC, FZ_MEM, PCIE_PORT_WINDOW, &cb))
		abort();
	for (size_t i = 0; i + 7 <= size; i += 7) {
		const uint8_t *a = data + i;
		unsigned int len = 1u << (a[0] & 3);
		unsigned int kind = (a[0] >> 2) & 7;
		uint32_t off = (uint32_t)(a[1] | a[2] << 8);
		uint32_t val;
		uint8_t buf[4];

		if (len > 4)
			len = 4;
		memcpy(&val, a + 3, 4);
		memcpy(buf, a + 3, 4);
		switch (kind) {
		case 0: case 1: /* a port read, anywhere in 4 KiB or beyond */
			(void)pcie_port_cfg_read(&s.port, off & 0x1fff, len);
			break;
		case 2: case 3:
			pcie_port_cfg_write(&s.port, off & 0x1fff, len, val);
			break;
		case 4: case 5: /* behind the port: the slot's device or nothing */
			(void)pcie_port_bus_cfg(&s.port, FZ_SEC + (a[0] >> 7),
						(off >> 12) & 0xff, off & 0xfff, buf,
						len, kind == 5);
			break;
		case 6:
			switch (a[1] % 4) {
			case 0: {
				int r = pcie_port_plug(&s.port, &child_ops, &child);

				CHECK(plugged ? r == -EBUSY : r == 0);
				plugged = true;
				break;
			}
			case 1: {
				void *d = pcie_port_unplug(&s.port);

				CHECK(d == (plugged ? (void *)&child : NULL));
				plugged = false;
				break;
			}
			case 2: { /* MMIO near and in the window the guest set */
				uint64_t addr = FZ_MEM - 0x1000 +
						((uint64_t)a[2] << 16 | a[3] << 8 | a[4]) * 16;

				memset(buf, 0xa5, sizeof(buf));
				/* Nothing behind decodes (child_mmio): taken
				 * only by the window, which reads 0. */
				if (pcie_port_pci_ops.mmio(&s.port, addr, buf, len,
							   false))
					CHECK(!buf[0] && !buf[len - 1]);
				break;
			}
			default:
				pcie_port_press_button(&s.port);
			}
			CHECK(pcie_port_occupied(&s.port) == plugged);
			break;
		default:
			pcie_port_cfg_write(&s.port,
					    slot_regs[a[1] % (sizeof(slot_regs) /
							      sizeof(slot_regs[0]))],
					    len, val);
		}
	}
	(void)pcie_port_quiescent(&s.port);
	if (plugged)
		CHECK(pcie_port_unplug(&s.port) == &child);
	pcie_port_destroy(&s.port);
	return 0;
}
