/* The controlling terminal: raw mode while the guest owns stdin,
 * restored on every exit path. */
#ifndef VMM_TERM_H
#define VMM_TERM_H

#include <stdbool.h>

/* Raw mode on fd if it is a terminal; true if it is one. */
bool term_raw(int fd);
/* Restore what term_raw() changed; safe to call more than once and from
 * a signal handler. */
void term_restore(void);

#endif
