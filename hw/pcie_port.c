/* A PCI Express root port with a native hot-plug slot; see pcie_port.h.
 *
 * What a guest write does, register by register (anything not named is
 * read-only and a write to it is ignored; an access that is not 1, 2 or
 * 4 bytes naturally aligned inside the 256 bytes reads all ones, is
 * ignored on write and counted in bad_access):
 *  - command: I/O, memory, bus master, SERR, INTx disable bits stored;
 *    bus master gates the hot-plug MSI, nothing else has an effect;
 *  - bus numbers, memory base and limit, bridge control: stored; the
 *    secondary bus number decides which configuration cycles reach the
 *    slot (0 or a number another port also has: see pci_host.c, the
 *    first port in slot order answers); windows are not enforced;
 *  - PCI Express Device, Link and Root Control: stored, no effect;
 *  - Slot Control: stored (bits 0-10, 12); Power Controller Control turns
 *    the slot's power (and with it the device's reachability) on or
 *    off; the rest is enables and indicators;
 *  - Slot Status: write 1 to clear the event bits (0-4, 8); presence is
 *    the VMM's;
 *  - MSI: enable, address and data stored (Multiple Message Enable reads
 *    0: one vector).
 */
#include "hw/pcie_port.h"

#include <errno.h>
#include <linux/pci_regs.h>
#include <string.h>

#define EXP(r) (PCIE_PORT_EXP_CAP + (r))
#define MSI(r) (PCIE_PORT_MSI_CAP + (r))
#define EXP_CAP_LEN 0x3c
#define MSI_CAP_LEN 0x0e

/* QEMU's "pcie-root-port" identifiers: a root port Linux knows, with no
 * quirk attached to it. */
#define PORT_VENDOR 0x1b36
#define PORT_DEVICE 0x000c

#define SLTSTA_EVENTS                                                      \
	(PCI_EXP_SLTSTA_ABP | PCI_EXP_SLTSTA_PFD | PCI_EXP_SLTSTA_MRLSC |  \
	 PCI_EXP_SLTSTA_PDC | PCI_EXP_SLTSTA_CC | PCI_EXP_SLTSTA_DLLSC)
#define SLTCTL_RW 0x17ff /* enables, indicators, power controller */
#define LNKSTA_UP (0x0011 | PCI_EXP_LNKSTA_DLLLA) /* 2.5 GT/s, x1, up */

static uint16_t reg16(const struct pcie_port *p, uint32_t off)
{
	return pci_get16(p->func.cfg + off);
}

static void set16(struct pcie_port *p, uint32_t off, uint16_t v)
{
	pci_put16(p->func.cfg + off, v);
}

static bool slot_powered(const struct pcie_port *p)
{
	return !(reg16(p, EXP(PCI_EXP_SLTCTL)) & PCI_EXP_SLTCTL_PCC);
}

/* Link Status follows the slot: up while a device is in it (as QEMU's
 * root ports do; the slot's power gates what reaches the device). */
static void update_link(struct pcie_port *p)
{
	set16(p, EXP(PCI_EXP_LNKSTA), p->child_ops ? LNKSTA_UP : 0);
}

/* Send the MSI when the interrupt condition rises (PCIe Base 6.7.3.4:
 * the AND of HPIE, an event and its enable) while MSI may be sent. */
