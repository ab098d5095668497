/* SPDX-License-Identifier: MIT */
/*
 * listener.c - the daemon's Unix socket: bind (replacing a stale socket,
 * refusing to take over a live one or anything that is not a socket) or
 * adopt the one systemd bound (socket activation), accept, and who the
 * peer is (SO_PEERCRED).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "iosigd.h"

/* True if a daemon answers at path. */
static bool live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool up;

	if (fd < 0)
		return false;
	up = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return up;
}

/* Serves the listening socket fd, named path. */
static int listen_on(struct daemon *d, int fd, const char *path, char *err, size_t errlen)
{
	int r;

	d->listen_fd = fd;
	d->socket_path = path;
	d->listening = true;
	d->wlisten = (struct dwatch){ .kind = DW_LISTEN };
	r = engine_watch(d, fd, &d->wlisten, EPOLLIN);
	if (r < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(-r));
		listener_close(d);
		return r;
	}
	return 0;
}

int listener_open(struct daemon *d, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path '%s' is too long (at most %zu bytes)", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket: remove it or choose another --socket",
				 path);
			return -EEXIST;
		}
		if (live(&sa)) {
			snprintf(err, errlen, "another iosigd listens on %s: stop it first or choose another --socket",
				 path);
			return -EADDRINUSE;
		}
		if (unlink(path) < 0 && errno != ENOENT) {
			r = -errno;
			snprintf(err, errlen, "cannot remove the stale socket %s: %s", path, strerror(-r));
			return r;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-r));
		return r;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot bind %s: %s", path, strerror(-r));
		goto out_close;
	}
	/* Anyone may connect: a client can only make the daemon touch
	 * descriptors it passed itself (per-user mode restricts by uid). */
	if (chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(-r));
		unlink(path);
		goto out_close;
	}
	if (lstat(path, &st) == 0) {
		d->sock_dev = st.st_dev;
		d->sock_ino = st.st_ino;
	}
	d->socket_owned = true;
	return listen_on(d, fd, path, err, errlen);

out_close:
	close(fd);
	return r;
}

int listener_adopt(struct daemon *d, int fd, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int fl;

	if (sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
		snprintf(err, errlen,
			 "the socket systemd passed (descriptor %d) is not a listening Unix SOCK_SEQPACKET socket: "
			 "the .socket unit needs ListenSequentialPacket=", fd);
		return -ENOTSOCK;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		int r = -errno;

		snprintf(err, errlen, "the socket systemd passed: fcntl: %s", strerror(-r));
		return r;
	}
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || len <= offsetof(struct sockaddr_un, sun_path))
		sa.sun_path[0] = '\0';
	/* An abstract name (leading NUL) is shown as '@name', as ss(8) does. */
	snprintf(d->socket_name, sizeof(d->socket_name), "%s%.*s", sa.sun_path[0] ? "" : "@",
		 (int)sizeof(sa.sun_path) - 1, sa.sun_path[0] ? sa.sun_path : sa.sun_path + 1);
	d->socket_owned = false;
	d->socket_activated = true;
	return listen_on(d, fd, d->socket_name, err, errlen);
}

void listener_close(struct daemon *d)
{
	struct stat st;

	if (!d->listening)
		return;
	engine_unwatch(d, d->listen_fd);
	close(d->listen_fd);
	d->listen_fd = -1;
	d->listening = false;
	/* Remove the name only if it is still ours (not a successor's, nor
	 * systemd's: the .socket unit keeps listening for the next start). */
	if (d->socket_owned && d->socket_path && lstat(d->socket_path, &st) == 0 && st.st_dev == d->sock_dev &&
	    st.st_ino == d->sock_ino)
		unlink(d->socket_path);
}

void listener_accept(struct daemon *d)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				dlog(DLOG_WARN, "accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			dlog(DLOG_WARN, "SO_PEERCRED: %s; connection refused", strerror(errno));
			close(fd);
			continue;
		}
		if (d->only_uid_set && cred.uid != d->only_uid && cred.uid != 0) {
			dlog(DLOG_WARN, "connection from pid %d, uid %u refused: this daemon serves uid %u",
			     cred.pid, cred.uid, d->only_uid);
			close(fd);
			continue;
		}
		if (d->nsessions >= d->cfg.limits.clients) {
			dlog(DLOG_WARN, "connection from pid %d, uid %u refused: %u sessions (limits: clients)",
			     cred.pid, cred.uid, d->nsessions);
			close(fd);
			continue;
		}
		if (!session_new(d, fd, cred.pid, cred.uid, cred.gid))
			close(fd);
	}
}
