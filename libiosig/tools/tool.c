/* SPDX-License-Identifier: MIT */
/* tool.c - helpers shared by the `iosig` subcommands (see tool.h). */
#include "tool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *tool_progname = "iosig";

/* format(printf, 2, 0): lets clang check callers and accept the va_list. */
__attribute__((format(printf, 2, 0)))
static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
	if (cmd)
		fprintf(stderr, "%s %s: ", tool_progname, cmd);
	else
		fprintf(stderr, "%s: ", tool_progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
	fprintf(stderr, "%s%s%s: ", tool_progname, cmd ? " " : "", cmd ? cmd : "");
	if (err->file[0])
		fprintf(stderr, "%s:", err->file);
	if (err->line > 0) {
		fprintf(stderr, "%d:", err->line);
		if (err->column > 0)
			fprintf(stderr, "%d:", err->column);
	}
	if (err->file[0] || err->line > 0)
		fputc(' ', stderr);
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : "unknown error");
}

bool tool_parse_double(const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno)
		return false;
	*ret = v;
	return true;
}

struct tool_table {
	unsigned ncols;
	bool *right;     /* right-align column */
	char **cells;    /* rows * ncols, row 0 = headers */
	size_t rows;
	size_t cap;
};

static void table_push(struct tool_table *t, const char *const *cells)
{
	if (t->rows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **n = realloc(t->cells, cap * t->ncols * sizeof(*n));

		if (!n)
			abort();
		t->cells = n;
		t->cap = cap;
	}
	for (unsigned c = 0; c < t->ncols; c++) {
		char *d = strdup(cells[c] ? cells[c] : "");

		if (!d)
			abort();
		t->cells[t->rows * t->ncols + c] = d;
	}
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

void tool_table_print(const struct tool_table *t, FILE *fp)
{
	size_t *w = calloc(t->ncols, sizeof(*w));

	if (!w)
		abort();
	for (size_t r = 0; r < t->rows; r++)
		for (unsigned c = 0; c < t->ncols; c++) {
			size_t l = strlen(t->cells[r * t->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < t->rows; r++) {
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			bool last = c + 1 == t->ncols;

			if (t->right[c])
				fprintf(fp, "%*s", (int)w[c], cell);
			else if (last)
				fputs(cell, fp);
			else
				fprintf(fp, "%-*s", (int)w[c], cell);
			if (!last)
				fputs("  ", fp);
		}
		fputc('\n', fp);
	}
	free(w);
}

void tool_table_free(struct tool_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->rows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->right);
	free(t);
}
