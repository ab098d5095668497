/* SPDX-License-Identifier: MIT */
/*
 * rd_link.h - the links the runtime makes, told apart from every other
 * link (docs/security.md, "Links").  Private.
 *
 * A redirected file is a data file in a data directory and a symbolic link
 * at the path the program asked for (redirect.c).  Anyone can make a link
 * that looks like one, into someone else's data; and a data directory on a
 * volatile mount can vanish and be recreated by another user while the link
 * stays, so that the link now leads into that user's hands.  Whatever
 * follows, removes or moves data because of a link - an annotated open of
 * an existing path, iosig-redirect's unlink, `iosig finalize` - asks
 * rd_link_check() first and acts only on RD_LINK_OWN.
 */
#ifndef IOSIG_RD_LINK_H
#define IOSIG_RD_LINK_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "iosig.h"

/* Most bytes of the original name a data file's name keeps after its
 * "L-<16 hex>-" or "G-<32 hex>-" (redirect.c makes the names). */
#define RD_NAME_BASE_MAX 200

/* What rd_link_check() found. */
enum rd_link_kind {
	RD_LINK_NONE,     /* nothing there, or not a symbolic link */
	RD_LINK_FOREIGN,  /* a symbolic link the runtime did not make for the user: it
			     belongs to someone else, or its target is not an absolute,
			     normalised path ending in a data file's name (L-<16 hex>-NAME,
			     G-<32 hex>-NAME) */
	RD_LINK_STALE,    /* the user's link with a data file's name, whose data cannot be
			     trusted: the directory is missing or fails the checks of a data
			     directory, or the data file is missing, not a regular file or
			     not the user's.  Never to be followed */
	RD_LINK_OWN,      /* the user's link to the user's own data file, in a directory
			     that passes the checks: ddfd and data describe it */
};

/* A link and what rd_link_check() found about it. */
struct rd_link {
	int kind;                         /* enum rd_link_kind */
	int err;                          /* not OWN: a negative errno for callers that
					     report one (-ENOENT: the data is gone, -EPERM,
					     -ELOOP, -EXDEV: it is not the user's) */
	uid_t uid;                        /* the user the link was checked for */
	struct stat link;                 /* the link itself (kind != NONE) */
	char target[PATH_MAX];            /* its target (FOREIGN: "" if unreadable) */
	const char *name;                 /* STALE, OWN: the data file's name, in target */
	const struct iosig_mount *mount;  /* STALE, OWN: the catalog mount of target (or NULL) */
	int ddfd;                         /* OWN: O_RDONLY|O_DIRECTORY descriptor of the data
					     directory, validated; else -1 */
	struct stat data;                 /* OWN: the data file, not followed */
	char why[400];                    /* FOREIGN, STALE: why, in words */
};

/* rd_link_check() flags. */
#define RD_LINK_ANY_USER (1u << 0)   /* when root: check for the link's owner (root's
					`iosig finalize` of a user's link), not for root */

/*
 * Classifies the directory entry `path` (relative to dirfd, not followed)
 * for the effective user - or, with RD_LINK_ANY_USER in a root process, for
 * the user owning the link - and fills *ret.  RD_LINK_OWN exactly when:
 *   - `path` is a symbolic link owned by that user;
 *   - its target is an absolute path without "." or ".." components whose
 *     last component is a data file's name (L-<16 hex>-NAME, G-<32 hex>-NAME);
 *   - the directory of the target lies on a mount of `cat` and passes the
 *     checks of a new data directory for that user (cat_datadir_open_existing:
 *     walked with O_NOFOLLOW from the mount point, every directory root's or
 *     the user's and sticky if others may write it, all on that filesystem,
 *     the directory itself the user's and not writable by group or others);
 *   - in it the data file's name is a regular file of that user (not followed).
 * Then ret->ddfd is the validated data directory: open the data through it
 * (openat(ddfd, name, ...|O_NOFOLLOW)), never through the link.  Returns
 * ret->kind; release with rd_link_release().  Makes nothing, changes nothing.
 */
int rd_link_check(const struct iosig_catalog *cat, int dirfd, const char *path, unsigned flags,
		  struct rd_link *ret);

/* Closes ret->ddfd.  Accepts a link of any kind, and one released before. */
void rd_link_release(struct rd_link *link);

/*
 * For an RD_LINK_OWN link found at `path`: true when removing the link may
 * remove the data file with it - the data file has no other hard link, and
 * its name records the last component of `path` (the runtime names a data
 * file after the link it makes for it, so a copy of the link or a link
 * renamed since has another name and leaves the data alone).
 */
bool rd_link_sole(const struct rd_link *link, const char *path);

#endif /* IOSIG_RD_LINK_H */
