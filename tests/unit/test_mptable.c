/* vmm/mptable.c (pure, compiled in here): floating pointer and
 * configuration table checksums, entries for the CPUs and the IOAPIC,
 * bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/x86/hw/mptable.h"


#define GPA 0xf0000
#define LEN 0x10000

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

static void check_table(unsigned int ncpus, uint32_t pci)
{
	uint8_t *buf = calloc(1, LEN);
	const struct mpf *f = (const void *)buf;
	const struct mpc *c;
	const uint8_t *p;
	unsigned int cpus = 0, ioapics = 0, ints = 0, buses = 0;
	uint32_t pci_seen = 0;

	assert_int_equal(mptable_write(buf, GPA, LEN, ncpus, 0x800f12, 0x178bfbff,
				       pci), 0);
	assert_memory_equal(f->sig, "_MP_", 4);
	assert_int_equal(f->len, 1);
	assert_int_equal(f->rev, 4);
	assert_int_equal(sum(buf, 16), 0);
	assert_int_equal(f->phys, GPA + 16);
	c = (const void *)(buf + (f->phys - GPA));
	assert_memory_equal(c->sig, "PCMP", 4);
	assert_int_equal(sum((const uint8_t *)c, c->len), 0);
	assert_int_equal(c->lapic, MPTABLE_LAPIC_ADDR);
	assert_true(16u + c->len <=
		    mptable_size(ncpus, (unsigned int)__builtin_popcount(pci)));
	p = (const uint8_t *)(c + 1);
	for (unsigned int i = 0; i < c->count; i++) {
		switch (p[0]) {
		case MP_PROC: {
			const struct mpc_cpu *e = (const void *)p;

			assert_int_equal(e->apicid, cpus);
			assert_int_equal(e->flags & 2, cpus == 0 ? 2 : 0);
			assert_true(e->flags & 1);
			assert_int_equal(e->sig, 0x800f12);
			cpus++;
			p += sizeof(*e);
			break;
		}
		case MP_IOAPIC: {
			const struct mpc_ioapic *e = (const void *)p;

			assert_int_equal(e->addr, MPTABLE_IOAPIC_ADDR);
			assert_int_equal(e->id, ncpus);
			ioapics++;
			p += 8;
			break;
		}
		case MP_BUS:
			buses++;
			p += 8;
			break;
		case MP_IOINT: {
			const struct mpc_int *e = (const void *)p;

			if (e->src_bus == BUS_PCI) {
				/* INTA# of slot src_irq >> 2, level/low */
				assert_int_equal(e->src_irq & 3, 0);
				assert_int_equal(e->flags, 0);
				assert_int_equal(e->dst_pin,
						 MPTABLE_PCI_PIN(e->src_irq >> 2));
				pci_seen |= 1u << (e->src_irq >> 2);
			} else {
				assert_int_equal(e->dst_pin, e->src_irq);
				assert_int_equal(e->src_bus, BUS_ISA);
				ints++;
			}
			p += 8;
			break;
		}
		case MP_LINT:
			p += 8;
			break;
		default:
			fail_msg("unknown entry type %u", p[0]);
		}
	}
	assert_int_equal(p - (const uint8_t *)c, c->len);
	assert_int_equal(cpus, ncpus);
	assert_int_equal(ioapics, 1);
	assert_int_equal(buses, 2);
	assert_int_equal(ints, 15); /* ISA IRQs but the cascade */
	assert_int_equal(pci_seen, pci);
	free(buf);
}

static void test_one_cpu(void **state)
{
	(void)state;
	check_table(1, 0);
	check_table(1, 1u << 1);
}

static void test_smp(void **state)
{
	(void)state;
	check_table(4, 0x6);
	check_table(64, 0xffffffffu);
	check_table(MPTABLE_MAX_CPUS, 0x80000003u);
}

static void test_checksum_detects_change(void **state)
{
	uint8_t *buf = calloc(1, LEN);

	(void)state;
	assert_int_equal(mptable_write(buf, GPA, LEN, 2, 0, 0, 0), 0);
	buf[16 + 44 + 1] ^= 1; /* first CPU's APIC id */
	assert_int_not_equal(sum(buf + 16, ((struct mpc *)(buf + 16))->len), 0);
	free(buf);
}

static void test_bounds(void **state)
{
	uint8_t *buf = calloc(1, LEN);

	(void)state;
	assert_int_equal(mptable_write(buf, GPA, LEN, 0, 0, 0, 0), -EINVAL);
	assert_int_equal(mptable_write(buf, GPA, LEN, MPTABLE_MAX_CPUS + 1, 0, 0, 0),
			 -EINVAL);
	assert_int_equal(mptable_write(buf, GPA, mptable_size(8, 0) - 1, 8, 0, 0, 0),
			 -ENOSPC);
	assert_int_equal(mptable_write(buf, 0xfffff000, LEN, 1, 0, 0, 0), -EINVAL);
	free(buf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_cpu),
		cmocka_unit_test(test_smp),
		cmocka_unit_test(test_checksum_detects_change),
		cmocka_unit_test(test_bounds),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("mptable", tests, NULL, NULL);
}