static void update_irq(struct pcie_port *p)
{
	uint16_t ctl = reg16(p, EXP(PCI_EXP_SLTCTL));
	uint16_t sta = reg16(p, EXP(PCI_EXP_SLTSTA));
	uint16_t en = 0;
	bool level;

	if (ctl & PCI_EXP_SLTCTL_ABPE)
		en |= PCI_EXP_SLTSTA_ABP;
	if (ctl & PCI_EXP_SLTCTL_PFDE)
		en |= PCI_EXP_SLTSTA_PFD;
	if (ctl & PCI_EXP_SLTCTL_MRLSCE)
		en |= PCI_EXP_SLTSTA_MRLSC;
	if (ctl & PCI_EXP_SLTCTL_PDCE)
		en |= PCI_EXP_SLTSTA_PDC;
	if (ctl & PCI_EXP_SLTCTL_CCIE)
		en |= PCI_EXP_SLTSTA_CC;
	if (ctl & PCI_EXP_SLTCTL_DLLSCE)
		en |= PCI_EXP_SLTSTA_DLLSC;
	level = (ctl & PCI_EXP_SLTCTL_HPIE) && (sta & en) &&
		(reg16(p, MSI(PCI_MSI_FLAGS)) & PCI_MSI_FLAGS_ENABLE) &&
		(reg16(p, PCI_COMMAND) & PCI_COMMAND_MASTER);
	if (level && !p->irq_level && p->cb.msi) {
		uint64_t addr = pci_func_read(&p->func, MSI(PCI_MSI_ADDRESS_LO), 4) |
				(uint64_t)pci_func_read(&p->func,
							MSI(PCI_MSI_ADDRESS_HI), 4)
					<< 32;

		p->cb.msi(p->cb.opaque, addr, reg16(p, MSI(PCI_MSI_DATA_64)));
	}
	p->irq_level = level;
}

