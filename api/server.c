/* The control socket's server: one thread, poll over the listening
 * socket and up to API_MAX_CLIENTS connections, a line in, a line out.
 * A client that sends garbage gets an error; one that sends a line over
 * API_LINE_MAX, or does not read its answers, is dropped; none of it
 * reaches the VM but through api_execute().
 *
 * Bounded, whatever the clients do: one more slot than API_MAX_CLIENTS
 * is kept for `info` and `quit` (idle connections cannot lock them
 * out); one line per client per round, the stop signal looked at before
 * each (pipelined slow commands hold neither the others nor the VMM's
 * exit); a client's answers not yet sent are at most API_OUT_MAX bytes
 * of memory; accept or poll failing (EMFILE) waits API_BACKOFF_MS. */
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

#include "host/clock.h"

#define API_OUT_MAX (1u << 20) /* answers not yet read: more drops it */
#define API_SLOTS (API_MAX_CLIENTS + 1) /* the last: the spare */
#define API_SPARE API_MAX_CLIENTS
#define API_SPARE_IDLE_MS 1000 /* the spare's client: a line by then */
#define API_BACKOFF_MS 100     /* accept or poll failed: again after */
#define MS 1000000ull

struct client {
	int fd;                  /* -1: free slot */
	char in[API_LINE_MAX + 1];
	size_t in_len;
	char *out;               /* answers not yet sent: out[out_off..] */
	size_t out_len, out_off;
	uint64_t deadline_ns;    /* the spare's client: dropped then */
};

struct api_server {
	int listen_fd, stop_fd;
	bool stopping;            /* atomic: api_server_stop was called */
	uint64_t accept_after_ns; /* accept failed: not before then */
	struct api_vm *vm;
	pthread_t thread;
	struct client c[API_SLOTS];
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

/* Queue line (and a newline) for the client; false: too much unread.
 * What was sent is let go first: the buffer holds only what is unread,
 * so its size, not only the unread part, stays under API_OUT_MAX (a
 * client that reads, but never all, cannot grow it). */
static bool client_queue(struct client *c, const char *line)
{
	size_t n = strlen(line), left = c->out_len - c->out_off;
	char *o;

	if (left + n + 1 > API_OUT_MAX)
		return false;
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, left);
		c->out_len = left;
		c->out_off = 0;
	}
	o = realloc(c->out, left + n + 1);
	if (!o)
		return false;
	memcpy(o + left, line, n);
	o[left + n] = '\n';
	c->out = o;
	c->out_len = left + n + 1;
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

static const char busy[] = "{\"error\": {\"class\": \"GenericError\", "
			   "\"desc\": \"too many clients\"}}";

/* Answer the first whole line in c->in; false: drop the client.  The
 * spare slot's client gets only `info` and `quit`. */
static bool client_answer(struct api_server *s, struct client *c,
			  bool spare)
{
	char *nl = memchr(c->in, '\n', c->in_len), *a = NULL;
	size_t len = (size_t)(nl - c->in);
	bool ok = true;

	if (len && spare && !api_spare_allowed(c->in, len)) {
		client_queue(c, busy);
		client_flush(c);
		return false;
	}
	if (len) {
		a = api_execute(s->vm, c->in, len);
		ok = a && client_queue(c, a);
		free(a);
	}
	c->in_len -= len + 1;
	memmove(c->in, nl + 1, c->in_len);
	if (spare)
		c->deadline_ns = mono_ns() + API_SPARE_IDLE_MS * MS;
	return ok;
}

static bool client_has_line(const struct client *c)
{
	return memchr(c->in, '\n', c->in_len);
}

/* Take what came, unless a whole line is still to be answered (it is
 * first: what a client pipelines waits in the socket); false: drop. */
