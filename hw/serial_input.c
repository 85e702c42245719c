/* The UART's input thread: host fd -> receive FIFO, with the Ctrl-A x
 * escape on a terminal. */
#include "host/sandbox.h"
#include "hw/serial.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define CTRL_A 0x01
#define FULL_POLL_MS 5
#define STUCK_POLL_MS 250 /* look at unread input this often */

unsigned int serial_escape(struct serial *s, const uint8_t *in,
			   unsigned int n, uint8_t *out, bool *quit)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		uint8_t c = in[i];

		if (!s->escape) {
			out[k++] = c;
		} else if (s->esc_seen) {
			s->esc_seen = false;
			if (c == 'x' || c == 'X') {
				*quit = true;
				return k;
			}
			if (c != CTRL_A)
				out[k++] = CTRL_A;
			out[k++] = c;
		} else if (c == CTRL_A) {
			s->esc_seen = true;
		} else {
			out[k++] = c;
		}
	}
	return k;
}

/* Deliver n bytes, waiting for FIFO room; false if told to stop. */
static bool serial_deliver(struct serial *s, const uint8_t *b, unsigned int n)
{
	struct pollfd p = { .fd = s->stop_fd, .events = POLLIN };

	while (n) {
		unsigned int k = serial_rx(s, b, n);

		b += k;
		n -= k;
		if (n && poll(&p, 1, FULL_POLL_MS) > 0)
			return false;
	}
	return true;
}

static void *serial_input_main(void *arg)
{
	struct serial *s = arg;
	struct pollfd p[2] = { { .fd = s->stop_fd, .events = POLLIN },
			       { .fd = s->in_fd, .events = POLLIN } };
	uint8_t buf[SERIAL_FIFO], out[2 * SERIAL_FIFO];
	unsigned int nfds = 2;
	bool waiting = false;

	pthread_setname_np(pthread_self(), "console");
	sandbox_enter(SANDBOX_CONSOLE);
	for (;;) {
		bool quit = false;
		ssize_t r;
		int n = poll(p, nfds, waiting ? STUCK_POLL_MS : -1);

		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) {
			waiting = serial_rx_stuck(s);
			continue;
		}
		if (p[0].revents)
			break;
		if (nfds < 2 || !p[1].revents)
			continue;
		r = read(s->in_fd, buf, sizeof(buf));
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			nfds = 1; /* end of input: the guest runs on */
			continue;
		}
		r = serial_escape(s, buf, (unsigned int)r, out, &quit);
		if (!serial_deliver(s, out, (unsigned int)r))
			break;
		waiting = true;
		if (quit && s->quit)
			s->quit(s->quit_opaque);
	}
	return NULL;
}

int serial_start_input(struct serial *s, int in_fd, bool escape,
		       void (*quit)(void *opaque), void *opaque)
{
	int r;

	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->stop_fd < 0)
		return -errno;
	s->in_fd = in_fd;
	s->escape = escape;
	s->hold = !escape;
	s->quit = quit;
	s->quit_opaque = opaque;
	r = pthread_create(&s->thread, NULL, serial_input_main, s);
	if (r) {
		close(s->stop_fd);
		s->stop_fd = -1;
		return -r;
	}
	s->thread_on = true;
	return 0;
}

void serial_stop_input(struct serial *s)
{
	uint64_t one = 1;

	if (!s->thread_on)
		return;
	if (write(s->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write of 1 cannot fail here */
	}
	pthread_join(s->thread, NULL);
	close(s->stop_fd);
	s->stop_fd = -1;
	s->thread_on = false;
}
