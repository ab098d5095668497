/* SPDX-License-Identifier: MIT */
/*
 * cmd_explain.c - `iosig explain 'SIG'`: the whole decision for a signature
 * on this machine (or on a machine described by a configuration file):
 * every candidate mount, which constraint removed it, the predicted
 * throughput, and the winner.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "fmt.h"
#include "json.h"
#include "select_defaults.h"
#include "sig_internal.h"
#include "tool.h"

#define CMD "explain"

static void help(void)
{
	printf("Usage: iosig explain [OPTIONS] 'SIGNATURE'\n"
	       "\n"
	       "Shows where a file with SIGNATURE would be placed on this machine and why:\n"
	       "every mount, the constraint that removed it, the throughput Eq. 3 predicts\n"
	       "for the declared size_per_io and pattern, and the chosen mount.\n"
	       "\n"
	       "SIGNATURE is the text of a '#pragma io sig' with constant values, e.g.\n"
	       "  'persist sequential_access size_per_io(64*MiB) totalsize(4*GiB)'\n"
	       "\n"
	       "Options:\n"
	       "  -p, --path PATH      the path the program opens (its own mount wins ties)\n"
	       "  -s, --size SIZE      the file's total size, e.g. 6GiB (overrides totalsize)\n"
	       "  -c, --config FILE    configuration file (default: $IOSIG_CONFIG, then the\n"
	       "                       standard locations; see iosig-config(5))\n"
	       "  -n, --no-discovery   only the mounts described in the configuration file\n"
	       "  -j, --json           machine-readable output\n"
	       "  -h, --help           this text\n"
	       "\n"
	       "Exit status: 0 when a mount qualifies, 1 when none does (the file would\n"
	       "stay where the program asked), 2 on bad usage or input.\n");
}

/* Per-candidate row of the table. */
static void add_row(struct tool_table *t, const struct iosig_candidate *c, bool chosen)
{
	char tput[32], mttdl[32];
	const struct iosig_mount *m = c->mount;
	const char *cells[6];

	fmt_rate(c->throughput, tput, sizeof(tput));
	if (m->volatile_)
		snprintf(mttdl, sizeof(mttdl), "volatile");
	else
		fmt_duration(c->mttdl, mttdl, sizeof(mttdl));
	cells[0] = chosen ? "*" : "";
	cells[1] = m->path;
	cells[2] = iosig_class_name((enum iosig_class)m->cls);
	cells[3] = tput;
	cells[4] = mttdl;
	cells[5] = c->why;
	tool_table_row(t, cells);
}

static void print_text(const char *canon, const struct iosig_sig *sig, const char *path,
		       const struct iosig_candidate *cands, size_t n,
		       const struct iosig_choice *ch)
{
	static const char *const hdr[] = { "", "MOUNT", "CLASS", "PREDICTED", "MTTDL", "VERDICT" };
	const struct iosig_sig *e = &ch->effective;
	struct tool_table *t = tool_table_new(6, hdr);
	char a[32], b[32];

	printf("signature:  %s\n", canon);
	printf("assumed:    size_per_io %s%s, %s access, file size %s%s, lifetime %s%s\n",
	       fmt_bytes((double)e->size_per_io, a, sizeof(a)),
	       (sig->set & IOSIG_HAS(IOSIG_P_SIZE_PER_IO)) ? "" : " (default)",
	       (sig->set & IOSIG_HAS(IOSIG_P_RANDOM)) ? "random" : "sequential",
	       fmt_bytes((sig->set & IOSIG_HAS(IOSIG_P_TOTALSIZE)) ? (double)e->totalsize :
			 SELECT_DEFAULT_FILE_SIZE, b, sizeof(b)),
	       (sig->set & IOSIG_HAS(IOSIG_P_TOTALSIZE)) ? "" : " (default, for space and MTTDL)",
	       fmt_duration(e->lifetime, (char[32]){ 0 }, 32),
	       (sig->set & IOSIG_HAS(IOSIG_P_LIFETIME)) ? "" : " (default)");
	if (path) {
		char *shown = tool_printable(path);

		printf("path:       %s\n", shown);
		free(shown);
	}
	printf("\n");
	tool_table_align_right(t, 3);
	tool_table_align_right(t, 4);
	for (size_t i = 0; i < n; i++)
		add_row(t, &cands[i], (int)i == ch->index);
	tool_table_print(t, stdout);
	tool_table_free(t);
	printf("\n");
	if (ch->mount) {
		char *shown = tool_printable(ch->mount->path);

		printf("choice:     %s (%s), predicted %s; %u of %zu mounts satisfy the "
		       "constraints\n",
		       shown, iosig_class_name((enum iosig_class)ch->mount->cls),
		       fmt_rate(ch->throughput, a, sizeof(a)), ch->eligible, n);
		free(shown);
	} else {
		printf("choice:     none of the %zu mounts satisfies the constraints; the file "
		       "stays where the program asked (IOSIG_STRICT=1 makes the open fail)\n",
		       n);
	}
}

