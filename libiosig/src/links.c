/* SPDX-License-Identifier: MIT */
/*
 * links.c - the interposers that make a link the runtime made for this user
 * behave like the regular file it stands for (links.h).  In libiosig.so
 * (exported by libiosig.map under glibc's version names) and in the
 * iosig-redirect preload's front (IOSIG_PRELOAD_FRONT: there preload.c keeps
 * its own open and unlink interposers, which call links_open_result() and
 * links_remove()).
 *
 *   lstat(64), fstatat(64), __lxstat(64), __fxstatat(64), statx
 *     with AT_SYMLINK_NOFOLLOW          the data file's status
 *   open(64), openat(64), __open(64)_2, __openat(64)_2
 *     with O_NOFOLLOW                   the data file, opened
 *   readlink(at), __readlink(at)_chk    EINVAL: not a link
 *   unlink, unlinkat, remove            the link, and its data with it
 *   rename, renameat, renameat2         a link replaced: its data freed
 *   fchmodat, utimensat with AT_SYMLINK_NOFOLLOW, lchmod, lutimes
 *                                       act on the data file
 * fstatat(64), __fxstatat(64) and statx of a descriptor itself ("" with
 * AT_EMPTY_PATH) first let interpose.c finish the descriptor's writes queued
 * for iosigd (interpose_stat_self()).
 * The calls that follow links (stat, open without O_NOFOLLOW, truncate,
 * chmod, utimes ...) reach the data file by themselves.
 *
 * Cost for everything else: each interposer calls the next definition
 * first (libc's, or the next layer's) and looks further only when the
 * result is a symbolic link (a status of S_IFLNK, an open refused with
 * ELOOP, a readlink that succeeded, a chmod refused with EOPNOTSUPP).  The
 * calls that change a name (unlink, rename, utimensat of a link) cannot
 * learn it from their result: they look at the entry first, one fstatat.
 * A link is then tested without the catalog (owner and target, plausible())
 * before the runtime is asked (links.h: struct links_ops), so that links of
 * other users and ordinary links never load the runtime.
 *
 * Inside the runtime (iosig_real_busy, realfn.h) every interposer goes
 * straight to the next definition: the runtime sees links as they are.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "interpose.h"
#include "links.h"
#include "realfn.h"
#include "redirect.h"

#define EXPORT __attribute__((visibility("default")))
#define unlikely(x) __builtin_expect(!!(x), 0)

/* libc declares these only for _FORTIFY_SOURCE builds, or not at all. */
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len, size_t buflen);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int lchmod(const char *path, mode_t mode);

/* ------------------------------------------------------------------------
 * The next definitions
 * ---------------------------------------------------------------------- */

#define REALS(X)                                                                              \
	X(lstat) X(lstat64) X(fstatat) X(fstatat64) X(__lxstat) X(__lxstat64) X(__fxstatat)    \
	X(__fxstatat64) X(statx) X(readlink) X(readlinkat) X(__readlink_chk)                   \
	X(__readlinkat_chk) X(open) X(open64) X(__open_2) X(__open64_2) X(openat) X(openat64)  \
	X(__openat_2) X(__openat64_2) X(unlink) X(unlinkat) X(remove) X(rename) X(renameat)    \
	X(renameat2) X(fchmodat) X(lchmod) X(utimensat) X(lutimes)

/* (The front leaves open and unlink to preload.c: some stay unused there.) */
#define DEFINE(name) static struct real_fn real_##name __attribute__((unused)) = REAL_FN_INIT(name);
REALS(DEFINE)
#undef DEFINE

/* The next definition of `name`, as a pointer of its own type; calls
 * through a NULL one are turned into ENOSYS by NEXT(). */
#define FN(name) ((__typeof__(&name))real_get(&real_##name))
#define NEXT(name, ...) (FN(name) ? FN(name)(__VA_ARGS__) : enosys())

static int enosys(void)
{
	errno = ENOSYS;
	return -1;
}

/* The runtime's side: links_ops here; the front's preload.c finds its
 * core's. */
#ifndef IOSIG_PRELOAD_FRONT
const struct links_ops *links_backend(void)
{
	return &links_ops;
}
#endif

/* ------------------------------------------------------------------------
 * Is it worth asking the runtime?
 * ---------------------------------------------------------------------- */

/*
 * Could the symbolic link dirfd/path, owned by `owner`, be one the runtime
 * made for this user?  Its owner is the effective user, and its target an
 * absolute path ending in a data file's name (rd_data_target()).  Costs one
 * readlinkat; rd_link_check() decides.  Keeps errno.
 */
