/* SPDX-License-Identifier: MIT */
/*
 * cmd_gc.c - `iosig gc [MOUNT...]`: frees the caller's data files whose link
 * is gone, removed by a program that does not run libiosig (gc.h for the
 * rules and the contract).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "gc.h"
#include "json.h"
#include "tool.h"

static const char cmd[] = "gc";

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig gc [OPTIONS] [MOUNT...]\n"
		"\n"
		"Frees your redirected files whose link is gone: the data a program that\n"
		"does not run libiosig (rm, a test suite's cleanup) left in a data\n"
		"directory when it removed the link.  Each link the runtime makes has an\n"
		"anchor, a second name of the link in the data directory of its\n"
		"filesystem; a data file is freed only when every other name of its link\n"
		"is gone, wherever the link was moved on its filesystem.  Never another\n"
		"user's file; never a data file without an anchor (kept: a link to it may\n"
		"exist).  With MOUNTs, only the data on the mounts holding them.\n"
		"\n"
		"Options:\n"
		"  -n, --dry-run      say what would be freed, change nothing\n"
		"      --json         one JSON object: counts and every data file\n"
		"      --config FILE  catalog configuration that defines the data directories\n"
		"                     (default: $IOSIG_CONFIG, then the default locations;\n"
		"                     use the one your programs use)\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 when every orphan was freed (or would be), 1 if a removal\n"
		"failed, 2 for a bad command line.  See iosig-gc(1).\n");
}

/* What the report callback needs. */
struct out {
	bool json;
	bool dry_run;
	struct json_writer w;
};

static void print_json(struct out *o, const struct gc_entry *e)
{
	json_obj_begin(&o->w, NULL);
	json_str(&o->w, "path", e->data_path);
	json_str(&o->w, "action", gc_action_name(e->action));
	json_str(&o->w, "anchor", e->anchor_path);
	json_str(&o->w, "mount", e->mount ? e->mount->path : NULL);
	json_uint(&o->w, "size", e->size);
	json_uint(&o->w, "bytes", e->bytes);
	json_str(&o->w, "why", e->why);
	json_obj_end(&o->w);
}

static void print_text(const struct out *o, const struct gc_entry *e)
{
	char *path = tool_printable(e->data_path);
	char size[32];

	switch (e->action) {
	case GC_FREED:
		printf("%s %s (%s)\n", o->dry_run ? "would free" : "freed", path,
		       fmt_bytes((double)e->bytes, size, sizeof(size)));
		break;
	case GC_DROPPED:
		printf("%s the anchor of %s: its data is gone\n", o->dry_run ? "would drop" : "dropped",
		       path);
		break;
	case GC_KEPT:
		printf("kept %s: %s\n", path, e->why);
		break;
	case GC_FAILED:
		tool_err(cmd, "%s: %s; it is kept", e->data_path, e->why);
		break;
	default:
		break;   /* live and unanchored files: in the summary */
	}
	free(path);
}

static void report(const struct gc_entry *e, void *arg)
{
	struct out *o = arg;

	if (o->json)
		print_json(o, e);
	else
		print_text(o, e);
}

static void print_summary(const struct out *o, const struct gc_stats *st)
{
	char size[32];

	fmt_bytes((double)st->freed_bytes, size, sizeof(size));
	printf("%s %lu orphaned data file%s (%s)", o->dry_run ? "would free" : "freed", st->freed,
	       st->freed == 1 ? "" : "s", size);
	if (st->dropped)
		printf(", %s %lu anchor%s of data already gone", o->dry_run ? "would drop" : "dropped",
		       st->dropped, st->dropped == 1 ? "" : "s");
	printf("; kept %lu with a live link", st->live);
	if (st->unanchored)
		printf(", %lu without an anchor (a link to them may exist; see iosig-gc(1))",
		       st->unanchored);
	if (st->kept)
		printf(", %lu that may not be freed", st->kept);
	if (st->failed)
		printf(", %lu that could not be removed", st->failed);
	printf("\n");
}

/* The catalog mounts holding `args`; NULL after a message when one is not
 * on a mount with a data directory. */
