/* Make io_uring_setup fail with ENOSYS in the calling process (and what it
 * forks or execs) from now on, as on a host without io_uring: an old
 * kernel, kernel.io_uring_disabled, a container runtime's seccomp
 * profile.  0 or -errno. */
#ifndef TESTS_NOURING_H
#define TESTS_NOURING_H

int forbid_io_uring(void);

#endif
