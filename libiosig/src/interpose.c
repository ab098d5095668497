/* SPDX-License-Identifier: MIT */
/*
 * interpose.c - libc's I/O calls, interposed for descriptors the daemon
 * client handles (client.h, docs/daemon.md "Semantics").  Compiled into
 * libiosig.so (exported by libiosig.map under glibc's version names, so
 * that libraries' versioned references reach them too) and into the
 * iosig-redirect preload's front library, which needs nothing but libc.
 *
 * Every call first looks its descriptor up in one table (fdtab.h): an
 * untagged descriptor - every descriptor of a program that tags none -
 * pays that lookup and an indirect call to libc's function.  A tagged one
 * goes to the client (struct cl_ops), which answers or hands the call back
 * to be done plainly.
 *
 *   write, pwrite(64), writev, pwritev(64)(v2)      ring
 *   read, pread(64), readv, preadv(64)(v2),
 *   __read_chk, __pread(64)_chk                     ring
 *   fsync, fdatasync, sync_file_range               ring, after earlier writes
 *   ftruncate(64), fallocate(64), posix_fallocate(64)  ring, after everything
 *   lseek(64) SEEK_END/DATA/HOLE, fstat(64), and (through links.c) fstatat(64)
 *   and statx on the
 *   descriptor itself ("" with AT_EMPTY_PATH)       barrier, then libc
 *   close, close_range, closefrom, dup2/dup3 onto a tagged descriptor
 *                                                   release (the last one waits)
 *   dup, dup2, dup3, fcntl(64) F_DUPFD(_CLOEXEC)    the copy is tagged
 *   fcntl(64) F_SETFL changing O_APPEND or setting O_DIRECT, mmap(64),
 *   sendfile(64), copy_file_range, splice, fdopen,
 *   freopen(64) of a stream on one (libiosig.so)    detach, then libc
 *   fopen(64) of the path iosig_prepare just prepared in this thread
 *   (libiosig.so: a C++ stream's open)              tagged and handed over
 *   fcntl(64) unlock, flock LOCK_UN, lockf F_ULOCK  barrier, then libc
 *   sync, syncfs, exec*, posix_spawn(p), system, popen  drain, then libc
 *   fork                                            (the client's pthread_atfork)
 */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "client.h"
#include "fdtab.h"
#include "interpose.h"
#include "realfn.h"
#ifdef IOSIG_INTERPOSE_ATTACH
#include "redirect.h"
#include "stream.h"
#endif

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef RWF_HIPRI
#define RWF_HIPRI 0x00000001
#endif
#ifndef RWF_DSYNC
#define RWF_DSYNC 0x00000002
#endif
#ifndef RWF_SYNC
#define RWF_SYNC 0x00000004
#endif

/* libc declares these only for _FORTIFY_SOURCE builds. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);

/* ------------------------------------------------------------------------
 * The table and the client
 * ---------------------------------------------------------------------- */

static struct fdtab tab;
static const struct cl_ops *_Atomic client;

static int host_set(int fd, void *val)
{
	void *old;

	return fdtab_set(&tab, fd, val, &old);
}

static void *host_get(int fd)
{
	return fdtab_get(&tab, fd);
}

static void clear_one(void *ctx, int fd, void *val)
{
	void *old;

	if (!ctx || val == ctx)
		fdtab_set(&tab, fd, NULL, &old);
}

static void host_clear_all(void)
{
	fdtab_each(&tab, clear_one, NULL);
}

static void host_clear_value(void *val)
{
	fdtab_each(&tab, clear_one, val);
}

const struct cl_host interpose_host = {
	.version = CL_VERSION,
	.set = host_set,
	.get = host_get,
	.clear_all = host_clear_all,
	.clear_value = host_clear_value,
};

void interpose_set_client(const struct cl_ops *ops)
{
	atomic_store_explicit(&client, ops, memory_order_release);
}

static const struct cl_ops *cl(void)
{
	return atomic_load_explicit(&client, memory_order_acquire);
}

#ifdef IOSIG_INTERPOSE_ATTACH
/* In libiosig.so and libiosig.a the client is in the same object: they
 * meet at load time.  (The preload's front attaches the client when it
 * loads its core; the project's internal archive has no interposers, so
 * client_register() does nothing in tools and tests.) */
