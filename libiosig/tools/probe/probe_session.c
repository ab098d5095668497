/* SPDX-License-Identifier: MIT */
/*
 * probe_session.c - the private directory, space budget and test files of a
 * probe or validation run (probe.h).
 *
 * Safety rules (docs/probe.md, "Space and cleanup"):
 *  - the budget is min(--max-space, 10 % of the free space), and a run is
 *    refused when that is below PRB_MIN_SPACE;
 *  - everything lives in a directory made by mkdtemp() (0700, unpredictable
 *    name) under the mount's data directory or root;
 *  - every test file is anonymous: O_TMPFILE, or an O_EXCL name unlinked the
 *    moment it exists, so the kernel frees it when the process ends however
 *    it ends; only the empty private directory can remain after SIGKILL.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "prng.h"
#include "probe.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

/* Alignment of O_DIRECT buffers, offsets and lengths: 4 KiB satisfies every
 * logical block size in use (512 B and 4 KiB sectors). */
#define PRB_DIO_ALIGN 4096

struct prb_session {
	char *dir;              /* the private directory */
	int dirfd;              /* open directory fd of `dir` */
	unsigned seq;           /* counter for O_EXCL names */
	struct prb_fsinfo info;
};

double prb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double prb_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void session_err(struct iosig_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void session_err(struct iosig_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/* MemAvailable from /proc/meminfo in bytes, 0 if unknown: the free space of
 * a filesystem that reports no size (ramfs grows until memory runs out). */
static uint64_t mem_available(void)
{
	FILE *fp = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long kib = 0;

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	}
	fclose(fp);
	return (uint64_t)kib * 1024;
}

static int open_anon(struct prb_session *s, int extra, int *ret_fd)
{
	char name[64];
	int fd;

	fd = openat(s->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC | extra, 0600);
	if (fd >= 0) {
		*ret_fd = fd;
		return 0;
	}
	/* O_TMPFILE is missing on some filesystems (EOPNOTSUPP, or EISDIR on
	 * kernels that do not know the flag): a unique name, unlinked at once. */
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	if (extra & O_DIRECT) {
		/* EINVAL may also mean "no O_DIRECT": let the caller see it. */
		fd = openat(s->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			return -EINVAL;
		}
	}
	snprintf(name, sizeof(name), "t%u.%ld", s->seq++, (long)getpid());
	fd = openat(s->dirfd, name, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC | extra,
		    0600);
	if (fd < 0)
		return -errno;
	if (unlinkat(s->dirfd, name, 0) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int prb_session_file(struct prb_session *s, bool direct, int *ret_fd)
{
	return open_anon(s, direct && s->info.direct ? O_DIRECT : 0, ret_fd);
}

uint64_t prb_file_usage(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	return (uint64_t)st.st_blocks * 512;
}

void *prb_buffer(size_t size, uint64_t seed)
{
	void *buf;
	uint64_t *w;

	if (posix_memalign(&buf, PRB_DIO_ALIGN, size ? size : 1))
		return NULL;
	w = buf;
	/* Incompressible contents: storage that compresses or deduplicates
	 * would otherwise look faster than it is. */
	for (size_t i = 0; i < size / sizeof(*w); i++)
		w[i] = prng_splitmix64(&seed);
	memset((char *)buf + size / sizeof(*w) * sizeof(*w), 0xa5, size % sizeof(*w));
	return buf;
}

/* Budget = min(max_space, share of free) rounded down to MiB; -ENOSPC with a
 * message when it is below PRB_MIN_SPACE. */
static int compute_budget(const char *parent, uint64_t free, uint64_t max_space,
			  uint64_t *ret_budget, struct iosig_error *err)
{
	uint64_t share = (uint64_t)((double)free * PRB_SPACE_SHARE);
	uint64_t budget = share;
	char a[32], b[32], c[32];

	if (max_space && max_space < budget)
		budget = max_space;
	budget &= ~((1ull << 20) - 1);
	if (budget >= PRB_MIN_SPACE) {
		*ret_budget = budget;
		return 0;
	}
	if (max_space && max_space < PRB_MIN_SPACE) {
		session_err(err, "--max-space %s is too small: a probe needs at least %s",
			    fmt_bytes((double)max_space, a, sizeof(a)),
			    fmt_bytes((double)PRB_MIN_SPACE, b, sizeof(b)));
		return -EINVAL;
	}
	session_err(err,
		    "%s: only %s free; the probe may use at most %.0f%% of it (%s), less than the "
		    "%s it needs; free some space first",
		    parent, fmt_bytes((double)free, a, sizeof(a)), PRB_SPACE_SHARE * 100,
		    fmt_bytes((double)share, b, sizeof(b)),
		    fmt_bytes((double)PRB_MIN_SPACE, c, sizeof(c)));
	return -ENOSPC;
}

static int dir_error(const char *what, const char *path, int r, struct iosig_error *err)
{
	switch (r) {
	case -ENOENT:
	case -ENOTDIR:
		session_err(err, "%s does not exist (was the filesystem unmounted?)", path);
		break;
	case -EROFS:
		session_err(err, "%s is on a read-only filesystem: the probe must write test "
			    "files; remount it read-write or leave it out", path);
		break;
	case -EACCES:
	case -EPERM:
		session_err(err, "cannot %s in %s: permission denied; run as a user who may "
			    "write there, or configure a data_dir for this mount", what, path);
		break;
	case -ENOSPC:
	case -EDQUOT:
		session_err(err, "cannot %s in %s: no space left (or quota exceeded)", what, path);
		break;
	default:
		session_err(err, "cannot %s in %s: %s", what, path, strerror(-r));
		break;
	}
	return r;
}

int prb_session_open(const char *parent, uint64_t max_space, struct prb_session **ret_session,
		     struct iosig_error *err)
{
	struct prb_session *s;
	struct statvfs vfs;
	struct statfs sfs;
	struct stat st;
	uint64_t avail;
	int fd, r;

	if (statvfs(parent, &vfs) < 0 || statfs(parent, &sfs) < 0)
		return dir_error("look", parent, -errno, err);
	if (vfs.f_flag & ST_RDONLY)
		return dir_error("write", parent, -EROFS, err);

	s = calloc(1, sizeof(*s));
	if (!s) {
		session_err(err, "out of memory");
		return -ENOMEM;
	}
	s->dirfd = -1;
	s->info.fs_type = (long)sfs.f_type;
	s->info.fs_bsize = vfs.f_bsize;
	s->info.memory = sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC;
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (vfs.f_blocks == 0) {
		/* ramfs reports no size at all: memory is the limit. */
		avail = mem_available();
		s->info.free_from_ram = true;
	}
	s->info.free = avail;
	r = compute_budget(parent, avail, max_space, &s->info.budget, err);
	if (r < 0)
		goto out_free;

	if (asprintf(&s->dir, "%s/.iosig-probe-XXXXXX", parent) < 0) {
		s->dir = NULL;
		r = -ENOMEM;
		session_err(err, "out of memory");
		goto out_free;
	}
	if (!mkdtemp(s->dir)) {
		r = dir_error("create a directory", parent, -errno, err);
		goto out_free;
	}
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (s->dirfd < 0) {
		r = dir_error("open a directory", s->dir, -errno, err);
		goto out_rmdir;
	}

	/* O_DIRECT: try it.  Memory filesystems never use it: there the page
	 * cache *is* the storage (tmpfs accepts O_DIRECT since Linux 6.6, and it
	 * is the same copy), so they are measured with buffered I/O. */
	r = open_anon(s, s->info.memory ? 0 : O_DIRECT, &fd);
	if (r == -EINVAL && !s->info.memory)
		r = open_anon(s, 0, &fd);
	else if (r == 0 && !s->info.memory)
		s->info.direct = true;
	if (r < 0) {
		dir_error("create a test file", s->dir, r, err);
		goto out_close_dir;
	}
	s->info.dio_align = s->info.direct ? PRB_DIO_ALIGN : 0;
	if (fstat(fd, &st) == 0)
		s->info.blksize = (uint64_t)st.st_blksize;
	close(fd);
	*ret_session = s;
	return 0;

out_close_dir:
	close(s->dirfd);
out_rmdir:
	rmdir(s->dir);
out_free:
	free(s->dir);
	free(s);
	return r;
}

void prb_session_close(struct prb_session *s)
{
	if (!s)
		return;
	if (s->dirfd >= 0)
		close(s->dirfd);
	/* Every file in it was unlinked at creation: the directory is empty. */
	if (s->dir)
		rmdir(s->dir);
	free(s->dir);
	free(s);
}

void prb_session_set_buffered(struct prb_session *s)
{
	s->info.direct = false;
	s->info.dio_align = 0;
}

const struct prb_fsinfo *prb_session_info(const struct prb_session *s)
{
	return &s->info;
}

const char *prb_session_dir(const struct prb_session *s)
{
	return s->dir;
}
