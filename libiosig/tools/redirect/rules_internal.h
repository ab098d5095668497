/* SPDX-License-Identifier: MIT */
/*
 * rules_internal.h - what rules.c shares with rules_file.c (the YAML
 * loader).  Private.
 */
#ifndef IOSIG_RULES_INTERNAL_H
#define IOSIG_RULES_INTERNAL_H

#include <stddef.h>

#include "rules.h"

/* Where a rule or signature comes from, for messages and the log. */
struct rules_origin {
	const char *file;   /* rules file or "-s #N" */
	int line, col;      /* 1-based, 0 when not applicable */
};

/* Records a warning for the user in rs->notes; dropped when out of memory. */
void rules_note(struct rules *rs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fills *err (if not NULL): file, line, column and a printf message. */
void rules_error(struct iosig_error *err, const char *file, int line, int col, const char *fmt,
		 ...) __attribute__((format(printf, 5, 6)));

/*
 * Turns a pattern as the user wrote it into its normalised absolute form
 * (malloc'ed in *ret_text): "~/" is $HOME, relative is against cwd, a
 * trailing '/' is everything below, "//", "." and ".." are removed.
 * -EINVAL / -ENAMETOOLONG / -ENOMEM with the reason in why.
 */
int rules_pat_normalise(const char *in, const char *cwd, char **ret_text, char *why,
			size_t wsize);

/*
 * Evaluates a rule's signature text with the named signatures of rs->reg
 * (a leading "jobwide" is refused).  -EINVAL / -ERANGE / -ENOENT with *err
 * positioned within text.
 */
int rules_sig_eval(struct rules *rs, const char *text, struct iosig_sig *ret_sig,
		   struct iosig_error *err);

/*
 * Appends a rule: pattern `shown` as written, its normalised form, the
 * evaluated signature and where it comes from.  -EINVAL with the reason in
 * why (pattern errors), -ENOMEM.
 */
int rules_append(struct rules *rs, const char *shown, const char *normalised,
		 const struct iosig_sig *sig, const struct rules_origin *o, char *why, size_t wsize);

/* Removes the rules from index n on (a file that failed loads nothing). */
void rules_drop(struct rules *rs, size_t n);

#endif /* IOSIG_RULES_INTERNAL_H */
