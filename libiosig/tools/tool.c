/* SPDX-License-Identifier: MIT */
/* tool.c - helpers shared by the `iosig` subcommands (see tool.h). */
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "sig_internal.h"

const char *tool_progname = "iosig";

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

char *tool_printable(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort();
	for (char *p = d; *p; p++)
		if (is_control((unsigned char)*p))
			*p = '?';
	return d;
}

/* format(printf, 2, 0): lets clang check callers and accept the va_list. */
__attribute__((format(printf, 2, 0)))
static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
	char *text = NULL;

	if (cmd)
		fprintf(stderr, "%s %s: ", tool_progname, cmd);
	else
		fprintf(stderr, "%s: ", tool_progname);
	if (vasprintf(&text, fmt, ap) < 0)
		abort();
	/* Messages quote paths and names: no escape sequences through them. */
	for (char *p = text; *p; p++)
		if (is_control((unsigned char)*p) && *p != '\n' && *p != '\t')
			*p = '?';
	fputs(text, stderr);
	fputc('\n', stderr);
	free(text);
}

void tool_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
}

int tool_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s %s --help'.\n", tool_progname, cmd ? cmd : "");
	return TOOL_EXIT_USAGE;
}

void tool_print_error(const char *cmd, const struct iosig_error *err)
{
	char *file = tool_printable(err->file), *msg = tool_printable(err->msg);

	fprintf(stderr, "%s%s%s: ", tool_progname, cmd ? " " : "", cmd ? cmd : "");
	if (file[0])
		fprintf(stderr, "%s:", file);
	if (err->line > 0) {
		fprintf(stderr, "%d:", err->line);
		if (err->column > 0)
			fprintf(stderr, "%d:", err->column);
	}
	if (file[0] || err->line > 0)
		fputc(' ', stderr);
	fprintf(stderr, "%s\n", msg[0] ? msg : "unknown error");
	free(file);
	free(msg);
}

const struct iosig_catalog *tool_runtime_catalog(const char *cmd, const char *config,
						 struct iosig_catalog **ret_own)
{
	struct iosig_catalog_opts opts;
	const struct iosig_catalog *cat;
	struct iosig_error err;

	*ret_own = NULL;
	memset(&err, 0, sizeof(err));
	if (config) {
		memset(&opts, 0, sizeof(opts));
		opts.config = config;
		if (iosig_catalog_new(&opts, ret_own, &err) < 0) {
			tool_print_error(cmd, &err);
			return NULL;
		}
		return *ret_own;
	}
	cat = cat_default(&err);
	if (!cat)
		tool_print_error(cmd, &err);
	return cat;
}

int tool_option_err(const char *cmd, int c, char *const *argv, const struct option *longopts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	size_t n;
	unsigned matches = 0;
	const struct option *hit = NULL;

	if (strncmp(arg, "--", 2)) {
		/* A short option: getopt names the character in optopt (optind
		 * may still point into a cluster such as -jx). */
		if (c == ':')
			return tool_usage_err(cmd, "option '-%c' needs a value", optopt);
		if (optopt > ' ' && optopt < 127)
			return tool_usage_err(cmd, "unknown option '-%c'", optopt);
		return tool_usage_err(cmd, "unknown option '%s'", arg);
	}
	n = strcspn(arg + 2, "=");
	for (const struct option *o = longopts; o->name; o++) {
		if (strncmp(o->name, arg + 2, n))
			continue;
		if (strlen(o->name) == n) {
			hit = o;
			matches = 1;
			break;
		}
		hit = o;
		matches++;
	}
	if (c == ':')
		return tool_usage_err(cmd, "option '%.*s' needs a value", (int)(n + 2), arg);
	if (matches > 1)
		return tool_usage_err(cmd, "option '%.*s' is ambiguous: spell it out", (int)(n + 2),
				      arg);
	if (hit && arg[2 + n] == '=' && hit->has_arg == no_argument)
		return tool_usage_err(cmd, "option '--%s' takes no value", hit->name);
	return tool_usage_err(cmd, "unknown option '%.*s'", (int)(n + 2), arg);
}

int tool_parse_uint(const char *cmd, const char *opt, const char *s, unsigned long long min,
		    unsigned long long max, int base, unsigned long long *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	/* strtoull() would skip blanks and negate a '-' into a huge value. */
	if (*s == '-' || *s == '+' || *s == ' ' || !*s)
		goto bad;
	v = strtoull(s, &end, base);
	if (*end || errno || v < min || v > max)
		goto bad;
	*ret = v;
	return 0;
bad:
	return tool_usage_err(cmd, "--%s takes a whole number from %llu to %llu, not '%s'", opt, min,
			      max, s);
}

int tool_parse_value(const char *cmd, const char *opt, const char *s, enum iosig_dim dim,
		     const char *expect, double *ret)
{
	struct iosig_error err = { 0 };
	double v;

	if (iosig_parse_value(s, dim, &v, &err) < 0)
		return tool_usage_err(cmd, "--%s '%s': %s; expected %s", opt, s,
				      err.msg[0] ? err.msg : "not a value", expect);
	*ret = v;
	return 0;
}

