/* SPDX-License-Identifier: MIT */
/*
 * preload_core.c - libiosig-preload-core.so, the half of iosig-redirect's
 * LD_PRELOAD library that libiosig-preload.so loads when a call first
 * matches a rule (see preload_core.h): libiosig's redirection and the
 * removal of redirected files' data.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "declog.h"
#include "finalize.h"
#include "preload_core.h"

/*
 * True if `path` (relative to dirfd) is a symbolic link to a data file of
 * the runtime: "<data_dir>/<L-|G-name>" of a mount of the process-wide
 * catalog (the check `iosig finalize` makes).
 */
static bool find_linked(int dirfd, const char *path, struct pl_linked *ld)
{
	const struct iosig_catalog *cat;
	char dir[PATH_MAX];
	struct stat st;
	ssize_t n;
	char *slash;

	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st.st_mode))
		return false;
	n = readlinkat(dirfd, path, ld->target, sizeof(ld->target) - 1);
	if (n <= 0 || ld->target[0] != '/')
		return false;
	ld->target[n] = '\0';
	slash = strrchr(ld->target, '/');
	ld->name = slash + 1;
	if (slash == ld->target || (strncmp(ld->name, "L-", 2) && strncmp(ld->name, "G-", 2)) ||
	    !ld->name[2])
		return false;
	memcpy(dir, ld->target, (size_t)(slash - ld->target));
	dir[slash - ld->target] = '\0';
	cat = cat_default(NULL);
	ld->mount = cat ? fin_data_dir_mount(cat, dir) : NULL;
	if (!ld->mount)
		return false;
	if (rules_abs_path(dirfd, path, ld->abs, sizeof(ld->abs)) < 0)
		ld->abs[0] = '\0';
	return true;
}

/* After the program's unlink of the link succeeded: removes the data file
 * (a regular file of this user) and logs it. */
static void remove_linked(const struct rules_rule *rule, const char *call, int dirfd,
			       const char *path, const struct pl_linked *ld)
{
	struct iosig_error err;
	struct declog_rec rec;
	struct timespec t0, t1;
	struct stat st;
	int ddfd, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&err, 0, sizeof(err));
	r = cat_datadir_open(ld->mount, &ddfd, &err);
	if (r == 0) {
		if (fstatat(ddfd, ld->name, &st, AT_SYMLINK_NOFOLLOW))
			r = -errno;
		else if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid() && geteuid() != 0))
			r = -EPERM;
		else if (unlinkat(ddfd, ld->name, 0))
			r = -errno;
		close(ddfd);
	}
	if (!declog_enabled())
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	memset(&rec, 0, sizeof(rec));
	rec.site = &rule->site;
	rec.call = call;
	rec.path = path;
	rec.dirfd = dirfd;
	rec.abs_path = ld->abs[0] ? ld->abs : NULL;
	rec.sig = &rule->sig;
	rec.chosen = ld->mount;
	rec.action = r == 0 ? "removed" : "kept";
	rec.data_path = ld->target;
	rec.reason = r == 0 ? NULL : err.msg[0] ? err.msg :
		     r == -EPERM ? "the data file is not a regular file of this user" : strerror(-r);
	rec.result = r == 0 ? 0 : -1;
	rec.err = r < 0 ? -r : 0;
	rec.elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	declog_decision(&rec);
}

static void warn(const char *msg)
{
	declog_event("warning", NULL, msg, NULL);
}

__attribute__((visibility("default"))) const struct pl_core_ops pl_core = {
	.version = PL_CORE_VERSION,
	.openat = rd_openat,
	.fopen = rd_fopen,
	.freopen = rd_freopen,
	.find_linked = find_linked,
	.remove_linked = remove_linked,
	.warn = warn,
	.client_attach = client_attach,
};