__attribute__((constructor)) static void interpose_attach(void)
{
	interpose_set_client(client_attach(&interpose_host));
}
#endif

/* ------------------------------------------------------------------------
 * libc's functions
 * ---------------------------------------------------------------------- */

#define REALS(X) \
	X(write) X(pwrite) X(pwrite64) X(writev) X(pwritev) X(pwritev64) X(pwritev2) \
	X(pwritev64v2) X(read) X(__read_chk) X(pread) X(pread64) X(__pread_chk) \
	X(__pread64_chk) X(readv) X(preadv) X(preadv64) X(preadv2) X(preadv64v2) X(fsync) \
	X(fdatasync) X(sync_file_range) X(sync) X(syncfs) X(ftruncate) X(ftruncate64) \
	X(fallocate) X(fallocate64) X(posix_fallocate) X(posix_fallocate64) X(lseek) X(lseek64) \
	X(fstat) X(fstat64) X(close) X(close_range) \
	X(closefrom) X(dup) X(dup2) X(dup3) X(fcntl) X(fcntl64) X(flock) X(lockf) X(lockf64) \
	X(mmap) X(mmap64) X(sendfile) X(sendfile64) X(copy_file_range) X(splice) X(fdopen) \
	X(freopen) X(freopen64) X(fopen) X(fopen64) \
	X(execve) X(execv) X(execvp) X(execvpe) X(fexecve) X(execveat) X(posix_spawn) \
	X(posix_spawnp) X(system) X(popen)

#define ID(name) R_##name,
enum real_id { REALS(ID) R_COUNT };
#undef ID

#define FN(name) { #name, NULL },
static struct real_fn reals[R_COUNT] = { REALS(FN) };
#undef FN

/* The next definition after this object's (libc's, or the next layer's);
 * NULL only if there is none, which the callers turn into ENOSYS. */
static void *real(enum real_id id)
{
	return real_get(&reals[id]);
}

#define CALL(id, type, ...) (real(R_##id) ? ((type)real(R_##id))(__VA_ARGS__) : enosys())

static long enosys(void)
{
	errno = ENOSYS;
	return -1;
}

typedef ssize_t (*rw_fn)(int, const void *, size_t);
typedef ssize_t (*prw_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*rwv_fn)(int, const struct iovec *, int);
typedef ssize_t (*prwv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*prwv2_fn)(int, const struct iovec *, int, off_t, int);
typedef ssize_t (*chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*pchk_fn)(int, void *, size_t, off_t, size_t);
typedef int (*fd_fn)(int);
typedef int (*fd2_fn)(int, int);
typedef int (*fd3_fn)(int, int, int);
typedef int (*sfr_fn)(int, off_t, off_t, unsigned);
typedef int (*trunc_fn)(int, off_t);
typedef int (*falloc_fn)(int, int, off_t, off_t);
typedef int (*pfalloc_fn)(int, off_t, off_t);
typedef off_t (*lseek_fn)(int, off_t, int);
typedef int (*fstat_fn)(int, void *);
typedef int (*crange_fn)(unsigned, unsigned, int);
typedef void (*cfrom_fn)(int);
typedef int (*fcntl_fn)(int, int, ...);
typedef int (*lockf_fn)(int, int, off_t);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef ssize_t (*sendfile_fn)(int, int, off_t *, size_t);
typedef ssize_t (*cfr_fn)(int, off64_t *, int, off64_t *, size_t, unsigned);
typedef ssize_t (*splice_fn)(int, off64_t *, int, off64_t *, size_t, unsigned);
typedef FILE *(*fdopen_fn)(int, const char *);
typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);
typedef FILE *(*fopen_fn)(const char *, const char *);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);
typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);
typedef void (*void_fn)(void);

/* ------------------------------------------------------------------------
 * Helpers of the slow path
 * ---------------------------------------------------------------------- */

static void barrier(void *f, int fd)
{
	const struct cl_ops *c = cl();
	int saved = errno;

	if (c)
		c->barrier(f, fd);
	errno = saved;
}

static void detach(int fd)
{
	void *f = fdtab_get(&tab, fd);
	const struct cl_ops *c;
	int saved;

	if (likely(!f) || f == CL_INTERNAL || !(c = cl()))
		return;
	saved = errno;
	c->detach(f, fd);
	errno = saved;
}

