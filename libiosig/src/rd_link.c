/* SPDX-License-Identifier: MIT */
/*
 * rd_link.c - the links the runtime makes, told apart from every other link
 * (rd_link.h).  The data directory of a link's target is validated by the
 * walk that validates a new data directory (datadir.c), so a link is
 * trusted exactly as far as a directory the runtime would create data in.
 */
#include "rd_link.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <sys/file.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "redirect.h"

static int classify(struct rd_link *ret, int kind, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Sets the verdict and its reason; returns the kind. */
static int classify(struct rd_link *ret, int kind, int err, const char *fmt, ...)
{
	va_list ap;

	ret->kind = kind;
	ret->err = err;
	va_start(ap, fmt);
	vsnprintf(ret->why, sizeof(ret->why), fmt, ap);
	va_end(ap);
	return kind;
}

int rd_link_check(const struct iosig_catalog *cat, int dirfd, const char *path, unsigned flags,
		  struct rd_link *ret)
{
	char dir[PATH_MAX], norm[PATH_MAX];
	struct iosig_error err;
	char *slash;
	ssize_t n;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->ddfd = -1;
	ret->uid = geteuid();
	if (fstatat(dirfd, path, &ret->link, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(ret->link.st_mode))
		return classify(ret, RD_LINK_NONE, -ENOENT, "not a symbolic link");
	if ((flags & RD_LINK_ANY_USER) && ret->uid == 0)
		ret->uid = ret->link.st_uid;
	if (ret->link.st_uid != ret->uid)
		return classify(ret, RD_LINK_FOREIGN, -EPERM,
				"the link belongs to uid %u, not to uid %u: not one the runtime made for this user",
				(unsigned)ret->link.st_uid, (unsigned)ret->uid);
	n = readlinkat(dirfd, path, ret->target, sizeof(ret->target) - 1);
	if (n <= 0)
		return classify(ret, RD_LINK_FOREIGN, n < 0 ? -errno : -EINVAL,
				"cannot read the link: %s", n < 0 ? strerror(errno) : "empty");
	ret->target[n] = '\0';
	slash = strrchr(ret->target, '/');
	if (ret->target[0] != '/' || rd_path_normalise(ret->target, norm, sizeof(norm)) ||
	    strcmp(norm, ret->target) || slash == ret->target || !rd_data_name_prefix(slash + 1)) {
		return classify(ret, RD_LINK_FOREIGN, -EPERM,
				"the link does not point to a data file of the runtime (<data directory>/L-... or G-...)");
	}
	ret->name = slash + 1;
	memcpy(dir, ret->target, (size_t)(slash - ret->target));
	dir[slash - ret->target] = '\0';

	/* From here on it claims to be the user's redirected file: its data is
	 * trusted only as far as a new data directory would be. */
	ret->mount = cat ? cat_catalog_find_lexical(cat, dir) : NULL;
	if (!ret->mount)
		return classify(ret, RD_LINK_STALE, -EXDEV,
				"the data directory %s is on no mount of the catalog", dir);
	memset(&err, 0, sizeof(err));
	r = cat_datadir_open_existing(ret->mount, dir, ret->uid, &ret->ddfd, &err);
	if (r < 0) {
		ret->ddfd = -1;
		return classify(ret, RD_LINK_STALE, r, "the data directory cannot be trusted: %s",
				err.msg[0] ? err.msg : strerror(-r));
	}
	if (fstatat(ret->ddfd, ret->name, &ret->data, AT_SYMLINK_NOFOLLOW)) {
		r = -errno;
		rd_link_release(ret);
		return classify(ret, RD_LINK_STALE, r, "the data file %s is gone (%s)", ret->target,
				strerror(-r));
	}
	if (!S_ISREG(ret->data.st_mode) || ret->data.st_uid != ret->uid) {
		rd_link_release(ret);
		return classify(ret, RD_LINK_STALE, -EPERM,
				"the data file %s is not a regular file of uid %u", ret->target,
				(unsigned)ret->uid);
	}
	return classify(ret, RD_LINK_OWN, 0, "%s", "");
}

void rd_link_release(struct rd_link *link)
{
	if (link->ddfd >= 0)
		close(link->ddfd);
	link->ddfd = -1;
}

/* ------------------------------------------------------------------------
 * Anchors
 * ---------------------------------------------------------------------- */

const struct iosig_mount *rd_anchor_mount(const struct iosig_catalog *cat, dev_t dev)
{
	const struct iosig_mount *any = NULL;

	for (size_t i = 0; cat && i < iosig_catalog_size(cat); i++) {
		const struct iosig_mount *m = iosig_catalog_mount(cat, i);

		if (m->dev != (uint64_t)dev || !m->data_dir || m->data_dir[0] != '/')
			continue;
		if (!m->ineligible)
			return m;
		if (!any)
			any = m;
	}
	return any;
}

int rd_anchor_dir_at(int ddfd, bool create, int *ret_fd)
{
	struct stat st;
	int fd;

	fd = openat(ddfd, RD_ANCHOR_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(ddfd, RD_ANCHOR_DIR, 0700) && errno != EEXIST)
			return -errno;
		/* Ours, or a concurrent creator's: checked below. */
		fd = openat(ddfd, RD_ANCHOR_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -EPERM;
	}
	*ret_fd = fd;
	return 0;
}

/* True if the entries a (in adir) and b (in bdir) are the same inode. */
static bool same_entry(int adir, const char *a, int bdir, const char *b)
{
	struct stat sa, sb;

	return !fstatat(adir, a, &sa, AT_SYMLINK_NOFOLLOW) &&
	       !fstatat(bdir, b, &sb, AT_SYMLINK_NOFOLLOW) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int rd_anchor_make(int pfd, const char *base, int afd, const char *name)
{
	struct stat st;
	int r;

	if (linkat(pfd, base, afd, name, 0)) {
		r = -errno;
		/* An earlier anchor of that name whose link is gone everywhere
		 * (a global name reused): replace it. */
		if (r != -EEXIST || fstatat(afd, name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISLNK(st.st_mode) || st.st_nlink != 1 || unlinkat(afd, name, 0))
			return r;
		if (linkat(pfd, base, afd, name, 0))
			return -errno;
	}
	if (!same_entry(pfd, base, afd, name)) {
		/* Something else stands at `base` now: not our link's anchor. */
		unlinkat(afd, name, 0);
		return -EAGAIN;
	}
	return 0;
}

int rd_anchor_lock(int afd, bool exclusive)
{
	int fd = openat(afd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (flock(fd, exclusive ? LOCK_EX : LOCK_SH)) {
		if (errno != EINTR) {
			int r = -errno;

			close(fd);
			return r;
		}
	}
	return fd;
}

int rd_link_anchor(const struct iosig_catalog *cat, const struct rd_link *link, int *ret_afd)
{
	const struct iosig_mount *m;
	struct iosig_error err;
	struct stat st;
	int ddfd, afd, r;

	*ret_afd = -1;
	if (link->kind != RD_LINK_OWN || link->uid != geteuid())
		return RD_ANCHOR_NONE;
	m = rd_anchor_mount(cat, link->link.st_dev);
	if (!m)
		return RD_ANCHOR_NONE;
	memset(&err, 0, sizeof(err));
	if (cat_datadir_open_existing(m, m->data_dir, link->uid, &ddfd, &err) < 0)
		return RD_ANCHOR_NONE;
	r = rd_anchor_dir_at(ddfd, false, &afd);
	close(ddfd);
	if (r < 0)
		return RD_ANCHOR_NONE;
	if (fstatat(afd, link->name, &st, AT_SYMLINK_NOFOLLOW)) {
		close(afd);
		return RD_ANCHOR_NONE;
	}
	if (st.st_dev != link->link.st_dev || st.st_ino != link->link.st_ino) {
		close(afd);
		return RD_ANCHOR_OTHER;
	}
	*ret_afd = afd;
	return RD_ANCHOR_THIS;
}

/* ------------------------------------------------------------------------
 * Removing a link, and its data with it
 * ---------------------------------------------------------------------- */

/* The name rule for links without an anchor: the data file's name records
 * the last component of `path`. */
static bool named_after(const struct rd_link *link, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t pre, len;

	base = base ? base + 1 : path;
	len = strnlen(base, RD_NAME_BASE_MAX);
	pre = rd_data_name_prefix(link->name);
	return pre && strlen(link->name + pre) == len && !memcmp(link->name + pre, base, len);
}

/* Decides whether removing the OWN link r->link removes its data. */
static void decide_sole(struct rd_link_removal *r, const char *path)
{
	const struct rd_link *lk = &r->link;

	r->sole = false;
	if (lk->data.st_nlink != 1) {
		snprintf(r->why, sizeof(r->why), "the data file has %lu hard links: it is kept",
			 (unsigned long)lk->data.st_nlink);
		return;
	}
	switch (r->anchor) {
	case RD_ANCHOR_THIS:
		if (lk->link.st_nlink == 2)
			r->sole = true;
		else
			snprintf(r->why, sizeof(r->why),
				 "the link has %lu other names (hard links): the data stays with them",
				 (unsigned long)lk->link.st_nlink - 2);
		return;
	case RD_ANCHOR_OTHER:
		snprintf(r->why, sizeof(r->why),
			 "this link is a copy: the runtime's own link to the data is another one, and the data stays with it");
		return;
	default:
		if (lk->link.st_nlink == 1 && named_after(lk, path))
			r->sole = true;
		else
			snprintf(r->why, sizeof(r->why),
				 "the data file's name is not this link's, or the link has other names: it is kept");
		return;
	}
}

bool rd_link_removal_begin(const struct iosig_catalog *cat, int dirfd, const char *path,
			   struct rd_link_removal *ret)
{
	ret->anchor = RD_ANCHOR_NONE;
	ret->afd = -1;
	ret->sole = false;
	ret->why[0] = '\0';
	rd_link_check(cat, dirfd, path, 0, &ret->link);
	if (ret->link.kind != RD_LINK_OWN && ret->link.kind != RD_LINK_STALE) {
		rd_link_release(&ret->link);
		return false;
	}
	if (ret->link.kind == RD_LINK_OWN) {
		ret->anchor = rd_link_anchor(cat, &ret->link, &ret->afd);
		decide_sole(ret, path);
	}
	return true;
}

int rd_link_removal_end(struct rd_link_removal *r, bool removed, const char **ret_why)
{
	const struct rd_link *lk = &r->link;
	const char *why = NULL;
	struct stat st;
	int e = 0;

	if (!removed) {
		why = "the link was not removed";
		e = -ENOENT;
	} else if (lk->kind != RD_LINK_OWN) {
		why = lk->why;
		e = lk->err;
	} else if (!r->sole) {
		why = r->why;
		e = -EMLINK;
	} else if (fstatat(lk->ddfd, lk->name, &st, AT_SYMLINK_NOFOLLOW) ||
		   st.st_dev != lk->data.st_dev || st.st_ino != lk->data.st_ino) {
		why = "the data file changed since the link was checked";
		e = -EAGAIN;
	} else if (unlinkat(lk->ddfd, lk->name, 0)) {
		e = -errno;
		why = strerror(errno);
	} else if (r->anchor == RD_ANCHOR_THIS &&
		   !fstatat(r->afd, lk->name, &st, AT_SYMLINK_NOFOLLOW) &&
		   st.st_dev == lk->link.st_dev && st.st_ino == lk->link.st_ino) {
		/* The data is gone: so is the last trace of its link. */
		unlinkat(r->afd, lk->name, 0);
	}
	if (r->afd >= 0)
		close(r->afd);
	r->afd = -1;
	rd_link_release(&r->link);
	if (ret_why)
		*ret_why = why;
	return e;
}
