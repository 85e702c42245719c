/* What each architecture gives the machine: its kernel format, memory
 * map, interrupt controller, vCPU set-up and the devices only it has.
 * arch/x86/vmm/ and arch/arm64/vmm/ implement it; the Makefile links
 * exactly one of them into build/vmm (ARCH=).  The rest of vmm/, and
 * virtio/, blk/, hw/ and host/, are the same on both.
 */
#ifndef VMM_ARCH_H
#define VMM_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct blk_dev;
struct machine;
struct vcpu;
struct vmm_config;

/* The kernel, parsed by the architecture's boot protocol. */
struct arch_kernel;

/* `vmm run --help`'s lines about -k, and the name of the format. */
extern const char arch_usage_kernel[];
extern const char arch_kernel_format[];

/* Check the kernel file (not copied: img stays the caller's while k
 * lives).  0, or -ENOEXEC with one line in msg. */
int arch_kernel_parse(const uint8_t *img, size_t size,
		      struct arch_kernel **k, char *msg, size_t msglen);
void arch_kernel_free(struct arch_kernel *k);
/* The command line's RAM size, vCPU count and kernel command line
 * against what the kernel and this machine take, before anything is
 * created.  0, or -1 with one line in msg. */
int arch_check_inputs(const struct vmm_config *c, const struct arch_kernel *k,
		      size_t initrd_size, char *msg, size_t msglen);

/* Build the machine on m->vm (open): RAM, interrupt controller, the
 * architecture's devices, the PCI bus with the disks (machine_pci()),
 * kernel and initrd in RAM, the vCPUs ready at the kernel's entry.
 * One line logged on failure; 0 or -errno. */
int arch_machine_build(struct machine *m, struct blk_dev **disks,
		       const struct arch_kernel *k, const uint8_t *initrd,
		       size_t initrd_size);
void arch_machine_free(struct machine *m);
/* After vcpu_join: one line on what the vCPU was doing when it was
 * stopped, for a guest that looked hung. */
void arch_vcpu_describe(const struct vcpu *c, char *buf, size_t len);

/* `vmm probe`: the capabilities the machine needs, and a tiny guest
 * loop of PROBE_LOOPS iterations set up on vcpu (mem: its one page at
 * guest address 0 is already in the VM). */
struct probe_cap {
	int cap;
	const char *name;
};
extern const struct probe_cap arch_probe_caps[];
extern const unsigned int arch_nprobe_caps;
int arch_probe_setup(int vm, int vcpu, uint8_t *mem, uint32_t loops);
/* The exit that ends the probe's loop. */
extern const uint32_t arch_probe_exit;

#endif
