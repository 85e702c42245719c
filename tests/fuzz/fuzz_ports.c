/* Fuzz the machines' small devices under random access sequences, as
 * a vCPU's exits reach them through the buses (hw/bus.c):
 *
 *  - x86 port I/O: the 16550 UART at 0x3f8 (hw/serial.c), the i8042 at
 *    0x60/0x64, the RTC at 0x70/0x71, the 0xcf8/0xcfc configuration
 *    mechanism (arch/x86/hw/pci_cf8.c) to a PCI host (hw/pci_host.c)
 *    with pvpanic in slot 1, and the PCI I/O window behind them;
 *  - arm64 MMIO: the ECAM window (arch/arm64/hw/pci_ecam.c) to the same
 *    host, the UART, and the PCI memory window (pvpanic's BAR).
 *
 * Each access reads or writes 1, 2, 4 (or, MMIO, 8) bytes anywhere in
 * or near those ranges.  Checks: no crash, no read outside the devices'
 * state (ASan), and the pvpanic and i8042 reset callbacks only report.
 *
 * Input: a selector byte (bit 0: arm64 MMIO, else x86 ports), then
 * accesses of 7 bytes each: kind (bits 0-1 size 1 << n, bit 2 write,
 * bits 3-7 which range), offset byte, one more offset byte for the ECAM
 * and PCI windows, 4 value bytes (repeated for an 8-byte access).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arm64/hw/layout.h"
#include "arch/arm64/hw/pci_ecam.h"
#include "arch/x86/hw/i8042.h"
#include "arch/x86/hw/pci_cf8.h"
#include "arch/x86/hw/rtc.h"
#include "hw/bus.h"
#include "hw/pci_host.h"
#include "hw/pvpanic.h"
#include "hw/serial.h"
#include "tests/fuzz/fuzz.h"

#define FZ_MMIO_START 0xc0000000ull
#define FZ_IO_START 0xc000u

struct fzp {
	struct serial serial;
	struct i8042 kbd;
	struct rtc rtc;
	struct pci_host pci;
	struct pci_cf8 cf8;
	struct pci_ecam ecam;
	struct pvpanic pvpanic;
	struct bus pio, mmio;
	unsigned int resets, panics, irqs;
};

static void fz_reset(void *opaque)
{
	((struct fzp *)opaque)->resets++;
}

static void fz_panic(void *opaque, uint8_t events)
{
	(void)events;
	((struct fzp *)opaque)->panics++;
}

static void fz_irq(void *opaque, int level)
{
	(void)level;
	((struct fzp *)opaque)->irqs++;
}

/* A fresh machine each input: the devices' state is small. */
static void fz_machine(struct fzp *m, bool arm64)
{
	static int null_fd = -1;
	uint32_t bar;

	if (null_fd < 0)
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(null_fd >= 0);
	memset(m, 0, sizeof(*m));
	CHECK(serial_init(&m->serial, null_fd, fz_irq, m) == 0);
	i8042_init(&m->kbd, fz_reset, m);
	rtc_init(&m->rtc);
	pci_host_init(&m->pci, FZ_MMIO_START, FZ_MMIO_START + (1u << 24));
	if (!arm64)
		pci_host_set_io(&m->pci, PCI_CF8_IO_START, PCI_CF8_IO_END);
	pci_cf8_init(&m->cf8, &m->pci);
	pci_ecam_init(&m->ecam, &m->pci, ARM64_PCI_ECAM_BASE);
	CHECK(pci_host_alloc_bar(&m->pci, PVPANIC_BAR_SIZE, &bar) == 0);
	CHECK(pvpanic_init(&m->pvpanic, bar, fz_panic, m) == 0);
	CHECK(pci_host_add(&m->pci, &pvpanic_ops, &m->pvpanic) >= 0);
	CHECK(bus_add(&m->pio, SERIAL_PORT, 8, serial_io, &m->serial) == 0);
	CHECK(bus_add(&m->pio, I8042_DATA, 1, i8042_io, &m->kbd) == 0);
	CHECK(bus_add(&m->pio, I8042_CMD, 1, i8042_io, &m->kbd) == 0);
	CHECK(bus_add(&m->pio, RTC_INDEX, 2, rtc_io, &m->rtc) == 0);
	CHECK(bus_add(&m->pio, PCI_CF8_ADDR, 8, pci_cf8_io, &m->cf8) == 0);
	m->pio.fallback = pci_host_pio;
	m->pio.fallback_opaque = &m->pci;
	CHECK(bus_add(&m->mmio, ARM64_UART_BASE, 8, serial_io,
		      &m->serial) == 0);
	CHECK(bus_add(&m->mmio, ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE,
		      pci_ecam_mmio, &m->ecam) == 0);
	m->mmio.fallback = pci_host_mmio;
	m->mmio.fallback_opaque = &m->pci;
}

static void fz_free(struct fzp *m)
{
	serial_destroy(&m->serial);
	pthread_mutex_destroy(&m->kbd.lock);
	pthread_mutex_destroy(&m->rtc.lock);
	pthread_mutex_destroy(&m->cf8.lock);
	pthread_mutex_destroy(&m->ecam.lock);
	pthread_mutex_destroy(&m->pvpanic.lock);
}

/* Port ranges near the devices: each is base and how far past it an
 * access may start. */
static const uint16_t fz_ports[][2] = {
	{ SERIAL_PORT - 1, 10 }, { I8042_DATA, 1 }, { I8042_CMD, 1 },
	{ RTC_INDEX, 2 }, { PCI_CF8_ADDR - 1, 10 }, { FZ_IO_START, 64 },
	{ 0x80, 1 }, { 0x3f8, 8 },
};

static void fz_x86(struct fzp *m, const uint8_t *a, uint8_t *data)
{
	unsigned int size = 1u << (a[0] & 3), which = (a[0] >> 3) & 7;
	bool write = a[0] & 4;
	uint64_t port;

	if (size > 4)
		size = 4;
	port = fz_ports[which][0] + a[1] % fz_ports[which][1];
	bus_access(&m->pio, port, data, size, write);
}

static void fz_arm64(struct fzp *m, const uint8_t *a, uint8_t *data)
{
	unsigned int size = 1u << (a[0] & 3);
	bool write = a[0] & 4;
	uint64_t addr;

	switch ((a[0] >> 3) % 4) {
	case 0: /* ECAM: any slot, any register (bus 0 and beyond) */
		addr = ARM64_PCI_ECAM_BASE + ((uint64_t)a[2] << 12) + a[1] * 4u +
		       ((a[0] >> 5) & 3);
		break;
	case 1: /* a slot's first 256 bytes and the extended space */
		addr = ARM64_PCI_ECAM_BASE + ((uint64_t)(a[2] & 0x1f) << 15) +
		       (((uint64_t)a[0] >> 5) << 8) + a[1];
		break;
	case 2:
		addr = ARM64_UART_BASE + a[1] % 9;
		break;
	default: /* the PCI window, where pvpanic's BAR may be */
		addr = FZ_MMIO_START + ((uint64_t)a[2] << 8) + a[1];
		break;
	}
	bus_access(&m->mmio, addr, data, size, write);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fzp m;
	bool arm64;

	if (size < 1)
		return 0;
	arm64 = data[0] & 1;
	fz_machine(&m, arm64);
	for (size_t i = 1; i + 7 <= size; i += 7) {
		uint8_t d[8];

		memcpy(d, data + i + 3, 4);
		memcpy(d + 4, data + i + 3, 4);
		if (arm64)
			fz_arm64(&m, data + i, d);
		else
			fz_x86(&m, data + i, d);
	}
	fz_free(&m);
	return 0;
}
