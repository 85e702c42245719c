/* A PCI function's configuration space (pure): the type 0 or type 1
 * header, write masks, BARs and a capability list, as the guest reads
 * and writes them.  virtio-pci (virtio/pci.c), the host bridge and
 * pvpanic (hw/pci_host.c, hw/pvpanic.c) and the PCIe root ports
 * (hw/pcie_port.c) are built on it.
 */
#ifndef HW_PCI_FUNC_H
#define HW_PCI_FUNC_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_CFG_SPACE 256
#define PCI_BARS 6

struct pci_func {
	uint8_t cfg[PCI_CFG_SPACE];
	uint8_t wmask[PCI_CFG_SPACE]; /* bits the guest may change */
	uint32_t bar_size[PCI_BARS];  /* 0: no BAR; else a power of two */
	bool bar_io[PCI_BARS];
	uint8_t last_cap;             /* offset of the last capability */
	uint16_t cap_end;             /* first free byte for a capability */
};

void pci_func_init(struct pci_func *f, uint16_t vendor, uint16_t device,
		   uint32_t class_code, uint8_t revision, uint16_t subsys_vendor,
		   uint16_t subsys);
/* BAR bar of size (power of two, >= 16 for memory, >= 4 for I/O) at addr.
 * 0 or -EINVAL. */
int pci_func_set_bar(struct pci_func *f, unsigned int bar, uint32_t size,
		     bool io, uint32_t addr);
/* Append a capability (cap[0] is its ID; next pointer filled in).
 * Returns its offset, or -ENOSPC. */
int pci_func_add_cap(struct pci_func *f, const void *cap, uint8_t len);
/* Config access of size 1, 2 or 4 at off (naturally aligned; anything
 * else reads ~0 and is ignored on write). */
uint32_t pci_func_read(const struct pci_func *f, uint32_t off,
		       unsigned int size);
void pci_func_write(struct pci_func *f, uint32_t off, unsigned int size,
		    uint32_t val);
/* True if the BAR decodes now (decoding enabled, address programmed);
 * *base gets its address. */
bool pci_func_bar(const struct pci_func *f, unsigned int bar, uint64_t *base);

/* A config access of size 1, 2 or 4, naturally aligned, inside the
 * 256 bytes: what pci_func_read and pci_func_write take. */
bool pci_cfg_access_ok(uint32_t off, unsigned int size);

/* Little-endian loads and stores in config space. */
static inline uint16_t pci_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline void pci_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void pci_put32(uint8_t *p, uint32_t v)
{
	pci_put16(p, (uint16_t)v);
	pci_put16(p + 2, (uint16_t)(v >> 16));
}

#endif
