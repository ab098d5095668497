/* SPDX-License-Identifier: MIT */
/* cli.c - options and checks shared by the modes of iosig-redirect (cli.h):
 * only libc, as iosig-redirect itself needs (launcher.c). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "declog.h"
#include "env.h"
#include "fmt.h"

static const char prog[] = "iosig-redirect";

__attribute__((format(printf, 3, 0)))
static void vmsg(const struct cli *c, const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s%s%s: %s", prog, c && c->mode ? " " : "", c && c->mode ? c->mode : "",
		kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_err(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(c, "", fmt, ap);
	va_end(ap);
}

void cli_warn(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	if (c && c->quiet)
		return;
	va_start(ap, fmt);
	vmsg(c, "warning: ", fmt, ap);
	va_end(ap);
}

int cli_usage(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(c, "", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s%s%s --help'.\n", prog, c && c->mode ? " " : "",
		c && c->mode ? c->mode : "");
	return RX_OWN;
}

int cli_init(struct cli *c, const char *mode)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	/* Relative patterns and paths are taken from the working directory.  One
	 * without a name (deeper than PATH_MAX, removed) only makes them
	 * errors: absolute rules still apply, and the program's relative opens
	 * are simply unmatched (the preload library cannot name them either). */
	if (!getcwd(c->cwd, sizeof(c->cwd)))
		c->cwd[0] = '\0';
	c->rs = rules_new();
	if (!c->rs) {
		cli_err(c, "out of memory");
		return RX_OWN;
	}
	return RX_OK;
}

void cli_done(struct cli *c)
{
	rules_free(c->rs);
	c->rs = NULL;
}

void cli_rule_error(const struct cli *c, const struct iosig_error *err, const char *sigtext)
{
	if (err->line > 0)
		cli_err(c, "%s:%d:%d: %s", err->file, err->line, err->column, err->msg);
	else
		cli_err(c, "%s: %s", err->file, err->msg);
	if (sigtext && err->line == 0 && err->column > 0 && !strchr(sigtext, '\n'))
		fprintf(stderr, "  %s\n  %*s^\n", sigtext, err->column - 1, "");
}

/* Value of an option written "--name VALUE" or "--name=VALUE"; NULL (after
 * the message) when missing. */
static const char *opt_value(struct cli *c, int argc, char **argv, int *i, const char *name,
			     const char *what)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (*i + 1 >= argc) {
		cli_usage(c, "%s needs %s", name, what);
		return NULL;
	}
	return argv[++*i];
}

/* True if argv[i] is "--name" or "--name=...". */
static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (!arg[n] || arg[n] == '=');
}

int cli_option(struct cli *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	struct iosig_error err;
	int r;

	if (!strcmp(a, "-s") || !strcmp(a, "--sig")) {
		if (*i + 2 >= argc) {
			cli_usage(c, "%s needs a signature and a path: %s 'SIG' PATH", a, a);
			return -RX_OWN;
		}
		c->nsig++;
		memset(&err, 0, sizeof(err));
		r = rules_add_cli(c->rs, c->nsig, argv[*i + 1], argv[*i + 2], c->cwd, &err);
		if (r < 0) {
			cli_rule_error(c, &err, err.column > 0 ? argv[*i + 1] : NULL);
			return -RX_OWN;
		}
		*i += 2;
		return 1;
	}
	if (!strcmp(a, "-r") || is_opt(a, "--rules")) {
		const char *file = a[1] == 'r' && !a[2] ? (*i + 1 < argc ? argv[++*i] : NULL) :
							  opt_value(c, argc, argv, i, "--rules", "a file");

		if (!file) {
			if (a[1] == 'r' && !a[2])
				cli_usage(c, "-r needs a rules file");
			return -RX_OWN;
		}
		c->nfiles++;
		return cli_load_rules(c, file) ? -RX_OWN : 1;
	}
	if (is_opt(a, "--config")) {
		if ((r = cli_handover(c)))
			return -r;
		c->config = opt_value(c, argc, argv, i, "--config", "a configuration file");
		return c->config ? 1 : -RX_OWN;
	}
	if (is_opt(a, "--log")) {
		c->log = opt_value(c, argc, argv, i, "--log", "a file (or 'stderr')");
		return c->log ? 1 : -RX_OWN;
	}
	if (!strcmp(a, "-n") || !strcmp(a, "--dry-run")) {
		c->dry_run = true;
		return 1;
	}
	if (!strcmp(a, "--strict") || !strcmp(a, "--check")) {
		if ((r = cli_handover(c)))
			return -r;
		*(a[2] == 's' ? &c->strict : &c->check) = true;
		return 1;
	}
	if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
		c->quiet = true;
		return 1;
	}
	return 0;
}