static void print_json(const struct iosig_catalog *cat, const char *canon,
		       const struct iosig_sig *sig, const char *path,
		       const struct iosig_candidate *cands, size_t n,
		       const struct iosig_choice *ch)
{
	const struct iosig_sig *e = &ch->effective;
	struct json_writer w;

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "signature", canon);
	json_str(&w, "path", path);
	json_obj_begin(&w, "effective");
	json_uint(&w, "size_per_io", e->size_per_io);
	json_bool(&w, "size_per_io_default", !(sig->set & IOSIG_HAS(IOSIG_P_SIZE_PER_IO)));
	json_str(&w, "pattern", (sig->set & IOSIG_HAS(IOSIG_P_RANDOM)) ? "random" : "sequential");
	if (sig->set & IOSIG_HAS(IOSIG_P_TOTALSIZE))
		json_uint(&w, "totalsize", e->totalsize);
	else
		json_null(&w, "totalsize");
	/* The size selection assumed: for free space and reliability. */
	json_num(&w, "file_size", (sig->set & IOSIG_HAS(IOSIG_P_TOTALSIZE)) ?
				  (double)e->totalsize : SELECT_DEFAULT_FILE_SIZE);
	json_bool(&w, "file_size_default", !(sig->set & IOSIG_HAS(IOSIG_P_TOTALSIZE)));
	json_num(&w, "lifetime_s", e->lifetime);
	json_obj_end(&w);
	json_arr_begin(&w, "candidates");
	for (size_t i = 0; i < n; i++) {
		const struct iosig_candidate *c = &cands[i];

		json_obj_begin(&w, NULL);
		json_str(&w, "mount", c->mount->path);
		json_str(&w, "class", iosig_class_name((enum iosig_class)c->mount->cls));
		json_str(&w, "verdict", iosig_verdict_name((enum iosig_verdict)c->verdict));
		json_num(&w, "throughput_Bps", c->throughput);
		json_num(&w, "mttdl_s", c->mttdl);
		json_num(&w, "p_loss", c->p_loss);
		json_str(&w, "why", c->why);
		json_bool(&w, "chosen", (int)i == ch->index);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_str(&w, "choice", ch->mount ? ch->mount->path : NULL);
	json_num(&w, "predicted_Bps", ch->mount ? ch->throughput : NAN);
	json_uint(&w, "eligible", ch->eligible);
	json_arr_begin(&w, "notes");
	for (size_t i = 0; i < cat_catalog_notes(cat); i++)
		json_str(&w, NULL, cat_catalog_note(cat, i));
	json_arr_end(&w);
	json_obj_end(&w);
	json_finish(&w);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "path", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "no-discovery", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iosig_catalog_opts copts = { 0 };
	struct iosig_catalog *cat = NULL;
	struct iosig_candidate *cands = NULL;
	struct iosig_choice choice;
	struct iosig_error err = { 0 };
	struct iosig_sig sig;
	const char *path = NULL;
	char canon[1024];
	bool json = false, have_size = false;
	double size = 0;
	int c, r, ret = TOOL_EXIT_FAIL;

	optind = 0; /* full re-initialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:s:c:njh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			path = optarg;
			break;
		case 's':
			if (tool_parse_size(CMD, "size", optarg, false, &size))
				return TOOL_EXIT_USAGE;
			have_size = true;
			break;
		case 'c':
			copts.config = optarg;
			break;
		case 'n':
			copts.flags |= IOSIG_CATALOG_NO_DISCOVERY;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			help();
			return TOOL_EXIT_OK;
		default:
			return tool_option_err(CMD, c, argv, opts);
		}
	}
	if (optind != argc - 1)
		return tool_usage_err(CMD, optind == argc ? "missing SIGNATURE"
							  : "expected exactly one SIGNATURE "
							    "(quote it: iosig explain 'persist random')");

	r = iosig_sig_parse(argv[optind], NULL, NULL, 0, &sig, &err);
	if (r < 0) {
		fprintf(stderr, "%s %s: invalid signature: %s\n", tool_progname, CMD, err.msg);
		if (err.column > 0)
			fprintf(stderr, "  %s\n  %*s^\n", argv[optind], err.column - 1, "");
		return TOOL_EXIT_USAGE;
	}
	if (have_size) {
		sig.totalsize = sigp_size_round(size);
		sig.set |= IOSIG_HAS(IOSIG_P_TOTALSIZE);
	}
	if (iosig_sig_format(&sig, canon, sizeof(canon)) < 0)
		snprintf(canon, sizeof(canon), "%s", argv[optind]);

	r = iosig_catalog_new(&copts, &cat, &err);
	if (r < 0) {
		tool_print_error(CMD, &err);
		return TOOL_EXIT_FAIL;
	}
	cands = calloc(iosig_catalog_size(cat) + 1, sizeof(*cands));
	if (!cands) {
		tool_err(CMD, "out of memory");
		goto out_free_catalog;
	}
	r = iosig_select(cat, &sig, path, cands, &choice);
	if (r < 0) {
		tool_err(CMD, "selection failed: %s", strerror(-r));
		goto out_free_cands;
	}
	if (json) {
		print_json(cat, canon, &sig, path, cands, iosig_catalog_size(cat), &choice);
	} else {
		/* What the catalog had to leave out (a broken probe cache ...)
		 * changes the numbers below: say so. */
		for (size_t i = 0; i < cat_catalog_notes(cat); i++)
			tool_err(CMD, "note: %s", cat_catalog_note(cat, i));
		print_text(canon, &sig, path, cands, iosig_catalog_size(cat), &choice);
	}
	ret = choice.mount ? TOOL_EXIT_OK : TOOL_EXIT_FAIL;

out_free_cands:
	free(cands);
out_free_catalog:
	iosig_catalog_free(cat);
	return ret;
}

const struct tool_cmd cmd_explain = {
	.name = "explain",
	.summary = "where a file with a given signature would go, and why",
	.run = run,
};
