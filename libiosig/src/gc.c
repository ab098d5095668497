/* SPDX-License-Identifier: MIT */
/*
 * gc.c - freeing data files whose link is gone (see gc.h for the contract).
 *
 *   1. Every anchors directory of the user (one per catalog mount with a
 *      data directory) is read: an anchor with a link count of 2 or more
 *      belongs to a live link, and its target is kept; one with a link
 *      count of 1 is an orphan's.
 *   2. Each orphan's anchor, under an exclusive lock of its directory, is
 *      checked again (still that inode, still one name) and by
 *      rd_link_check() like any link of the user's; its data file goes if
 *      it lies on a mount asked for, no live anchor names it, it has one
 *      hard link and is still the file checked; then the anchor goes.  An
 *      anchor whose data file is already gone is removed.
 *   3. The data directories of the mounts asked for are listed, to report
 *      every other data file: live (an anchor of a live link names it) or
 *      unanchored (none does: kept).
 */
#include "gc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "rd_link.h"
#include "realfn.h"
#include "redirect.h"

static const char *const action_names[] = {
	[GC_FREED] = "freed",
	[GC_LIVE] = "live",
	[GC_UNANCHORED] = "unanchored",
	[GC_DROPPED] = "dropped",
	[GC_KEPT] = "kept",
	[GC_FAILED] = "failed",
};

const char *gc_action_name(enum gc_action action)
{
	if ((unsigned)action >= sizeof(action_names) / sizeof(action_names[0]))
		return "unknown";
	return action_names[action];
}

/* One anchor found in an anchors directory. */
struct anchor {
	size_t dir;        /* index into gc->dirs */
	char *name;        /* its name (the data file's) */
	char *target;      /* its target: the data file's path */
	dev_t dev;
	ino_t ino;
	nlink_t nlink;     /* 1: its link is gone */
};

/* An anchors directory of the user's. */
struct adir {
	int fd;                  /* O_RDONLY|O_DIRECTORY */
	char path[PATH_MAX];     /* <data directory>/anchors, for reports */
};

/* A growable array of strings, sorted before it is searched. */
struct strs {
	char **v;
	size_t n, cap;
};

struct gc {
	const struct iosig_catalog *cat;
	const struct iosig_mount *const *mounts;   /* asked for; NULL: all */
	size_t nmounts;
	unsigned flags;
	gc_report_fn report;
	void *arg;
	struct gc_stats stats;
	uid_t uid;
	struct adir *dirs;
	size_t ndirs;
	struct anchor *anchors;
	size_t nanchors, cap;
	struct strs live;        /* targets of anchors of live links */
	struct strs done;        /* data files reported in step 2 */
};