/* Sets name to `value` made absolute against the working directory (the
 * program may change directory before the runtime reads it). */
static int export_path(struct cli *c, const char *name, const char *value)
{
	char buf[PATH_MAX * 2];

	if (value[0] == '/' || !strcmp(value, "stderr") || !strcmp(value, "-") || !value[0]) {
		snprintf(buf, sizeof(buf), "%s", value);
	} else if (!c->cwd[0]) {
		cli_err(c, "%s: a relative path needs the working directory, which has no name here (longer than PATH_MAX, or removed): give an absolute path",
			value);
		return RX_OWN;
	} else if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", c->cwd, value) >= sizeof(buf)) {
		cli_err(c, "%s: the path is too long", value);
		return RX_OWN;
	}
	if (setenv(name, buf, 1)) {
		cli_err(c, "cannot set %s: %s", name, strerror(errno));
		return RX_OWN;
	}
	return RX_OK;
}

/*
 * Opens the --log file as the runtime will (declog_open: created 0600 when
 * missing; never a FIFO, a link or another user's file).  When it cannot be
 * used, one warning here, and the program runs without a log rather than
 * every process of it warning.
 */
static void check_log(struct cli *c)
{
	const char *path = env_get("IOSIG_LOG");
	char why[200];
	int fd;

	if (!path || !strcmp(path, "stderr") || !strcmp(path, "-") || !path[0])
		return;
	if (declog_open(path, &fd, why, sizeof(why)) == 0) {
		close(fd);
		return;
	}
	cli_warn(c, "--log %s: %s; the program runs without a decision log", path, why);
	unsetenv("IOSIG_LOG");
	c->log = NULL;
}

int cli_finish(struct cli *c)
{
	if (c->config && export_path(c, "IOSIG_CONFIG", c->config))
		return RX_OWN;
	if (c->log && export_path(c, "IOSIG_LOG", c->log))
		return RX_OWN;
	if (c->log)
		check_log(c);
	if (c->dry_run) {
		if (!c->log && !env_get("IOSIG_LOG") && setenv("IOSIG_LOG", "stderr", 1) == 0)
			c->log = "stderr";
		setenv("IOSIG_DRYRUN", "1", 1);
	}
	if (c->strict)
		setenv("IOSIG_STRICT", "1", 1);
	/* The preload library's own warnings (the first open a rule matches
	 * in a process that no mount can take) follow --quiet. */
	if (c->quiet)
		setenv(RULES_QUIET_ENV, "1", 1);
	else
		unsetenv(RULES_QUIET_ENV);
	rules_resolve_links(c->rs);
	for (size_t i = 0; i < c->rs->nnotes; i++)
		cli_warn(c, "%s", c->rs->notes[i]);
	/* Building the catalog (the mounts, libmount, the configuration) is
	 * most of what a run costs before the program starts; a program is
	 * run without it unless the user asks for the check (--check), needs
	 * it (--strict), names a configuration to be read (--config: its
	 * errors are reported here) or prepares files.  Otherwise the preload
	 * library checks a rule at the first open it matches (rules_check). */
	if (!c->mode && !c->check && !c->strict && !c->config)
		return RX_OK;
	return cli_check(c);
}