static bool plausible(int dirfd, const char *path, uid_t owner)
{
	char target[PATH_MAX];
	int saved = errno;
	ssize_t n;

	if (owner != geteuid())
		return false;
	n = NEXT(readlinkat, dirfd, path, target, sizeof(target) - 1);
	errno = saved;
	if (n <= 0)
		return false;
	target[n] = '\0';
	return rd_data_target(target);
}

/* The same for an entry not looked at yet: one fstatat first. */
static bool plausible_entry(int dirfd, const char *path)
{
	int saved = errno;
	struct stat st;
	bool r;

	r = !NEXT(fstatat, dirfd, path, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode) &&
	    plausible(dirfd, path, st.st_uid);
	errno = saved;
	return r;
}

/*
 * Runs fn on the data file of dirfd/path when it is the user's own link;
 * returns true when it was (then *ret is fn's result as the interposer
 * returns it: 0, or -1 with errno), false when the plain result stands.
 */
static bool on_data(int dirfd, const char *path, links_data_fn fn, void *arg, int *ret)
{
	const struct links_ops *ops = links_backend();
	int saved = errno;
	bool own = false;
	int r;

	if (!ops)
		return false;
	real_enter();
	r = ops->at_data(dirfd, path, fn, arg, &own);
	real_leave();
	if (!own) {
		errno = saved;
		return false;
	}
	*ret = r < 0 ? -1 : 0;
	errno = r < 0 ? -r : saved;
	return true;
}

/* ------------------------------------------------------------------------
 * Status: the data file's, not the link's
 * ---------------------------------------------------------------------- */

enum stat_kind { ST_FSTATAT, ST_FSTATAT64, ST_FXSTATAT, ST_FXSTATAT64, ST_STATX };

/* One status call, to be made again on a data file. */
struct stat_req {
	enum stat_kind kind;
	int ver;           /* __fxstatat's version */
	int flags;         /* flags besides AT_SYMLINK_NOFOLLOW that still apply */
	unsigned mask;     /* statx */
	void *buf;
};

static int stat_data(int ddfd, const char *name, void *arg)
{
	const struct stat_req *q = arg;
	int flags = q->flags | AT_SYMLINK_NOFOLLOW, r;

	switch (q->kind) {
	case ST_FSTATAT:
		r = NEXT(fstatat, ddfd, name, q->buf, flags);
		break;
	case ST_FSTATAT64:
		r = NEXT(fstatat64, ddfd, name, q->buf, flags);
		break;
	case ST_FXSTATAT:
		r = NEXT(__fxstatat, q->ver, ddfd, name, q->buf, flags);
		break;
	case ST_FXSTATAT64:
		r = NEXT(__fxstatat64, q->ver, ddfd, name, q->buf, flags);
		break;
	default:
		r = NEXT(statx, ddfd, name, flags, q->mask, q->buf);
		break;
	}
	return r ? -errno : 0;
}

/*
 * After a status call that did not follow the last component and
 * succeeded (r, 0): when it found a link (mode; owner, NULL when the call
 * did not tell) that is the user's own, the status of the data file
 * instead.
 */
static int stat_result(int r, int dirfd, const char *path, mode_t mode, const uid_t *owner,
		       struct stat_req *q)
{
	int ret;

	if (r || !S_ISLNK(mode) || real_inside() || !path || !*path ||
	    !(owner ? plausible(dirfd, path, *owner) : plausible_entry(dirfd, path)))
		return r;
	q->flags &= AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE;
	return on_data(dirfd, path, stat_data, q, &ret) ? ret : r;
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	struct stat_req q = { ST_FSTATAT, 0, flags, 0, st };
	int r;

	interpose_stat_self(dirfd, path, flags);
	r = NEXT(fstatat, dirfd, path, st, flags);
	if (r || !(flags & AT_SYMLINK_NOFOLLOW))
		return r;
	return stat_result(r, dirfd, path, st->st_mode, &st->st_uid, &q);
}

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	struct stat_req q = { ST_FSTATAT64, 0, flags, 0, st };
	int r;

	interpose_stat_self(dirfd, path, flags);
	r = NEXT(fstatat64, dirfd, path, st, flags);
	if (r || !(flags & AT_SYMLINK_NOFOLLOW))
		return r;
	return stat_result(r, dirfd, path, st->st_mode, &st->st_uid, &q);
}

