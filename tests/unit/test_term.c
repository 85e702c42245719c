/* vmm/term.c: raw mode only on a terminal that is ours.  `vmm run ... &`
 * from an interactive shell must neither stop on SIGTTOU (tcsetattr from
 * a background process group) nor change the shell's terminal; a
 * foreground run gets raw mode and has it restored.
 *
 * Each case runs in a child that makes a pseudo-terminal its controlling
 * terminal (setsid, TIOCSCTTY); the background case runs in a grandchild
 * in a process group of its own, whose parent in the same session keeps
 * the group from being orphaned (an orphaned group gets EIO, not
 * SIGTTOU, and would hide the bug).  Children report by exit status. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "vmm/term.h"

/* Exit statuses of the children. */
enum {
	OK = 0,
	NO_PTY = 10,    /* no pseudo-terminals here: skipped */
	SETUP = 11,     /* setsid, TIOCSCTTY, fork */
	STATE = 12,     /* term_take() said the wrong thing */
	TOUCHED = 13,   /* the terminal's settings changed */
	STOPPED = 14,   /* the grandchild stopped (SIGTTOU) */
	NOT_RAW = 15,   /* foreground: no raw mode */
	NOT_BACK = 16,  /* foreground: not restored */
};

static int open_pty(int *master, int *slave)
{
	char *name;

	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0 || grantpt(*master) || unlockpt(*master))
		return -1;
	name = ptsname(*master);
	if (!name)
		return -1;
	*slave = open(name, O_RDWR | O_NOCTTY);
	return *slave < 0 ? -1 : 0;
}

static bool same(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag &&
	       a->c_cflag == b->c_cflag && a->c_lflag == b->c_lflag &&
	       !memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc));
}

/* In the grandchild: its own process group, not the terminal's
 * foreground one. */
static int background_take(int slave)
{
	if (setpgid(0, 0))
		return SETUP;
	return term_take(slave) == TERM_AWAY ? OK : STATE;
}

/* Wait for the grandchild for at most 10 s; a stopped one is the bug. */
static int wait_grandchild(pid_t g)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int st;

	for (int i = 0; i < 1000; i++) {
		pid_t r = waitpid(g, &st, WUNTRACED | WNOHANG);

		if (r == g && WIFSTOPPED(st)) {
			kill(g, SIGKILL);
			waitpid(g, &st, 0);
			return STOPPED;
		}
		if (r == g)
			return WIFEXITED(st) ? WEXITSTATUS(st) : SETUP;
		nanosleep(&nap, NULL);
	}
	kill(g, SIGKILL);
	waitpid(g, &st, 0);
	return SETUP;
}

/* In the child: a session of its own with the pty as its controlling
 * terminal, then the case. */
static int child(bool background)
{
	struct termios before, after;
	int master, slave, r;
	pid_t g;

	if (open_pty(&master, &slave))
		return NO_PTY;
	if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) ||
	    tcgetpgrp(slave) != getpgrp() || tcgetattr(slave, &before))
		return SETUP;
	if (background) {
		g = fork();
		if (g < 0)
			return SETUP;
		if (!g)
			_exit(background_take(slave));
		r = wait_grandchild(g);
		if (r != OK)
			return r;
		if (tcgetattr(slave, &after))
			return SETUP;
		return same(&before, &after) ? OK : TOUCHED;
	}
	if (term_take(slave) != TERM_RAW)
		return STATE;
	if (tcgetattr(slave, &after))
		return SETUP;
	if (after.c_lflag & (ICANON | ECHO | ISIG))
		return NOT_RAW;
	term_restore();
	if (tcgetattr(slave, &after))
		return SETUP;
	return same(&before, &after) ? OK : NOT_BACK;
}

static int run_child(bool background)
{
	pid_t p = fork();
	int st;

	assert_true(p >= 0);
	if (!p)
		_exit(child(background));
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void check(int r)
{
	if (r == NO_PTY)
		skip();
	if (r == STOPPED)
		fail_msg("stopped (SIGTTOU?): the terminal was touched from "
			 "the background");
	assert_int_equal(r, OK);
}

/* `vmm run ... &`: left alone, not stopped. */
static void test_background_left_alone(void **state)
{
	(void)state;
	check(run_child(true));
}

/* `vmm run ...` at the prompt: raw mode, restored after. */
static void test_foreground_raw_and_restored(void **state)
{
	(void)state;
	check(run_child(false));
}

/* A terminal that is not this process's controlling one (the process
 * has none here: setsid in the child, no TIOCSCTTY) is someone else's. */
static void test_not_controlling_left_alone(void **state)
{
	struct termios before, after;
	int master, slave, st;
	pid_t p;

	(void)state;
	if (open_pty(&master, &slave))
		skip();
	assert_int_equal(tcgetattr(slave, &before), 0);
	p = fork();
	assert_true(p >= 0);
	if (!p) {
		if (setsid() < 0)
			_exit(SETUP);
		_exit(term_take(slave) == TERM_AWAY ? OK : STATE);
	}
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), OK);
	assert_int_equal(tcgetattr(slave, &after), 0);
	assert_true(same(&before, &after));
	close(slave);
	close(master);
}

static void test_not_a_terminal(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(term_take(p[0]), TERM_NONE);
	term_restore(); /* nothing to restore: harmless */
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_background_left_alone),
		cmocka_unit_test(test_foreground_raw_and_restored),
		cmocka_unit_test(test_not_controlling_left_alone),
		cmocka_unit_test(test_not_a_terminal),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
