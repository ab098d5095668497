/* SPDX-License-Identifier: MIT */
/*
 * links_prog.c - one call of libc on a path, as a program makes it, for
 * test_links.py: is a link the runtime made the regular file it stands for
 * inside a process that runs libiosig (links.h)?
 *
 * Built twice: with an IOSIG compiler plugin and libiosig.so (test_links.py
 * compiles it, so `create` is redirected by its pragma), and plainly by
 * CMake (`create` is an ordinary open; run under iosig-redirect, whose
 * rules redirect it).
 *
 *   links_prog CALL ARGS...
 *
 * prints one JSON object: {"call": CALL, "ret": N, "errno": "ENAME"|null,
 * ...} with, for the status calls, "type" ("reg", "lnk", ...), "ino",
 * "dev", "size", "nlink", "mode", "uid"; for opens and readlink, "data"
 * (what was read, or the link's target).  Exit status 0 when the call
 * returned without error, 1 when it failed, 2 for a bad command line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>

/* libc declares these only for _FORTIFY_SOURCE builds, or not at all. */
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len, size_t buflen);
int __open_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int lchmod(const char *path, mode_t mode);

/* The version of struct stat __lxstat and __fxstatat fill on x86_64. */
#define STAT_VER 1

static const char *call;

/* The name of an errno value (the few a test expects by name). */
static const char *errname(int e)
{
	static const struct { int e; const char *n; } names[] = {
		{ ENOENT, "ENOENT" }, { ELOOP, "ELOOP" }, { EINVAL, "EINVAL" }, { EEXIST, "EEXIST" },
		{ EXDEV, "EXDEV" }, { EACCES, "EACCES" }, { EPERM, "EPERM" }, { ENOTDIR, "ENOTDIR" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { EISDIR, "EISDIR" }, { ENOSYS, "ENOSYS" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].n;
	return "other";
}

/* A JSON string (the data read and the targets are plain text here). */
static void json_str(const char *key, const char *s, size_t n)
{
	printf(",\"%s\":\"", key);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Ends the object; the exit status follows the call's result. */
static int finish(long ret, int err)
{
	if (ret < 0)
		printf(",\"errno\":\"%s\"}\n", errname(err));
	else
		printf(",\"errno\":null}\n");
	return ret < 0 ? 1 : 0;
}

static void begin(long ret)
{
	printf("{\"call\":\"%s\",\"ret\":%ld", call, ret);
}

static const char *type_of(mode_t m)
{
	return S_ISREG(m) ? "reg" : S_ISLNK(m) ? "lnk" : S_ISDIR(m) ? "dir" : "other";
}

static int print_stat(long r, int err, const struct stat *st)
{
	begin(r);
	if (r == 0)
		printf(",\"type\":\"%s\",\"ino\":%llu,\"dev\":%llu,\"size\":%lld,\"nlink\":%lu,"
		       "\"mode\":%u,\"uid\":%u,\"mtime\":%lld",
		       type_of(st->st_mode), (unsigned long long)st->st_ino,
		       (unsigned long long)st->st_dev, (long long)st->st_size,
		       (unsigned long)st->st_nlink, (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid,
		       (long long)st->st_mtime);
	return finish(r, err);
}

static int print_stat64(long r, int err, const struct stat64 *st)
{
	struct stat s;

	memset(&s, 0, sizeof(s));
	s.st_mode = st->st_mode;
	s.st_ino = st->st_ino;
	s.st_dev = st->st_dev;
	s.st_size = st->st_size;
	s.st_nlink = st->st_nlink;
	s.st_uid = st->st_uid;
	s.st_mtime = st->st_mtime;
	return print_stat(r, err, &s);
}

/* Reads what fd holds, prints it as "data", closes fd. */
static int print_read(int fd, int err)
{
	char buf[4096];
	ssize_t n = 0;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			err = errno;
			close(fd);
			fd = -1;
		}
	}
	begin(fd);
	if (fd >= 0) {
		json_str("data", buf, (size_t)n);
		printf(",\"cloexec\":%s", (fcntl(fd, F_GETFD) & FD_CLOEXEC) ? "true" : "false");
		close(fd);
	}
	return finish(fd, err);
}

static int create(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd;

#pragma io sig tmp sequential_access size_per_io(4*KiB)
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0 && write(fd, text, len) != (ssize_t)len) {
		int e = errno;

		close(fd);
		begin(-1);
		return finish(-1, e);
	}
	if (fd >= 0)
		close(fd);
	begin(fd >= 0 ? 0 : -1);
	return finish(fd >= 0 ? 0 : -1, errno);
}

static int run(int argc, char **argv)
{
	const char *p = argc > 2 ? argv[2] : NULL, *q = argc > 3 ? argv[3] : NULL;
	struct stat st;
	struct stat64 st64;
	struct statx stx;
	struct timespec ts[2];
	struct timeval tv[2];
	char buf[4096];
	long r;

	memset(&st, 0, sizeof(st));
	memset(&st64, 0, sizeof(st64));
	if (!p)
		return -1;
	if (!strcmp(call, "create"))
		return create(p, q ? q : "");
	if (!strcmp(call, "lstat"))
		return r = lstat(p, &st), print_stat(r, errno, &st);
	if (!strcmp(call, "lstat64"))
		return r = lstat64(p, &st64), print_stat64(r, errno, &st64);
	if (!strcmp(call, "stat"))
		return r = stat(p, &st), print_stat(r, errno, &st);
	if (!strcmp(call, "fstatat"))
		return r = fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW), print_stat(r, errno, &st);
	if (!strcmp(call, "fstatat64"))
		return r = fstatat64(AT_FDCWD, p, &st64, AT_SYMLINK_NOFOLLOW),
		       print_stat64(r, errno, &st64);
	if (!strcmp(call, "__lxstat"))
		return r = __lxstat(STAT_VER, p, &st), print_stat(r, errno, &st);
	if (!strcmp(call, "__lxstat64"))
		return r = __lxstat64(STAT_VER, p, &st64), print_stat64(r, errno, &st64);
	if (!strcmp(call, "__fxstatat"))
		return r = __fxstatat(STAT_VER, AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW),
		       print_stat(r, errno, &st);
	if (!strcmp(call, "__fxstatat64"))
		return r = __fxstatat64(STAT_VER, AT_FDCWD, p, &st64, AT_SYMLINK_NOFOLLOW),
		       print_stat64(r, errno, &st64);
	if (!strcmp(call, "statx")) {
		r = statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx);
		st.st_mode = stx.stx_mode;
		st.st_ino = stx.stx_ino;
		st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
		st.st_size = (off_t)stx.stx_size;
		st.st_nlink = stx.stx_nlink;
		st.st_uid = stx.stx_uid;
		st.st_mtime = stx.stx_mtime.tv_sec;
		return print_stat(r, errno, &st);
	}
	if (!strcmp(call, "open-nofollow"))
		return r = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), print_read((int)r, errno);
	if (!strcmp(call, "open64-nofollow"))
		return r = open64(p, O_RDONLY | O_NOFOLLOW), print_read((int)r, errno);
	if (!strcmp(call, "openat-nofollow"))
		return r = openat(AT_FDCWD, p, O_RDONLY | O_NOFOLLOW), print_read((int)r, errno);
	if (!strcmp(call, "openat64-nofollow"))
		return r = openat64(AT_FDCWD, p, O_RDONLY | O_NOFOLLOW), print_read((int)r, errno);
	if (!strcmp(call, "__open_2-nofollow"))
		return r = __open_2(p, O_RDONLY | O_NOFOLLOW), print_read((int)r, errno);
	if (!strcmp(call, "__openat_2-nofollow"))
		return r = __openat_2(AT_FDCWD, p, O_RDONLY | O_NOFOLLOW), print_read((int)r, errno);
	if (!strcmp(call, "open-nofollow-creat"))
		return r = open(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0600), print_read((int)r, errno);
	if (!strcmp(call, "open-nofollow-excl"))
		return r = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600),
		       print_read((int)r, errno);
	if (!strcmp(call, "open-nofollow-dir"))
		return r = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW), print_read((int)r, errno);
	if (!strcmp(call, "fopen")) {
		FILE *fp = fopen(p, q ? q : "r");
		int e = errno;

		if (!fp)
			return print_read(-1, e);
		return print_read(dup(fileno(fp)), 0) + (fclose(fp) ? 1 : 0);
	}
	if (!strcmp(call, "readlink") || !strcmp(call, "readlinkat") ||
	    !strcmp(call, "__readlink_chk") || !strcmp(call, "__readlinkat_chk")) {
		if (!strcmp(call, "readlink"))
			r = readlink(p, buf, sizeof(buf));
		else if (!strcmp(call, "readlinkat"))
			r = readlinkat(AT_FDCWD, p, buf, sizeof(buf));
		else if (!strcmp(call, "__readlink_chk"))
			r = __readlink_chk(p, buf, sizeof(buf), sizeof(buf));
		else
			r = __readlinkat_chk(AT_FDCWD, p, buf, sizeof(buf), sizeof(buf));
		begin(r);
		if (r >= 0)
			json_str("data", buf, (size_t)r);
		return finish(r, errno);
	}
	if (!strcmp(call, "unlink"))
		return r = unlink(p), begin(r), finish(r, errno);
	if (!strcmp(call, "unlinkat"))
		return r = unlinkat(AT_FDCWD, p, 0), begin(r), finish(r, errno);
	if (!strcmp(call, "remove"))
		return r = remove(p), begin(r), finish(r, errno);
	if (!q)
		return -1;
	if (!strcmp(call, "rename"))
		return r = rename(p, q), begin(r), finish(r, errno);
	if (!strcmp(call, "renameat"))
		return r = renameat(AT_FDCWD, p, AT_FDCWD, q), begin(r), finish(r, errno);
	if (!strcmp(call, "renameat2") && argc > 4) {
		unsigned flags = !strcmp(argv[4], "noreplace") ? RENAME_NOREPLACE :
				 !strcmp(argv[4], "exchange") ? RENAME_EXCHANGE : 0;

		return r = renameat2(AT_FDCWD, p, AT_FDCWD, q, flags), begin(r), finish(r, errno);
	}
	if (!strcmp(call, "truncate"))
		return r = truncate(p, atoll(q)), begin(r), finish(r, errno);
	if (!strcmp(call, "chmod"))
		return r = chmod(p, (mode_t)strtol(q, NULL, 8)), begin(r), finish(r, errno);
	if (!strcmp(call, "fchmodat-nofollow"))
		return r = fchmodat(AT_FDCWD, p, (mode_t)strtol(q, NULL, 8), AT_SYMLINK_NOFOLLOW),
		       begin(r), finish(r, errno);
	if (!strcmp(call, "lchmod"))
		return r = lchmod(p, (mode_t)strtol(q, NULL, 8)), begin(r), finish(r, errno);
	ts[0].tv_sec = ts[1].tv_sec = atoll(q);
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	tv[0].tv_sec = tv[1].tv_sec = atoll(q);
	tv[0].tv_usec = tv[1].tv_usec = 0;
	if (!strcmp(call, "utimensat-nofollow"))
		return r = utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), begin(r), finish(r, errno);
	if (!strcmp(call, "utimensat"))
		return r = utimensat(AT_FDCWD, p, ts, 0), begin(r), finish(r, errno);
	if (!strcmp(call, "utimes"))
		return r = utimes(p, tv), begin(r), finish(r, errno);
	if (!strcmp(call, "lutimes"))
		return r = lutimes(p, tv), begin(r), finish(r, errno);
	return -1;
}

int main(int argc, char **argv)
{
	int r;

	call = argc > 1 ? argv[1] : "";
	r = run(argc, argv);
	if (r < 0) {
		fprintf(stderr, "usage: links_prog CALL PATH [ARG...] (see links_prog.c); '%s'?\n", call);
		return 2;
	}
	return r;
}
