/* SPDX-License-Identifier: MIT */
/*
 * daemon_socket.c - where iosigd listens and which daemon a process may
 * talk to (daemon_socket.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon_socket.h"
#include "env.h"

_Static_assert(DSOCK_PATH_MAX == sizeof(((struct sockaddr_un *)0)->sun_path),
	       "DSOCK_PATH_MAX is sun_path's size");

/* Appends "DIR/iosigd.sock" to paths[] when it fits. */
static unsigned add_in(char paths[DSOCK_MAX][DSOCK_PATH_MAX], unsigned n, const char *dir)
{
	if ((size_t)snprintf(paths[n], DSOCK_PATH_MAX, "%s/" DSOCK_NAME, dir) < DSOCK_PATH_MAX)
		n++;
	return n;
}

unsigned dsock_candidates(char paths[DSOCK_MAX][DSOCK_PATH_MAX])
{
	const char *env = env_get("IOSIG_DAEMON_SOCKET");
	const char *xdg = env_get("XDG_RUNTIME_DIR");
	unsigned n = 0;

	if (env) {
		if (!*env || strlen(env) >= DSOCK_PATH_MAX)
			return 0;
		memcpy(paths[n++], env, strlen(env) + 1);
		return n;
	}
	if (xdg && xdg[0] == '/') {
		n = add_in(paths, n, xdg);
	} else if (!xdg && geteuid() != 0) {
		char dir[64];

		/* No session variables (cron, su, ssh without pam_systemd):
		 * the runtime directory systemd-logind gives every user. */
		snprintf(dir, sizeof(dir), "/run/user/%u", (unsigned)geteuid());
		n = add_in(paths, n, dir);
	}
	memcpy(paths[n++], DSOCK_SYSTEM, sizeof(DSOCK_SYSTEM));
	return n;
}

int dsock_connect(const char *path, bool trust, uid_t *ret_uid, char *why, size_t whylen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char dummy[1];
	int fd, r;

	if (!why) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, whylen, "%s: the path is too long for a socket", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(why, whylen, "socket: %s", strerror(-r));
		return r;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		snprintf(why, whylen, "%s: %s", path, strerror(-r));
		goto out_close;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		r = -errno;
		snprintf(why, whylen, "%s: SO_PEERCRED: %s", path, strerror(-r));
		goto out_close;
	}
	if (trust && cred.uid != 0 && cred.uid != geteuid()) {
		snprintf(why, whylen, "iosigd at %s runs as uid %u, neither root nor this user: not used",
			 path, (unsigned)cred.uid);
		r = -EPERM;
		goto out_close;
	}
	if (ret_uid)
		*ret_uid = cred.uid;
	return fd;

out_close:
	/* Not close(): inside libiosig.so that is the interposer, which the
	 * client runs beneath (client.c). */
	syscall(SYS_close, fd);
	return r;
}

int dsock_user_path(char *buf, size_t size, char *err, size_t errlen)
{
	const char *xdg = env_get("XDG_RUNTIME_DIR");
	struct stat st;

	if (!xdg || !*xdg) {
		snprintf(err, errlen,
			 "--user needs XDG_RUNTIME_DIR (the user's runtime directory, such as /run/user/%u; "
			 "pam_systemd sets it at login, 'systemctl --user' passes it on)",
			 (unsigned)getuid());
		return -ENOENT;
	}
	if (xdg[0] != '/') {
		snprintf(err, errlen, "XDG_RUNTIME_DIR '%s' is not an absolute path", xdg);
		return -EINVAL;
	}
	if (lstat(xdg, &st) < 0) {
		int r = -errno;

		snprintf(err, errlen, "XDG_RUNTIME_DIR %s: %s", xdg, strerror(-r));
		return r;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "XDG_RUNTIME_DIR %s is not a directory", xdg);
		return -ENOTDIR;
	}
	if (st.st_uid != getuid() || (st.st_mode & 07777) != 0700) {
		snprintf(err, errlen,
			 "XDG_RUNTIME_DIR %s is owned by uid %u with mode %04o: it must be this user's "
			 "(uid %u) with mode 0700, so that no one else can take the socket's name",
			 xdg, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)getuid());
		return -EPERM;
	}
	if ((size_t)snprintf(buf, size, "%s/" DSOCK_NAME, xdg) >= size ||
	    strlen(buf) >= DSOCK_PATH_MAX) {
		snprintf(err, errlen, "XDG_RUNTIME_DIR %s is too long for a socket path", xdg);
		return -ENAMETOOLONG;
	}
	return 0;
}
