/* Terminal raw mode, restored at exit and on fatal signals; a terminal
 * that is not ours (the VMM in the background) left alone. */
#include "vmm/term.h"

#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "host/log.h"

static struct termios term_saved;
static int term_fd = -1;

void term_restore(void)
{
	if (term_fd < 0)
		return;
	tcsetattr(term_fd, TCSADRAIN, &term_saved);
	term_fd = -1;
	vlog_set_raw(false);
}

static void term_fatal(int sig)
{
	term_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void term_catch_fatal(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
				    SIGHUP, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = term_fatal;
	sa.sa_flags = SA_RESETHAND;
	for (unsigned int i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Ours to change: a terminal whose foreground process group is this
 * process's.  Anything else (started with '&', moved there by the shell's
 * job control, or a terminal that is not this process's controlling one)
 * belongs to someone else: tcsetattr() from a background process group
 * stops it with SIGTTOU, and a read() with SIGTTIN. */
static bool term_ours(int fd)
{
	pid_t fg = tcgetpgrp(fd);

	return fg >= 0 && fg == getpgrp();
}

enum term_state term_take(int fd)
{
	struct termios t;

	if (!isatty(fd))
		return TERM_NONE;
	if (!term_ours(fd) || tcgetattr(fd, &term_saved) < 0)
		return TERM_AWAY;
	t = term_saved;
	cfmakeraw(&t);
	t.c_oflag |= OPOST | ONLCR; /* our own messages keep their lines */
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSADRAIN, &t) < 0)
		return TERM_AWAY;
	term_fd = fd;
	term_catch_fatal();
	return TERM_RAW;
}
