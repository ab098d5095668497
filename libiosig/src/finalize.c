/* SPDX-License-Identifier: MIT */
/*
 * finalize.c - moving redirected data back (see finalize.h).
 *
 * Order of operations, and what a crash at each point leaves:
 *
 * Same filesystem (one step):
 *   1. renameat2(data, path, RENAME_EXCHANGE): the data file is at PATH,
 *      the link is in the data directory under the data file's name.
 *   2. check that what came back is our link (else exchange back: refuse);
 *      unlink it; fsync both directories.
 *   Crash before 1: nothing changed.  Crash between 1 and 2: the data is at
 *   PATH; a self-referring link is left in the data directory.
 *
 * Across filesystems:
 *   1. copy the data into ".<name>.iosig-fin-<random>" next to PATH
 *      (holes kept), restore owner, mode, extended attributes and times,
 *      fsync it;
 *   2. exchange it with the link (renameat2 RENAME_EXCHANGE), check what
 *      came back is our link (else exchange back: refuse), unlink it, fsync
 *      PATH's directory;
 *   3. remove the data file, fsync the data directory.
 *   Crash during 1: the link and its data are intact; a partial temporary
 *   file may be left next to PATH.  Crash between 2 and 3: PATH holds the
 *   complete, durable copy; the data file remains in the data directory.
 *   Nothing is ever lost; at worst a copy is left behind.
 *
 * Nothing at PATH is ever replaced by a rename: the exchange swaps two
 * names atomically and the result is checked before anything is deleted.
 * Filesystems without RENAME_EXCHANGE get check-then-rename instead.
 */
#include "finalize.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "hash.h"
#include "rd_link.h"
#include "redirect.h"

static const char *const action_names[] = {
	[FIN_MOVED] = "moved",
	[FIN_COPIED] = "copied",
	[FIN_ALREADY] = "already",
	[FIN_REFUSED] = "refused",
	[FIN_FAILED] = "failed",
};

const char *fin_action_name(enum fin_action action)
{
	if ((unsigned)action >= sizeof(action_names) / sizeof(action_names[0]))
		return "unknown";
	return action_names[action];
}

static int report(struct fin_report *rep, int action, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Fills the report; returns r (0 or -errno) for the caller to return. */
static int report(struct fin_report *rep, int action, int r, const char *fmt, ...)
{
	va_list ap;

	rep->action = action;
	va_start(ap, fmt);
	vsnprintf(rep->msg, sizeof(rep->msg), fmt, ap);
	va_end(ap);
	return r;
}

/* True if the entry `name` in dfd is a symbolic link to `target`. */
static bool is_link_to(int dfd, const char *name, const char *target)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, target);
}

/*
 * Atomically puts the entry `from` (in fdir) at `to` (in tdir) while taking
 * the link `to` away: RENAME_EXCHANGE, then the link, now named `from` in
 * fdir, is checked and removed.  Without RENAME_EXCHANGE: check, then
 * rename.  0, -EAGAIN if `to` is not our link any more (nothing changed),
 * or the rename's -errno (-EXDEV across mounts).
 */
static int swap_in(int fdir, const char *from, int tdir, const char *to, const char *target)
{
	if (renameat2(fdir, from, tdir, to, RENAME_EXCHANGE) == 0) {
		if (!is_link_to(fdir, from, target)) {
			/* Something else was put at `to` meanwhile: undo. */
			renameat2(fdir, from, tdir, to, RENAME_EXCHANGE);
			return -EAGAIN;
		}
		unlinkat(fdir, from, 0);
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (!is_link_to(tdir, to, target))
		return -EAGAIN;
	if (renameat(fdir, from, tdir, to))
		return -errno;
	return 0;
}

/* Copies [0, size) of sfd to tfd keeping holes. 0 or -errno. */
static int copy_data(int sfd, int tfd, off_t size)
{
	char buf[1 << 16];
	off_t off = 0;

	while (off < size) {
		off_t data = lseek(sfd, off, SEEK_DATA);
		off_t hole;

		if (data < 0 && errno == ENXIO)
			break;                    /* the rest is a hole */
		if (data < 0) {
			data = off;               /* no SEEK_DATA here: copy everything */
			hole = size;
		} else {
			hole = lseek(sfd, data, SEEK_HOLE);
			if (hole < 0 || hole > size)
				hole = size;
		}
		while (data < hole) {
			off_t in = data, out = data;
			ssize_t n = copy_file_range(sfd, &in, tfd, &out, (size_t)(hole - data), 0);

			if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP)) {
				size_t len = (size_t)(hole - data) < sizeof(buf) ?
					     (size_t)(hole - data) : sizeof(buf);

				n = pread(sfd, buf, len, data);
				if (n > 0 && pwrite(tfd, buf, (size_t)n, data) != n)
					return errno ? -errno : -EIO;
			}
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (n == 0)
				return -EIO;      /* the file shrank under us */
			data += n;
		}
		off = hole;
	}
	if (ftruncate(tfd, size))
		return -errno;
	return 0;
}