static void drain(void)
{
	const struct cl_ops *c = cl();
	int saved;

	if (!c)
		return;
	saved = errno;
	c->drain();
	errno = saved;
}

/* Releases a tagged fd before it is closed; the write error to report. */
static int release(int fd)
{
	void *f = fdtab_get(&tab, fd);
	const struct cl_ops *c;
	int saved, err;

	if (likely(!f) || !(c = cl()))
		return 0;
	saved = errno;
	err = c->release(f, fd);
	errno = saved;
	return err;
}

static void dup_of(int oldfd, int newfd)
{
	const struct cl_ops *c;
	int saved;

	if (newfd < 0 || likely(!fdtab_get(&tab, oldfd)) || !(c = cl()))
		return;
	saved = errno;
	c->dup(oldfd, newfd);
	errno = saved;
}

/* A data call through the client (the write or the read operation): true
 * when handled (*ret set). */
static bool via(bool write, void *f, int fd, const struct iovec *iov, int cnt, off_t off,
		enum cl_kind kind, ssize_t *ret)
{
	const struct cl_ops *c = cl();
	int saved = errno;

	if (f == CL_INTERNAL || !c || !(write ? c->write : c->read)(f, fd, iov, cnt, off, kind, ret))
		return false;
	if (*ret >= 0)
		errno = saved;
	return true;
}

/* An int call through the client (fsync ...): `fn` returns handled. */
static bool via_int(bool handled, int *ret, int saved)
{
	if (!handled)
		return false;
	if (*ret >= 0)
		errno = saved;
	return true;
}

/* ------------------------------------------------------------------------
 * write and read families
 * ---------------------------------------------------------------------- */

/* write/read (at the position, `pos`) and pwrite/pread (at off): through
 * the client for a tagged descriptor, else libc's `id`. */
static ssize_t buf_any(bool write, enum real_id id, int fd, void *buf, size_t n, off_t off,
		       bool pos)
{
	void *f = fdtab_get(&tab, fd);
	void *p;

	if (unlikely(f)) {
		struct iovec iov = { .iov_base = buf, .iov_len = n };
		ssize_t r;

		if (via(write, f, fd, &iov, 1, off, pos ? CL_AT_POS : CL_AT_OFF, &r))
			return r;
	}
	p = real(id);
	if (!p)
		return enosys();
	return pos ? ((rw_fn)p)(fd, buf, n) : ((prw_fn)p)(fd, buf, n, off);
}

/* The same for the vector calls (writev/readv, pwritev/preadv). */
static ssize_t vec_any(bool write, enum real_id id, int fd, const struct iovec *iov, int cnt,
		       off_t off, bool pos)
{
	void *f = fdtab_get(&tab, fd);
	ssize_t r;
	void *p;

	if (unlikely(f) && via(write, f, fd, iov, cnt, off, pos ? CL_AT_POS : CL_AT_OFF, &r))
		return r;
	p = real(id);
	if (!p)
		return enosys();
	return pos ? ((rwv_fn)p)(fd, iov, cnt) : ((prwv_fn)p)(fd, iov, cnt, off);
}

/* pwritev2/preadv2: flags 0 (and RWF_HIPRI, which only O_DIRECT uses) and,
 * for writes, the sync flags go through the ring (the sync after it); any
 * other flag is done plainly after a barrier.  off -1: at the position. */
static ssize_t vec2_any(bool write, enum real_id id, int fd, const struct iovec *iov, int cnt,
			off_t off, int flags)
{
	int ours = RWF_HIPRI | (write ? RWF_DSYNC | RWF_SYNC : 0);
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && f != CL_INTERNAL) {
		ssize_t r;
		int s;

		if (flags & ~ours) {
			barrier(f, fd);
		} else if (via(write, f, fd, iov, cnt, off, off == -1 ? CL_AT_POS : CL_AT_OFF, &r)) {
			if (r >= 0 && (flags & (RWF_DSYNC | RWF_SYNC)) &&
			    cl()->sync(f, fd, !(flags & RWF_SYNC), &s) && s < 0)
				return -1;
			return r;
		}
	}
	return real(id) ? ((prwv2_fn)real(id))(fd, iov, cnt, off, flags) : enosys();
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	return buf_any(true, R_write, fd, (void *)buf, n, 0, true);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return buf_any(true, R_pwrite, fd, (void *)buf, n, off, false);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	return buf_any(true, R_pwrite64, fd, (void *)buf, n, off, false);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	return vec_any(true, R_writev, fd, iov, cnt, 0, true);
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return vec_any(true, R_pwritev, fd, iov, cnt, off, false);
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return vec_any(true, R_pwritev64, fd, iov, cnt, off, false);
}

EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return vec2_any(true, R_pwritev2, fd, iov, cnt, off, flags);
}

EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return vec2_any(true, R_pwritev64v2, fd, iov, cnt, off, flags);
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	return buf_any(false, R_read, fd, buf, n, 0, true);
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return buf_any(false, R_pread, fd, buf, n, off, false);
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return buf_any(false, R_pread64, fd, buf, n, off, false);
}

/* The _FORTIFY_SOURCE reads: an overflow goes to libc, which aborts as
 * the program was built to. */
EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n <= buflen)
		return buf_any(false, R_read, fd, buf, n, 0, true);
	return CALL(__read_chk, chk_fn, fd, buf, n, buflen);
}

EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n <= buflen)
		return buf_any(false, R_pread, fd, buf, n, off, false);
	return CALL(__pread_chk, pchk_fn, fd, buf, n, off, buflen);
}

EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	if (n <= buflen)
		return buf_any(false, R_pread64, fd, buf, n, off, false);
	return CALL(__pread64_chk, pchk_fn, fd, buf, n, off, buflen);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	return vec_any(false, R_readv, fd, iov, cnt, 0, true);
}

EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return vec_any(false, R_preadv, fd, iov, cnt, off, false);
}

EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return vec_any(false, R_preadv64, fd, iov, cnt, off, false);
}

EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return vec2_any(false, R_preadv2, fd, iov, cnt, off, flags);
}

EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return vec2_any(false, R_preadv64v2, fd, iov, cnt, off, flags);
}

/* ------------------------------------------------------------------------
 * sync, size, position, stat
 * ---------------------------------------------------------------------- */

static int sync_any(int fd, bool datasync)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && f != CL_INTERNAL && cl()) {
		int saved = errno, r;

		if (via_int(cl()->sync(f, fd, datasync, &r), &r, saved))
			return r;
	}
	return datasync ? CALL(fdatasync, fd_fn, fd) : CALL(fsync, fd_fn, fd);
}

EXPORT int fsync(int fd)
{
	return sync_any(fd, false);
}

EXPORT int fdatasync(int fd)
{
	return sync_any(fd, true);
}

EXPORT int sync_file_range(int fd, off_t off, off_t n, unsigned flags)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && f != CL_INTERNAL && cl()) {
		int saved = errno, r;

		if (via_int(cl()->sync_range(f, fd, off, n, flags, &r), &r, saved))
			return r;
	}
	return CALL(sync_file_range, sfr_fn, fd, off, n, flags);
}

EXPORT void sync(void)
{
	drain();
	if (real(R_sync))
		((void_fn)real(R_sync))();
}

EXPORT int syncfs(int fd)
{
	drain();
	return CALL(syncfs, fd_fn, fd);
}

static int truncate_any(enum real_id id, int fd, off_t len)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && f != CL_INTERNAL && cl()) {
		int saved = errno, r;

		if (via_int(cl()->truncate(f, fd, len, &r), &r, saved))
			return r;
	}
	return real(id) ? ((trunc_fn)real(id))(fd, len) : (int)enosys();
}

EXPORT int ftruncate(int fd, off_t len)
{
	return truncate_any(R_ftruncate, fd, len);
}

EXPORT int ftruncate64(int fd, off_t len)
{
	return truncate_any(R_ftruncate64, fd, len);
}

static int fallocate_any(enum real_id id, int fd, int mode, off_t off, off_t len)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && f != CL_INTERNAL && cl()) {
		int saved = errno, r;

		if (via_int(cl()->fallocate(f, fd, mode, off, len, &r), &r, saved))
			return r;
	}
	return real(id) ? ((falloc_fn)real(id))(fd, mode, off, len) : (int)enosys();
}

EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	return fallocate_any(R_fallocate, fd, mode, off, len);
}

EXPORT int fallocate64(int fd, int mode, off_t off, off_t len)
{
	return fallocate_any(R_fallocate64, fd, mode, off, len);
}

/* posix_fallocate returns an error number.  A filesystem without
 * fallocate gets libc's emulation (writing zeros), after a barrier. */
static int posix_fallocate_any(enum real_id id, int fd, off_t off, off_t len)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && f != CL_INTERNAL && cl()) {
		int saved = errno, r;

		if (cl()->fallocate(f, fd, 0, off, len, &r)) {
			int err = r < 0 ? errno : 0;

			errno = saved;
			if (err != EOPNOTSUPP)
				return err;
			barrier(f, fd);
		}
	}
	return real(id) ? ((pfalloc_fn)real(id))(fd, off, len) : ENOSYS;
}

EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	return posix_fallocate_any(R_posix_fallocate, fd, off, len);
}

EXPORT int posix_fallocate64(int fd, off_t off, off_t len)
{
	return posix_fallocate_any(R_posix_fallocate64, fd, off, len);
}

static off_t lseek_any(enum real_id id, int fd, off_t off, int whence)
{
	void *f = fdtab_get(&tab, fd);

	/* Positions relative to the end need every earlier write in place. */
	if (unlikely(f) && whence != SEEK_SET && whence != SEEK_CUR)
		barrier(f, fd);
	return real(id) ? ((lseek_fn)real(id))(fd, off, whence) : enosys();
}

EXPORT off_t lseek(int fd, off_t off, int whence)
{
	return lseek_any(R_lseek, fd, off, whence);
}

EXPORT off_t lseek64(int fd, off_t off, int whence)
{
	return lseek_any(R_lseek64, fd, off, whence);
}

static int fstat_any(enum real_id id, int fd, void *st)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f))
		barrier(f, fd);
	return real(id) ? ((fstat_fn)real(id))(fd, st) : (int)enosys();
}

EXPORT int fstat(int fd, struct stat *st)
{
	return fstat_any(R_fstat, fd, st);
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
	return fstat_any(R_fstat64, fd, st);
}

/* fstatat(64), statx and the like on the descriptor itself ("" with
 * AT_EMPTY_PATH): links.c's interposers of those calls call this first. */
void interpose_stat_self(int dirfd, const char *path, int flags)
{
	void *f;

	if (likely(!path || *path || !(flags & AT_EMPTY_PATH)))
		return;
	f = fdtab_get(&tab, dirfd);
	if (unlikely(f))
		barrier(f, dirfd);
}

/* ------------------------------------------------------------------------
 * descriptors
 * ---------------------------------------------------------------------- */

EXPORT int close(int fd)
{
	int err = 0, r;

	if (unlikely(fdtab_get(&tab, fd)))
		err = release(fd);
	r = CALL(close, fd_fn, fd);
	/* A write that failed after it returned is reported here at the
	 * latest, as with write-back (the descriptor is closed anyway). */
	if (r == 0 && err) {
		errno = err;
		return -1;
	}
	return r;
}

static void release_range(unsigned first, unsigned last)
{
	/* Descriptors a program holds are few: look at each in the range
	 * that the table has (the static part, then any chunk). */
	for (unsigned fd = first; fd <= last && fd < FDTAB_MAX; fd++) {
		if (fd >= FDTAB_FIRST && !fdtab_slot_of(&tab, (int)fd, false)) {
			fd |= FDTAB_CHUNK - 1;   /* no chunk: skip it */
			continue;
		}
		if (fdtab_get(&tab, (int)fd))
			release((int)fd);
		if (fd == UINT32_MAX)
			break;
	}
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last)
		release_range(first, last);
	return CALL(close_range, crange_fn, first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
	if (lowfd >= 0)
		release_range((unsigned)lowfd, UINT32_MAX - 1);
	if (real(R_closefrom))
		((cfrom_fn)real(R_closefrom))(lowfd);
}

EXPORT int dup(int fd)
{
	int r = CALL(dup, fd_fn, fd);

	dup_of(fd, r);
	return r;
}

