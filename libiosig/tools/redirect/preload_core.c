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
#include "preload_core.h"

/*
 * Before an unlink of `path`: is it the user's link with a data file's
 * name?  Only a link the runtime made for this user, to the user's own data
 * in a directory that passes the data-directory checks, and the only known
 * link to that data (rd_link_sole), may take its data with it: a link
 * another user planted in a shared directory, a copy of the user's link,
 * one whose data directory someone else recreated, never.
 */
static bool find_linked(int dirfd, const char *path, struct pl_linked *ld)
{
	const struct iosig_catalog *cat = cat_default(NULL);

	rd_link_check(cat, dirfd, path, 0, &ld->link);
	if (ld->link.kind != RD_LINK_OWN && ld->link.kind != RD_LINK_STALE) {
		rd_link_release(&ld->link);
		return false;
	}
	ld->remove = rd_link_sole(&ld->link, path);
	if (rules_abs_path(dirfd, path, ld->abs, sizeof(ld->abs)) < 0)
		ld->abs[0] = '\0';
	return true;
}

/* After the program's unlink of the link: removes the data file when it
 * may (the same file rd_link_check() validated, through its validated
 * directory), logs what was done, releases ld. */
static void after_unlink(const struct rules_rule *rule, const char *call, int dirfd,
			 const char *path, struct pl_linked *ld, bool unlinked)
{
	const struct rd_link *lk = &ld->link;
	struct declog_rec rec;
	struct timespec t0, t1;
	const char *why = NULL;
	struct stat st;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!unlinked) {
		rd_link_release(&ld->link);
		return;
	}
	if (lk->kind != RD_LINK_OWN) {
		why = lk->why;
		r = lk->err;
	} else if (!ld->remove) {
		why = "the data file has another link, or its name is not this link's: it is kept";
		r = -EMLINK;
	} else if (fstatat(lk->ddfd, lk->name, &st, AT_SYMLINK_NOFOLLOW) ||
		   st.st_dev != lk->data.st_dev || st.st_ino != lk->data.st_ino) {
		why = "the data file changed since the link was checked";
		r = -EAGAIN;
	} else if (unlinkat(lk->ddfd, lk->name, 0)) {
		r = -errno;
		why = strerror(-r);
	}
	if (declog_enabled()) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		memset(&rec, 0, sizeof(rec));
		rec.site = &rule->site;
		rec.call = call;
		rec.path = path;
		rec.dirfd = dirfd;
		rec.abs_path = ld->abs[0] ? ld->abs : NULL;
		rec.sig = &rule->sig;
		rec.chosen = lk->mount;
		rec.action = r == 0 ? "removed" : "kept";
		rec.data_path = lk->target;
		rec.reason = why;
		rec.result = r == 0 ? 0 : -1;
		rec.err = r < 0 ? -r : 0;
		rec.elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		declog_decision(&rec);
	}
	rd_link_release(&ld->link);
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
	.after_unlink = after_unlink,
	.warn = warn,
	.client_attach = client_attach,
};