/* Copies the extended attributes (ACLs included) it can; never fails. */
static void copy_xattrs(int sfd, int tfd)
{
	char names[4096], value[4096];
	ssize_t len = flistxattr(sfd, names, sizeof(names));

	for (ssize_t i = 0; len > 0 && i < len; i += (ssize_t)strlen(names + i) + 1) {
		ssize_t n = fgetxattr(sfd, names + i, value, sizeof(value));

		if (n >= 0)
			(void)fsetxattr(tfd, names + i, value, (size_t)n, 0);
	}
}

/* Across filesystems (see the head of this file).  0 or -errno. */
static int copy_back(int pfd, const char *base, int ddfd, const char *name, const char *target,
		     const struct stat *dst, struct fin_report *rep)
{
	struct timespec times[2] = { dst->st_atim, dst->st_mtim };
	char tmp[NAME_MAX + 1];
	bool owner_kept = true;
	unsigned long long rnd;
	struct stat st;
	int sfd, tfd, r;

	sfd = openat(ddfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return report(rep, FIN_FAILED, -errno, "cannot open the data file %s: %s", target,
			      strerror(errno));
	if (fstat(sfd, &st) || st.st_dev != dst->st_dev || st.st_ino != dst->st_ino) {
		close(sfd);
		return report(rep, FIN_FAILED, -EAGAIN,
			      "the data file %s changed while finalizing; nothing was changed", target);
	}
	rnd = hash_random64();
	snprintf(tmp, sizeof(tmp), ".%.200s.iosig-fin-%016llx", base, rnd);
	tfd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd < 0) {
		r = -errno;
		close(sfd);
		return report(rep, FIN_FAILED, r, "cannot create a temporary file next to the path: %s",
			      strerror(-r));
	}
	r = copy_data(sfd, tfd, st.st_size);
	if (r < 0) {
		report(rep, FIN_FAILED, r, "copying %s back failed: %s; nothing was changed", target,
		       strerror(-r));
		goto out_unlink_tmp;
	}
	copy_xattrs(sfd, tfd);
	if (fchown(tfd, st.st_uid, st.st_gid))
		owner_kept = false;
	if (fchmod(tfd, st.st_mode & 07777) || futimens(tfd, times) || fsync(tfd)) {
		r = -errno;
		report(rep, FIN_FAILED, r, "preparing the copy of %s failed: %s; nothing was changed",
		       target, strerror(-r));
		goto out_unlink_tmp;
	}
	close(tfd);
	tfd = -1;
	r = swap_in(pfd, tmp, pfd, base, target);
	if (r < 0) {
		if (r == -EAGAIN)
			report(rep, FIN_REFUSED, r,
			       "the path changed while finalizing (it is no longer the link to %s); nothing was changed",
			       target);
		else
			report(rep, FIN_FAILED, r, "cannot put the copy in place: %s; nothing was changed",
			       strerror(-r));
		goto out_unlink_tmp;
	}
	fsync(pfd);
	/* The copy is durable at the path: the data file may go. */
	unlinkat(ddfd, name, 0);
	fsync(ddfd);
	close(sfd);
	rep->bytes = (uint64_t)st.st_size;
	return report(rep, FIN_COPIED, 0, "copied back from %s%s", target,
		      owner_kept ? "" : " (owner could not be restored: run as root to keep it)");

out_unlink_tmp:
	if (tfd >= 0)
		close(tfd);
	unlinkat(pfd, tmp, 0);
	close(sfd);
	return r;
}

