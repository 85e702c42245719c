/* `vmm ctl`: the control socket's client (vmm/ctl.c). */
#ifndef VMM_CTL_H
#define VMM_CTL_H

/* argv[0] is "ctl".  The exit status. */
int ctl_main(int argc, char **argv);

#endif
