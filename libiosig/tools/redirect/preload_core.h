/* SPDX-License-Identifier: MIT */
/*
 * preload_core.h - the interface between the two halves of iosig-redirect's
 * LD_PRELOAD library:
 *
 *   libiosig-preload.so       loaded into every program: the interposers
 *                             of the opens and of the I/O calls (the latter
 *                             interpose.c's, with its table of tagged
 *                             descriptors), the rules and the matcher
 *                             (rules.c, the signature parser), nothing but
 *                             libc;
 *   libiosig-preload-core.so  loaded by the first call that matches a rule
 *                             (dlopen, from the directory of the first):
 *                             libiosig's runtime with the catalog, libmount
 *                             and libyaml, and the daemon client.
 *
 * Only the core tags descriptors (it fills the front's table through the
 * host functions it gets at load), so the front knows which descriptors
 * are tagged without loading anything: a program whose opens match no
 * rule has an empty table, and each of its I/O calls costs one lookup.
 *
 * A program whose opens match no rule never loads the core.  The core
 * exports one object, `pl_core`, with the version of this interface.
 */
#ifndef IOSIG_PRELOAD_CORE_H
#define IOSIG_PRELOAD_CORE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "client.h"
#include "links.h"
#include "rd_link.h"
#include "redirect.h"
#include "rules.h"

/* Bumped whenever struct pl_core_ops or struct pl_linked changes. */
#define PL_CORE_VERSION 6

/* A link about to be removed that claims to be one the runtime made. */
struct pl_linked {
	struct rd_link_removal rm;        /* rd_link_removal_begin() of the path */
	char abs[PATH_MAX];               /* absolute path of the link, for the log */
};

/* What the core does for the front; every call runs with the front's
 * re-entrancy flag raised, so the core's own opens reach libc. */
struct pl_core_ops {
	unsigned version;   /* PL_CORE_VERSION */
	/* rd_openat, rd_fopen, rd_freopen of the runtime */
	int (*openat)(const struct rd_req *req);
	FILE *(*fopen)(const struct rd_req *req, bool large);
	FILE *(*freopen)(const struct rd_req *req, FILE *stream, bool large);
	/* Before an unlink: true if `path` (relative to dirfd) is the user's
	 * link with a data file's name (rd_link_removal_begin(): RD_LINK_OWN
	 * or RD_LINK_STALE); ld->rm.sole says whether its data may go with
	 * it.  When true, after_unlink() must follow. */
	bool (*find_linked)(int dirfd, const char *path, struct pl_linked *ld);
	/* After the program's unlink of such a link (`unlinked`: it succeeded):
	 * removes the data file when ld->rm.sole (rd_link_removal_end()), logs
	 * what was done ("removed", or "kept" and why) as the rule's decision,
	 * and releases ld. */
	void (*after_unlink)(const struct rules_rule *rule, const char *call, int dirfd,
			     const char *path, struct pl_linked *ld, bool unlinked);
	/* Logs a warning (IOSIG_LOG). */
	void (*warn)(const char *msg);
	/* Before the call a rule matched is redirected: the first time in
	 * the process for that rule, checks that some mount satisfies its
	 * signature (rules_check) and, if none does, says so once on stderr
	 * (unless IOSIG_QUIET) and in the log.  iosig-redirect checks at
	 * start only when asked to (--check, --strict, --config). */
	void (*matched)(const struct rules_rule *rule);
	/* The daemon client (client.h): takes the front's table of tagged
	 * descriptors and returns what the front's interposers call for
	 * them.  The front attaches it when it loads the core, before any
	 * descriptor can be tagged. */
	const struct cl_ops *(*client_attach)(const struct cl_host *host);
	/* What links.c in the front asks about links (links.h). */
	const struct links_ops *links;
};

/* The one symbol libiosig-preload-core.so exports. */
#define PL_CORE_SYMBOL "pl_core"

#endif /* IOSIG_PRELOAD_CORE_H */
