/* SPDX-License-Identifier: MIT */
/* rtenv.c - shared helpers of the redirection tests (see rtenv.h). */
#include "rtenv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "declog.h"
#include "runtime.h"

static void die(const char *what)
{
	fprintf(stderr, "test setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

void rt_scratch(const char *base, const char *prefix, char *buf, size_t size)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s/%s.XXXXXX", base, prefix);
	if (!mkdtemp(tmp))
		die(tmp);
	if (!realpath(tmp, buf) || strlen(buf) >= size)
		die("realpath");
}

static void rmtree_at(int dfd, const char *name)
{
	struct stat st;
	int fd;
	DIR *d;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlinkat(dfd, name, 0);
		return;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rmtree_at(dirfd(d), e->d_name);
	}
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

void rt_rmtree(const char *path)
{
	rmtree_at(AT_FDCWD, path);
}

void rt_write_config(const char *file, const struct rt_mount_cfg *mounts, size_t n)
{
	FILE *fp = fopen(file, "w");
	bool root_kept = false;
	char pat[64];

	if (!fp)
		die(file);
	fprintf(fp, "version: 1\nmounts:\n");
	/* Leave out every mount the test does not name: patterns apply first,
	 * an exact entry below wins over them. */
	strcpy(pat, "");
	for (int depth = 1; depth <= 12; depth++) {
		strcat(pat, "/*");
		fprintf(fp, "  \"%s\": { ignore: true }\n", pat);
	}
	for (size_t i = 0; i < n; i++)
		root_kept |= !strcmp(mounts[i].path, "/");
	if (!root_kept)
		fprintf(fp, "  \"/\": { ignore: true }\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(fp, "  \"%s\":\n    ignore: false\n    data_dir: \"%s\"\n", mounts[i].path,
			mounts[i].data_dir);
		for (const char *const *s = mounts[i].settings; s && *s; s++)
			fprintf(fp, "    %s\n", *s);
	}
	if (fclose(fp))
		die(file);
	setenv("IOSIG_CONFIG", file, 1);
}

void rt_mount_of(const char *path, char *buf, size_t size)
{
	char cur[PATH_MAX], parent[PATH_MAX];
	struct stat a, b;

	if (!realpath(path, cur) || stat(cur, &a))
		die(path);
	for (;;) {
		char *slash = strrchr(cur, '/');

		if (!strcmp(cur, "/"))
			break;
		snprintf(parent, sizeof(parent), "%.*s", slash == cur ? 1 : (int)(slash - cur), cur);
		if (stat(parent, &b) || b.st_dev != a.st_dev)
			break;
		strcpy(cur, parent);
	}
	snprintf(buf, size, "%s", cur);
}

void rt_setenv(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
	rt_env_reload();
	declog_reset();
}

ssize_t rt_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

bool rt_is_link_into(const char *path, const char *prefix)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strncmp(buf, prefix, strlen(prefix));
}

bool rt_is_regular(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISREG(st.st_mode);
}

dev_t rt_dev_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_dev;
}
