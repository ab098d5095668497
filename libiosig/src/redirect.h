/* SPDX-License-Identifier: MIT */
/*
 * redirect.h - the create-elsewhere-and-link mechanism behind the
 * compiler-generated entry points (iosig_open ... iosig_prepare), with an
 * interface iosig-redirect can drive with signatures from its own rules.
 * Private.
 */
#ifndef IOSIG_REDIRECT_H
#define IOSIG_REDIRECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "iosig.h"

/* Most run-time values one site may pass; a site with more is ignored
 * (logged) and its calls stay plain. */
#define RD_MAX_VALUES 64

/* STRICT mode: errno of an annotated call when no mount satisfies the
 * signature ("no such device": no storage here can hold this file). */
#define RD_STRICT_ERRNO ENODEV

/* One annotated open, from a compiler-generated site or an iosig-redirect rule. */
struct rd_req {
	const struct iosig_site *site;   /* call site, or NULL for a rule */
	const struct iosig_sig *sig;     /* evaluated signature (rules); NULL: evaluate site */
	const char *call;                /* entry point for the log: "open", "fopen" ... */
	int dirfd;                       /* AT_FDCWD or openat's directory descriptor */
	const char *path;                /* as the program gave it */
	int flags;                       /* open(2) flags of the intended open */
	mode_t mode;                     /* creation mode (before umask) */
	const char *fmode;               /* fopen/freopen mode for the log, else NULL */
	const double *values;            /* the site's run-time values */
	unsigned nvalues;
	bool nofollow_ok;                /* redirect O_NOFOLLOW creations too (iosig-redirect
					    rules): the link is made with symlinkat, which never
					    follows, and the plain call keeps O_NOFOLLOW */
	bool link_only;                  /* make the link but not the data file: a declared
					    opener creates it (iosig_opener_begin) */
};

/*
 * open(2) semantics for an annotated call: decides, and when the file is to
 * be created elsewhere creates it there, links it at req->path and returns
 * the descriptor; otherwise (and on any internal failure) returns what
 * openat(req->dirfd, req->path, req->flags, req->mode) returns, errno
 * included.  Tags the descriptor and logs the decision.
 */
int rd_openat(const struct rd_req *req);

/*
 * fopen(3) / fopen64(3) semantics for an annotated call: req->fmode is the
 * mode, req->flags and req->mode are derived from it (req->dirfd is
 * ignored: streams open relative to the working directory).  Returns what
 * the plain call returns, errno included.
 */
FILE *rd_fopen(const struct rd_req *req, bool large);

/* freopen(3) / freopen64(3) semantics, the same way. */
FILE *rd_freopen(const struct rd_req *req, FILE *stream, bool large);

/* What rd_prepare() decided, for tools that report it. */
struct rd_result {
	const char *action;                /* as in the decision log: "prepared",
					      "existing", "direct", "dryrun", "fallback",
					      "strict", "plain", "ignored" */
	const struct iosig_mount *chosen;  /* selected mount (process-wide catalog), or NULL */
	char data_path[PATH_MAX];          /* where the data file is, "" if none was made */
	char reason[480];                  /* why nothing was made, "" if not known */
};

/*
 * The prepare half of a redirect (iosig_prepare, `iosig-redirect prepare`):
 * the same decision, and when the file is to be created elsewhere, create
 * the empty data file and the link and open nothing for the caller.  0 when
 * done or when nothing was to be done (path exists, same filesystem, dry
 * run, disabled), -RD_STRICT_ERRNO in strict mode when no mount qualifies,
 * else the negative errno of the internal step that failed.  When
 * ret_result is not NULL it receives what was decided.
 */
int rd_prepare(const struct rd_req *req, struct rd_result *ret_result);

/*
 * The stream's own open after rd_prepare() (a C++ stream: libstdc++ opens
 * with fopen64): libiosig.so's fopen/fopen64 interposers call
 * rd_prepared_fopen() while rd_prepared_pending().  It opens with open_fn
 * (libc's) and, when path is the one this thread prepared last, tags the
 * stream and hands it to iosigd as an annotated fopen would (stream.h).
 * Either way the thread's prepared decision is used up.
 */
bool rd_prepared_pending(void);
FILE *rd_prepared_fopen(const char *path, const char *mode,
			FILE *(*open_fn)(const char *, const char *));

/*
 * Splits `path` into its directory (copied into dir; "." when none) and last
 * component (pointing into path).  False for paths that cannot name a
 * regular file to create: empty, a trailing slash, "." or "..", a
 * component longer than NAME_MAX.
 */
bool rd_path_split(const char *path, char *dir, size_t size, const char **ret_base);

/*
 * Lexically normalises the absolute path `in` into out: repeated '/', "."
 * components and ".." (with the component before it) removed, no trailing
 * '/' except for "/" itself.  Links are not resolved.  0, -EINVAL if `in`
 * is not absolute, -ENAMETOOLONG if out is too small.
 */
int rd_path_normalise(const char *in, char *out, size_t size);

/*
 * Length of the prefix of a data file's name before the original name
 * ("L-<16 hex>-", "G-<32 hex>-"; redirect.c makes the names), or 0 when
 * `name` is not a data file's name.
 */
size_t rd_data_name_prefix(const char *name);

/*
 * True if `target` (a link's target) could be a data file of the runtime:
 * an absolute path whose last component is a data file's name.  A cheap
 * test on the string alone, to let other links pass without building a
 * catalog; rd_link_check() decides.
 */
bool rd_data_target(const char *target);

/*
 * Fault injection for tests: when set, called between the creation of the
 * data file and the symlinkat at the original name (dirfd, name, the link's
 * target), to make what another process could do in that window happen
 * deterministically.  NULL in normal operation.
 */
extern void (*rd_fault_before_link)(int dirfd, const char *name, const char *target);

/* Forgets cached signatures and data-directory descriptors (tests). */
void rd_reset(void);

#endif /* IOSIG_REDIRECT_H */
