/* Terminal raw mode, restored at exit and on fatal signals. */
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

bool term_raw(int fd)
{
	struct termios t;

	if (!isatty(fd) || tcgetattr(fd, &term_saved) < 0)
		return false;
	t = term_saved;
	cfmakeraw(&t);
	t.c_oflag |= OPOST | ONLCR; /* our own messages keep their lines */
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSADRAIN, &t) < 0)
		return false;
	term_fd = fd;
	term_catch_fatal();
	return true;
}
