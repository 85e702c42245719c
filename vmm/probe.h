/* `vmm probe`: what this host's KVM offers and how fast it runs guests. */
#ifndef VMM_PROBE_H
#define VMM_PROBE_H

/* Prints the report to stdout; returns the exit status (machine.h). */
int probe_run(void);

#endif
