/* ttydrain: wait until the serial console (ttyS0) has sent everything
 * written to it (tcdrain), however long that takes.  guest/init calls it
 * before powering off: a transmit count that stopped moving for 0.3 s
 * was not enough under QEMU in the test host, whose UART waits while the
 * host side does not read (fio's JSON and whole kernel logs were lost). */
#include <fcntl.h>
#include <stdio.h>
#include <termios.h>
#include <unistd.h>

int main(void)
{
	int fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);

	if (fd < 0 || tcdrain(fd)) {
		perror("ttydrain: /dev/ttyS0");
		return 1;
	}
	return 0;
}
