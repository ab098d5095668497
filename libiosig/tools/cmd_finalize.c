/* SPDX-License-Identifier: MIT */
/*
 * cmd_finalize.c - `iosig finalize PATH...`: moves redirected data back to
 * the paths the program asked for and removes the links (see
 * finalize.c for the order of operations).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "finalize.h"
#include "json.h"
#include "tool.h"

static const char cmd[] = "finalize";

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig finalize [OPTIONS] PATH...\n"
		"\n"
		"Moves the data of files that libiosig redirected (PATH is a symbolic link\n"
		"into an iosig data directory) back to PATH and removes the link: a rename\n"
		"within one filesystem, else copy + fsync + rename; owner, mode, extended\n"
		"attributes and times are kept.  Safe to repeat: a PATH that is not a link\n"
		"is reported as already in place.  Only links the runtime made for you (for\n"
		"root: for the link's owner), to your own data in a data directory of this\n"
		"machine's catalog, are finalized; others are refused.\n"
		"\n"
		"Options:\n"
		"  -n, --dry-run      say what would be done, change nothing\n"
		"      --json         one JSON object per PATH in an array on stdout\n"
		"      --config FILE  catalog configuration that defines the data directories\n"
		"                     (default: $IOSIG_CONFIG, then the default locations)\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 if every PATH is in place, 1 if any was refused or failed,\n"
		"2 for a bad command line.  See iosig-finalize(1).\n");
}

static void print_text(const char *path, const struct fin_report *rep)
{
	FILE *fp = rep->action == FIN_REFUSED || rep->action == FIN_FAILED ? stderr : stdout;

	if (fp == stderr)
		fprintf(fp, "%s %s: %s: %s: %s\n", tool_progname, cmd, path,
			fin_action_name(rep->action), rep->msg);
	else
		fprintf(fp, "%s: %s%s\n", path, rep->dry_run ? "(dry run) " : "", rep->msg);
}

static void print_json(struct json_writer *w, const char *path, const struct fin_report *rep,
		       int r)
{
	json_obj_begin(w, NULL);
	json_str(w, "path", path);
	json_str(w, "action", fin_action_name(rep->action));
	json_bool(w, "dry_run", rep->dry_run);
	json_str(w, "target", rep->target[0] ? rep->target : NULL);
	json_uint(w, "bytes", rep->bytes);
	json_bool(w, "ok", r == 0);
	json_str(w, "message", rep->msg);
	json_obj_end(w);
}

static int run(int argc, char **argv)
{
	const struct iosig_catalog *catalog;
	struct iosig_catalog *own = NULL;
	const char *config = NULL;
	struct fin_report rep;
	struct json_writer w;
	bool json = false, paths_only = false;
	const char **paths;
	unsigned flags = 0;
	int npaths = 0, status = TOOL_EXIT_OK;

	paths = calloc((size_t)argc, sizeof(*paths));
	if (!paths) {
		tool_err(cmd, "out of memory");
		return TOOL_EXIT_FAIL;
	}

	/* Options may come anywhere before "--"; everything else is a PATH. */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (paths_only || a[0] != '-' || !a[1]) {
			paths[npaths++] = a;
		} else if (!strcmp(a, "--")) {
			paths_only = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			goto out_free_paths;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--dry-run")) {
			flags |= FIN_DRY_RUN;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--config")) {
			if (i + 1 >= argc) {
				status = tool_usage_err(cmd, "--config needs a file name");
				goto out_free_paths;
			}
			config = argv[++i];
		} else if (!strncmp(a, "--config=", 9)) {
			config = a + 9;
		} else {
			status = tool_usage_err(cmd, "unknown option '%s' (a path starting with '-' goes after '--')", a);
			goto out_free_paths;
		}
	}
	if (!npaths) {
		status = tool_usage_err(cmd, "no PATH given: name the files to finalize");
		goto out_free_paths;
	}

	catalog = tool_runtime_catalog(cmd, config, &own);
	if (!catalog) {
		status = TOOL_EXIT_FAIL;
		goto out_free_paths;
	}

	if (json) {
		json_init(&w, stdout, true);
		json_arr_begin(&w, NULL);
	}
	for (int i = 0; i < npaths; i++) {
		int r = fin_path(catalog, AT_FDCWD, paths[i], flags, &rep);

		if (r < 0)
			status = TOOL_EXIT_FAIL;
		if (json)
			print_json(&w, paths[i], &rep, r);
		else
			print_text(paths[i], &rep);
	}
	if (json) {
		json_arr_end(&w);
		if (json_finish(&w) < 0)
			status = TOOL_EXIT_FAIL;
	}
	iosig_catalog_free(own);
out_free_paths:
	free(paths);
	return status;
}

const struct tool_cmd cmd_finalize = {
	.name = "finalize",
	.summary = "move redirected files back to where the program asked for them",
	.run = run,
};