EXPORT int lstat(const char *path, struct stat *st)
{
	struct stat_req q = { ST_FSTATAT, 0, 0, 0, st };
	int r = NEXT(lstat, path, st);

	if (r)
		return r;
	return stat_result(r, AT_FDCWD, path, st->st_mode, &st->st_uid, &q);
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
	struct stat_req q = { ST_FSTATAT64, 0, 0, 0, st };
	int r = NEXT(lstat64, path, st);

	if (r)
		return r;
	return stat_result(r, AT_FDCWD, path, st->st_mode, &st->st_uid, &q);
}

/* The versioned calls of programs built against glibc before 2.33.  The
 * buffer's layout depends on `ver`; its mode and owner are where struct
 * stat has them for the one version glibc accepts here. */
EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	struct stat_req q = { ST_FXSTATAT, ver, 0, 0, st };
	int r = NEXT(__lxstat, ver, path, st);

	if (r)
		return r;
	return stat_result(r, AT_FDCWD, path, st->st_mode, &st->st_uid, &q);
}

EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	struct stat_req q = { ST_FXSTATAT64, ver, 0, 0, st };
	int r = NEXT(__lxstat64, ver, path, st);

	if (r)
		return r;
	return stat_result(r, AT_FDCWD, path, st->st_mode, &st->st_uid, &q);
}

EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	struct stat_req q = { ST_FXSTATAT, ver, flags, 0, st };
	int r;

	interpose_stat_self(dirfd, path, flags);
	r = NEXT(__fxstatat, ver, dirfd, path, st, flags);
	if (r || !(flags & AT_SYMLINK_NOFOLLOW))
		return r;
	return stat_result(r, dirfd, path, st->st_mode, &st->st_uid, &q);
}

EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	struct stat_req q = { ST_FXSTATAT64, ver, flags, 0, st };
	int r;

	interpose_stat_self(dirfd, path, flags);
	r = NEXT(__fxstatat64, ver, dirfd, path, st, flags);
	if (r || !(flags & AT_SYMLINK_NOFOLLOW))
		return r;
	return stat_result(r, dirfd, path, st->st_mode, &st->st_uid, &q);
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	struct stat_req q = { ST_STATX, 0, flags, mask, stx };
	int r;

	interpose_stat_self(dirfd, path, flags);
	r = NEXT(statx, dirfd, path, flags, mask, stx);

	if (!(flags & AT_SYMLINK_NOFOLLOW) || r || !(stx->stx_mask & STATX_TYPE))
		return r;
	/* Without STATX_UID asked for, the owner is looked up. */
	return stat_result(r, dirfd, path, stx->stx_mode,
			   (stx->stx_mask & STATX_UID) ? &stx->stx_uid : NULL, &q);
}

/* ------------------------------------------------------------------------
 * readlink: not a link
 * ---------------------------------------------------------------------- */

/*
 * After a readlink that succeeded (n bytes of the target in buf, cut at
 * size): -1 with EINVAL, as for a regular file, when dirfd/path is the
 * user's own link.
 */
static ssize_t readlink_result(ssize_t n, int dirfd, const char *path, const char *buf,
			       size_t size)
{
	char target[PATH_MAX];
	int ret;

	if (n < 0 || real_inside())
		return n;
	if ((size_t)n < size && (size_t)n < sizeof(target)) {
		memcpy(target, buf, (size_t)n);
		target[n] = '\0';
		if (!rd_data_target(target))
			return n;
	}
	if (!on_data(dirfd, path, NULL, NULL, &ret))
		return n;
	errno = EINVAL;
	return -1;
}

EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
	ssize_t n = NEXT(readlink, path, buf, size);

	return readlink_result(n, AT_FDCWD, path, buf, size);
}

EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t n = NEXT(readlinkat, dirfd, path, buf, size);

	return readlink_result(n, dirfd, path, buf, size);
}

EXPORT ssize_t __readlink_chk(const char *path, char *buf, size_t size, size_t buflen)
{
	ssize_t n = NEXT(__readlink_chk, path, buf, size, buflen);

	return readlink_result(n, AT_FDCWD, path, buf, size);
}

EXPORT ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t size,
				size_t buflen)
{
	ssize_t n = NEXT(__readlinkat_chk, dirfd, path, buf, size, buflen);

	return readlink_result(n, dirfd, path, buf, size);
}

/* ------------------------------------------------------------------------
 * open with O_NOFOLLOW: the data file
 * ---------------------------------------------------------------------- */

