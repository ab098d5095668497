/* SPDX-License-Identifier: MIT */
/*
 * calls.c - a program that creates one file through every call
 * libiosig-preload.so interposes, for test_redirect.py to run under
 * iosig-redirect:
 *
 *   calls WORK DATA_DIR
 *
 * creates WORK/<call>.out with each of open, open64, __open_2 (no
 * creation: opens an existing file), __open64_2, openat, openat64 (both
 * relative to a directory descriptor of WORK/sub), __openat_2,
 * __openat64_2, creat, creat64, fopen, fopen64, freopen, freopen64, writes
 * the call's name into it and checks that WORK/<call>.out is a symbolic
 * link into DATA_DIR holding that text; creates WORK/plain.txt (no rule
 * matches it) and checks it is a regular file; removes three redirected
 * files with unlink, unlinkat and remove and checks their data files are
 * gone too.  Prints "ok CALL" per check, "FAIL ..." and exits 1 on the
 * first failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static const char *work, *data;
static int failures;

static void fail(const char *what, const char *path)
{
	printf("FAIL %s: %s: %s\n", what, path, strerror(errno));
	failures++;
}

/* path is a link into DATA_DIR whose file holds `text`; returns the
 * target in buf. */
static int check_linked(const char *call, const char *path, const char *text, char *buf,
			size_t size)
{
	char got[256];
	ssize_t n;
	FILE *fp;

	/* Inside this process the link is the file it stands for (readlink
	 * says EINVAL): ask the kernel, as a process without the preload
	 * library would. */
	n = syscall(SYS_readlinkat, AT_FDCWD, path, buf, size - 1);
	if (n < 0) {
		fail(call, path);
		return -1;
	}
	buf[n] = '\0';
	if (strncmp(buf, data, strlen(data)) || buf[strlen(data)] != '/') {
		printf("FAIL %s: %s points to %s, not into %s\n", call, path, buf, data);
		failures++;
		return -1;
	}
	fp = fopen(path, "r");
	if (!fp || !fgets(got, sizeof(got), fp) || strcmp(got, text)) {
		printf("FAIL %s: %s does not hold '%s'\n", call, path, text);
		failures++;
		if (fp)
			fclose(fp);
		return -1;
	}
	fclose(fp);
	printf("ok %s\n", call);
	return 0;
}

static void write_fd(const char *call, int fd, const char *path)
{
	if (fd < 0) {
		fail(call, path);
		return;
	}
	if (write(fd, call, strlen(call)) != (ssize_t)strlen(call))
		fail(call, path);
	close(fd);
}

