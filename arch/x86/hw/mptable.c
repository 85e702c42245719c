/* MP table writer (MultiProcessor Specification 1.4, chapter 4). */
#include "arch/x86/hw/mptable.h"

#include <errno.h>
#include <string.h>



static uint8_t mp_checksum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return (uint8_t)-s;
}

size_t mptable_size(unsigned int ncpus, unsigned int npci)
{
	return sizeof(struct mpf) + sizeof(struct mpc) +
	       ncpus * sizeof(struct mpc_cpu) + 2 * sizeof(struct mpc_bus) +
	       sizeof(struct mpc_ioapic) +
	       (MP_ISA_IRQS - 1 + 2 + npci) * sizeof(struct mpc_int);
}

/* PCI INTA# of each slot in pci_intx: source IRQ (slot << 2) | pin - 1;
 * flags 0 (conforms to the bus: level, active low). */
static uint8_t *mp_pci_ints(uint8_t *p, uint8_t ioapic, uint32_t pci_intx)
{
	for (unsigned int s = 0; s < MPTABLE_PCI_SLOTS; s++) {
		struct mpc_int e = { MP_IOINT, MP_INT, 0, BUS_PCI,
				     (uint8_t)(s << 2), ioapic,
				     (uint8_t)MPTABLE_PCI_PIN(s) };

		if (!(pci_intx & (1u << s)))
			continue;
		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	return p;
}

static uint8_t *mp_cpus(uint8_t *p, unsigned int ncpus, uint32_t sig,
			uint32_t features)
{
	for (unsigned int i = 0; i < ncpus; i++) {
		struct mpc_cpu c = {
			.type = MP_PROC, .apicid = (uint8_t)i,
			.apicver = MP_APIC_VERSION,
			.flags = (uint8_t)(1 | (i == 0 ? 2 : 0)), /* EN, BP */
			.sig = sig, .features = features,
		};

		memcpy(p, &c, sizeof(c));
		p += sizeof(c);
	}
	return p;
}

static uint8_t *mp_ints(uint8_t *p, uint8_t ioapic)
{
	struct mpc_int e;

	for (unsigned int irq = 0; irq < MP_ISA_IRQS; irq++) {
		/* ISA IRQ n on IOAPIC pin n, as KVM's default GSI routes do;
		 * polarity and trigger conform to the ISA bus. */
		if (irq == 2)
			continue; /* the 8259 cascade: not routed */
		e = (struct mpc_int){ MP_IOINT, MP_INT, 0, BUS_ISA,
				      (uint8_t)irq, ioapic, (uint8_t)irq };
		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	e = (struct mpc_int){ MP_LINT, MP_EXTINT, 0, BUS_ISA, 0, 0xff, 0 };
	memcpy(p, &e, sizeof(e));
	p += sizeof(e);
	e = (struct mpc_int){ MP_LINT, MP_NMI, 0, BUS_ISA, 0, 0xff, 1 };
	memcpy(p, &e, sizeof(e));
	return p + sizeof(e);
}

int mptable_write(uint8_t *buf, uint64_t gpa, size_t len, unsigned int ncpus,
		  uint32_t cpu_sig, uint32_t cpu_features, uint32_t pci_intx)
{
	unsigned int npci = (unsigned int)__builtin_popcount(pci_intx);
	struct mpf *f = (struct mpf *)buf;
	struct mpc *c = (struct mpc *)(buf + sizeof(*f));
	struct mpc_bus pci = { MP_BUS, BUS_PCI, "PCI   " };
	struct mpc_bus isa = { MP_BUS, BUS_ISA, "ISA   " };
	struct mpc_ioapic io = { MP_IOAPIC, (uint8_t)ncpus, MP_IOAPIC_VERSION,
				 1, MPTABLE_IOAPIC_ADDR };
	uint8_t *p;

	if (!ncpus || ncpus > MPTABLE_MAX_CPUS || gpa + len > 0x100000000ull)
		return -EINVAL;
	if (len < mptable_size(ncpus, npci))
		return -ENOSPC;
	memset(buf, 0, mptable_size(ncpus, npci));
	p = mp_cpus((uint8_t *)(c + 1), ncpus, cpu_sig, cpu_features);
	memcpy(p, &pci, sizeof(pci));
	memcpy(p + sizeof(pci), &isa, sizeof(isa));
	p += 2 * sizeof(pci);
	memcpy(p, &io, sizeof(io));
	p = mp_ints(p + sizeof(io), io.id);
	p = mp_pci_ints(p, io.id, pci_intx);

	memcpy(c->sig, "PCMP", 4);
	c->len = (uint16_t)(p - (uint8_t *)c);
	c->rev = MP_SPEC_REV;
	memcpy(c->oem, "VMM     ", 8);
	memcpy(c->product, "VMM-KVM     ", 12);
	c->count = (uint16_t)(ncpus + 2 + 1 + MP_ISA_IRQS - 1 + 2 + npci);
	c->lapic = MPTABLE_LAPIC_ADDR;
	c->checksum = mp_checksum((const uint8_t *)c, c->len);

	memcpy(f->sig, "_MP_", 4);
	f->phys = (uint32_t)(gpa + sizeof(*f));
	f->len = 1;
	f->rev = MP_SPEC_REV;
	f->checksum = mp_checksum(buf, sizeof(*f));
	return 0;
}
