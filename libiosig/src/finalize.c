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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "catalog_internal.h"
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

const struct iosig_mount *fin_data_dir_mount(const struct iosig_catalog *catalog,
					     const char *dir)
{
	size_t n = iosig_catalog_size(catalog);

	for (size_t i = 0; i < n; i++) {
		const struct iosig_mount *m = iosig_catalog_mount(catalog, i);
		size_t len;

		if (!m || !m->data_dir)
			continue;
		len = strlen(m->data_dir);
		while (len > 1 && m->data_dir[len - 1] == '/')
			len--;
		if (len == strlen(dir) && !strncmp(m->data_dir, dir, len))
			return m;
	}
	return NULL;
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
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		rnd = (unsigned long long)getpid() ^ ((unsigned long long)st.st_ino << 20);
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

int fin_path(const struct iosig_catalog *catalog, int dirfd, const char *path, unsigned flags,
	     struct fin_report *rep)
{
	char dir[PATH_MAX], tdir[PATH_MAX];
	const struct iosig_mount *m;
	struct iosig_error err;
	struct stat lst, dst, pst;
	const char *base, *name;
	int pfd, ddfd, r;
	ssize_t n;

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
	n = readlinkat(pfd, base, rep->target, sizeof(rep->target) - 1);
	if (n < 0) {
		r = report(rep, FIN_FAILED, -errno, "cannot read the link: %s", strerror(errno));
		goto out_close_pfd;
	}
	rep->target[n] = '\0';

	/* The target must be "<data_dir>/<L-|G-name>" of a catalog mount. */
	name = strrchr(rep->target, '/');
	m = NULL;
	if (rep->target[0] == '/' && name && name != rep->target &&
	    (size_t)(name - rep->target) < sizeof(tdir)) {
		memcpy(tdir, rep->target, (size_t)(name - rep->target));
		tdir[name - rep->target] = '\0';
		name++;
		m = fin_data_dir_mount(catalog, tdir);
	}
	if (!m) {
		r = report(rep, FIN_REFUSED, -EPERM,
			   "the link does not point into a known iosig data directory; if the file was "
			   "redirected under another configuration, run with that configuration (--config or IOSIG_CONFIG)");
		goto out_close_pfd;
	}
	if ((strncmp(name, "L-", 2) && strncmp(name, "G-", 2)) || !strcmp(name, "L-") ||
	    !strcmp(name, "G-")) {
		r = report(rep, FIN_REFUSED, -EPERM,
			   "'%s' is not a name iosig gives data files (L-... or G-...)", name);
		goto out_close_pfd;
	}
	memset(&err, 0, sizeof(err));
	r = cat_datadir_open(m, &ddfd, &err);
	if (r < 0) {
		report(rep, FIN_REFUSED, r, "data directory %s: %s", m->data_dir,
		       err.msg[0] ? err.msg : strerror(-r));
		goto out_close_pfd;
	}
	if (fstatat(ddfd, name, &dst, AT_SYMLINK_NOFOLLOW)) {
		r = report(rep, FIN_REFUSED, -errno,
			   "the data file is missing (%s): nothing to restore; remove the dangling link if the data is gone",
			   strerror(errno));
		goto out_close_ddfd;
	}
	if (!S_ISREG(dst.st_mode) || (dst.st_uid != geteuid() && geteuid() != 0)) {
		r = report(rep, FIN_REFUSED, -EPERM,
			   "the data file is not a regular file of this user: refusing to move it");
		goto out_close_ddfd;
	}
	rep->bytes = (uint64_t)dst.st_size;
	if (fstat(pfd, &pst)) {
		r = report(rep, FIN_FAILED, -errno, "%s", strerror(errno));
		goto out_close_ddfd;
	}
	if (flags & FIN_DRY_RUN) {
		r = report(rep, dst.st_dev == pst.st_dev ? FIN_MOVED : FIN_COPIED, 0,
			   "would %s back from %s", dst.st_dev == pst.st_dev ? "move" : "copy",
			   rep->target);
		goto out_close_ddfd;
	}
	r = -EXDEV;
	if (dst.st_dev == pst.st_dev) {
		r = swap_in(ddfd, name, pfd, base, rep->target);
		if (r == 0) {
			fsync(pfd);
			fsync(ddfd);
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
		r = copy_back(pfd, base, ddfd, name, rep->target, &dst, rep);

out_close_ddfd:
	close(ddfd);
out_close_pfd:
	close(pfd);
	return r;
}
