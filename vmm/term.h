/* The controlling terminal: raw mode while the guest owns stdin,
 * restored on every exit path; left alone when the VMM runs in the
 * background. */
#ifndef VMM_TERM_H
#define VMM_TERM_H

#include <stdbool.h>

enum term_state {
	TERM_NONE, /* fd is not a terminal: read it as it comes */
	TERM_RAW,  /* our terminal, now in raw mode: the guest owns it */
	TERM_AWAY, /* a terminal in another process group's hands (the VMM
		    * started with '&', or not its controlling terminal):
		    * left alone, and not to be read */
};

/* Raw mode on fd if it is a terminal whose foreground process group is
 * this process's (tcgetpgrp(fd) == getpgrp()); never touches one that is
 * not. */
enum term_state term_take(int fd);
/* Restore what term_take() changed; safe to call more than once and from
 * a signal handler. */
void term_restore(void);

#endif
