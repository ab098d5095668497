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

/* ------------------------------------------------------------------------
 * Anchors
 *
 * The runtime gives each link it makes a second name: a hard link of the
 * same symbolic-link inode, named after the data file, in RD_ANCHOR_DIR of
 * the user's data directory on the link's own filesystem (the catalog mount
 * of that filesystem that has a data directory).  The anchor
 *   - tells the runtime's link from a copy of it (cp -P, tar: another inode
 *     with the same target), which must not take the data with it;
 *   - follows the link wherever a program renames it on its filesystem (the
 *     inode stays the same), so a renamed link still frees its data;
 *   - says whether any name of the link is left, whichever program removed
 *     the others: a link count of 1 means only the anchor remains, and the
 *     data file is an orphan (gc.h).
 * A filesystem without a data directory (ignored by the configuration, read
 * only, none the user may create) gets no anchors: its links fall back to
 * the name rule of rd_link_removal_begin() and are never collected.
 * ---------------------------------------------------------------------- */

/* The directory of anchors inside a data directory. */
#define RD_ANCHOR_DIR "anchors"

/* The catalog mount that holds the anchors of links on filesystem `dev`:
 * an eligible mount of it with a data directory, else any with one; NULL
 * when none has. */
const struct iosig_mount *rd_anchor_mount(const struct iosig_catalog *cat, dev_t dev);

/*
 * Opens RD_ANCHOR_DIR in the validated data directory ddfd (O_RDONLY|
 * O_DIRECTORY, never following a link), creating it 0700 when `create` and
 * it is missing.  It must be a directory of the effective user that nobody
 * else may write.  0 with the descriptor in *ret_fd, or -errno (-ENOENT:
 * missing and not created, -EPERM: not the user's or writable by others).
 */
int rd_anchor_dir_at(int ddfd, bool create, int *ret_fd);

/*
 * Gives the link `base` in directory pfd, just made to the data file
 * `name`, its anchor: linkat() of the link itself as `name` in the anchors
 * directory afd, then checked to be the same inode (something else may have
 * been put at `base` meanwhile: then the anchor is removed).  An anchor of
 * that name that no link shares any more (link count 1: a global file's
 * earlier link, removed by a program without libiosig) is replaced.  0, or
 * -errno and no anchor (-EXDEV: the path's directory is on another mount
 * than the anchors, such as a bind mount).
 */
int rd_anchor_make(int pfd, const char *base, int afd, const char *name);

/*
 * Takes a lock on the anchors directory afd through a descriptor of its own
 * (flock(2): LOCK_EX for gc while it decides and frees, LOCK_SH for a
 * redirection that may reuse an existing global data file), so that gc
 * never frees a data file that is being linked anew.  Returns the lock's
 * descriptor (close it to unlock), or -errno.
 */
int rd_anchor_lock(int afd, bool exclusive);

/* Where the anchor of a link stands (struct rd_link_removal). */
enum rd_anchor_state {
	RD_ANCHOR_NONE,    /* no anchor named after its data file (made before
			      anchors existed, or where none could be made) */
	RD_ANCHOR_THIS,    /* the anchor is this link's inode */
	RD_ANCHOR_OTHER,   /* the anchor is another inode: this link is a copy */
};

/*
 * Looks for the anchor of the RD_LINK_OWN link `link`: an entry named after
 * its data file in the anchors directory of the link's filesystem (for the
 * effective user; none is looked for a root's check of another user's
 * link).  Returns an enum rd_anchor_state; for RD_ANCHOR_THIS the anchors
 * directory's descriptor goes to *ret_afd (the caller closes it), else
 * *ret_afd is -1.
 */
int rd_link_anchor(const struct iosig_catalog *cat, const struct rd_link *link, int *ret_afd);

/* ------------------------------------------------------------------------
 * Removing a link, and its data with it
 * ---------------------------------------------------------------------- */

/* A link about to be removed (unlink, remove, or replaced by a rename) that
 * rd_link_check() found to be the user's: RD_LINK_OWN or RD_LINK_STALE. */
struct rd_link_removal {
	struct rd_link link;   /* rd_link_check() of the path */
	int anchor;            /* enum rd_anchor_state (OWN) */
	int afd;               /* RD_ANCHOR_THIS: the anchors directory, else -1 */
	bool sole;             /* the data goes with the link (rd_link_removal_begin) */
	char why[200];         /* not sole: why the data stays */
};

/*
 * Before removing the entry `path` (relative to dirfd): true, with *ret
 * filled, when it is the user's link with a data file's name (OWN or
 * STALE); rd_link_removal_end() must then follow.  False, with nothing to
 * release, for anything else.  ret->sole says whether removing the link
 * removes its data: the link is RD_LINK_OWN, its data file has no other
 * hard link, and
 *   - anchored (RD_ANCHOR_THIS): the link has no name but this one and its
 *     anchor (link count 2) - wherever it was renamed to;
 *   - not anchored (RD_ANCHOR_NONE): the link has one name, and the data
 *     file's name records the last component of `path` (the runtime names a
 *     data file after the link it makes, so a copy of the link or a link
 *     renamed since has another name and leaves the data alone);
 *   - never for a copy of an anchored link (RD_ANCHOR_OTHER).
 */
bool rd_link_removal_begin(const struct iosig_catalog *cat, int dirfd, const char *path,
			   struct rd_link_removal *ret);

/*
 * After the removal of the link (`removed`: it succeeded): when it was sole,
 * removes the data file - the one rd_link_check() validated, through its
 * validated directory, if it is still the same file - and then its anchor.
 * Returns 0 when the data file was removed, else -errno with the reason in
 * *ret_why (not removed; STALE: the check's reason; not sole: ret->why; the
 * data file changed meanwhile; the unlink's error).  Releases r.
 */
int rd_link_removal_end(struct rd_link_removal *r, bool removed, const char **ret_why);

#endif /* IOSIG_RD_LINK_H */