static char *at(const char *dir, const char *name)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *p = buf[k++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static void by_fd(const char *call, int fd, const char *path)
{
	char target[PATH_MAX];

	write_fd(call, fd, path);
	check_linked(call, path, call, target, sizeof(target));
}

static void by_stream(const char *call, FILE *fp, const char *path)
{
	char target[PATH_MAX];

	if (!fp) {
		fail(call, path);
		return;
	}
	fputs(call, fp);
	if (fclose(fp))
		fail(call, path);
	check_linked(call, path, call, target, sizeof(target));
}

/* Removes a redirected file with `how` and checks the data went too. */
static void removal(const char *how, const char *path, int dfd, const char *name)
{
	char target[PATH_MAX];
	struct stat st;
	int r;

	if (check_linked("creat", path, "creat", target, sizeof(target)))
		return;
	if (!strcmp(how, "unlink"))
		r = unlink(path);
	else if (!strcmp(how, "unlinkat"))
		r = unlinkat(dfd, name, 0);
	else
		r = remove(path);
	if (r) {
		fail(how, path);
		return;
	}
	if (!lstat(path, &st) || !lstat(target, &st)) {
		printf("FAIL %s: %s or its data %s is still there\n", how, path, target);
		failures++;
		return;
	}
	printf("ok %s\n", how);
}

int main(int argc, char **argv)
{
	char sub[PATH_MAX];
	struct stat st;
	FILE *fp;
	int dfd, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: calls WORK DATA_DIR\n");
		return 2;
	}
	work = argv[1];
	data = argv[2];
	snprintf(sub, sizeof(sub), "%s/sub", work);
	if (mkdir(sub, 0755) && errno != EEXIST)
		fail("mkdir", sub);
	dfd = open(sub, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		fail("open", sub);

	by_fd("open", open(at(work, "open.out"), O_CREAT | O_WRONLY | O_TRUNC, 0644),
	      at(work, "open.out"));
	by_fd("open64", open64(at(work, "open64.out"), O_CREAT | O_WRONLY | O_EXCL, 0600),
	      at(work, "open64.out"));
	by_fd("openat", openat(dfd, "openat.out", O_CREAT | O_RDWR | O_NOFOLLOW, 0644),
	      at(sub, "openat.out"));
	by_fd("openat64", openat64(dfd, "openat64.out", O_CREAT | O_WRONLY | O_CLOEXEC, 0644),
	      at(sub, "openat64.out"));
	by_fd("creat", creat(at(work, "creat.out"), 0644), at(work, "creat.out"));
	by_fd("creat64", creat64(at(work, "creat64.out"), 0644), at(work, "creat64.out"));
	by_stream("fopen", fopen(at(work, "fopen.out"), "w"), at(work, "fopen.out"));
	by_stream("fopen64", fopen64(at(work, "fopen64.out"), "wx"), at(work, "fopen64.out"));
	fp = tmpfile();
	by_stream("freopen", fp ? freopen(at(work, "freopen.out"), "w", fp) : NULL,
		  at(work, "freopen.out"));
	fp = tmpfile();
	by_stream("freopen64", fp ? freopen64(at(work, "freopen64.out"), "a", fp) : NULL,
		  at(work, "freopen64.out"));

	/* The fortified variants cannot create: they open what is there. */
	fd = __open_2(at(work, "open.out"), O_RDONLY);
	if (fd < 0)
		fail("__open_2", at(work, "open.out"));
	else if (close(fd) == 0)
		printf("ok __open_2\n");
	fd = __open64_2(at(work, "open.out"), O_RDONLY);
	if (fd < 0)
		fail("__open64_2", at(work, "open.out"));
	else if (close(fd) == 0)
		printf("ok __open64_2\n");
	fd = __openat_2(dfd, "openat.out", O_RDONLY);
	if (fd < 0)
		fail("__openat_2", at(sub, "openat.out"));
	else if (close(fd) == 0)
		printf("ok __openat_2\n");
	fd = __openat64_2(dfd, "openat.out", O_RDONLY);
	if (fd < 0)
		fail("__openat64_2", at(sub, "openat.out"));
	else if (close(fd) == 0)
		printf("ok __openat64_2\n");

	/* No rule: a regular file where the program asked. */
	write_fd("plain", open(at(work, "plain.txt"), O_CREAT | O_WRONLY, 0644), at(work, "plain.txt"));
	if (lstat(at(work, "plain.txt"), &st) || !S_ISREG(st.st_mode)) {
		printf("FAIL plain: %s is not a regular file\n", at(work, "plain.txt"));
		failures++;
	} else {
		printf("ok plain\n");
	}

	/* Removing a redirected file removes its data. */
	write_fd("creat", creat(at(work, "rm1.out"), 0644), at(work, "rm1.out"));
	removal("unlink", at(work, "rm1.out"), dfd, NULL);
	write_fd("creat", creat(at(sub, "rm2.out"), 0644), at(sub, "rm2.out"));
	removal("unlinkat", at(sub, "rm2.out"), dfd, "rm2.out");
	write_fd("creat", creat(at(work, "rm3.out"), 0644), at(work, "rm3.out"));
	removal("remove", at(work, "rm3.out"), dfd, NULL);
	close(dfd);
	return failures ? 1 : 0;
}
