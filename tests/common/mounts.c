/* SPDX-License-Identifier: MIT */
/* mounts.c - real filesystems for tests (see mounts.h). */
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What tmnt_mount() and tmnt_loop_mount() mounted, oldest first. */
#define MOUNTS_MAX 64
static char mounted[MOUNTS_MAX][PATH_MAX];
static unsigned nmounted;

int tmnt_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

const char *tmnt_tool(const char *name)
{
	static char bufs[4][PATH_MAX];
	static unsigned next;
	char *b = bufs[next++ % 4];
	const char *path = getenv("PATH");
	char dirs[PATH_MAX * 2];
	char *save = NULL;

	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/sbin", path ? path : "/usr/bin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (!*d)
			continue;
		snprintf(b, PATH_MAX, "%s/%s", d, name);
		if (access(b, X_OK) == 0)
			return b;
	}
	return NULL;
}

const char *tmnt_unavailable(bool loops)
{
	if (geteuid() != 0)
		return "mounting filesystems needs root";
	if (loops && access("/dev/loop-control", R_OK | W_OK) < 0)
		return "no /dev/loop-control: loop devices are not available";
	if (loops && !tmnt_tool("mkfs.ext4"))
		return "mkfs.ext4 not found (e2fsprogs; scripts/install-deps)";
	return NULL;
}

int tmnt_private(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	/* The new namespace starts as a copy whose mounts may still be shared
	 * with the old one: make every one of them private. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	return 0;
}

static int remember(const char *dir)
{
	if (nmounted == MOUNTS_MAX || strlen(dir) >= PATH_MAX)
		return -ENOSPC;
	memcpy(mounted[nmounted++], dir, strlen(dir) + 1);
	return 0;
}

int tmnt_mount(const char *src, const char *dir, const char *type, unsigned long flags,
	       const char *data)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (mount(src, dir, type, flags, data) < 0)
		return -errno;
	if (remember(dir) < 0) {
		umount2(dir, MNT_DETACH);
		return -ENOSPC;
	}
	return 0;
}

int tmnt_mkfs(const char *path, unsigned long long size, const char *fstype, const char *args)
{
	char name[64];
	const char *mkfs;

	snprintf(name, sizeof(name), "mkfs.%s", fstype);
	mkfs = tmnt_tool(name);
	if (!mkfs)
		return -ENOENT;
	if (size > 0) {
		int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);

		if (fd < 0)
			return -errno;
		if (ftruncate(fd, (off_t)size) < 0) {
			int r = -errno;

			close(fd);
			return r;
		}
		close(fd);
	}
	return tmnt_sh("'%s' %s '%s' >/dev/null 2>&1", mkfs, args ? args : "", path) == 0 ? 0
												 : -EIO;
}

int tmnt_loop_attach(const char *img, unsigned flags, char *dev, size_t size, int *ret_fd)
{
	int ctl, lfd = -1, ffd, r = -EBUSY;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	ffd = open(img, O_RDWR | O_CLOEXEC);
	if (ffd < 0) {
		r = -errno;
		close(ctl);
		return r;
	}
	/* Another process may take the free device first: retry. */
	for (int tries = 0; tries < 20 && r == -EBUSY; tries++) {
		struct loop_config lc = { .fd = (unsigned)ffd,
					  .info = { .lo_flags = LO_FLAGS_AUTOCLEAR | flags } };
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (n < 0) {
			r = -errno;
			break;
		}
		snprintf(dev, size, "/dev/loop%d", n);
		lfd = open(dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			r = -errno;
			break;
		}
		r = ioctl(lfd, LOOP_CONFIGURE, &lc) < 0 ? -errno : 0;
		if (r < 0) {
			close(lfd);
			lfd = -1;
		}
	}
	close(ctl);
	close(ffd);
	if (r == 0)
		*ret_fd = lfd;
	return r;
}

int tmnt_loop_mount(const char *img, unsigned loop_flags, const char *dir, const char *type,
		    unsigned long flags, const char *data, char *dev, size_t size)
{
	char name[64];
	int lfd, r;

	r = tmnt_loop_attach(img, loop_flags, name, sizeof(name), &lfd);
	if (r < 0)
		return r;
	/* The mount holds the device; closing it afterwards lets auto-clear
	 * detach it at unmount. */
	r = tmnt_mount(name, dir, type, flags, data);
	close(lfd);
	if (r == 0 && dev)
		snprintf(dev, size, "%s", name);
	return r;
}

int tmnt_umount(const char *dir)
{
	if (umount2(dir, 0) < 0)
		return -errno;
	for (unsigned i = nmounted; i-- > 0;) {
		if (!strcmp(mounted[i], dir)) {
			memmove(mounted[i], mounted[i + 1], (nmounted - i - 1) * sizeof(mounted[0]));
			nmounted--;
			break;
		}
	}
	return 0;
}

void tmnt_umount_all(void)
{
	while (nmounted) {
		const char *dir = mounted[--nmounted];

		if (umount2(dir, 0) < 0)
			umount2(dir, MNT_DETACH);
	}
}
