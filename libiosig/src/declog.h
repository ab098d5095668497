/* SPDX-License-Identifier: MIT */
/*
 * declog.h - the decision log (IOSIG_LOG): one JSON object per line, one
 * record per decision, each written with a single write(2) on an O_APPEND
 * descriptor so that records of concurrent processes never interleave.
 * Private; the format is documented in docs/runtime.md.
 */
#ifndef IOSIG_DECLOG_H
#define IOSIG_DECLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "iosig.h"

/* Everything one decision record says; NULL / 0 members are written as
 * null or left out as documented per member. */
struct declog_rec {
	const struct iosig_site *site;        /* the call site; NULL for iosig-redirect rules */
	const char *call;                     /* entry point: "open", "fopen", "prepare" ... */
	const char *path;                     /* path as the program gave it */
	int dirfd;                            /* openat's dirfd (AT_FDCWD otherwise) */
	const char *abs_path;                 /* absolute path of the file, NULL if not resolved */
	int flags;                            /* open(2) flags of the call */
	mode_t mode;                          /* creation mode of the call */
	const char *fmode;                    /* fopen mode string, NULL for open-like calls */
	const double *values;                 /* run-time values received */
	unsigned nvalues;
	const struct iosig_sig *sig;          /* evaluated signature, NULL if none */
	const struct iosig_candidate *cands;  /* every candidate with its verdict, may be NULL */
	size_t ncands;
	const struct iosig_mount *chosen;     /* the selected mount, NULL if none */
	double throughput;                    /* predicted bytes/s of the chosen mount */
	const char *job;                      /* job identity used for a global name, NULL if none */
	const char *action;                   /* what happened, see docs/runtime.md */
	const char *data_path;                /* where the data went, NULL if not redirected */
	const char *reason;                   /* why it fell back / was refused, NULL if not */
	const char *stale_link;               /* a stale link the call replaced or refused to
						 follow: "target: why", NULL if none */
	int result;                           /* returned descriptor (fileno for streams) or -1 */
	int err;                              /* errno of a failed result, else 0 */
	double elapsed;                       /* seconds spent inside libiosig for this call */
};

/*
 * Opens the log file `path` for appending the way the runtime does, safe
 * in a directory other users may write (docs/security.md): never following
 * a symbolic link (O_NOFOLLOW), never waiting (O_NONBLOCK: a FIFO without a
 * reader fails at once); what it opens must be a regular file of the
 * effective user with one link, and when nothing is there it is created
 * exclusively, mode 0600.  0 with an O_WRONLY|O_APPEND|O_CLOEXEC descriptor
 * in *ret_fd, or -errno with the reason in why ("a FIFO, not a regular
 * file", "belongs to uid 1002, not to uid 1001" ...).
 */
int declog_open(const char *path, int *ret_fd, char *why, size_t wsize);

/* True when IOSIG_LOG asks for a log (so callers can skip building records). */
bool declog_enabled(void);

/* Writes one decision record.  Never fails the caller: a log that cannot
 * be written is skipped.  Preserves errno. */
void declog_decision(const struct declog_rec *rec);

/* Writes one record of another kind: event is "warning" or "jobwide";
 * `site` may be NULL; `sig` (may be NULL) is written as "evaluated". */
void declog_event(const char *event, const struct iosig_site *site, const char *msg,
		  const struct iosig_sig *sig);

/* Closes the log descriptor the runtime opened (tests, env reload). */
void declog_reset(void);

/* "O_WRONLY|O_CREAT|O_TRUNC" for open(2) flags.  Returns buf. */
char *declog_flags(int flags, char *buf, size_t size);

#endif /* IOSIG_DECLOG_H */
