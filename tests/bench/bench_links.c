/* SPDX-License-Identifier: MIT */
/*
 * bench_links.c - what libiosig.so's interposers of the calls on links
 * (links.c) cost a program, side by side with libc's own functions in one
 * run.  Prints one JSON object; each figure is {"plain_ns", "interposed_ns",
 * "ratio"} per call, where plain is libc's function (looked up in libc
 * itself) and interposed the program's ordinary call, which binds to
 * libiosig.so's.
 *
 *   lstat_file          lstat of a regular file (every program, all day)
 *   lstat_link          lstat of an ordinary symbolic link of the user's
 *   fstatat_nofollow    fstatat(AT_SYMLINK_NOFOLLOW) of a regular file
 *   statx_nofollow      statx(AT_SYMLINK_NOFOLLOW) of a regular file
 *   open_nofollow       open(O_RDONLY|O_NOFOLLOW) + close of a regular file
 *   readlink_link       readlink of an ordinary link
 *   unlink_file         open(O_CREAT) + close + unlink of a regular file
 *   rename_file         rename of a regular file to a new name
 * and, for a link the runtime made (the interposed call does the work of a
 * regular file's, the plain call sees a link):
 *   lstat_redirected, open_nofollow_redirected
 *
 * As root it mounts two tmpfs (origin and target) in a private mount
 * namespace, so the figures are about the interposers, not a disk; without
 * root it skips (the redirected file needs a configuration of its own).
 * Linked with libiosig.so (not the project's internal archive, which has no
 * interposers).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "iosig.h"
#include "mounts.h"
#include "onlyconf.h"

#define BATCHES 63
#define CALLS 500
#define FILE_CALLS 100

static char base[256];

static const char *at(const char *rel)
{
	static char bufs[8][512];
	static unsigned next;
	char *b = bufs[next++ % 8];

	snprintf(b, 512, "%s/%s", base, rel);
	return b;
}

/* libc's own functions, beneath libiosig.so's. */
static int (*libc_lstat)(const char *, struct stat *);
static int (*libc_fstatat)(int, const char *, struct stat *, int);
static int (*libc_statx)(int, const char *, int, unsigned, struct statx *);
static int (*libc_open)(const char *, int, ...);
static ssize_t (*libc_readlink)(const char *, char *, size_t);
static int (*libc_unlink)(const char *);
static int (*libc_rename)(const char *, const char *);

static int find_libc(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		return -1;
	libc_lstat = (int (*)(const char *, struct stat *))dlsym(h, "lstat");
	libc_fstatat = (int (*)(int, const char *, struct stat *, int))dlsym(h, "fstatat");
	libc_statx = (int (*)(int, const char *, int, unsigned, struct statx *))dlsym(h, "statx");
	libc_open = (int (*)(const char *, int, ...))dlsym(h, "open");
	libc_readlink = (ssize_t (*)(const char *, char *, size_t))dlsym(h, "readlink");
	libc_unlink = (int (*)(const char *))dlsym(h, "unlink");
	libc_rename = (int (*)(const char *, const char *))dlsym(h, "rename");
	return libc_lstat && libc_fstatat && libc_statx && libc_open && libc_readlink &&
	       libc_unlink && libc_rename && libc_lstat != lstat ? 0 : -1;
}

/* The path the timed calls work on. */
static const char *subject;
static struct stat st_sink;
static struct statx stx_sink;

static double plain_lstat(unsigned i)
{
	return libc_lstat(subject, &st_sink);
}

static double ipos_lstat(unsigned i)
{
	return lstat(subject, &st_sink);
}

static double plain_fstatat(unsigned i)
{
	return libc_fstatat(AT_FDCWD, subject, &st_sink, AT_SYMLINK_NOFOLLOW);
}

static double ipos_fstatat(unsigned i)
{
	return fstatat(AT_FDCWD, subject, &st_sink, AT_SYMLINK_NOFOLLOW);
}

static double plain_statx(unsigned i)
{
	return libc_statx(AT_FDCWD, subject, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx_sink);
}

static double ipos_statx(unsigned i)
{
	return statx(AT_FDCWD, subject, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx_sink);
}

static double plain_open(unsigned i)
{
	int fd = libc_open(subject, O_RDONLY | O_NOFOLLOW);

	return fd >= 0 ? close(fd) : -1;
}

static double ipos_open(unsigned i)
{
	int fd = open(subject, O_RDONLY | O_NOFOLLOW);

	return fd >= 0 ? close(fd) : -1;
}

static double plain_readlink(unsigned i)
{
	char buf[PATH_MAX];

	return (double)libc_readlink(subject, buf, sizeof(buf));
}

static double ipos_readlink(unsigned i)
{
	char buf[PATH_MAX];

	return (double)readlink(subject, buf, sizeof(buf));
}

/* A file created with libc's open, then removed by the call measured. */
static double unlink_with(int (*fn)(const char *))
{
	int fd = libc_open(subject, O_CREAT | O_WRONLY, 0600);

	if (fd < 0)
		return -1;
	close(fd);
	return fn(subject);
}

