/* SPDX-License-Identifier: MIT */
/*
 * links_ops.c - the runtime's side of the link interposers (links.h): which
 * links are the user's own (rd_link_check() on the process-wide catalog),
 * and their data files, reached through the checked data directory, never
 * through the link.
 */
#include "links.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "runtime.h"

/* The catalog links are checked against; NULL under IOSIG_DISABLE (pure
 * pass-through) or when none can be built: then no link is the runtime's. */
static const struct iosig_catalog *catalog(void)
{
	if (rt_env()->disable)
		return NULL;
	return cat_default(NULL);
}

static int at_data(int dirfd, const char *path, links_data_fn fn, void *arg, bool *ret_own)
{
	const struct iosig_catalog *cat;
	struct rd_link lk;
	int r = 0;

	*ret_own = false;
	cat = catalog();
	if (cat) {
		if (rd_link_check(cat, dirfd, path, 0, &lk) == RD_LINK_OWN) {
			*ret_own = true;
			r = fn ? fn(lk.ddfd, lk.name, arg) : 0;
		}
		rd_link_release(&lk);
	}
	return r;
}

static int open_data(int dirfd, const char *path, int flags, bool *ret_own)
{
	const struct iosig_catalog *cat;
	struct rd_link lk;
	struct stat st;
	int fd = 0;

	*ret_own = false;
	cat = catalog();
	if (!cat)
		return 0;
	if (rd_link_check(cat, dirfd, path, 0, &lk) != RD_LINK_OWN)
		goto out_release;
	*ret_own = true;
	/* The file exists: what O_CREAT|O_EXCL would do was decided by the
	 * plain call, which found something at the path. */
	fd = openat(lk.ddfd, lk.name, (flags & ~(O_CREAT | O_EXCL)) | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0) {
		fd = -errno;
		goto out_release;
	}
	if (fstat(fd, &st) || st.st_dev != lk.data.st_dev || st.st_ino != lk.data.st_ino) {
		/* Replaced meanwhile (by the user alone: the directory is
		 * the user's): what the plain call met stands. */
		close(fd);
		fd = -ELOOP;
		goto out_release;
	}
	fd = rt_fd_low(fd, flags & O_CLOEXEC);
out_release:
	rd_link_release(&lk);
	return fd;
}

static bool removal_begin(int dirfd, const char *path, struct rd_link_removal *ret)
{
	const struct iosig_catalog *cat = catalog();

	return cat && rd_link_removal_begin(cat, dirfd, path, ret);
}

const struct links_ops links_ops = {
	.version = LINKS_OPS_VERSION,
	.at_data = at_data,
	.open = open_data,
	.removal_begin = removal_begin,
	.removal_end = rd_link_removal_end,
};
