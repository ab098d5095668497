/* SPDX-License-Identifier: MIT */
/*
 * tool.h - what the `iosig` subcommands share: the command descriptor,
 * error reporting that tells the user what to do, option value parsing with
 * units, and table output.
 */
#ifndef IOSIG_TOOL_H
#define IOSIG_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "iosig.h"

/* Exit codes of every subcommand. */
#define TOOL_EXIT_OK 0
#define TOOL_EXIT_FAIL 1   /* the operation failed */
#define TOOL_EXIT_USAGE 2  /* bad command line */

/* One subcommand of `iosig`, defined in cmd_<name>.c as cmd_<name>. */
struct tool_cmd {
	const char *name;     /* as typed: "devices" */
	const char *summary;  /* one line for `iosig --help` */
	/* argv[0] is the subcommand name; returns a TOOL_EXIT_* code. */
	int (*run)(int argc, char **argv);
};

/* Program name for messages ("iosig"). */
extern const char *tool_progname;

/*
 * A copy of s fit for a terminal: control characters (C0 and DEL) become '?',
 * so that a mount point, path or file name cannot move the cursor or retitle
 * the window.  Never NULL (aborts when out of memory, like the tables).
 */
char *tool_printable(const char *s);

/* "iosig devices: <message>" on stderr (control characters other than
 * newline and tab shown as '?'). */
void tool_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Usage error: message plus "Try 'iosig CMD --help'."; returns TOOL_EXIT_USAGE. */
int tool_usage_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints an iosig_error as "file:line:col: msg" (parts that are known). */
void tool_print_error(const char *cmd, const struct iosig_error *err);

/*
 * The catalog the programs running here use: built from `config` (a
 * --config option) when not NULL, else the process-wide catalog
 * (IOSIG_CONFIG, then the default locations).  *ret_own receives what the
 * caller frees with iosig_catalog_free() (NULL for the process-wide one).
 * NULL, after printing why, when it cannot be built.
 */
const struct iosig_catalog *tool_runtime_catalog(const char *cmd, const char *config,
						 struct iosig_catalog **ret_own);

/*
 * Reports what getopt_long() refused, for a subcommand that set opterr = 0
 * and starts its optstring with ':' (c is the ':' or '?' it returned): a
 * missing value, an unknown or ambiguous option, or a value given to an
 * option that takes none.  Returns TOOL_EXIT_USAGE.
 */
struct option;
int tool_option_err(const char *cmd, int c, char *const *argv, const struct option *longopts);

/*
 * A whole number option such as --disks: digits in `base` (strtoull(); 0
 * also takes 0x and octal), no sign, from min to max.  Returns 0 with *ret
 * set, or prints "--OPT takes a whole number from MIN to MAX, not 'S'" and
 * returns TOOL_EXIT_USAGE.
 */
int tool_parse_uint(const char *cmd, const char *opt, const char *s, unsigned long long min,
		    unsigned long long max, int base, unsigned long long *ret);

/*
 * A value with an optional unit of dimension `dim` (iosig_parse_value()):
 * "30s", "64*MiB", "1e-6".  Returns 0 with *ret set, or prints
 * "--OPT 'S': what is wrong; expected EXPECT" and returns TOOL_EXIT_USAGE.
 * The range is the caller's to check.
 */
int tool_parse_value(const char *cmd, const char *opt, const char *s, enum iosig_dim dim,
		     const char *expect, double *ret);

/*
 * The value of a size option such as --size: a number with an optional unit
 * (iosig_parse_value()), from 0 - or above 0 when `positive` - to 2^63 bytes,
 * the range of a signature's totalsize.  Returns 0 with *ret set, or prints
 * a usage error naming --opt, the value and what is wrong, and returns
 * TOOL_EXIT_USAGE.
 */
int tool_parse_size(const char *cmd, const char *opt, const char *s, bool positive, double *ret);

/* A simple text table: add rows of cells, then print with aligned columns. */
struct tool_table;
struct tool_table *tool_table_new(unsigned ncols, const char *const *headers);
/* Appends one row; cells are copied (through tool_printable()).  Numeric columns are right-aligned when
 * tool_table_align_right() was called for them. */
void tool_table_row(struct tool_table *t, const char *const *cells);
void tool_table_align_right(struct tool_table *t, unsigned col);
/*
 * A note printed on a line of its own under the row added last (e.g.
 * "  not eligible: REASON"); copied through tool_printable().
 */
void tool_table_note(struct tool_table *t, const char *text);
/*
 * Narrow layout for a table with many columns: one space between columns
 * instead of two, and the first column (names such as mount points) gets
 * what the others leave of `width` terminal columns, at least 12 (less when
 * no cell needs more); a longer first cell is printed on a line of its own
 * and its row continues under it.
 */
void tool_table_fit(struct tool_table *t, unsigned width);
void tool_table_print(const struct tool_table *t, FILE *fp);
void tool_table_free(struct tool_table *t);

#endif /* IOSIG_TOOL_H */