static int strs_add(struct strs *s, const char *str)
{
	char *copy;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	copy = strdup(str);
	if (!copy)
		return -ENOMEM;
	s->v[s->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void strs_sort(struct strs *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
}

static bool strs_has(const struct strs *s, const char *str)
{
	return s->n && bsearch(&str, s->v, s->n, sizeof(*s->v), cmp_str) != NULL;
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* True if m is one of the mounts asked for. */
static bool selected(const struct gc *gc, const struct iosig_mount *m)
{
	if (!gc->nmounts)
		return m != NULL;
	for (size_t i = 0; i < gc->nmounts; i++)
		if (gc->mounts[i] == m)
			return true;
	return false;
}

static void emit(struct gc *gc, int action, const char *data, const char *anchor,
		 const struct iosig_mount *m, const struct stat *st, const char *why)
{
	struct gc_entry e = {
		.action = action, .data_path = data, .anchor_path = anchor, .mount = m,
		.size = st ? (uint64_t)st->st_size : 0,
		.bytes = st ? (uint64_t)st->st_blocks * 512 : 0, .why = why,
	};

	switch (action) {
	case GC_FREED:
		gc->stats.freed++;
		gc->stats.freed_bytes += e.bytes;
		break;
	case GC_LIVE:
		gc->stats.live++;
		break;
	case GC_UNANCHORED:
		gc->stats.unanchored++;
		break;
	case GC_DROPPED:
		gc->stats.dropped++;
		break;
	case GC_KEPT:
		gc->stats.kept++;
		break;
	default:
		gc->stats.failed++;
		break;
	}
	if (action != GC_DROPPED)
		gc->stats.files++;
	if (gc->report)
		gc->report(&e, gc->arg);
}

/* ------------------------------------------------------------------------
 * 1. The anchors
 * ---------------------------------------------------------------------- */

static int add_anchor(struct gc *gc, size_t dir, const char *name, const struct stat *st,
		      const char *target)
{
	struct anchor *a;

	if (gc->nanchors == gc->cap) {
		size_t cap = gc->cap ? 2 * gc->cap : 64;
		struct anchor *v = realloc(gc->anchors, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		gc->anchors = v;
		gc->cap = cap;
	}
	a = &gc->anchors[gc->nanchors];
	a->dir = dir;
	a->name = strdup(name);
	a->target = strdup(target);
	a->dev = st->st_dev;
	a->ino = st->st_ino;
	a->nlink = st->st_nlink;
	if (!a->name || !a->target) {
		free(a->name);
		free(a->target);
		return -ENOMEM;
	}
	gc->nanchors++;
	return st->st_nlink > 1 ? strs_add(&gc->live, target) : 0;
}

/* Reads one anchors directory: every entry with a data file's name that is
 * a symbolic link of the user's. */
static int read_anchors(struct gc *gc, size_t dir)
{
	char target[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int fd, r = 0;
	ssize_t n;
	DIR *d;

	fd = dup(gc->dirs[dir].fd);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while (r == 0 && (de = readdir(d))) {
		if (!rd_data_name_prefix(de->d_name) ||
		    fstatat(gc->dirs[dir].fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISLNK(st.st_mode) || st.st_uid != gc->uid)
			continue;
		n = readlinkat(gc->dirs[dir].fd, de->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		r = add_anchor(gc, dir, de->d_name, &st, target);
	}
	closedir(d);
	return r;
}

/* Opens and reads the anchors directory of every catalog mount with a data
 * directory of the user's. */
static int find_anchors(struct gc *gc)
{
	size_t n = iosig_catalog_size(gc->cat);
	int r = 0;

	gc->dirs = calloc(n ? n : 1, sizeof(*gc->dirs));
	if (!gc->dirs)
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		const struct iosig_mount *m = iosig_catalog_mount(gc->cat, i);
		struct iosig_error err;
		int ddfd, afd;

		if (!m->data_dir || m->data_dir[0] != '/')
			continue;
		memset(&err, 0, sizeof(err));
		if (cat_datadir_open_existing(m, m->data_dir, gc->uid, &ddfd, &err) < 0)
			continue;
		if (rd_anchor_dir_at(ddfd, false, &afd) == 0) {
			struct adir *a = &gc->dirs[gc->ndirs];

			a->fd = afd;
			snprintf(a->path, sizeof(a->path), "%s/%s", m->data_dir, RD_ANCHOR_DIR);
			r = read_anchors(gc, gc->ndirs++);
		}
		close(ddfd);
	}
	strs_sort(&gc->live);
	return r;
}

/* ------------------------------------------------------------------------
 * 2. The orphans
 * ---------------------------------------------------------------------- */

/* Frees (or in a dry run, would free) the orphan of anchor a; its
 * directory is locked. */
static void free_orphan(struct gc *gc, const struct anchor *a)
{
	int afd = gc->dirs[a->dir].fd;
	char apath[PATH_MAX + NAME_MAX + 2];
	bool dry = gc->flags & GC_DRY_RUN;
	struct rd_link lk;
	struct stat st;
	const char *why;
	int e;

	snprintf(apath, sizeof(apath), "%s/%s", gc->dirs[a->dir].path, a->name);
	if (fstatat(afd, a->name, &st, AT_SYMLINK_NOFOLLOW) || st.st_ino != a->ino ||
	    st.st_dev != a->dev)
		return;   /* gone or replaced meanwhile: someone else's work */
	rd_link_check(gc->cat, afd, a->name, 0, &lk);
	if (lk.kind == RD_LINK_STALE && lk.err == -ENOENT) {
		/* The data is gone (freed, finalized, its tmpfs rebooted). */
		if (selected(gc, lk.mount)) {
			if (!dry && st.st_nlink == 1)
				unlinkat(afd, a->name, 0);
			emit(gc, GC_DROPPED, a->target, apath, lk.mount, NULL, NULL);
		}
		goto out_release;
	}
	if (lk.kind != RD_LINK_OWN) {
		if (lk.mount && selected(gc, lk.mount))
			emit(gc, GC_KEPT, a->target, apath, lk.mount, NULL, lk.why);
		goto out_release;
	}
	if (!selected(gc, lk.mount))
		goto out_release;
	/* Reported here; out of memory, it is reported again in step 3. */
	(void)strs_add(&gc->done, a->target);
	if (st.st_nlink != 1) {
		emit(gc, GC_LIVE, a->target, apath, lk.mount, &lk.data, NULL);
		goto out_release;
	}
	if (strs_has(&gc->live, a->target)) {
		/* Another link of the user's to the same data is alive (a global
		 * file linked anew): this dead anchor alone goes. */
		if (!dry)
			unlinkat(afd, a->name, 0);
		emit(gc, GC_LIVE, a->target, NULL, lk.mount, &lk.data, NULL);
		goto out_release;
	}
	if (lk.data.st_nlink != 1) {
		emit(gc, GC_KEPT, a->target, apath, lk.mount, &lk.data,
		     "the data file has other hard links: it stays with them");
		goto out_release;
	}
	if (dry) {
		emit(gc, GC_FREED, a->target, apath, lk.mount, &lk.data, NULL);
		goto out_release;
	}
	if (fstatat(lk.ddfd, lk.name, &st, AT_SYMLINK_NOFOLLOW) ||
	    st.st_dev != lk.data.st_dev || st.st_ino != lk.data.st_ino) {
		emit(gc, GC_KEPT, a->target, apath, lk.mount, NULL,
		     "the data file changed since it was checked");
		goto out_release;
	}
	if (unlinkat(lk.ddfd, lk.name, 0)) {
		e = errno;
		why = strerror(e);
		if (e == ENOENT) {
			/* Freed by someone else meanwhile (an unlink through
			 * libiosig, another gc). */
			unlinkat(afd, a->name, 0);
			emit(gc, GC_DROPPED, a->target, apath, lk.mount, NULL, NULL);
		} else {
			emit(gc, GC_FAILED, a->target, apath, lk.mount, &lk.data, why);
		}
		goto out_release;
	}
	unlinkat(afd, a->name, 0);
	emit(gc, GC_FREED, a->target, apath, lk.mount, &lk.data, NULL);
out_release:
	rd_link_release(&lk);
}

static void free_orphans(struct gc *gc)
{
	for (size_t i = 0; i < gc->nanchors; i++) {
		const struct anchor *a = &gc->anchors[i];
		int lock;

		if (a->nlink != 1)
			continue;
		/* No redirection links a global data file anew meanwhile. */
		lock = rd_anchor_lock(gc->dirs[a->dir].fd, true);
		free_orphan(gc, a);
		if (lock >= 0)
			close(lock);
	}
	strs_sort(&gc->done);
}

/* ------------------------------------------------------------------------
 * 3. Every other data file
 * ---------------------------------------------------------------------- */

static void list_data(struct gc *gc, const struct iosig_mount *m)
{
	char path[PATH_MAX + NAME_MAX + 2];
	struct iosig_error err;
	struct dirent *de;
	struct stat st;
	int ddfd, fd;
	DIR *d;

	memset(&err, 0, sizeof(err));
	if (!m->data_dir || cat_datadir_open_existing(m, m->data_dir, gc->uid, &ddfd, &err) < 0)
		return;
	fd = dup(ddfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		close(ddfd);
		return;
	}
	while ((de = readdir(d))) {
		if (!rd_data_name_prefix(de->d_name) ||
		    fstatat(ddfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != gc->uid)
			continue;
		snprintf(path, sizeof(path), "%s/%s", m->data_dir, de->d_name);
		if (strs_has(&gc->done, path))
			continue;
		emit(gc, strs_has(&gc->live, path) ? GC_LIVE : GC_UNANCHORED, path, NULL, m, &st,
		     NULL);
	}
	closedir(d);
	close(ddfd);
}

static void list_all(struct gc *gc)
{
	if (gc->nmounts) {
		for (size_t i = 0; i < gc->nmounts; i++)
			list_data(gc, gc->mounts[i]);
		return;
	}
	for (size_t i = 0; i < iosig_catalog_size(gc->cat); i++)
		list_data(gc, iosig_catalog_mount(gc->cat, i));
}

int gc_run(const struct iosig_catalog *cat, const struct iosig_mount *const *mounts,
	   size_t nmounts, unsigned flags, gc_report_fn report, void *arg,
	   struct gc_stats *ret_stats)
{
	struct gc gc = {
		.cat = cat, .mounts = mounts, .nmounts = nmounts, .flags = flags,
		.report = report, .arg = arg, .uid = geteuid(),
	};
	int r;

	/* Inside a program that runs libiosig, gc sees links as they are. */
	real_enter();
	r = find_anchors(&gc);
	if (r == 0) {
		free_orphans(&gc);
		list_all(&gc);
	}
	real_leave();
	if (ret_stats)
		*ret_stats = gc.stats;
	for (size_t i = 0; i < gc.ndirs; i++)
		close(gc.dirs[i].fd);
	for (size_t i = 0; i < gc.nanchors; i++) {
		free(gc.anchors[i].name);
		free(gc.anchors[i].target);
	}
	free(gc.dirs);
	free(gc.anchors);
	strs_free(&gc.live);
	strs_free(&gc.done);
	return r;
}