int links_open_result(int fd, int saved, int dirfd, const char *path, int flags)
{
	const struct links_ops *ops;
	bool own = false;
	int r;

	if (fd >= 0 || !(flags & O_NOFOLLOW) || errno != ELOOP || real_inside() || !path ||
	    !plausible_entry(dirfd, path) || !(ops = links_backend()))
		return fd;
	real_enter();
	r = ops->open(dirfd, path, flags, &own);
	real_leave();
	if (!own) {
		errno = ELOOP;
		return fd;
	}
	if (r < 0) {
		errno = -r;
		return -1;
	}
	errno = saved;
	return r;
}

#ifndef IOSIG_PRELOAD_FRONT
EXPORT int open(const char *path, int flags, ...)
{
	int saved = errno, fd;
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	fd = NEXT(open, path, flags, mode);
	return links_open_result(fd, saved, AT_FDCWD, path, flags);
}

EXPORT int open64(const char *path, int flags, ...)
{
	int saved = errno, fd;
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	fd = NEXT(open64, path, flags, mode);
	return links_open_result(fd, saved, AT_FDCWD, path, flags);
}

EXPORT int __open_2(const char *path, int flags)
{
	int saved = errno, fd = NEXT(__open_2, path, flags);

	return links_open_result(fd, saved, AT_FDCWD, path, flags);
}

