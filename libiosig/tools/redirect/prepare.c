/* SPDX-License-Identifier: MIT */
/*
 * prepare.c - `iosig-redirect prepare` and `iosig-redirect finalize`: the
 * IOSIG paper's way for binaries (Sect. 6.2), for programs LD_PRELOAD
 * cannot reach (statically linked, set-user-ID) or should not: before the
 * run, create each file on the mount its signature chooses and link it
 * where the program will open it (rd_prepare); after the run, move the
 * data back and remove the links (fin_path, as `iosig finalize`).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "cli.h"
#include "finalize.h"
#include "redirect.h"
#include "rules.h"

static void prepare_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig-redirect prepare [OPTIONS] [-s 'SIG' PATH]... [-r RULES]... [PATH...]\n"
		"\n"
		"Creates each file on the mount that suits its signature best and links it at\n"
		"PATH, before a program that LD_PRELOAD cannot reach (statically linked,\n"
		"set-user-ID) runs; run 'iosig-redirect finalize PATH...' after it.  The\n"
		"files are the PATHs of -s without wildcards and the PATH arguments, which\n"
		"take the signature of the first rule that matches them.  A PATH that exists\n"
		"is left as it is.\n"
		"\n"
		"Options: -s, -r, -n/--dry-run, --log, --config, --strict, -q/--quiet as for\n"
		"running a program (iosig-redirect --help); -h, --help.\n"
		"\n"
		"Exit status: 0 when every PATH is prepared or rightly left in place, 1 when\n"
		"any could not be, 125 for bad options or rules.\n");
}

static void finalize_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig-redirect finalize [OPTIONS] PATH...\n"
		"\n"
		"Moves the data of each redirected PATH (a link into an iosig data\n"
		"directory) back to PATH and removes the link: a rename within one\n"
		"filesystem, else copy + fsync + rename (see iosig-finalize(1)).  A PATH\n"
		"that is not a link is already in place.\n"
		"\n"
		"Options:\n"
		"  -n, --dry-run      say what would be done, change nothing\n"
		"      --config FILE  catalog configuration that defines the data directories\n"
		"  -q, --quiet        print only failures\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 when every PATH is in place, 1 when any was refused or\n"
		"failed, 125 for bad options.\n");
}

/* Prepares one path with the rule that matches it.  RX_OK or RX_FAIL. */
static int prepare_one(struct cli *c, const char *path)
{
	const struct rules_rule *rule;
	struct rd_result res;
	struct rd_req req;
	char abs[PATH_MAX];
	int r;

	r = rules_abs_path(AT_FDCWD, path, abs, sizeof(abs));
	if (r < 0) {
		cli_err(c, "%s: %s", path, strerror(-r));
		return RX_FAIL;
	}
	rule = rules_match(c->rs, abs);
	if (!rule) {
		cli_err(c, "%s: no rule matches it; give its signature with -s 'SIG' %s", path, path);
		return RX_FAIL;
	}
	memset(&req, 0, sizeof(req));
	req.site = &rule->site;
	req.sig = &rule->sig;
	req.call = "prepare";
	req.dirfd = AT_FDCWD;
	req.path = path;
	req.flags = O_CREAT | O_WRONLY;
	req.mode = 0666;
	req.nofollow_ok = true;
	r = rd_prepare(&req, &res);
	if (!strcmp(res.action, "prepared")) {
		printf("%s -> %s (%s, %s)\n", path, res.data_path, res.chosen->path,
		       iosig_class_name(res.chosen->cls));
		return RX_OK;
	}
	if (!strcmp(res.action, "existing")) {
		printf("%s: exists, left as it is\n", path);
		return RX_OK;
	}
	if (!strcmp(res.action, "direct")) {
		printf("%s: stays on its own filesystem %s, the best for '%s'\n", path,
		       res.chosen->path, rule->sigtext);
		return RX_OK;
	}
	if (!strcmp(res.action, "dryrun")) {
		printf("%s: would go to %s (%s) (dry run)\n", path, res.chosen->path,
		       iosig_class_name(res.chosen->cls));
		return RX_OK;
	}
	if (r == 0 && !strcmp(res.action, "fallback") && !res.chosen) {
		/* Nothing qualifies (not strict): where the program puts it. */
		cli_warn(c, "%s: %s", path, res.reason);
		return RX_OK;
	}
	cli_err(c, "%s: not prepared (%s): %s", path, res.action,
		res.reason[0] ? res.reason : strerror(-r));
	return RX_FAIL;
}

/* Options of one mode: 1 consumed, 0 not an option of the mode, -RX_OWN
 * after an error was printed (cli_option's convention). */
typedef int (*mode_option_fn)(struct cli *c, int argc, char **argv, int *i, void *arg);

/*
 * The command line of prepare and finalize: options anywhere before "--"
 * (-h/--help prints `usage`), everything else a PATH.  *ret_paths is
 * malloc'ed; *ret_help is set when the usage was printed.  RX_OK or an
 * exit code (message printed).
 */
