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
#include "env.h"
#include "preload_core.h"
#include "runtime.h"

/*
 * Before an unlink of `path`: is it the user's link with a data file's
 * name?  Only a link the runtime made for this user, to the user's own data
 * in a directory that passes the data-directory checks, and the only name of
 * that link besides its anchor, may take its data with it (rd_link.h): a
 * link another user planted in a shared directory, a copy of the user's
 * link, one whose data directory someone else recreated, never.
 */
static bool find_linked(int dirfd, const char *path, struct pl_linked *ld)
{
	if (!rd_link_removal_begin(cat_default(NULL), dirfd, path, &ld->rm))
		return false;
	if (rules_abs_path(dirfd, path, ld->abs, sizeof(ld->abs)) < 0)
		ld->abs[0] = '\0';
	return true;
}

/* After the program's unlink of the link: removes the data file when it
 * may (rd_link_removal_end()), logs what was done, releases ld. */
static void after_unlink(const struct rules_rule *rule, const char *call, int dirfd,
			 const char *path, struct pl_linked *ld, bool unlinked)
{
	struct declog_rec rec;
	struct timespec t0, t1;
	const char *why = NULL;
	const struct iosig_mount *mount = ld->rm.link.mount;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = rd_link_removal_end(&ld->rm, unlinked, &why);
	if (!unlinked || !declog_enabled())
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	memset(&rec, 0, sizeof(rec));
	rec.site = &rule->site;
	rec.call = call;
	rec.path = path;
	rec.dirfd = dirfd;
	rec.abs_path = ld->abs[0] ? ld->abs : NULL;
	rec.sig = &rule->sig;
	rec.chosen = mount;
	rec.action = r == 0 ? "removed" : "kept";
	rec.data_path = ld->rm.link.target;
	rec.reason = why;
	rec.result = r == 0 ? 0 : -1;
	rec.err = r < 0 ? -r : 0;
	rec.elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	declog_decision(&rec);
}

static void warn(const char *msg)
{
	declog_event("warning", NULL, msg, NULL);
}

/* The rules checked in this process (a rule is checked once; they are few). */
struct checked {
	const struct rules_rule *rule;
	struct checked *next;
};

static struct checked *checked_list;   /* guarded by the runtime lock (rt_lock) */

/* The first call a rule matches: can some mount take its files?  If not,
 * one warning on stderr (as iosig-redirect --check prints it) and in the
 * log; the call goes on and falls back to where the program asked. */
static void matched(const struct rules_rule *rule)
{
	const struct iosig_catalog *cat;
	struct checked *e;
	char msg[3072], line[3200];
	int n;

	rt_lock();
	for (e = checked_list; e; e = e->next)
		if (e->rule == rule)
			break;
	if (e) {
		rt_unlock();
		return;
	}
	/* Out of memory: checked again next time, which is all it costs. */
	e = malloc(sizeof(*e));
	if (e) {
		e->rule = rule;
		e->next = checked_list;
		checked_list = e;
	}
	rt_unlock();
	cat = cat_default(NULL);
	if (!cat || rules_check(cat, rule, msg, sizeof(msg)))
		return;
	declog_event("warning", &rule->site, msg, NULL);
	if (env_flag(RULES_QUIET_ENV))
		return;
	n = snprintf(line, sizeof(line),
		     "iosig-redirect: warning: %s; files it matches stay where the program puts them\n",
		     msg);
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

__attribute__((visibility("default"))) const struct pl_core_ops pl_core = {
	.version = PL_CORE_VERSION,
	.openat = rd_openat,
	.fopen = rd_fopen,
	.freopen = rd_freopen,
	.find_linked = find_linked,
	.after_unlink = after_unlink,
	.warn = warn,
	.matched = matched,
	.client_attach = client_attach,
	.links = &links_ops,
};