static void init_bridge(struct pci_func *f, uint8_t sec, uint32_t mem,
			uint32_t mem_size)
{
	f->cfg[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_BRIDGE;
	pci_put16(f->wmask + PCI_COMMAND,
		  pci_get16(f->wmask + PCI_COMMAND) | PCI_COMMAND_SERR);
	f->cfg[PCI_SECONDARY_BUS] = sec;
	f->cfg[PCI_SUBORDINATE_BUS] = sec;
	memset(f->wmask + PCI_PRIMARY_BUS, 0xff, 4); /* and sec. latency */
	pci_put16(f->cfg + PCI_MEMORY_BASE, (uint16_t)((mem >> 16) & 0xfff0));
	pci_put16(f->cfg + PCI_MEMORY_LIMIT,
		  (uint16_t)(((mem + mem_size - 1) >> 16) & 0xfff0));
	pci_put16(f->wmask + PCI_MEMORY_BASE, 0xfff0);
	pci_put16(f->wmask + PCI_MEMORY_LIMIT, 0xfff0);
	pci_put16(f->wmask + PCI_BRIDGE_CONTROL, 0x0fff);
}

static void init_caps(struct pcie_port *p, unsigned int nr)
{
	uint8_t exp[EXP_CAP_LEN] = { PCI_CAP_ID_EXP }, msi[MSI_CAP_LEN] = {
		PCI_CAP_ID_MSI
	};
	struct pci_func *f = &p->func;

	pci_put16(exp + PCI_EXP_FLAGS, 2 | PCI_EXP_TYPE_ROOT_PORT << 4 |
					       PCI_EXP_FLAGS_SLOT);
	pci_put32(exp + PCI_EXP_DEVCAP, PCI_EXP_DEVCAP_RBER);
	pci_put32(exp + PCI_EXP_LNKCAP, 0x11 | PCI_EXP_LNKCAP_DLLLARC |
						(uint32_t)(nr + 1) << 24);
	pci_put32(exp + PCI_EXP_SLTCAP,
		  PCI_EXP_SLTCAP_ABP | PCI_EXP_SLTCAP_PCP | PCI_EXP_SLTCAP_PIP |
			  PCI_EXP_SLTCAP_HPC | PCI_EXP_SLTCAP_NCCS |
			  (uint32_t)(nr + 1) << 19);
	/* Empty and off: power off, power indicator off. */
	pci_put16(exp + PCI_EXP_SLTCTL,
		  PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF);
	pci_put32(exp + PCI_EXP_LNKCAP2, PCI_EXP_LNKCAP2_SLS_2_5GB);
	pci_put16(exp + PCI_EXP_LNKCTL2, PCI_EXP_LNKCTL2_TLS_2_5GT);
	pci_put16(msi + PCI_MSI_FLAGS, PCI_MSI_FLAGS_64BIT);
	pci_func_add_cap(f, exp, sizeof(exp));
	f->cap_end = PCIE_PORT_MSI_CAP; /* where MSI() expects it */
	pci_func_add_cap(f, msi, sizeof(msi));
	pci_put16(f->wmask + EXP(PCI_EXP_DEVCTL), 0x7fff);
	pci_put16(f->wmask + EXP(PCI_EXP_LNKCTL), 0x0fdf); /* not Retrain */
	pci_put16(f->wmask + EXP(PCI_EXP_SLTCTL), SLTCTL_RW);
	pci_put16(f->wmask + EXP(PCI_EXP_RTCTL), 0x001f);
	pci_put16(f->wmask + MSI(PCI_MSI_FLAGS), PCI_MSI_FLAGS_ENABLE);
	pci_put32(f->wmask + MSI(PCI_MSI_ADDRESS_LO), 0xfffffffcu);
	pci_put32(f->wmask + MSI(PCI_MSI_ADDRESS_HI), 0xffffffffu);
	pci_put16(f->wmask + MSI(PCI_MSI_DATA_64), 0xffff);
}

int pcie_port_init(struct pcie_port *p, unsigned int nr, uint8_t sec,
		   uint32_t mem, uint32_t mem_size,
		   const struct pcie_port_cb *cb)
{
	if (!sec || nr >= 0x1fff || !mem_size ||
	    (mem | mem_size) & (PCIE_PORT_WINDOW - 1) ||
	    (uint64_t)mem + mem_size > 0x100000000ull)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_rwlock_init(&p->child_lock, NULL);
	if (cb)
		p->cb = *cb;
	pci_func_init(&p->func, PORT_VENDOR, PORT_DEVICE,
		      0x060400 /* PCI-to-PCI bridge */, 0, 0, 0);
	init_bridge(&p->func, sec, mem, mem_size);
	init_caps(p, nr);
	return 0;
}

void pcie_port_destroy(struct pcie_port *p)
{
	pthread_rwlock_destroy(&p->child_lock);
	pthread_mutex_destroy(&p->lock);
}

uint32_t pcie_port_cfg_read(struct pcie_port *p, uint32_t off,
			    unsigned int size)
{
	uint32_t v;

	if (!pci_cfg_access_ok(off, size)) {
		__atomic_add_fetch(&p->bad_access, 1, __ATOMIC_RELAXED);
		return 0xffffffffu;
	}
	pthread_mutex_lock(&p->lock);
	v = pci_func_read(&p->func, off, size);
	pthread_mutex_unlock(&p->lock);
	return v;
}

/* The bytes of Slot Status a write covers, as the 16-bit value written
 * there (bytes it does not cover: 0, which clears nothing). */
static uint16_t sltsta_written(uint32_t off, unsigned int size, uint32_t val)
{
	uint16_t w = 0;

	for (unsigned int i = 0; i < size; i++) {
		uint32_t at = off + i;

		if (at == EXP(PCI_EXP_SLTSTA) || at == EXP(PCI_EXP_SLTSTA) + 1)
			w |= (uint16_t)(((val >> (8 * i)) & 0xff)
					<< (8 * (at - EXP(PCI_EXP_SLTSTA))));
	}
	return w;
}

void pcie_port_cfg_write(struct pcie_port *p, uint32_t off, unsigned int size,
			 uint32_t val)
{
	uint16_t clear, sta;
	bool was_on;

	if (!pci_cfg_access_ok(off, size)) {
		__atomic_add_fetch(&p->bad_access, 1, __ATOMIC_RELAXED);
		return;
	}
	pthread_mutex_lock(&p->lock);
	was_on = slot_powered(p);
	pci_func_write(&p->func, off, size, val);
	clear = sltsta_written(off, size, val) & SLTSTA_EVENTS;
	if (clear) {
		sta = reg16(p, EXP(PCI_EXP_SLTSTA));
		set16(p, EXP(PCI_EXP_SLTSTA), sta & (uint16_t)~clear);
	}
	if (slot_powered(p) != was_on)
		__atomic_store_n(&p->on, slot_powered(p), __ATOMIC_RELEASE);
	update_irq(p);
	pthread_mutex_unlock(&p->lock);
}

bool pcie_port_bus_cfg(struct pcie_port *p, unsigned int bus,
		       unsigned int devfn, uint32_t off, uint8_t *data,
		       unsigned int size, bool write)
{
	uint8_t sec, sub;
	uint32_t v = 0;
	bool on;

	pthread_mutex_lock(&p->lock);
	sec = p->func.cfg[PCI_SECONDARY_BUS];
	sub = p->func.cfg[PCI_SUBORDINATE_BUS];
	on = slot_powered(p);
	pthread_mutex_unlock(&p->lock);
	if (!sec || bus < sec || bus > (sub > sec ? sub : sec))
		return false;
	pthread_rwlock_rdlock(&p->child_lock);
	if (bus == sec && devfn == 0 && on && p->child_ops) {
		if (write) {
			memcpy(&v, data, size);
			p->child_ops->cfg_write(p->child, off, size, v);
		} else {
			v = p->child_ops->cfg_read(p->child, off, size);
			memcpy(data, &v, size);
		}
	} else if (!write) {
		memset(data, 0xff, size);
	}
	pthread_rwlock_unlock(&p->child_lock);
	return true;
}

/* addr is inside the memory window the guest gave the port (memory
 * space enabled). */
static bool in_window(struct pcie_port *p, uint64_t addr)
{
	uint64_t base, limit;
	bool in;

	pthread_mutex_lock(&p->lock);
	base = (uint64_t)(reg16(p, PCI_MEMORY_BASE) & 0xfff0) << 16;
	limit = (uint64_t)(reg16(p, PCI_MEMORY_LIMIT) & 0xfff0) << 16 | 0xfffff;
	in = (reg16(p, PCI_COMMAND) & PCI_COMMAND_MEMORY) && base <= addr &&
	     addr <= limit;
	pthread_mutex_unlock(&p->lock);
	return in;
}

/* An MMIO or port access the bus offers the port: the device in the
 * slot decodes it while the slot is powered. */
static bool child_access(struct pcie_port *p, bool pio, uint64_t addr,
			 uint8_t *data, unsigned int size, bool write)
{
	bool hit = false;

	if (!__atomic_load_n(&p->on, __ATOMIC_ACQUIRE))
		return false;
	pthread_rwlock_rdlock(&p->child_lock);
	if (p->child_ops && !pio)
		hit = p->child_ops->mmio(p->child, addr, data, size, write);
	else if (p->child_ops && p->child_ops->pio)
		hit = p->child_ops->pio(p->child, addr, data, size, write);
	pthread_rwlock_unlock(&p->child_lock);
	return hit;
}

/* A memory access inside the port's window that no device decodes (the
 * slot empty or off) reads 0 and its write is dropped, as QEMU's
 * unassigned memory does, not all ones: Linux 6.1's virtio-pci, removing
 * a device after a surprise removal, polls its status register until it
 * reads 0 (vp_reset in drivers/virtio/virtio_pci_modern.c) and would
 * spin on all ones for good. */
static bool port_mmio(void *opaque, uint64_t addr, uint8_t *data,
		      unsigned int size, bool write)
{
	struct pcie_port *p = opaque;

	if (child_access(p, false, addr, data, size, write))
		return true;
	if (!in_window(p, addr))
		return false;
	if (!write)
		memset(data, 0, size);
	return true;
}

static bool port_pio(void *opaque, uint64_t port, uint8_t *data,
		     unsigned int size, bool write)
{
	return child_access(opaque, true, port, data, size, write);
}

static uint32_t port_cfg_read(void *opaque, uint32_t off, unsigned int size)
{
	return pcie_port_cfg_read(opaque, off, size);
}

static void port_cfg_write(void *opaque, uint32_t off, unsigned int size,
			   uint32_t val)
{
	pcie_port_cfg_write(opaque, off, size, val);
}

static bool port_bus_cfg(void *opaque, unsigned int bus, unsigned int devfn,
			 uint32_t off, uint8_t *data, unsigned int size,
			 bool write)
{
	return pcie_port_bus_cfg(opaque, bus, devfn, off, data, size, write);
}

const struct pci_dev_ops pcie_port_pci_ops = {
	.cfg_read = port_cfg_read, .cfg_write = port_cfg_write,
	.mmio = port_mmio, .pio = port_pio, .bus_cfg = port_bus_cfg,
};

/* ---- the VMM's side -------------------------------------------------- */

void pcie_port_windows_off(struct pcie_port *p)
{
	pthread_mutex_lock(&p->lock);
	p->func.cfg[PCI_IO_BASE] = 0xf0;
	p->func.cfg[PCI_IO_LIMIT] = 0x00;
	pci_put16(p->func.cfg + PCI_PREF_MEMORY_BASE, 0xfff0);
	pci_put16(p->func.cfg + PCI_PREF_MEMORY_LIMIT, 0x0000);
	pthread_mutex_unlock(&p->lock);
}

static void raise_event(struct pcie_port *p, uint16_t ev)
{
	set16(p, EXP(PCI_EXP_SLTSTA), reg16(p, EXP(PCI_EXP_SLTSTA)) | ev);
	update_irq(p);
}

int pcie_port_plug(struct pcie_port *p, const struct pci_dev_ops *ops,
		   void *dev)
{
	pthread_rwlock_wrlock(&p->child_lock);
	if (p->child_ops) {
		pthread_rwlock_unlock(&p->child_lock);
		return -EBUSY;
	}
	p->child_ops = ops;
	p->child = dev;
	pthread_rwlock_unlock(&p->child_lock);
	pthread_mutex_lock(&p->lock);
	update_link(p);
	set16(p, EXP(PCI_EXP_SLTSTA),
	      reg16(p, EXP(PCI_EXP_SLTSTA)) | PCI_EXP_SLTSTA_PDS);
	raise_event(p, PCI_EXP_SLTSTA_PDC | PCI_EXP_SLTSTA_DLLSC);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void *pcie_port_unplug(struct pcie_port *p)
{
	void *dev;

	pthread_rwlock_wrlock(&p->child_lock);
	dev = p->child;
	p->child_ops = NULL;
	p->child = NULL;
	pthread_rwlock_unlock(&p->child_lock);
	if (!dev)
		return NULL;
	pthread_mutex_lock(&p->lock);
	update_link(p);
	set16(p, EXP(PCI_EXP_SLTSTA),
	      reg16(p, EXP(PCI_EXP_SLTSTA)) & (uint16_t)~PCI_EXP_SLTSTA_PDS);
	raise_event(p, PCI_EXP_SLTSTA_PDC | PCI_EXP_SLTSTA_DLLSC);
	pthread_mutex_unlock(&p->lock);
	return dev;
}

void pcie_port_press_button(struct pcie_port *p)
{
	pthread_mutex_lock(&p->lock);
	raise_event(p, PCI_EXP_SLTSTA_ABP);
	pthread_mutex_unlock(&p->lock);
}

bool pcie_port_occupied(struct pcie_port *p)
{
	bool r;

	pthread_rwlock_rdlock(&p->child_lock);
	r = p->child_ops != NULL;
	pthread_rwlock_unlock(&p->child_lock);
	return r;
}

bool pcie_port_powered(struct pcie_port *p)
{
	bool r;

	pthread_mutex_lock(&p->lock);
	r = slot_powered(p);
	pthread_mutex_unlock(&p->lock);
	return r;
}

bool pcie_port_quiescent(struct pcie_port *p)
{
	bool r;

	pthread_mutex_lock(&p->lock);
	r = !slot_powered(p) &&
	    (reg16(p, EXP(PCI_EXP_SLTCTL)) & PCI_EXP_SLTCTL_PIC) ==
		    PCI_EXP_SLTCTL_PWR_IND_OFF;
	pthread_mutex_unlock(&p->lock);
	return r;
}

uint8_t pcie_port_secondary(struct pcie_port *p)
{
	uint8_t r;

	pthread_mutex_lock(&p->lock);
	r = p->func.cfg[PCI_SECONDARY_BUS];
	pthread_mutex_unlock(&p->lock);
	return r;
}
