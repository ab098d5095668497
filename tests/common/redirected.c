/* SPDX-License-Identifier: MIT */
/* redirected.c - a file redirected by the runtime (redirected.h). */
#include "redirected.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "redirect.h"

int tredir_create(const char *path, const char *sigtext, const char *text, char *target,
		  size_t size)
{
	struct iosig_error err;
	struct iosig_sig sig;
	struct rd_req req;
	size_t len = strlen(text);
	ssize_t n;
	int fd, r;

	memset(&err, 0, sizeof(err));
	r = iosig_sig_parse(sigtext, NULL, NULL, 0, &sig, &err);
	if (r < 0)
		return r;
	memset(&req, 0, sizeof(req));
	req.sig = &sig;
	req.call = "open";
	req.dirfd = AT_FDCWD;
	req.path = path;
	req.flags = O_CREAT | O_WRONLY | O_TRUNC;
	req.mode = 0600;
	fd = rd_openat(&req);
	if (fd < 0)
		return -errno;
	r = write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
	if (close(fd) && r == 0)
		r = -errno;
	target[0] = '\0';
	n = readlink(path, target, size - 1);
	if (n > 0)
		target[n] = '\0';
	else
		target[0] = '\0';
	return r;
}