static int parse_args(struct cli *c, int argc, char **argv, void (*usage)(FILE *),
		      mode_option_fn option, void *arg, char ***ret_paths, int *ret_npaths,
		      bool *ret_help)
{
	char **paths = calloc((size_t)argc, sizeof(*paths));
	bool paths_only = false;
	int npaths = 0, r;

	*ret_help = false;
	if (!paths) {
		cli_err(c, "out of memory");
		return RX_OWN;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (paths_only || a[0] != '-' || !a[1]) {
			paths[npaths++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			paths_only = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			*ret_help = true;
			break;
		}
		r = option(c, argc, argv, &i, arg);
		if (r < 0) {
			free(paths);
			return -r;
		}
		if (r == 0) {
			free(paths);
			return cli_usage(c, "unknown option '%s' (a PATH starting with '-' goes after '--')", a);
		}
	}
	*ret_paths = paths;
	*ret_npaths = npaths;
	return RX_OK;
}

static int prepare_option(struct cli *c, int argc, char **argv, int *i, void *arg)
{
	(void)arg;
	return cli_option(c, argc, argv, i);
}

/* A rule of -s whose PATH has no wildcard names one file to prepare. */
static bool names_a_file(const struct rules_rule *rule)
{
	return rule->pat.literal && !strncmp(rule->file, "-s #", 4);
}

int rx_prepare(int argc, char **argv)
{
	struct cli c;
	int r, status = RX_OK, npaths = 0;
	bool help, named = false;
	char **paths = NULL;

	r = cli_init(&c, "prepare");
	if (r)
		return r;
	r = parse_args(&c, argc, argv, prepare_usage, prepare_option, NULL, &paths, &npaths, &help);
	if (r || help)
		goto out_done;
	c.own_rules = c.rs->n;
	if (!c.rs->n) {
		r = cli_usage(&c, "no rules: give -s 'SIG' PATH or -r RULES");
		goto out_done;
	}
	r = cli_finish(&c);
	if (r)
		goto out_done;
	/* The -s paths without wildcards, then the PATH arguments. */
	for (size_t k = 0; k < c.rs->n; k++) {
		if (names_a_file(&c.rs->r[k])) {
			status |= prepare_one(&c, c.rs->r[k].shown);
			named = true;
		}
	}
	for (int k = 0; k < npaths; k++)
		status |= prepare_one(&c, paths[k]);
	if (!npaths && !named) {
		r = cli_usage(&c, "nothing to prepare: name the files (PATH arguments or -s 'SIG' PATH without wildcards)");
		goto out_done;
	}
	r = status ? RX_FAIL : RX_OK;
out_done:
	free(paths);
	cli_done(&c);
	return r;
}

static int finalize_option(struct cli *c, int argc, char **argv, int *i, void *arg)
{
	const char *a = argv[*i], *v;
	unsigned *flags = arg;

	if (!strcmp(a, "-n") || !strcmp(a, "--dry-run")) {
		*flags |= FIN_DRY_RUN;
		return 1;
	}
	if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
		c->quiet = true;
		return 1;
	}
	if (strcmp(a, "--config") && strncmp(a, "--config=", 9))
		return 0;
	v = a[8] == '=' ? a + 9 : *i + 1 < argc ? argv[++*i] : NULL;
	if (!v) {
		cli_usage(c, "--config needs a configuration file");
		return -RX_OWN;
	}
	setenv("IOSIG_CONFIG", v, 1);
	return 1;
}

int rx_finalize(int argc, char **argv)
{
	const struct iosig_catalog *cat;
	struct iosig_error err;
	struct fin_report rep;
	struct cli c;
	unsigned flags = 0;
	int r, status = RX_OK, npaths = 0;
	char **paths = NULL;
	bool help;

	r = cli_init(&c, "finalize");
	if (r)
		return r;
	r = parse_args(&c, argc, argv, finalize_usage, finalize_option, &flags, &paths, &npaths,
		       &help);
	if (r || help)
		goto out_done;
	if (!npaths) {
		r = cli_usage(&c, "no PATH given: name the files to finalize");
		goto out_done;
	}
	memset(&err, 0, sizeof(err));
	cat = cat_default(&err);
	if (!cat) {
		cli_err(&c, "storage catalog: %s%s%s", err.file, err.file[0] ? ": " : "", err.msg);
		r = RX_OWN;
		goto out_done;
	}
	for (int k = 0; k < npaths; k++) {
		r = fin_path(cat, AT_FDCWD, paths[k], flags, &rep);
		if (r < 0) {
			status = RX_FAIL;
			cli_err(&c, "%s: %s: %s", paths[k], fin_action_name(rep.action), rep.msg);
		} else if (!c.quiet) {
			printf("%s: %s%s\n", paths[k], rep.dry_run ? "(dry run) " : "", rep.msg);
		}
	}
	r = status;
out_done:
	free(paths);
	cli_done(&c);
	return r;
}
