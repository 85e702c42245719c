/* no-uring CMD [ARG...]: run CMD where io_uring_setup fails with ENOSYS
 * (tests/support/nouring.c), for the end-to-end test of the file
 * backend's fallback to synchronous I/O. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/nouring.h"

int main(int argc, char **argv)
{
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: no-uring CMD [ARG...]\n");
		return 2;
	}
	r = forbid_io_uring();
	if (r) {
		fprintf(stderr, "no-uring: seccomp: %s\n", strerror(-r));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "no-uring: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
