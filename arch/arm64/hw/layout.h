/* The arm64 machine's guest-physical map (QEMU's virt machine's shape,
 * which arm64 kernels know well):
 *
 *   0x08000000  GIC distributor (64 KiB)
 *   0x08080000  GIC ITS (128 KiB)
 *   0x080a0000  GIC redistributors, 128 KiB per vCPU (up to 123 vCPUs)
 *   0x09000000  8250 UART (ns16550a), 8 registers, SPI 1
 *   0x10000000  PCI MMIO window: the devices' BARs (32-bit)
 *   0x3f000000  PCI ECAM, buses 0 to 15 (1 MiB each): bus 0, and the
 *               secondary buses of the hot-plug root ports
 *   0x40000000  RAM: the kernel at a 2 MiB boundary + text_offset from
 *               its start, the initrd and the device tree at its end
 *
 * PCI INTx of slot s is SPI ARM64_SPI_PCI + s, level-triggered.
 */
#ifndef ARM64_HW_LAYOUT_H
#define ARM64_HW_LAYOUT_H

#define ARM64_GICD_BASE 0x08000000ull
#define ARM64_GICD_SIZE 0x10000ull
#define ARM64_ITS_BASE 0x08080000ull
#define ARM64_ITS_SIZE 0x20000ull
#define ARM64_GICR_BASE 0x080a0000ull
#define ARM64_GICR_STRIDE 0x20000ull /* one redistributor: RD and SGI frames */
#define ARM64_UART_BASE 0x09000000ull
#define ARM64_UART_SIZE 0x1000ull
#define ARM64_PCI_MMIO_BASE 0x10000000ull
#define ARM64_PCI_MMIO_SIZE 0x2f000000ull
#define ARM64_PCI_ECAM_BASE 0x3f000000ull
#define ARM64_PCI_ECAM_BUSES 16u /* what fits below RAM */
#define ARM64_PCI_ECAM_SIZE ((unsigned long long)ARM64_PCI_ECAM_BUSES << 20)
#define ARM64_RAM_BASE 0x40000000ull

/* Interrupts: SPIs are GIC interrupt ids 32 and up. */
#define ARM64_SPI_BASE 32
#define ARM64_SPI_UART 1
#define ARM64_SPI_PCI 16
#define ARM64_NR_IRQS 128 /* the GIC's interrupt ids: SGIs, PPIs, 96 SPIs */
/* The architected timer's PPIs (ids 16 + n): secure and non-secure
 * physical, virtual, hypervisor; as KVM and firmware use them. */
#define ARM64_PPI_TIMER_SEC 13
#define ARM64_PPI_TIMER_PHYS 14
#define ARM64_PPI_TIMER_VIRT 11
#define ARM64_PPI_TIMER_HYP 10

/* The most vCPUs whose redistributors fit below the UART. */
#define ARM64_MAX_CPUS \
	((unsigned int)((ARM64_UART_BASE - ARM64_GICR_BASE) / ARM64_GICR_STRIDE))

#endif
