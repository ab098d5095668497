/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the modes of iosig-redirect share (running a program,
 * prepare, finalize): exit codes, the options that build the rules and
 * the environment of the runtime, and the check of every rule against the
 * catalog before anything runs.
 */
#ifndef IOSIG_REDIRECT_CLI_H
#define IOSIG_REDIRECT_CLI_H

#include <limits.h>
#include <stdbool.h>

#include "rules.h"

/* Exit codes, as env(1) has them. */
#define RX_OK 0
#define RX_FAIL 1          /* prepare/finalize: a path could not be handled */
#define RX_OWN 125         /* iosig-redirect's own error: options, rules, catalog */
#define RX_CANNOT_RUN 126  /* PROGRAM was found but cannot be executed */
#define RX_NOT_FOUND 127   /* PROGRAM was not found */

/* Environment variable overriding where the preload library is. */
#define RX_PRELOAD_ENV "IOSIG_PRELOAD"

/* The options every mode takes, and what they built. */
struct cli {
	const char *mode;        /* NULL (running a program), "prepare", "finalize" */
	struct rules *rs;        /* rules of -s and -r, in command-line order */
	unsigned nsig;           /* -s given so far */
	unsigned nfiles;         /* -r given so far */
	size_t own_rules;        /* rules of this invocation (before inherited ones) */
	char cwd[PATH_MAX];      /* working directory: base of relative patterns; "" when
				    it has no name (then they are errors) */
	const char *config;      /* --config */
	const char *log;         /* --log */
	bool dry_run;            /* -n, --dry-run */
	bool strict;             /* --strict */
	bool check;              /* --check */
	bool quiet;              /* -q, --quiet */
};

/* "iosig-redirect[ MODE]: " + message on stderr. */
void cli_err(const struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with "warning: " (nothing with --quiet). */
void cli_warn(const struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A usage error: message, "Try 'iosig-redirect[ MODE] --help'."; RX_OWN. */
int cli_usage(const struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets up c (getcwd, an empty rule set).  RX_OK, or RX_OWN when out of
 * memory (message printed). */
int cli_init(struct cli *c, const char *mode);
void cli_done(struct cli *c);

/*
 * Consumes the option at argv[*i] if it is one of the shared ones (-s, -r,
 * --config, --log, -n/--dry-run, --strict, --check, -q/--quiet), advancing *i past
 * its arguments.  Returns 1 when consumed, 0 when argv[*i] is not a shared
 * option, or RX_OWN (negated: -RX_OWN) after printing what is wrong.
 */
int cli_option(struct cli *c, int argc, char **argv, int *i);

/*
 * After the options: exports --config/--log/--dry-run/--strict to the
 * environment of the runtime (absolute paths), resolves links in the rules'
 * directories, prints the rules' notes; with --check, --strict, --config
 * or in prepare/finalize, builds the catalog and warns about every rule
 * whose signature no mount satisfies (an error with --strict).
 * RX_OK or RX_OWN (message printed).
 */
int cli_finish(struct cli *c);

/* An error of -s or of a rules file: "file:line:col: msg", and for a
 * signature on the command line the text with a caret under the column. */
void cli_rule_error(const struct cli *c, const struct iosig_error *err, const char *sigtext);

/*
 * iosig-redirect comes in two programs built from the same sources, so that
 * the common run (-s rules, no check) starts fast (docs/redirect.md,
 * "Performance"):
 *   iosig-redirect       (launcher.c) needs nothing but libc: no libyaml,
 *                        no libmount, no catalog;
 *   iosig-redirect-full  (cli_full.c, prepare.c) the rest: rules files, the
 *                        catalog check, prepare and finalize; installed in
 *                        LIBEXECDIR/iosig.
 * What the first cannot do it hands over: it executes the second with the
 * same command line (rx_argv), which does everything again from the start.
 */
extern char **rx_argv;

/* In iosig-redirect: executes iosig-redirect-full with rx_argv, and returns
 * RX_OWN (message printed) only if that fails.  In iosig-redirect-full:
 * RX_OK, nothing to do.  Called before an option or mode that needs it has
 * had any effect. */
int cli_handover(struct cli *c);
/* -r FILE: adds the rules of FILE (rules_load_file); 0 or RX_OWN (message
 * printed). */
int cli_load_rules(struct cli *c, const char *file);
/* The check of cli_finish(): builds the catalog and warns about every rule
 * of this invocation no mount satisfies (an error with --strict).  RX_OK or
 * RX_OWN. */
int cli_check(struct cli *c);

/* The modes other than running a program (prepare.c; iosig-redirect hands
 * them over); argv[0] is the mode's name.  Return the exit status of
 * iosig-redirect (RX_*). */
int rx_prepare(int argc, char **argv);
int rx_finalize(int argc, char **argv);

/*
 * Where a file of this installation is: `build` when this program runs from
 * the build tree; else `rel` (relative to the installation prefix: LIBDIR/...)
 * under the prefix this program is installed in, if it exists there; else
 * `installed`, fixed at build time.  In buf (size bytes).
 */
void rx_install_path(const char *build, const char *installed, const char *rel, char *buf,
		     size_t size);

#endif /* IOSIG_REDIRECT_CLI_H */