static const struct iosig_mount **find_mounts(const struct iosig_catalog *cat,
					      const char *const *args, int n)
{
	const struct iosig_mount **v = calloc((size_t)n + 1, sizeof(*v));

	if (!v) {
		tool_err(cmd, "out of memory");
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (args[i][0] != '/') {
			tool_usage_err(cmd, "%s: give a mount as an absolute path", args[i]);
			free(v);
			return NULL;
		}
		v[i] = iosig_catalog_find(cat, args[i]);
		if (!v[i]) {
			tool_usage_err(cmd, "%s: on no mount of the catalog (see 'iosig devices --all')",
				       args[i]);
			free(v);
			return NULL;
		}
		if (!v[i]->data_dir) {
			tool_usage_err(cmd, "%s: %s has no data directory (%s): nothing of yours is there",
				       args[i], v[i]->path,
				       v[i]->ineligible ? v[i]->ineligible : "none chosen");
			free(v);
			return NULL;
		}
	}
	return v;
}

static int run(int argc, char **argv)
{
	const struct iosig_mount **mounts = NULL;
	const struct iosig_catalog *catalog;
	struct iosig_catalog *own = NULL;
	const char *config = NULL, **args;
	struct out o = { 0 };
	bool args_only = false;
	struct gc_stats st;
	unsigned flags = 0;
	int nargs = 0, status = TOOL_EXIT_OK, r;

	args = calloc((size_t)argc, sizeof(*args));
	if (!args) {
		tool_err(cmd, "out of memory");
		return TOOL_EXIT_FAIL;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (args_only || a[0] != '-' || !a[1]) {
			args[nargs++] = a;
		} else if (!strcmp(a, "--")) {
			args_only = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			goto out_free_args;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--dry-run")) {
			flags |= GC_DRY_RUN;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--config")) {
			if (i + 1 >= argc) {
				status = tool_usage_err(cmd, "--config needs a file name");
				goto out_free_args;
			}
			config = argv[++i];
		} else if (!strncmp(a, "--config=", 9)) {
			config = a + 9;
		} else {
			status = tool_usage_err(cmd, "unknown option '%s' (a mount starting with '-' goes after '--')", a);
			goto out_free_args;
		}
	}
	o.dry_run = flags & GC_DRY_RUN;

	catalog = tool_runtime_catalog(cmd, config, &own);
	if (!catalog) {
		status = TOOL_EXIT_FAIL;
		goto out_free_args;
	}
	if (nargs) {
		mounts = find_mounts(catalog, args, nargs);
		if (!mounts) {
			status = TOOL_EXIT_USAGE;
			goto out_free_catalog;
		}
	}
	if (o.json) {
		json_init(&o.w, stdout, true);
		json_obj_begin(&o.w, NULL);
		json_bool(&o.w, "dry_run", o.dry_run);
		json_arr_begin(&o.w, "files");
	}
	r = gc_run(catalog, mounts, (size_t)nargs, flags, report, &o, &st);
	if (r < 0) {
		tool_err(cmd, "%s", strerror(-r));
		status = TOOL_EXIT_FAIL;
	} else if (st.failed) {
		status = TOOL_EXIT_FAIL;
	}
	if (o.json) {
		json_arr_end(&o.w);
		json_uint(&o.w, "files_seen", st.files);
		json_uint(&o.w, "freed", st.freed);
		json_uint(&o.w, "freed_bytes", st.freed_bytes);
		json_uint(&o.w, "live", st.live);
		json_uint(&o.w, "unanchored", st.unanchored);
		json_uint(&o.w, "dropped", st.dropped);
		json_uint(&o.w, "kept", st.kept);
		json_uint(&o.w, "failed", st.failed);
		json_obj_end(&o.w);
		if (json_finish(&o.w) < 0)
			status = TOOL_EXIT_FAIL;
	} else if (r == 0) {
		print_summary(&o, &st);
	}
	free(mounts);
out_free_catalog:
	iosig_catalog_free(own);
out_free_args:
	free(args);
	return status;
}

const struct tool_cmd cmd_gc = {
	.name = "gc",
	.summary = "free the data of redirected files whose link was removed",
	.run = run,
};