static double plain_unlink(unsigned i)
{
	return unlink_with(libc_unlink);
}

static double ipos_unlink(unsigned i)
{
	return unlink_with(unlink);
}

/* Renames between two names: i's parity says which way. */
static double plain_rename(unsigned i)
{
	return i % 2 ? libc_rename(at("r2"), at("r1")) : libc_rename(at("r1"), at("r2"));
}

static double ipos_rename(unsigned i)
{
	return i % 2 ? rename(at("r2"), at("r1")) : rename(at("r1"), at("r2"));
}

static void figure(const char *name, const char *path, double (*plain)(unsigned),
		   double (*ipos)(unsigned), unsigned calls, bool last)
{
	double p, q, ratio;

	subject = path;
	/* Warm both up: the first interposed call resolves libc's function. */
	plain(0);
	ipos(0);
	ratio = bench_ns_per_call_pair(plain, ipos, BATCHES, calls, &p, &q);
	printf("  \"%s\": {\"plain_ns\": %.1f, \"interposed_ns\": %.1f, \"ratio\": %.3f}%s\n", name,
	       p, q, ratio, last ? "" : ",");
}

static int write_config(void)
{
	char origin[600], target[600];
	const char *entries[] = { origin, target, NULL };

	snprintf(origin, sizeof(origin),
		 "\"%s\": { ignore: false, data_dir: \"%s\", seq_write_bw: 1MiB/s }", at("origin"),
		 at("origin/dd"));
	snprintf(target, sizeof(target), "\"%s\": { ignore: false, data_dir: \"%s\" }",
		 at("target"), at("target/dd"));
	return tconf_only(at("iosig.yaml"), entries);
}

/* A small file on small mounts: totalsize says so (without it a mount needs
 * room for 1 GiB, docs/selection.md). */
static const struct iosig_site site = { IOSIG_SITE_ABI, 0,
					 "tmp sequential_access totalsize(1*MiB)", __FILE__,
					 __LINE__, 1, "open" };

int main(void)
{
	const char *why = tmnt_unavailable(false);
	char target[PATH_MAX];
	ssize_t n;
	int fd;

	if (why) {
		printf("skipped: %s\n", why);
		return 77;
	}
	if (find_libc() < 0) {
		fprintf(stderr, "bench_links: libc's functions not found, or not interposed\n");
		return 1;
	}
	snprintf(base, sizeof(base), "/tmp/iosig-bench-links-XXXXXX");
	if (tmnt_private() < 0 || !mkdtemp(base) || tmnt_mount("iosig-bench", at("origin"), "tmpfs", 0, "size=64m") < 0 ||
	    tmnt_mount("iosig-bench", at("target"), "tmpfs", 0, "size=64m") < 0 || write_config() < 0) {
		fprintf(stderr, "bench_links: cannot set up the mounts: %s\n", strerror(errno));
		return 1;
	}
	setenv("IOSIG_CONFIG", at("iosig.yaml"), 1);
	setenv("IOSIG_PROBE_CACHE", "", 1);

	fd = libc_open(at("origin/file"), O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || close(fd) || symlink(at("origin/file"), at("origin/link")) ||
	    (fd = libc_open(at("origin/r1"), O_CREAT | O_WRONLY, 0644)) < 0 || close(fd)) {
		fprintf(stderr, "bench_links: cannot create the files: %s\n", strerror(errno));
		return 1;
	}
	fd = iosig_open(&site, at("origin/redirected"), O_CREAT | O_WRONLY, 0644);
	n = libc_readlink(at("origin/redirected"), target, sizeof(target) - 1);
	if (fd < 0 || n <= 0) {
		fprintf(stderr, "bench_links: the annotated open did not redirect\n");
		return 1;
	}
	close(fd);

	printf("{\n  \"bench\": \"links\",\n  \"batches\": %d,\n", BATCHES);
	figure("lstat_file", at("origin/file"), plain_lstat, ipos_lstat, CALLS, false);
	figure("lstat_link", at("origin/link"), plain_lstat, ipos_lstat, CALLS, false);
	figure("fstatat_nofollow", at("origin/file"), plain_fstatat, ipos_fstatat, CALLS, false);
	figure("statx_nofollow", at("origin/file"), plain_statx, ipos_statx, CALLS, false);
	figure("open_nofollow", at("origin/file"), plain_open, ipos_open, CALLS, false);
	figure("readlink_link", at("origin/link"), plain_readlink, ipos_readlink, CALLS, false);
	figure("unlink_file", at("origin/u"), plain_unlink, ipos_unlink, FILE_CALLS, false);
	figure("rename_file", at("origin/r1"), plain_rename, ipos_rename, FILE_CALLS, false);
	figure("lstat_redirected", at("origin/redirected"), plain_lstat, ipos_lstat, FILE_CALLS,
	       false);
	figure("open_nofollow_redirected", at("origin/redirected"), plain_open, ipos_open,
	       FILE_CALLS, true);
	printf("}\n");
	tmnt_umount_all();
	return 0;
}
