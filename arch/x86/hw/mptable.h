/* Intel MultiProcessor Specification 1.4 table: the CPUs, an ISA and a
 * PCI bus, the IOAPIC and the ISA interrupt routes.  Pure.
 */
#ifndef HW_MPTABLE_H
#define HW_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

#define MPTABLE_MAX_CPUS 254
#define MPTABLE_IOAPIC_ADDR 0xfec00000u
#define MPTABLE_LAPIC_ADDR 0xfee00000u

/* The table's format (MP spec 1.4, chapter 4), for its readers too. */
#define MP_SPEC_REV 4
#define MP_APIC_VERSION 0x14
#define MP_IOAPIC_VERSION 0x11
#define MP_ISA_IRQS 16

enum { MP_PROC, MP_BUS, MP_IOAPIC, MP_IOINT, MP_LINT };
enum { MP_INT, MP_NMI, MP_SMI, MP_EXTINT };
enum { BUS_PCI, BUS_ISA };

struct mpf {
	char sig[4];
	uint32_t phys;
	uint8_t len, rev, checksum, feature[5];
} __attribute__((packed));

struct mpc {
	char sig[4];
	uint16_t len;
	uint8_t rev, checksum;
	char oem[8], product[12];
	uint32_t oem_ptr;
	uint16_t oem_size, count;
	uint32_t lapic;
	uint16_t ext_len;
	uint8_t ext_checksum, reserved;
} __attribute__((packed));

struct mpc_cpu {
	uint8_t type, apicid, apicver, flags;
	uint32_t sig, features, reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type, id;
	char name[6];
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type, id, ver, flags;
	uint32_t addr;
} __attribute__((packed));

struct mpc_int {
	uint8_t type, irqtype;
	uint16_t flags;
	uint8_t src_bus, src_irq, dst_apic, dst_pin;
} __attribute__((packed));

/* INTA# of PCI slot s (bus 0) reaches this IOAPIC pin (= GSI): the
 * pins above the ISA ones, shared round-robin. */
#define MPTABLE_PCI_PIN(s) (16u + (s) % 8u)
#define MPTABLE_PCI_SLOTS 32

/* Bytes the table needs for ncpus and npci PCI interrupt entries. */
size_t mptable_size(unsigned int ncpus, unsigned int npci);
/* Write the floating pointer and the configuration table at buf, which
 * is guest-physical gpa and has room for len bytes.  cpu_sig and
 * cpu_features are CPUID leaf 1 EAX and EDX; bit s of pci_intx: slot s
 * has an INTA# line (routed to MPTABLE_PCI_PIN(s), level, active low).
 * 0 or -EINVAL / -ENOSPC. */
int mptable_write(uint8_t *buf, uint64_t gpa, size_t len, unsigned int ncpus,
		  uint32_t cpu_sig, uint32_t cpu_features, uint32_t pci_intx);

#endif
