/* Intel MultiProcessor Specification 1.4 table: the CPUs, an ISA and a
 * PCI bus, the IOAPIC and the ISA interrupt routes.  Pure.
 */
#ifndef VMM_MPTABLE_H
#define VMM_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

#define MPTABLE_MAX_CPUS 254
#define MPTABLE_IOAPIC_ADDR 0xfec00000u
#define MPTABLE_LAPIC_ADDR 0xfee00000u

/* Bytes the table needs for ncpus. */
size_t mptable_size(unsigned int ncpus);
/* Write the floating pointer and the configuration table at buf, which
 * is guest-physical gpa and has room for len bytes.  cpu_sig and
 * cpu_features are CPUID leaf 1 EAX and EDX.  0 or -EINVAL / -ENOSPC. */
int mptable_write(uint8_t *buf, uint64_t gpa, size_t len, unsigned int ncpus,
		  uint32_t cpu_sig, uint32_t cpu_features);

#endif
