/* SPDX-License-Identifier: MIT */
/*
 * tool_probe.h - what the subcommands that measure mounts (`iosig probe`,
 * `iosig validate`) share on the command line: the MOUNT arguments against
 * the catalog and the --max-space option.  The engine side (sessions,
 * signals, progress bar) is probe/probe_cli.c.
 */
#ifndef IOSIG_TOOL_PROBE_H
#define IOSIG_TOOL_PROBE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iosig.h"

/*
 * Builds the catalog and resolves the MOUNT arguments argv[0..argc) against
 * it (prb_cli_select(): every eligible mount when argc is 0).  Returns 0
 * with *ret_catalog (iosig_catalog_free()) and *ret_sel (free(); *ret_n
 * entries), or prints why and returns TOOL_EXIT_FAIL (catalog, memory) or
 * TOOL_EXIT_USAGE (a MOUNT that is not a mount point of the catalog).
 */
int tool_probe_mounts(const char *cmd, int argc, char *const *argv,
		      struct iosig_catalog **ret_catalog, const struct iosig_mount ***ret_sel,
		      size_t *ret_n);

/*
 * --max-space: a whole number of bytes with an optional unit, from 8 MiB
 * (PRB_MIN_SPACE, what a session needs) to 1e15.  Returns 0 with *ret set,
 * or prints what is wrong and returns TOOL_EXIT_USAGE.
 */
int tool_parse_space(const char *cmd, const char *s, uint64_t *ret);

/* The options both subcommands have (tool_probe_opt()). */
struct tool_probe_opts {
	uint64_t max_space;   /* -s, --max-space: bytes per mount */
	bool quiet;           /* -q, --quiet: no progress bar, no table */
};

/*
 * For the default case of a subcommand's getopt_long() loop: -s/--max-space
 * (tool_parse_space()) and -q/--quiet into *o, -h/--help prints usage on
 * stdout; any other c is a bad option (tool_option_err() with longopts).
 * Returns 0, -1 after the help, or TOOL_EXIT_USAGE.
 */
int tool_probe_opt(const char *cmd, int c, char *const *argv, const struct option *longopts,
		   void (*usage)(FILE *), struct tool_probe_opts *o);

/*
 * The progress bar on stderr (prb_cli_bar(): fraction 0 to 1 and label),
 * redrawn in place; nothing when on is false (--quiet, not a terminal).
 */
void tool_probe_bar(bool on, double fraction, const char *label);

/* Erases the progress bar's line when on, before other output. */
void tool_probe_bar_clear(bool on);

#endif /* IOSIG_TOOL_PROBE_H */