int tool_parse_size(const char *cmd, const char *opt, const char *s, bool positive, double *ret)
{
	char msg[160];
	double v;

	if (tool_parse_value(cmd, opt, s, IOSIG_DIM_SIZE, "a size such as 1GiB or 64*MiB", &v))
		return TOOL_EXIT_USAGE;
	/* totalsize's range: the value becomes a uint64_t. */
	if (sigp_param_check(IOSIG_P_TOTALSIZE, v, msg, sizeof(msg)) < 0)
		return tool_usage_err(cmd, "--%s '%s' must be from 0 to 2^63 bytes (8 EiB)", opt,
				      s);
	if (positive && !(v > 0))
		return tool_usage_err(cmd, "--%s '%s' must be greater than 0", opt, s);
	*ret = v;
	return 0;
}

/* The narrowest a fitted first column gets when a cell needs more. */
#define TABLE_FIT_MIN 12

struct tool_table {
	unsigned ncols;
	bool *right;     /* right-align column */
	char **cells;    /* rows * ncols, row 0 = headers */
	char **notes;    /* rows: NULL or the line under that row */
	size_t rows;
	size_t cap;
	unsigned fit;    /* tool_table_fit() width; 0: the plain layout */
};

static void table_push(struct tool_table *t, const char *const *cells)
{
	if (t->rows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **n = realloc(t->cells, cap * t->ncols * sizeof(*n));
		char **notes = n ? realloc(t->notes, cap * sizeof(*notes)) : NULL;

		if (!notes)
			abort();
		t->cells = n;
		t->notes = notes;
		t->cap = cap;
	}
	for (unsigned c = 0; c < t->ncols; c++)
		t->cells[t->rows * t->ncols + c] = tool_printable(cells[c]);
	t->notes[t->rows] = NULL;
	t->rows++;
}

struct tool_table *tool_table_new(unsigned ncols, const char *const *headers)
{
	struct tool_table *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	t->ncols = ncols;
	t->right = calloc(ncols, sizeof(*t->right));
	if (!t->right)
		abort();
	table_push(t, headers);
	return t;
}

void tool_table_row(struct tool_table *t, const char *const *cells)
{
	table_push(t, cells);
}

void tool_table_align_right(struct tool_table *t, unsigned col)
{
	if (col < t->ncols)
		t->right[col] = true;
}

void tool_table_note(struct tool_table *t, const char *text)
{
	/* Row 0 holds the headers: a note goes under a row of data. */
	if (t->rows < 2)
		return;
	free(t->notes[t->rows - 1]);
	t->notes[t->rows - 1] = tool_printable(text);
}

void tool_table_fit(struct tool_table *t, unsigned width)
{
	t->fit = width;
}

/* The first column's width in the fitted layout, given the widths of the
 * others (w[1..]) and of its widest cell. */
static size_t fit_first(const struct tool_table *t, const size_t *w, size_t widest)
{
	size_t used = 0, avail;

	for (unsigned c = 1; c < t->ncols; c++)
		used += w[c] + 1;
	/* Leave the terminal's last column free: a full line wraps on some. */
	avail = t->fit > used + 1 ? t->fit - used - 1 : 0;
	if (avail < TABLE_FIT_MIN)
		avail = TABLE_FIT_MIN;
	return widest < avail ? widest : avail;
}

void tool_table_print(const struct tool_table *t, FILE *fp)
{
	size_t *w = calloc(t->ncols, sizeof(*w));
	const char *gap = t->fit ? " " : "  ";

	if (!w)
		abort();
	for (size_t r = 0; r < t->rows; r++)
		for (unsigned c = 0; c < t->ncols; c++) {
			size_t l = strlen(t->cells[r * t->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	if (t->fit && t->ncols > 1)
		w[0] = fit_first(t, w, w[0]);
	for (size_t r = 0; r < t->rows; r++) {
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			bool last = c + 1 == t->ncols;

			if (c == 0 && strlen(cell) > w[0] && !last) {
				/* Too long for its column: a line of its own. */
				fprintf(fp, "%s\n%-*s", cell, (int)w[0], "");
			} else if (t->right[c]) {
				fprintf(fp, "%*s", (int)w[c], cell);
			} else if (last) {
				fputs(cell, fp);
			} else {
				fprintf(fp, "%-*s", (int)w[c], cell);
			}
			if (!last)
				fputs(gap, fp);
		}
		fputc('\n', fp);
		if (t->notes[r])
			fprintf(fp, "%s\n", t->notes[r]);
	}
	free(w);
}

void tool_table_free(struct tool_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->rows * t->ncols; i++)
		free(t->cells[i]);
	for (size_t r = 0; r < t->rows; r++)
		free(t->notes[r]);
	free(t->notes);
	free(t->cells);
	free(t->right);
	free(t);
}
