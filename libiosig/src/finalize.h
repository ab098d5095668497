/* SPDX-License-Identifier: MIT */
/*
 * finalize.h - moving redirected data back to where the program asked for
 * it (`iosig finalize`, later `iosig-redirect finalize`).  Private.
 */
#ifndef IOSIG_FINALIZE_H
#define IOSIG_FINALIZE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "iosig.h"

/* What fin_path() did (or, with FIN_DRY_RUN, would do). */
enum fin_action {
	FIN_MOVED,      /* renamed back within one filesystem */
	FIN_COPIED,     /* copied back across filesystems, data file removed */
	FIN_ALREADY,    /* PATH is not a link: nothing to do (idempotence) */
	FIN_REFUSED,    /* a link iosig did not make, or a target that is not ours */
	FIN_FAILED,     /* a system call failed; nothing was lost */
};

/* Flags for fin_path(). */
#define FIN_DRY_RUN (1u << 0)   /* decide and report, change nothing */

/* The report of one path, always filled (like struct iosig_error). */
struct fin_report {
	int action;                 /* enum fin_action */
	bool dry_run;               /* nothing was changed */
	char target[PATH_MAX];      /* where the link pointed, "" if PATH is no link */
	uint64_t bytes;             /* size of the data */
	char msg[600];              /* what happened, or why not and what to do */
};

/* Name of an action for output ("moved", "copied", "already", "refused",
 * "failed"). */
const char *fin_action_name(enum fin_action action);

/*
 * Moves the data of the iosig link at `path` (relative to dirfd) back to
 * `path` and removes the link.  The link must be one the runtime made for
 * the calling user - for root, for the link's owner - to that user's own
 * data file (rd_link_check() with RD_LINK_ANY_USER says RD_LINK_OWN: the
 * data directory on a mount of `catalog`, passing the checks of a data
 * directory).  Same filesystem:
 * exchange the data file with the link (renameat2 RENAME_EXCHANGE), check
 * what came back is our link, remove it.  Across filesystems: copy to a
 * temporary file next to `path`, restore owner, mode and times, fsync,
 * exchange it with the link, fsync the directory, then remove the data
 * file.  A crash at any moment leaves either the link and its data, or the
 * data at `path` (see docs/runtime.md for what may remain behind).
 * Returns 0 (moved, copied, already in place), or a negative errno with
 * report->action FIN_REFUSED or FIN_FAILED; report->msg says what happened.
 */
int fin_path(const struct iosig_catalog *catalog, int dirfd, const char *path, unsigned flags,
	     struct fin_report *report);

#endif /* IOSIG_FINALIZE_H */