EXPORT int __open64_2(const char *path, int flags)
{
	int saved = errno, fd = NEXT(__open64_2, path, flags);

	return links_open_result(fd, saved, AT_FDCWD, path, flags);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	int saved = errno, fd;
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	fd = NEXT(openat, dirfd, path, flags, mode);
	return links_open_result(fd, saved, dirfd, path, flags);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	int saved = errno, fd;
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	fd = NEXT(openat64, dirfd, path, flags, mode);
	return links_open_result(fd, saved, dirfd, path, flags);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int saved = errno, fd = NEXT(__openat_2, dirfd, path, flags);

	return links_open_result(fd, saved, dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int saved = errno, fd = NEXT(__openat64_2, dirfd, path, flags);

	return links_open_result(fd, saved, dirfd, path, flags);
}
#endif

/* ------------------------------------------------------------------------
 * Removing and replacing: the data goes with the link
 * ---------------------------------------------------------------------- */

/* One call that removes or replaces a name. */
struct name_call {
	enum { NC_UNLINK = LINKS_UNLINK, NC_UNLINKAT = LINKS_UNLINKAT, NC_REMOVE = LINKS_REMOVE,
	       NC_RENAME, NC_RENAMEAT, NC_RENAMEAT2 } kind;
	int olddirfd;
	const char *old;
	int dirfd;             /* of the name removed or replaced */
	const char *path;
	unsigned flags;
};

static int name_call_next(const struct name_call *c)
{
	switch (c->kind) {
	case NC_UNLINK:
		return NEXT(unlink, c->path);
	case NC_UNLINKAT:
		return NEXT(unlinkat, c->dirfd, c->path, (int)c->flags);
	case NC_REMOVE:
		return NEXT(remove, c->path);
	case NC_RENAME:
		return NEXT(rename, c->old, c->path);
	case NC_RENAMEAT:
		return NEXT(renameat, c->olddirfd, c->old, c->dirfd, c->path);
	default:
		return NEXT(renameat2, c->olddirfd, c->old, c->dirfd, c->path, c->flags);
	}
}

/*
 * Makes the call; when the name it removes or replaces (c->dirfd, c->path)
 * was the user's own link and the only name of it (rd_link_removal_begin()),
 * its data file and anchor go too.
 */
static int name_call(const struct name_call *c)
{
	const struct links_ops *ops;
	struct rd_link_removal *rm;
	int saved = errno, r, e;
	bool begun;

	if (real_inside() || !c->path || !plausible_entry(c->dirfd, c->path) ||
	    !(ops = links_backend()))
		return name_call_next(c);
	if (c->old) {
		struct stat so, sn;

		/* rename onto another name of the same link changes nothing. */
		if (!NEXT(fstatat, c->olddirfd, c->old, &so, AT_SYMLINK_NOFOLLOW) &&
		    !NEXT(fstatat, c->dirfd, c->path, &sn, AT_SYMLINK_NOFOLLOW) &&
		    so.st_dev == sn.st_dev && so.st_ino == sn.st_ino) {
			errno = saved;
			return name_call_next(c);
		}
	}
	rm = malloc(sizeof(*rm));
	real_enter();
	begun = rm && ops->removal_begin(c->dirfd, c->path, rm);
	real_leave();
	if (!begun) {
		free(rm);
		errno = saved;
		return name_call_next(c);
	}
	errno = saved;
	r = name_call_next(c);
	e = errno;
	real_enter();
	ops->removal_end(rm, r == 0, NULL);
	real_leave();
	free(rm);
	errno = r == 0 ? saved : e;
	return r;
}

int links_remove(enum links_rm_call call, int dirfd, const char *path, int flags)
{
	struct name_call c = { (int)call, AT_FDCWD, NULL, dirfd, path, (unsigned)flags };

	if (flags & AT_REMOVEDIR)
		return name_call_next(&c);
	return name_call(&c);
}

#ifndef IOSIG_PRELOAD_FRONT
EXPORT int unlink(const char *path)
{
	return links_remove(LINKS_UNLINK, AT_FDCWD, path, 0);
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	return links_remove(LINKS_UNLINKAT, dirfd, path, flags);
}

EXPORT int remove(const char *path)
{
	return links_remove(LINKS_REMOVE, AT_FDCWD, path, 0);
}
#endif

EXPORT int rename(const char *old, const char *new)
{
	struct name_call c = { NC_RENAME, AT_FDCWD, old, AT_FDCWD, new, 0 };

	return name_call(&c);
}

EXPORT int renameat(int olddirfd, const char *old, int newdirfd, const char *new)
{
	struct name_call c = { NC_RENAMEAT, olddirfd, old, newdirfd, new, 0 };

	return name_call(&c);
}

EXPORT int renameat2(int olddirfd, const char *old, int newdirfd, const char *new,
		     unsigned flags)
{
	struct name_call c = { NC_RENAMEAT2, olddirfd, old, newdirfd, new, flags };

	/* RENAME_NOREPLACE and RENAME_EXCHANGE replace nothing. */
	if (flags & (RENAME_NOREPLACE | RENAME_EXCHANGE))
		return name_call_next(&c);
	return name_call(&c);
}

/* ------------------------------------------------------------------------
 * Mode and times of the link: the data file's
 * ---------------------------------------------------------------------- */

struct attr_req {
	mode_t mode;                       /* chmod */
	const struct timespec *times;      /* utimensat, NULL: now */
};

static int chmod_data(int ddfd, const char *name, void *arg)
{
	const struct attr_req *q = arg;

	return NEXT(fchmodat, ddfd, name, q->mode, 0) ? -errno : 0;
}

static int utimens_data(int ddfd, const char *name, void *arg)
{
	const struct attr_req *q = arg;

	return NEXT(utimensat, ddfd, name, q->times, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

/* After a chmod that refused a link (EOPNOTSUPP): the data file's mode. */
static int chmod_result(int r, int dirfd, const char *path, mode_t mode)
{
	struct attr_req q = { mode, NULL };
	int ret;

	if (r == 0 || errno != EOPNOTSUPP || real_inside() || !path ||
	    !plausible_entry(dirfd, path))
		return r;
	return on_data(dirfd, path, chmod_data, &q, &ret) ? ret : r;
}

EXPORT int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	int r = NEXT(fchmodat, dirfd, path, mode, flags);

	if (!(flags & AT_SYMLINK_NOFOLLOW))
		return r;
	return chmod_result(r, dirfd, path, mode);
}

EXPORT int lchmod(const char *path, mode_t mode)
{
	int r = NEXT(lchmod, path, mode);

	return chmod_result(r, AT_FDCWD, path, mode);
}

/* utimensat of an entry not followed: the data file's times when it is
 * the user's own link; false when the plain call is to be made. */
static bool utimens_link(int dirfd, const char *path, const struct timespec *times, int *ret)
{
	struct attr_req q = { 0, times };

	if (real_inside() || !path || !plausible_entry(dirfd, path))
		return false;
	return on_data(dirfd, path, utimens_data, &q, ret);
}

EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	int r;

	if ((flags & AT_SYMLINK_NOFOLLOW) && utimens_link(dirfd, path, times, &r))
		return r;
	return NEXT(utimensat, dirfd, path, times, flags);
}

EXPORT int lutimes(const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];
	int r;

	if (tv) {
		TIMEVAL_TO_TIMESPEC(&tv[0], &ts[0]);
		TIMEVAL_TO_TIMESPEC(&tv[1], &ts[1]);
	}
	if (utimens_link(AT_FDCWD, path, tv ? ts : NULL, &r))
		return r;
	return NEXT(lutimes, path, tv);
}