/* The link is gone: so goes its anchor (rd_link.h), when it is the user's
 * own (root's finalize of another user's link leaves it to that user's gc,
 * which drops anchors whose data is gone). */
static void drop_anchor(const struct iosig_catalog *catalog, const struct rd_link *lk)
{
	int afd;

	if (rd_link_anchor(catalog, lk, &afd) == RD_ANCHOR_THIS) {
		unlinkat(afd, lk->name, 0);
		close(afd);
	}
}

int fin_path(const struct iosig_catalog *catalog, int dirfd, const char *path, unsigned flags,
	     struct fin_report *rep)
{
	char dir[PATH_MAX];
	struct stat lst, pst;
	struct rd_link lk;
	const char *base;
	int pfd, r;

	memset(rep, 0, sizeof(*rep));
	rep->dry_run = flags & FIN_DRY_RUN;
	if (!rd_path_split(path, dir, sizeof(dir), &base))
		return report(rep, FIN_REFUSED, -EINVAL,
			      "not a path to a file (empty, trailing slash, '.' or '..')");
	pfd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return report(rep, FIN_FAILED, -errno, "cannot open the directory '%s': %s", dir,
			      strerror(errno));
	if (fstatat(pfd, base, &lst, AT_SYMLINK_NOFOLLOW)) {
		r = report(rep, FIN_FAILED, -errno, "%s", strerror(errno));
		goto out_close_pfd;
	}
	if (!S_ISLNK(lst.st_mode)) {
		rep->bytes = (uint64_t)lst.st_size;
		r = report(rep, FIN_ALREADY, 0, "not a symbolic link: already in place, nothing to do");
		goto out_close_pfd;
	}

	/* Only a link the runtime made for the user running this (root: for
	 * the link's owner), to that user's data: anything else would let a
	 * link someone planted move another user's data (rd_link.h). */
	rd_link_check(catalog, pfd, base, RD_LINK_ANY_USER, &lk);
	snprintf(rep->target, sizeof(rep->target), "%s", lk.target);
	switch (lk.kind) {
	case RD_LINK_OWN:
		break;
	case RD_LINK_NONE:
		r = report(rep, FIN_FAILED, -EAGAIN, "the path changed while finalizing; nothing was changed");
		goto out_release;
	case RD_LINK_FOREIGN:
		r = report(rep, FIN_REFUSED, lk.err, "%s; if the file was redirected under another "
			   "configuration, run with that configuration (--config or IOSIG_CONFIG)", lk.why);
		goto out_release;
	default:
		r = report(rep, FIN_REFUSED, lk.err, "%s%s", lk.why,
			   lk.err == -ENOENT ? ": nothing to restore; remove the dangling link if the data is gone" :
			   ": refusing to move it");
		goto out_release;
	}
	rep->bytes = (uint64_t)lk.data.st_size;
	if (fstat(pfd, &pst)) {
		r = report(rep, FIN_FAILED, -errno, "%s", strerror(errno));
		goto out_release;
	}
	if (flags & FIN_DRY_RUN) {
		r = report(rep, lk.data.st_dev == pst.st_dev ? FIN_MOVED : FIN_COPIED, 0,
			   "would %s back from %s", lk.data.st_dev == pst.st_dev ? "move" : "copy",
			   rep->target);
		goto out_release;
	}
	r = -EXDEV;
	if (lk.data.st_dev == pst.st_dev) {
		r = swap_in(lk.ddfd, lk.name, pfd, base, rep->target);
		if (r == 0) {
			fsync(pfd);
			fsync(lk.ddfd);
			report(rep, FIN_MOVED, 0, "moved back from %s", rep->target);
		} else if (r == -EAGAIN) {
			report(rep, FIN_REFUSED, r,
			       "the path changed while finalizing (it is no longer the link to %s); nothing was changed",
			       rep->target);
		} else if (r != -EXDEV) {
			report(rep, FIN_FAILED, r, "cannot move %s back: %s; nothing was changed",
			       rep->target, strerror(-r));
		}
	}
	if (r == -EXDEV)
		r = copy_back(pfd, base, lk.ddfd, lk.name, rep->target, &lk.data, rep);
	if (r == 0)
		drop_anchor(catalog, &lk);

out_release:
	rd_link_release(&lk);
out_close_pfd:
	close(pfd);
	return r;
}
