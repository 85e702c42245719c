/* The control socket's server: one thread, poll over the listening
 * socket and up to API_MAX_CLIENTS connections, a line in, a line out.
 * A client that sends garbage gets an error; one that sends a line over
 * API_LINE_MAX, or does not read its answers, is dropped; none of it
 * reaches the VM but through api_execute(). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/api.h"
#include "host/sandbox.h"

#define API_OUT_MAX (1u << 20) /* answers not yet read: more drops it */

struct client {
	int fd;                  /* -1: free slot */
	char in[API_LINE_MAX + 1];
	size_t in_len;
	char *out;               /* answers not yet sent */
	size_t out_len, out_off;
};

struct api_server {
	int listen_fd, stop_fd;
	struct api_vm *vm;
	pthread_t thread;
	struct client c[API_MAX_CLIENTS];
};

int api_listen(const char *path, char *msg, unsigned int msglen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(msg, msglen, "--api '%s': path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(a.sun_path, path);
	if (!lstat(path, &st)) {
		/* A socket nobody listens on is a stale one: replaced.  A
		 * live one, or anything else, is not ours to take. */
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(msg, msglen, "--api '%s': exists and is not "
				 "a socket", path);
			return -EEXIST;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			goto sock_err;
		r = connect(fd, (struct sockaddr *)&a, sizeof(a));
		close(fd);
		if (!r || errno != ECONNREFUSED) {
			snprintf(msg, msglen, "--api '%s': a socket in use",
				 path);
			return -EADDRINUSE;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto sock_err;
	old = umask(0177); /* the socket is created 0600 */
	r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r || listen(fd, API_MAX_CLIENTS)) {
		r = -errno;
		snprintf(msg, msglen, "--api '%s': %s", path, strerror(-r));
		close(fd);
		return r;
	}
	return fd;
sock_err:
	r = -errno;
	snprintf(msg, msglen, "--api: socket: %s", strerror(-r));
	return r;
}

static void client_drop(struct client *c)
{
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Queue line (and a newline) for the client; false: too much unread. */
static bool client_queue(struct client *c, const char *line)
{
	size_t n = strlen(line);
	char *o;

	if (c->out_len - c->out_off + n + 1 > API_OUT_MAX)
		return false;
	o = realloc(c->out, c->out_len + n + 1);
	if (!o)
		return false;
	memcpy(o + c->out_len, line, n);
	o[c->out_len + n] = '\n';
	c->out = o;
	c->out_len += n + 1;
	return true;
}

/* Send what the socket takes now; false: the client is gone. */
static bool client_flush(struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		c->out_off += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	return true;
}

static bool client_answer(struct api_server *s, struct client *c,
			  const char *line, size_t len)
{
	char *a = api_execute(s->vm, line, len);
	bool ok = a && client_queue(c, a);

	free(a);
	return ok;
}

/* Read what came and answer every whole line; false: drop the client. */
static bool client_read(struct api_server *s, struct client *c)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, API_LINE_MAX + 1 - c->in_len,
			 MSG_DONTWAIT);
	char *nl;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false; /* gone, maybe mid-line: nothing done for it */
	c->in_len += (size_t)n;
	while ((nl = memchr(c->in, '\n', c->in_len))) {
		size_t len = (size_t)(nl - c->in);

		if (len && !client_answer(s, c, c->in, len))
			return false;
		c->in_len -= len + 1;
		memmove(c->in, nl + 1, c->in_len);
	}
	if (c->in_len > API_LINE_MAX) {
		client_queue(c, "{\"error\": {\"class\": \"ParseError\", "
			     "\"desc\": \"line longer than 4096 bytes\"}}");
		client_flush(c);
		return false;
	}
	return true;
}

static void server_accept(struct api_server *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (unsigned int i = 0; i < API_MAX_CLIENTS; i++) {
		if (s->c[i].fd < 0) {
			s->c[i].fd = fd;
			return;
		}
	}
	static const char busy[] = "{\"error\": {\"class\": \"GenericError\", "
				   "\"desc\": \"too many clients\"}}\n";

	(void)!send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static void *server_main(void *arg)
{
	struct api_server *s = arg;
	struct pollfd p[2 + API_MAX_CLIENTS];

	pthread_setname_np(pthread_self(), "api");
	sandbox_enter(SANDBOX_API);
	for (;;) {
		p[0] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		for (unsigned int i = 0; i < API_MAX_CLIENTS; i++)
			p[2 + i] = (struct pollfd){
				.fd = s->c[i].fd,
				.events = POLLIN |
					  (s->c[i].out_len ? POLLOUT : 0),
			};
		if (poll(p, 2 + API_MAX_CLIENTS, -1) < 0)
			continue;
		if (p[0].revents)
			return NULL;
		if (p[1].revents)
			server_accept(s);
		for (unsigned int i = 0; i < API_MAX_CLIENTS; i++) {
			struct client *c = &s->c[i];
			short ev = p[2 + i].revents;

			if (c->fd < 0 || !ev || p[2 + i].fd != c->fd)
				continue;
			if ((ev & (POLLIN | POLLHUP | POLLERR) &&
			     !client_read(s, c)) || !client_flush(c))
				client_drop(c);
		}
	}
}

int api_server_start(int fd, struct api_vm *vm, struct api_server **out)
{
	struct api_server *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->listen_fd = fd;
	s->vm = vm;
	for (unsigned int i = 0; i < API_MAX_CLIENTS; i++)
		s->c[i].fd = -1;
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->stop_fd < 0) {
		r = -errno;
		free(s);
		return r;
	}
	r = -pthread_create(&s->thread, NULL, server_main, s);
	if (r) {
		close(s->stop_fd);
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

void api_server_stop(struct api_server *s, const char *path)
{
	uint64_t one = 1;

	if (!s)
		return;
	(void)!write(s->stop_fd, &one, sizeof(one));
	pthread_join(s->thread, NULL);
	for (unsigned int i = 0; i < API_MAX_CLIENTS; i++)
		if (s->c[i].fd >= 0)
			client_drop(&s->c[i]);
	close(s->listen_fd);
	close(s->stop_fd);
	if (path)
		unlink(path);
	free(s);
}
