/* A PCI function's configuration space: see pci_func.h. */
#include "hw/pci_func.h"

#include <errno.h>
#include <linux/pci_regs.h>
#include <string.h>

void pci_func_init(struct pci_func *f, uint16_t vendor, uint16_t device,
		   uint32_t class_code, uint8_t revision, uint16_t subsys_vendor,
		   uint16_t subsys)
{
	memset(f, 0, sizeof(*f));
	pci_put16(f->cfg + PCI_VENDOR_ID, vendor);
	pci_put16(f->cfg + PCI_DEVICE_ID, device);
	f->cfg[PCI_REVISION_ID] = revision;
	f->cfg[PCI_CLASS_PROG] = (uint8_t)class_code;
	pci_put16(f->cfg + PCI_CLASS_DEVICE, (uint16_t)(class_code >> 8));
	pci_put16(f->cfg + PCI_SUBSYSTEM_VENDOR_ID, subsys_vendor);
	pci_put16(f->cfg + PCI_SUBSYSTEM_ID, subsys);
	f->cfg[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL;
	/* command: I/O, memory, bus master, INTx disable */
	pci_put16(f->wmask + PCI_COMMAND, PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
					      PCI_COMMAND_MASTER |
					      PCI_COMMAND_INTX_DISABLE);
	f->wmask[PCI_CACHE_LINE_SIZE] = 0xff;
	f->wmask[PCI_LATENCY_TIMER] = 0xff;
	f->wmask[PCI_INTERRUPT_LINE] = 0xff;
	f->cap_end = 0x40;
}

int pci_func_set_bar(struct pci_func *f, unsigned int bar, uint32_t size,
		     bool io, uint32_t addr)
{
	uint32_t off = PCI_BASE_ADDRESS_0 + 4 * bar, flags, mask;

	if (bar >= PCI_BARS || !size || (size & (size - 1)) ||
	    size < (io ? 4u : 16u) || (addr & (size - 1)))
		return -EINVAL;
	flags = io ? PCI_BASE_ADDRESS_SPACE_IO : PCI_BASE_ADDRESS_MEM_TYPE_32;
	mask = ~(size - 1);
	f->bar_size[bar] = size;
	f->bar_io[bar] = io;
	pci_put32(f->cfg + off, addr | flags);
	pci_put32(f->wmask + off, mask);
	return 0;
}

int pci_func_add_cap(struct pci_func *f, const void *cap, uint8_t len)
{
	unsigned int off = (f->cap_end + 3u) & ~3u;

	if (len < 2 || off + len > PCI_CFG_SPACE)
		return -ENOSPC;
	memcpy(f->cfg + off, cap, len);
	f->cfg[off + 1] = 0;
	if (f->last_cap)
		f->cfg[f->last_cap + 1] = (uint8_t)off;
	else
		f->cfg[PCI_CAPABILITY_LIST] = (uint8_t)off;
	pci_put16(f->cfg + PCI_STATUS, PCI_STATUS_CAP_LIST);
	f->last_cap = (uint8_t)off;
	f->cap_end = (uint16_t)(off + len);
	return (int)off;
}

bool pci_cfg_access_ok(uint32_t off, unsigned int size)
{
	if (size != 1 && size != 2 && size != 4)
		return false;
	return !(off & (size - 1)) && off < PCI_CFG_SPACE &&
	       off + size <= PCI_CFG_SPACE;
}

uint32_t pci_func_read(const struct pci_func *f, uint32_t off,
		       unsigned int size)
{
	uint32_t v = 0;

	if (!pci_cfg_access_ok(off, size))
		return 0xffffffffu;
	for (unsigned int i = 0; i < size; i++)
		v |= (uint32_t)f->cfg[off + i] << (8 * i);
	return v;
}

void pci_func_write(struct pci_func *f, uint32_t off, unsigned int size,
		    uint32_t val)
{
	if (!pci_cfg_access_ok(off, size))
		return;
	for (unsigned int i = 0; i < size; i++) {
		uint8_t m = f->wmask[off + i], b = (uint8_t)(val >> (8 * i));

		f->cfg[off + i] = (uint8_t)((f->cfg[off + i] & ~m) | (b & m));
	}
}

bool pci_func_bar(const struct pci_func *f, unsigned int bar, uint64_t *base)
{
	uint32_t v, cmd;

	if (bar >= PCI_BARS || !f->bar_size[bar])
		return false;
	cmd = pci_func_read(f, PCI_COMMAND, 2);
	v = pci_func_read(f, PCI_BASE_ADDRESS_0 + 4 * bar, 4);
	if (f->bar_io[bar]) {
		if (!(cmd & PCI_COMMAND_IO))
			return false;
		v &= PCI_BASE_ADDRESS_IO_MASK;
	} else {
		if (!(cmd & PCI_COMMAND_MEMORY))
			return false;
		v &= PCI_BASE_ADDRESS_MEM_MASK;
	}
	/* Unprogrammed, or left at the all-ones sizing pattern. */
	if (!v || v == (~(f->bar_size[bar] - 1) & ~0xfu))
		return false;
	*base = v;
	return true;
}