EXPORT int dup2(int oldfd, int newfd)
{
	int r;

	if (oldfd != newfd && unlikely(fdtab_get(&tab, newfd)))
		release(newfd);
	r = CALL(dup2, fd2_fn, oldfd, newfd);
	if (oldfd != newfd)
		dup_of(oldfd, r);
	return r;
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int r;

	if (oldfd != newfd && unlikely(fdtab_get(&tab, newfd)))
		release(newfd);
	r = CALL(dup3, fd3_fn, oldfd, newfd, flags);
	dup_of(oldfd, r);
	return r;
}

/* fcntl's commands that concern a tagged descriptor. */
static void fcntl_before(int fd, int cmd, void *arg, enum real_id id)
{
	void *f = fdtab_get(&tab, fd);

	if (likely(!f) || f == CL_INTERNAL)
		return;
	switch (cmd) {
	case F_SETFL: {
		int cur = ((fcntl_fn)real(id))(fd, F_GETFL);
		int fl = (int)(intptr_t)arg;

		/* The daemon writes at offsets it chose and through the page
		 * cache: a change of O_APPEND or O_DIRECT ends that. */
		if (cur >= 0 && (((cur ^ fl) & O_APPEND) || (fl & O_DIRECT)))
			detach(fd);
		break;
	}
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		/* Writes made under a lock are in the file before it is let go. */
		if (arg && ((struct flock *)arg)->l_type == F_UNLCK)
			barrier(f, fd);
		break;
	default:
		break;
	}
}

static int fcntl_any(enum real_id id, int fd, int cmd, void *arg)
{
	int r;

	if (!real(id))
		return (int)enosys();
	if (unlikely(fdtab_get(&tab, fd)))
		fcntl_before(fd, cmd, arg, id);
	r = ((fcntl_fn)real(id))(fd, cmd, arg);
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0)
		dup_of(fd, r);
	return r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	/* As libc: the argument, if any, read as a pointer-sized value. */
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_any(R_fcntl, fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_any(R_fcntl64, fd, cmd, arg);
}

EXPORT int flock(int fd, int op)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && (op & LOCK_UN))
		barrier(f, fd);
	return CALL(flock, fd2_fn, fd, op);
}

static int lockf_any(enum real_id id, int fd, int cmd, off_t len)
{
	void *f = fdtab_get(&tab, fd);

	if (unlikely(f) && cmd == F_ULOCK)
		barrier(f, fd);
	return real(id) ? ((lockf_fn)real(id))(fd, cmd, len) : (int)enosys();
}

EXPORT int lockf(int fd, int cmd, off_t len)
{
	return lockf_any(R_lockf, fd, cmd, len);
}

EXPORT int lockf64(int fd, int cmd, off_t len)
{
	return lockf_any(R_lockf64, fd, cmd, len);
}

/* ------------------------------------------------------------------------
 * Calls that take a descriptor out of the daemon's hands
 * ---------------------------------------------------------------------- */

static void *mmap_any(enum real_id id, void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	if (!(flags & MAP_ANONYMOUS) && unlikely(fdtab_get(&tab, fd)))
		detach(fd);
	if (!real(id)) {
		errno = ENOSYS;
		return MAP_FAILED;
	}
	return ((mmap_fn)real(id))(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_any(R_mmap, addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_any(R_mmap64, addr, len, prot, flags, fd, off);
}

static void detach2(int a, int b)
{
	if (unlikely(fdtab_get(&tab, a)))
		detach(a);
	if (unlikely(fdtab_get(&tab, b)))
		detach(b);
}

EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	detach2(out, in);
	return CALL(sendfile, sendfile_fn, out, in, off, n);
}

EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t n)
{
	detach2(out, in);
	return CALL(sendfile64, sendfile_fn, out, in, off, n);
}

EXPORT ssize_t copy_file_range(int in, off64_t *inoff, int out, off64_t *outoff, size_t n,
			       unsigned flags)
{
	detach2(in, out);
	return CALL(copy_file_range, cfr_fn, in, inoff, out, outoff, n, flags);
}

EXPORT ssize_t splice(int in, off64_t *inoff, int out, off64_t *outoff, size_t n, unsigned flags)
{
	detach2(in, out);
	return CALL(splice, splice_fn, in, inoff, out, outoff, n, flags);
}

/* stdio writes through libc's internal write(), which no interposer sees:
 * a stream made on a tagged descriptor takes it out of the daemon's hands. */
