/* SPDX-License-Identifier: MIT */
/*
 * declog_open.c - opening the decision log safely (declog_open, declog.h),
 * apart from the rest of the log: iosig-redirect checks a --log file with it
 * and needs nothing else of the runtime (only libc).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "declog.h"

/* What kind of file st is, for messages. */
static const char *file_kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	case S_IFDIR: return "a directory";
	default: return "not a regular file";
	}
}

int declog_open(const char *path, int *ret_fd, char *why, size_t wsize)
{
	const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW;
	struct stat st;
	int fd = -1, r;

	/* Open what is there; create only what is not (twice: the name may
	 * appear between the two calls). */
	for (int tries = 0; tries < 2 && fd < 0; tries++) {
		fd = open(path, flags);
		if (fd < 0 && errno == ENOENT) {
			fd = open(path, flags | O_CREAT | O_EXCL, 0600);
			if (fd < 0 && errno == EEXIST)
				continue;
		}
		if (fd < 0)
			break;
	}
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP)
			snprintf(why, wsize, "a symbolic link, which the log never follows");
		else if (r == -ENXIO)
			snprintf(why, wsize, "a FIFO, not a regular file");
		else
			snprintf(why, wsize, "%s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st)) {
		r = -errno;
		snprintf(why, wsize, "%s", strerror(-r));
		goto out_close_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, wsize, "%s, not a regular file", file_kind(&st));
		r = -EINVAL;
		goto out_close_fd;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, wsize, "belongs to uid %u, not to uid %u", (unsigned)st.st_uid,
			 (unsigned)geteuid());
		r = -EPERM;
		goto out_close_fd;
	}
	if (st.st_nlink != 1) {
		/* A hard link someone made to another of the user's files. */
		snprintf(why, wsize, "has %lu hard links, a log has one", (unsigned long)st.st_nlink);
		r = -EPERM;
		goto out_close_fd;
	}
	*ret_fd = fd;
	return 0;

out_close_fd:
	close(fd);
	return r;
}
