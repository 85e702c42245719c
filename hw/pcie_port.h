/* A PCI Express root port with a native hot-plug slot (pure).
 *
 * A PCI-to-PCI bridge (type 1 header) on bus 0 with a PCI Express
 * capability (Root Port, Slot Implemented) and an MSI capability for
 * its hot-plug interrupt: what Linux's pciehp binds to.  Its slot holds
 * at most one function (device 0, function 0 of its secondary bus),
 * plugged and unplugged by the VMM while the guest runs.
 *
 * The slot offers what pciehp needs and no more: an attention button
 * (the VMM asks the guest to let a device go), a power controller (the
 * guest says it has: Power Controller Control set to off), a power
 * indicator, presence detect; no command-completed events (No Command
 * Completed Support), no MRL, no electromechanical interlock; link
 * active reporting, the link up while a device is in the slot: with an
 * attention button pciehp enables no presence-detect interrupt, and a
 * Data Link Layer State Changed event is what tells it of a device
 * plugged or pulled (plug and unplug raise it with Presence Detect
 * Changed).  The hot-plug interrupt is an MSI, sent when the AND of Hot-Plug
 * Interrupt Enable, an event's status bit and its enable bit goes from
 * false to true (PCIe Base 6.2.4.1), with MSI enabled and Bus Master
 * Enable set; otherwise nothing is sent then.
 *
 * The bridge forwards memory to its secondary bus (no I/O window, no
 * prefetchable window: those registers read 0 and ignore writes), and
 * configuration cycles for its secondary bus number to the device in
 * its slot while the slot is powered; a device is reached in no other
 * way.  Every value the guest writes has a defined outcome (see
 * pcie_port.c); nothing it writes reaches the VMM but the interrupt.
 */
#ifndef HW_PCIE_PORT_H
#define HW_PCIE_PORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/pci_host.h"
#include "hw/pci_func.h"

#define PCIE_PORT_EXP_CAP 0x40 /* PCI Express capability (60 bytes) */
#define PCIE_PORT_MSI_CAP 0x80 /* MSI capability, 64-bit (14 bytes) */
#define PCIE_PORT_WINDOW (1u << 20) /* memory window granularity */

struct pcie_port_cb {
	void *opaque;
	/* Send the MSI (addr, data).  Called with the port's lock held,
	 * from the thread that caused it (a vCPU's config write, or the
	 * VMM's plug, unplug or button). */
	void (*msi)(void *opaque, uint64_t addr, uint32_t data);
};

struct pcie_port {
	pthread_mutex_t lock;         /* the registers */
	pthread_rwlock_t child_lock;  /* child: read to use, write to change */
	struct pci_func func;
	struct pcie_port_cb cb;
	bool irq_level;               /* the interrupt condition, as last sent */
	bool on;                      /* the slot's power (atomic: MMIO path) */
	const struct pci_dev_ops *child_ops; /* NULL: the slot is empty */
	void *child;
	uint64_t bad_access;          /* malformed guest accesses, counted */
};

/* Root port number nr (0-based; physical slot nr + 1) on bus 0, its
 * secondary bus sec (also its subordinate), its memory window [mem,
 * mem + mem_size) (PCIE_PORT_WINDOW aligned and sized) set as firmware
 * would; the slot empty and powered off.  0 or -EINVAL. */
int pcie_port_init(struct pcie_port *p, unsigned int nr, uint8_t sec,
		   uint32_t mem, uint32_t mem_size,
		   const struct pcie_port_cb *cb);
void pcie_port_destroy(struct pcie_port *p);

/* Config space of the port itself (bus 0). */
uint32_t pcie_port_cfg_read(struct pcie_port *p, uint32_t off,
			    unsigned int size);
void pcie_port_cfg_write(struct pcie_port *p, uint32_t off, unsigned int size,
			 uint32_t val);
extern const struct pci_dev_ops pcie_port_pci_ops;

/* A configuration access to bus, devfn behind the port: true if the
 * port's secondary bus is bus (the access is then handled: the slot's
 * device at devfn 0 while powered, all ones otherwise). */
bool pcie_port_bus_cfg(struct pcie_port *p, unsigned int bus,
		       unsigned int devfn, uint32_t off, uint8_t *data,
		       unsigned int size, bool write);

/* ---- the VMM's side of the slot ----------------------------------- */

/* Put a device in the empty slot: Presence Detect State and Changed,
 * and the interrupt.  -EBUSY if the slot holds one. */
int pcie_port_plug(struct pcie_port *p, const struct pci_dev_ops *ops,
		   void *dev);
/* Take the device out (it is reached no more once this returns):
 * presence cleared, Presence Detect Changed, the interrupt.  The device
 * is the caller's again; NULL if the slot was empty. */
void *pcie_port_unplug(struct pcie_port *p);
/* Press the attention button: Attention Button Pressed, the interrupt. */
void pcie_port_press_button(struct pcie_port *p);
bool pcie_port_occupied(struct pcie_port *p);
/* Is the slot's power on (Power Controller Control = on)? */
bool pcie_port_powered(struct pcie_port *p);
/* Power off and the power indicator off: what Linux's pciehp leaves
 * once it is done with a slot (it turns the indicator off a second
 * after the power, and until then drops presence and link events as
 * caused by the power-off: a device plugged then would go unseen). */
bool pcie_port_quiescent(struct pcie_port *p);
/* Before the guest runs, on a host with no I/O space (arm64): the I/O
 * and prefetchable windows' bases above their limits, read-only
 * (windows the bridge has, disabled).  Base = limit = 0, what the port
 * reads otherwise, is to Linux 6.1 the windows [io 0x0-0xfff] and
 * [mem 0x0-0xfffff pref], which it cannot claim there (probe-only, the
 * host's one range non-prefetchable memory): the port driver then does
 * not bind (no pciehp). */
void pcie_port_windows_off(struct pcie_port *p);
/* The port's bus, device, function as its MSI's requester id. */
uint8_t pcie_port_secondary(struct pcie_port *p);

#endif
