/* SPDX-License-Identifier: MIT */
/*
 * rules.h - the rules of iosig-redirect (docs/redirect.md, iosig-rules(5)):
 * path patterns mapped to signatures, loaded from YAML rules files and
 * `-s 'SIG' PATTERN` arguments, handed to the LD_PRELOAD library through
 * the environment in a compiled form, and matched against the paths a
 * program opens.  Private; symbols are prefixed rules_.
 *
 * Matching (first match wins, in the order the rules were added) is on the
 * absolute, lexically normalised path of the file:
 *   '*'   any run of bytes within one component (never '/')
 *   '?'   one byte other than '/'
 *   [..]  one byte of a set ("[a-z_]", "[!0-9]" or "[^0-9]"), never '/'
 *   '\x'  the byte x literally
 *   '**'  as a whole component: zero or more components; at the end of
 *         a pattern one or more (everything below the directory before it)
 * A pattern matches the whole path; a relative one is taken relative to
 * the working directory of iosig-redirect (a "**" component right after
 * the root matches at any depth).  A leading '.' is not special; matching is
 * byte-wise, independent of the locale.
 */
#ifndef IOSIG_RULES_H
#define IOSIG_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iosig.h"

/* Environment variable carrying the compiled rules to the preload library. */
#define RULES_ENV "IOSIG_REDIRECT_RULES"

/* Set ("1") by iosig-redirect --quiet: the preload library prints no
 * warning either (rules_check at a rule's first match). */
#define RULES_QUIET_ENV "IOSIG_QUIET"

/* Largest compiled form iosig-redirect puts in the environment (the kernel
 * limits one environment string to 128 KiB). */
#define RULES_ENV_MAX (120u * 1024u)

/* Largest rules file read. */
#define RULES_FILE_MAX (1u << 20)

/* Most components a pattern or a matched path may have. */
#define RULES_MAX_COMPONENTS 256

/* One compiled pattern. */
struct rules_pat {
	char *text;              /* normalised, absolute pattern as matched */
	bool literal;            /* no wildcard: plain string comparison */
	size_t prefix_len;       /* text[0..prefix_len) is literal */
	const char *suffix;      /* literal tail of the last component (points into text) */
	size_t suffix_len;
	unsigned ncomp;          /* components */
	uint32_t *comp_off;      /* start of each component in text */
	uint32_t *comp_len;      /* its length */
	bool *comp_globstar;     /* the component is "**" */
};

/* One rule. */
struct rules_rule {
	char *shown;             /* the pattern as the user wrote it (messages) */
	struct rules_pat pat;    /* the pattern */
	struct rules_pat alt;    /* the same with its literal directory's links resolved;
				    alt.text NULL when that gives nothing new */
	bool has_alt;
	char *sigtext;           /* canonical text of the evaluated signature */
	struct iosig_sig sig;    /* the signature */
	char *file;              /* rules file, or "command line" */
	struct iosig_site site;  /* for the decision log: file, line, column, "rule" */
};

/* A named signature of a rules file, where it was defined. */
struct rules_def {
	char name[64];
	char file[256];
	int line, col;
};

/* A set of rules, in matching order. */
struct rules {
	struct rules_rule *r;
	size_t n, cap;
	struct iosig_registry *reg; /* named signatures of the rules files loaded */
	struct rules_def *defs;  /* the same names, with where they were defined */
	size_t ndefs;
	char **notes;            /* warnings for the user (shadowed rules ...) */
	size_t nnotes;
	/* Quick rejection (rules_quick_reject): */
	bool any_suffix_empty;   /* some rule's last component ends in a wildcard */
	uint8_t last_byte[32];   /* bitmap of the last bytes of the rules' suffixes */
};

/* An empty rule set; NULL when out of memory. */
struct rules *rules_new(void);
void rules_free(struct rules *rs);

/*
 * Adds `-s 'SIGTEXT' PATTERN` (the index-th -s of the command line, for
 * messages).  A relative pattern is taken relative to `cwd` (absolute).
 * Names of signatures defined by rules files loaded before are known.
 * -EINVAL with the message in *err (err->column: byte of SIGTEXT, when
 * the signature is wrong; err->file "-s #N").
 */
int rules_add_cli(struct rules *rs, unsigned index, const char *sigtext, const char *pattern,
		  const char *cwd, struct iosig_error *err);

/*
 * Loads a YAML rules file (iosig-rules(5)) and appends its rules.  Relative
 * patterns are taken relative to `cwd`.  -EINVAL with file:line:column in
 * *err for anything wrong in it; -errno when it cannot be read.
 */
int rules_load_file(struct rules *rs, const char *path, const char *cwd,
		    struct iosig_error *err);
/* The same from a buffer; `name` is used in messages. */
int rules_load_buffer(struct rules *rs, const char *name, const char *buf, size_t len,
		      const char *cwd, struct iosig_error *err);

/* For each rule, resolves symbolic links in the literal directory
 * part of its pattern (realpath) and, when that differs, lets the rule
 * match the resolved form too.  Ignores directories that do not exist. */
void rules_resolve_links(struct rules *rs);

/*
 * The compiled form for the environment: a malloc'ed, NUL-terminated
 * string in *ret_text.  0, -ENOMEM.
 */
int rules_encode(const struct rules *rs, char **ret_text);

/*
 * Appends the rules of a compiled form (rules_encode) to rs.  -EINVAL with
 * err->offset at the first byte that is wrong.
 */
int rules_decode(struct rules *rs, const char *text, size_t len, struct iosig_error *err);

/*
 * True if no rule can match a file opened as `path` (the path as the
 * program gave it, relative or not).  Neither allocates nor makes a system
 * call; false means "resolve the path and ask rules_match".
 */
bool rules_quick_reject(const struct rules *rs, const char *path);

/* Where a rule comes from, for messages: "rules.yaml:12:11" or "-s #2". */
void rules_rule_origin(const struct rules_rule *r, char *buf, size_t size);

/*
 * True if some mount of `cat` satisfies r's signature (the selection of
 * libiosig for the rule's pattern); else false with "rule ORIGIN ('PATTERN'):
 * no mount satisfies 'SIG': each candidate mount and why not" in msg
 * (rules_check.c: the runtime's catalog, not for the preload front).
 */
struct iosig_catalog;
bool rules_check(const struct iosig_catalog *cat, const struct rules_rule *r, char *msg,
		 size_t size);

/* The first rule matching `abs` (absolute and normalised), or NULL. */
const struct rules_rule *rules_match(const struct rules *rs, const char *abs);

/* True if the compiled pattern matches `abs` (absolute and normalised). */
bool rules_pat_match(const struct rules_pat *pat, const char *abs);

/*
 * Absolute, lexically normalised path of `path` opened relative to dirfd:
 * as is when absolute, else after the working directory (getcwd) or the
 * directory of dirfd (/proc/self/fd).  No allocation.  0, -ENOENT when the
 * directory cannot be named, -ENAMETOOLONG.
 */
int rules_abs_path(int dirfd, const char *path, char *buf, size_t size);

/* The two halves of rules_abs_path(): the absolute directory of dirfd
 * (getcwd for AT_FDCWD, else /proc/self/fd; -ENOENT when it has no name),
 * and the normalised join of an absolute directory with a path. */
int rules_dir_path(int dirfd, char *buf, size_t size);
int rules_abs_join(const char *dir, const char *path, char *buf, size_t size);

#endif /* IOSIG_RULES_H */