static bool client_read(struct client *c)
{
	ssize_t n;

	if (client_has_line(c))
		return true;
	n = recv(c->fd, c->in + c->in_len, API_LINE_MAX + 1 - c->in_len,
		 MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false; /* gone, maybe mid-line: nothing done for it */
	c->in_len += (size_t)n;
	if (!client_has_line(c) && c->in_len > API_LINE_MAX) {
		client_queue(c, "{\"error\": {\"class\": \"ParseError\", "
			     "\"desc\": \"line longer than 4096 bytes\"}}");
		client_flush(c);
		return false;
	}
	return true;
}

static void server_accept(struct api_server *s, uint64_t now)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		/* EMFILE and its kind: the connection stays in the backlog
		 * and the socket readable; not again for a while, or the
		 * thread would spin. */
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			s->accept_after_ns = now + API_BACKOFF_MS * MS;
		return;
	}
	for (unsigned int i = 0; i < API_SLOTS; i++) {
		if (s->c[i].fd < 0) {
			s->c[i].fd = fd;
			s->c[i].deadline_ns = now + API_SPARE_IDLE_MS * MS;
			return;
		}
	}
	(void)!send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)!send(fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static bool server_stopping(const struct api_server *s)
{
	return __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE);
}

/* The poll's timeout in ms: 0 while a line waits, else until the next
 * deadline (the spare's client, the accept back-off), -1: none. */
static int server_timeout(const struct api_server *s, uint64_t now)
{
	uint64_t until = UINT64_MAX;

	for (unsigned int i = 0; i < API_SLOTS; i++)
		if (s->c[i].fd >= 0 && client_has_line(&s->c[i]))
			return 0;
	if (s->c[API_SPARE].fd >= 0)
		until = s->c[API_SPARE].deadline_ns;
	if (s->accept_after_ns > now && s->accept_after_ns < until)
		until = s->accept_after_ns;
	if (until == UINT64_MAX)
		return -1;
	return until <= now ? 0 : (int)((until - now + MS - 1) / MS);
}

/* One client after a poll: read, answer one line, send; false: drop. */
static bool server_client(struct api_server *s, unsigned int i, short ev,
			  uint64_t now)
{
	struct client *c = &s->c[i];

	if (ev & (POLLIN | POLLHUP | POLLERR) && !client_read(c))
		return false;
	if (client_has_line(c) && !server_stopping(s) &&
	    !client_answer(s, c, i == API_SPARE))
		return false;
	if (!client_flush(c))
		return false;
	/* The spare's client: a line a second, or it goes. */
	return i != API_SPARE || client_has_line(c) || now < c->deadline_ns;
}

static void *server_main(void *arg)
{
	struct api_server *s = arg;
	struct pollfd p[2 + API_SLOTS];

	pthread_setname_np(pthread_self(), "api");
	sandbox_enter(SANDBOX_API);
	while (!server_stopping(s)) {
		uint64_t now = mono_ns();
		int n;

		p[0] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = now < s->accept_after_ns ? -1 :
					      s->listen_fd, .events = POLLIN };
		for (unsigned int i = 0; i < API_SLOTS; i++) {
			const struct client *c = &s->c[i];

			p[2 + i] = (struct pollfd){
				.fd = c->fd,
				.events = (client_has_line(c) ? 0 : POLLIN) |
					  (c->out_len ? POLLOUT : 0),
			};
		}
		n = poll(p, 2 + API_SLOTS, server_timeout(s, now));
		if (n < 0) {
			/* Not a signal: ENOMEM and its kind, which a retry at
			 * once would meet again. */
			if (errno != EINTR)
				nanosleep(&(struct timespec){
					.tv_nsec = API_BACKOFF_MS * MS }, NULL);
			continue;
		}
		if (p[0].revents)
			break;
		now = mono_ns();
		if (p[1].revents)
			server_accept(s, now);
		for (unsigned int i = 0; i < API_SLOTS; i++) {
			struct client *c = &s->c[i];

			if (c->fd < 0 || p[2 + i].fd != c->fd)
				continue;
			if (!server_client(s, i, p[2 + i].revents, now))
				client_drop(c);
		}
	}
	return NULL;
}

int api_server_start(int fd, struct api_vm *vm, struct api_server **out)
{
	struct api_server *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->listen_fd = fd;
	s->vm = vm;
	for (unsigned int i = 0; i < API_SLOTS; i++)
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
	/* Seen between lines, and the eventfd wakes the poll. */
	__atomic_store_n(&s->stopping, true, __ATOMIC_RELEASE);
	(void)!write(s->stop_fd, &one, sizeof(one));
	pthread_join(s->thread, NULL);
	for (unsigned int i = 0; i < API_SLOTS; i++)
		if (s->c[i].fd >= 0)
			client_drop(&s->c[i]);
	close(s->listen_fd);
	close(s->stop_fd);
	if (path)
		unlink(path);
	free(s);
}
