#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tests/support/syncrw.h"

bool file_rw_in_submit(const char *path)
{
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct iovec iov = { buf, sizeof(buf) };
	struct statfs sfs;
	bool ret;
	int fd;

	if (statfs(path, &sfs) ||
	    (sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ret = preadv2(fd, &iov, 1, 0, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP;
	close(fd);
	return ret;
}
