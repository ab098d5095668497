/* SPDX-License-Identifier: MIT */
/*
 * tool_probe.h - what the subcommands that measure mounts (`iosig probe`,
 * `iosig validate`) share on the command line: the MOUNT arguments against
 * the catalog and the --max-space option.  The engine side (sessions,
 * signals, progress bar) is libiosig/src/probe_cli.c.
 */
#ifndef IOSIG_TOOL_PROBE_H
#define IOSIG_TOOL_PROBE_H

#include <stddef.h>
#include <stdint.h>

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

#endif /* IOSIG_TOOL_PROBE_H */
