/* SPDX-License-Identifier: MIT */
/* tool_probe.c - command-line parts of `iosig probe` and `iosig validate`
 * (see tool_probe.h). */
#include "tool_probe.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "probe.h"
#include "tool.h"

/* Largest --max-space: far beyond any budget, still exact in a double. */
#define SPACE_MAX 1e15

int tool_probe_mounts(const char *cmd, int argc, char *const *argv,
		      struct iosig_catalog **ret_catalog, const struct iosig_mount ***ret_sel,
		      size_t *ret_n)
{
	struct iosig_catalog_opts copts = { 0 };
	struct iosig_catalog *cat = NULL;
	struct iosig_error err = { 0 };
	int r;

	r = iosig_catalog_new(&copts, &cat, &err);
	if (r < 0) {
		tool_print_error(cmd, &err);
		return TOOL_EXIT_FAIL;
	}
	r = prb_cli_select(cat, argc, argv, ret_sel, ret_n, &err);
	if (r < 0) {
		tool_print_error(cmd, &err);
		iosig_catalog_free(cat);
		return r == -ENOMEM ? TOOL_EXIT_FAIL : TOOL_EXIT_USAGE;
	}
	*ret_catalog = cat;
	return 0;
}

int tool_parse_space(const char *cmd, const char *s, uint64_t *ret)
{
	double v;

	if (tool_parse_value(cmd, "max-space", s, IOSIG_DIM_SIZE, "a size such as 256MiB", &v))
		return TOOL_EXIT_USAGE;
	if (v < (double)PRB_MIN_SPACE)
		return tool_usage_err(cmd, "--max-space '%s': expected at least 8 MiB", s);
	if (v > SPACE_MAX || v != floor(v))
		return tool_usage_err(cmd, "--max-space '%s': expected a whole number of bytes, "
				      "at most 1e15", s);
	*ret = (uint64_t)v;
	return 0;
}

int tool_probe_opt(const char *cmd, int c, char *const *argv, const struct option *longopts,
		   void (*usage)(FILE *), struct tool_probe_opts *o)
{
	switch (c) {
	case 's':
		return tool_parse_space(cmd, optarg, &o->max_space);
	case 'q':
		o->quiet = true;
		return 0;
	case 'h':
		usage(stdout);
		return -1;
	default:
		return tool_option_err(cmd, c, argv, longopts);
	}
}

void tool_probe_bar(bool on, double fraction, const char *label)
{
	char buf[PATH_MAX + 128];

	if (!on)
		return;
	fputs(prb_cli_bar(buf, sizeof(buf), fraction, label), stderr);
	fflush(stderr);
}

void tool_probe_bar_clear(bool on)
{
	if (on) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}
