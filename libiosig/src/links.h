/* SPDX-License-Identifier: MIT */
/*
 * links.h - inside a process that runs libiosig, a link the runtime made
 * for this user behaves like the regular file it stands for
 * (docs/runtime.md, "What a program can notice").  Private.
 *
 * Two halves:
 *   links.c      the interposers of libc's calls that look at a link itself
 *                rather than follow it (lstat, fstatat and statx with
 *                AT_SYMLINK_NOFOLLOW, open with O_NOFOLLOW, readlink,
 *                unlink, rename, lchmod, utimensat ...).  Each calls the next
 *                definition first and looks further only when the result
 *                is a symbolic link that could be one of the runtime's;
 *                nothing but libc, so that iosig-redirect's preload front
 *                can hold them too.
 *   links_ops.c  what they ask of the runtime once they met such a link
 *                (struct links_ops): rd_link_check() on the process-wide
 *                catalog, and the data file through its checked directory.
 * libiosig.so holds both; the preload front holds links.c and reaches
 * links_ops.c in its core (preload_core.h), loaded by the first link that
 * needs it.
 */
#ifndef IOSIG_LINKS_H
#define IOSIG_LINKS_H

#include <stdbool.h>

#include "rd_link.h"

/* Bumped whenever struct links_ops changes. */
#define LINKS_OPS_VERSION 1

/* A function run on a data file: ddfd is its validated data directory,
 * name its name there.  Returns what the interposed call returns (0 or
 * -errno). */
typedef int (*links_data_fn)(int ddfd, const char *name, void *arg);

/*
 * What the interposers ask of the runtime.  The caller raises its guard
 * (real_enter()) around every hook, so that the runtime's own calls reach
 * libc: in the preload front that is the front's guard, which the core's
 * copy of realfn.c is not.  The hooks act only on the user's own links with
 * checked data (rd_link_check(): RD_LINK_OWN); a link of anyone else, a
 * stale one, or any link under IOSIG_DISABLE is left to the plain call
 * (*ret_own false).
 */
struct links_ops {
	unsigned version;   /* LINKS_OPS_VERSION */
	/*
	 * The entry `path` (relative to dirfd) is a symbolic link: if it is
	 * the user's own, calls fn on its data file (fn may be NULL: only
	 * ask) and returns fn's result with *ret_own set.  Else returns 0
	 * and leaves *ret_own false.
	 */
	int (*at_data)(int dirfd, const char *path, links_data_fn fn, void *arg, bool *ret_own);
	/*
	 * open(2) of the user's own link `path` with `flags` (those of a call
	 * that refused the link: O_NOFOLLOW): opens its data file through
	 * its checked directory, without O_CREAT and O_EXCL (it exists), and
	 * returns the descriptor - the lowest free number, FD_CLOEXEC only if
	 * asked - or -errno, with *ret_own set.  Else returns 0 and leaves
	 * *ret_own false.
	 */
	int (*open)(int dirfd, const char *path, int flags, bool *ret_own);
	/* rd_link_removal_begin() / rd_link_removal_end() on the process-wide
	 * catalog: a link about to be removed or replaced, and its data. */
	bool (*removal_begin)(int dirfd, const char *path, struct rd_link_removal *ret);
	int (*removal_end)(struct rd_link_removal *r, bool removed, const char **ret_why);
};

/* The runtime's side, in libiosig.so and in the preload's core. */
extern const struct links_ops links_ops;

/* ------------------------------------------------------------------------
 * links.c, for the preload front's own open and unlink interposers
 * (preload.c), which links.c leaves to it there (IOSIG_PRELOAD_FRONT)
 * ---------------------------------------------------------------------- */

/*
 * After an open-like call of dirfd/path with `flags` that returned fd
 * (errno as it left it; `saved`: errno before the call): when it refused a
 * link because of O_NOFOLLOW (ELOOP) and the link is the user's own, the
 * descriptor of its data file instead, with errno back to `saved`.
 * Otherwise fd, with errno untouched.
 */
int links_open_result(int fd, int saved, int dirfd, const char *path, int flags);

/* The removing calls. */
enum links_rm_call { LINKS_UNLINK, LINKS_UNLINKAT, LINKS_REMOVE };

/*
 * unlink(path), unlinkat(dirfd, path, flags) or remove(path), made through
 * the next definition; when the name was the user's own link and the only
 * name of it, its data file and anchor are removed after it.
 */
int links_remove(enum links_rm_call call, int dirfd, const char *path, int flags);

/* The runtime's side as the front finds it (its core's links_ops), or
 * NULL when the core cannot be loaded; defined by preload.c. */
const struct links_ops *links_backend(void);

#endif /* IOSIG_LINKS_H */
