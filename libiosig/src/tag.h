/* SPDX-License-Identifier: MIT */
/*
 * tag.h - the fd tagging table (docs/design.md §5.5): for each descriptor an
 * annotated call returned, the signature, the mount the data lives on and
 * the original path.  Private.
 *
 * The table only knows what the runtime opened: it does not see close(2),
 * dup(2) or descriptors inherited across exec.  Every descriptor an entry
 * point returns overwrites the slot of its number, so a number reused by a
 * later annotated call is always right.  A number the program closed and
 * reused through a plain call still carries the old tag; tag_get() with
 * TAG_VERIFY detects that by comparing the file's identity (st_dev,
 * st_ino) and drops the stale tag.  Duplicates made with dup/dup2/fcntl are
 * not tagged.  Descriptors >= TAG_MAX_FD are never tagged.
 */
#ifndef IOSIG_TAG_H
#define IOSIG_TAG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "iosig.h"

#include "fdtab.h"

#define TAG_MAX_FD ((int)FDTAB_MAX)   /* descriptors below 1M can be tagged */

/* What the runtime knows about one annotated descriptor. */
struct tag_info {
	struct iosig_sig sig;              /* evaluated signature */
	const struct iosig_mount *mount;   /* mount the data was placed on; NULL when
					      not decided (existing path, dry run) */
	bool redirected;                   /* data lives at data_path, a link at orig_path */
	uint64_t dev;                      /* st_dev of the open file */
	uint64_t ino;                      /* st_ino of the open file */
	char orig_path[PATH_MAX];          /* path the program asked for (absolute if known) */
	char data_path[PATH_MAX];          /* where the data is, "" if not redirected */
};

/* Flags for tag_get(). */
#define TAG_VERIFY (1u << 0)  /* fstat the descriptor; drop the tag if it is stale */

/* True if `fd` carries a tag.  Two atomic loads; no lock, no system call. */
bool tag_lookup(int fd);

/*
 * Tags `fd` (replacing any previous tag) with the signature, the mount the
 * data was placed on (may be NULL), the original path and the data path
 * (NULL when not redirected); the file's identity is taken with fstat.
 * 0, -EBADF for a descriptor outside the table or not open, -ENOMEM.
 */
int tag_set(int fd, const struct iosig_sig *sig, const struct iosig_mount *mount,
	    const char *orig_path, const char *data_path);

/* Copies the tag of `fd` into *ret_info.  0, or -ENOENT when untagged,
 * -ESTALE (and the tag is dropped) when TAG_VERIFY finds another file. */
int tag_get(int fd, unsigned flags, struct tag_info *ret_info);

/* Drops the tag of `fd` if any.  Allocates nothing. */
void tag_clear(int fd);

/* Drops every tag (tests). */
void tag_clear_all(void);

#endif /* IOSIG_TAG_H */
