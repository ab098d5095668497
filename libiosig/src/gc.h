/* SPDX-License-Identifier: MIT */
/*
 * gc.h - freeing data files whose link is gone (`iosig gc`; the daemon
 * will call gc_run() periodically).  Private.
 *
 * A program without libiosig that removes a redirected file (rm, a test
 * suite's cleanup, gzip -d run plainly) removes the link and leaves the data
 * file in its data directory, where nothing else would ever free it.  Every
 * link the runtime makes has an anchor (rd_link.h): a second name of the
 * same symbolic-link inode in anchors/ of the user's data directory on the
 * link's filesystem.  While any name of the link exists on that filesystem -
 * wherever a program moved it - the anchor's link count is at least 2; when
 * it is 1, every name is gone and the data file is an orphan.
 *
 * Contract of gc_run(), for the calling user (the effective uid) and the
 * catalog given (the one the programs used: the same configuration and
 * environment, since they decide where the data directories are):
 *   - it frees a data file only when an anchor names it, that anchor's
 *     link count is 1, no other anchor of a live link names it, the anchor
 *     passes rd_link_check() (the user's link, to a regular file of the
 *     user with one hard link, in a data directory that passes the checks of
 *     a data directory), and the file is still the one checked; the data
 *     file goes first, then the anchor;
 *   - it never follows a link, never touches a file or directory of another
 *     user, and changes nothing outside the user's data and anchors
 *     directories;
 *   - it removes an anchor whose data file is already gone (and changes
 *     nothing else about it);
 *   - a data file without an anchor (made before anchors, or whose link is
 *     on a filesystem without a data directory) is never freed: whether a
 *     link to it exists cannot be known;
 *   - it is safe to run while programs run and while other gc_run() calls
 *     run: the decision to free is taken under an exclusive lock of the
 *     anchors directory (rd_anchor_lock()), which a redirection that reuses
 *     a global data file holds shared, and a file freed by someone else
 *     meanwhile is simply gone;
 *   - it does not read the environment and prints nothing.
 * What it cannot see: a link moved to another filesystem by a program
 * without libiosig is a copy there (a new inode); once the original is gone,
 * its data is an orphan (docs/runtime.md, "Anchors").
 */
#ifndef IOSIG_GC_H
#define IOSIG_GC_H

#include <stddef.h>
#include <stdint.h>

#include "iosig.h"

/* What gc_run() did (or, with GC_DRY_RUN, would do) with one data file or
 * one anchor. */
enum gc_action {
	GC_FREED,        /* an orphan: data file and anchor removed */
	GC_LIVE,         /* a name of its link exists somewhere: kept */
	GC_UNANCHORED,   /* no anchor names it: kept (a link may exist) */
	GC_DROPPED,      /* an anchor whose data file is gone: the anchor removed */
	GC_KEPT,         /* an orphan that may not be freed: kept, `why` says why */
	GC_FAILED,       /* a system call failed; nothing was lost */
};

/* Name of an action for output ("freed", "live", "unanchored", "dropped",
 * "kept", "failed"). */
const char *gc_action_name(enum gc_action action);

/* One data file, or one anchor, as gc_run() reports it. */
struct gc_entry {
	int action;                      /* enum gc_action */
	const char *data_path;           /* the data file (DROPPED: where it was) */
	const char *anchor_path;         /* its anchor, NULL if it has none */
	const struct iosig_mount *mount; /* the catalog mount of the data file */
	uint64_t size;                   /* the data file's size (0 if gone) */
	uint64_t bytes;                  /* the space it takes (st_blocks * 512) */
	const char *why;                 /* KEPT, FAILED: why; else NULL */
};

/* What gc_run() counted. */
struct gc_stats {
	unsigned long files;       /* data files looked at */
	unsigned long freed;       /* GC_FREED (dry run: would be) */
	unsigned long live;        /* GC_LIVE */
	unsigned long unanchored;  /* GC_UNANCHORED */
	unsigned long dropped;     /* GC_DROPPED */
	unsigned long kept;        /* GC_KEPT */
	unsigned long failed;      /* GC_FAILED */
	uint64_t freed_bytes;      /* space of the freed files (st_blocks * 512) */
};

/* gc_run() flags. */
#define GC_DRY_RUN (1u << 0)   /* decide and report, change nothing */

/* Called for every data file and every anchor dropped; e and its strings
 * are valid during the call only. */
typedef void (*gc_report_fn)(const struct gc_entry *e, void *arg);

/*
 * Frees the calling user's orphaned data files (see the contract above) in
 * the data directories of `mounts` (nmounts catalog mounts of `cat`; all
 * mounts of `cat` when nmounts is 0), looking for anchors on every mount of
 * `cat`.  Calls report (if not NULL) once per data file and per dropped
 * anchor, and fills *ret_stats.  Returns 0, or -errno when it could not run
 * at all (-ENOMEM); failures on single files are GC_FAILED entries.
 */
int gc_run(const struct iosig_catalog *cat, const struct iosig_mount *const *mounts,
	   size_t nmounts, unsigned flags, gc_report_fn report, void *arg,
	   struct gc_stats *ret_stats);

#endif /* IOSIG_GC_H */