EXPORT FILE *fdopen(int fd, const char *mode)
{
	if (unlikely(fdtab_get(&tab, fd)))
		detach(fd);
	if (!real(R_fdopen)) {
		errno = ENOSYS;
		return NULL;
	}
	return ((fdopen_fn)real(R_fdopen))(fd, mode);
}

void interpose_stream_leaving(FILE *stream)
{
	int fd = stream ? fileno(stream) : -1;

	if (fd >= 0 && unlikely(fdtab_get(&tab, fd)))
		detach(fd);
}

#ifdef IOSIG_INTERPOSE_ATTACH
/* A stream iosigd handles (stream.h) is reopened on another file: glibc
 * flushes it through its cookie (the ring), then replaces the descriptor
 * behind the interposers.  (The preload's front has its own freopen.) */
static FILE *freopen_any(enum real_id id, const char *path, const char *mode, FILE *stream)
{
	struct rd_stream *st;
	FILE *r;

	interpose_stream_leaving(stream);
	if (!real(id)) {
		errno = ENOSYS;
		return NULL;
	}
	st = stream ? stream_reopening(stream) : NULL;
	r = ((freopen_fn)real(id))(path, mode, stream);
	if (st)
		stream_reopened(st);
	return r;
}

EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	return freopen_any(R_freopen, path, mode, stream);
}

EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	return freopen_any(R_freopen64, path, mode, stream);
}

/* A C++ stream opens the path iosig_prepare prepared with libstdc++'s own
 * fopen64: the runtime tags it and hands it to the daemon as it does an
 * annotated fopen (redirect.h).  Any other open costs one TLS load. */
static FILE *fopen_any(enum real_id id, const char *path, const char *mode)
{
	fopen_fn fn = (fopen_fn)real(id);

	if (!fn) {
		errno = ENOSYS;
		return NULL;
	}
	if (unlikely(rd_prepared_pending()))
		return rd_prepared_fopen(path, mode, fn);
	return fn(path, mode);
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	return fopen_any(R_fopen, path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return fopen_any(R_fopen64, path, mode);
}
#endif

/* ------------------------------------------------------------------------
 * exec and spawn: what the new program may read is in the files first
 * ---------------------------------------------------------------------- */

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	drain();
	return CALL(execve, execve_fn, path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	drain();
	return CALL(execv, execv_fn, path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	drain();
	return CALL(execvp, execv_fn, file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	drain();
	return CALL(execvpe, execve_fn, file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	drain();
	return CALL(fexecve, fexecve_fn, fd, argv, envp);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		    int flags)
{
	drain();
	return CALL(execveat, execveat_fn, dirfd, path, argv, envp, flags);
}

/* The execl family: the arguments into a vector (on the stack: these are
 * async-signal-safe, and may run in a vfork child), then the v form. */
static int count_args(va_list ap)
{
	int n = 1;

	while (va_arg(ap, const char *))
		n++;
	return n;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int n;

	va_start(ap, arg);
	n = count_args(ap);
	va_end(ap);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		va_start(ap, arg);
		for (int i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *);
		va_end(ap);
		return execv(path, argv);
	}
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int n;

	va_start(ap, arg);
	n = count_args(ap);
	va_end(ap);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		va_start(ap, arg);
		for (int i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *);
		va_end(ap);
		return execvp(file, argv);
	}
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;
	int n;

	va_start(ap, arg);
	n = count_args(ap);
	va_end(ap);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		va_start(ap, arg);
		for (int i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *);
		envp = va_arg(ap, char *const *);
		va_end(ap);
		return execve(path, argv, envp);
	}
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	drain();
	return real(R_posix_spawn) ? ((spawn_fn)real(R_posix_spawn))(pid, path, fa, attr, argv, envp) :
				     ENOSYS;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	drain();
	return real(R_posix_spawnp) ? ((spawn_fn)real(R_posix_spawnp))(pid, file, fa, attr, argv, envp) :
				      ENOSYS;
}

EXPORT int system(const char *cmd)
{
	drain();
	return CALL(system, system_fn, cmd);
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
	drain();
	if (!real(R_popen)) {
		errno = ENOSYS;
		return NULL;
	}
	return ((popen_fn)real(R_popen))(cmd, mode);
}
