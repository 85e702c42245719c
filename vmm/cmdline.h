/* `vmm run` options into a struct vmm_config.  Pure (no I/O besides
 * the error message). */
#ifndef VMM_CMDLINE_H
#define VMM_CMDLINE_H

#include <stddef.h>

#include "vmm/machine.h"

#define VMM_DEFAULT_PARAMS "console=ttyS0 reboot=k panic=-1"

enum cmdline_result { CMDLINE_OK, CMDLINE_HELP, CMDLINE_ERROR };

/* Parses argv[1..] of `vmm run` (argv[0] is "run"); disk specs are
 * parsed in place.  On CMDLINE_ERROR msg holds one line. */
enum cmdline_result cmdline_parse(int argc, char **argv, struct vmm_config *c,
				  int *verbose, char *msg, size_t msglen);

#endif
