/* SPDX-License-Identifier: MIT */
/*
 * sig_diag.c - diagnostics of the signature language: positions (1-based
 * line and byte column within the pragma text) and "did you mean" hints.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sig_internal.h"

/* 1-based line and byte column of offset off (at most diag->len) of the text. */
static void line_col(const struct sigp_diag *diag, size_t off, int *ret_line, int *ret_col)
{
	size_t line_start = 0;
	int line = 1;

	for (size_t i = 0; i < off; i++) {
		if (diag->text[i] == '\n') {
			line++;
			line_start = i + 1;
		}
	}
	*ret_line = line;
	*ret_col = (int)(off - line_start) + 1;
}

/* Claims the error for the first report: NULL when there is nothing to fill. */
static struct iosig_error *claim(struct sigp_diag *diag, size_t off, size_t len)
{
	struct iosig_error *err;

	if (!diag || diag->reported)
		return NULL;
	diag->reported = true;
	err = diag->err;
	if (!err)
		return NULL;
	if (off > diag->len)
		off = diag->len;
	if (len > diag->len - off)
		len = diag->len - off;
	memset(err, 0, sizeof(*err));
	line_col(diag, off, &err->line, &err->column);
	err->offset = off;
	err->length = len;
	return err;
}

int sigp_vreport(struct sigp_diag *diag, int code, size_t off, size_t len, const char *fmt,
		 va_list ap)
{
	struct iosig_error *err = claim(diag, off, len);

	if (err)
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return code;
}

int sigp_report_related(struct sigp_diag *diag, int code, size_t off, size_t len,
			size_t rel_off, const char *head, const char *tail, ...)
{
	struct iosig_error *err = claim(diag, off, len);
	size_t size = sizeof(err->msg), n, m;
	va_list ap;
	int w;

	if (!err)
		return code;
	if (rel_off > diag->len)
		rel_off = diag->len;
	line_col(diag, rel_off, &err->related_line, &err->related_column);
	err->related_offset = rel_off;
	w = snprintf(err->msg, size, "%s", head);
	n = w < 0 ? 0 : (size_t)w;
	if (n >= size)
		return code;
	w = snprintf(err->msg + n, size - n, "line %d, column %d", err->related_line,
		     err->related_column);
	m = w < 0 ? 0 : (size_t)w;
	if (m >= size - n)
		return code;
	err->related_msg_offset = n;
	err->related_msg_length = m;
	va_start(ap, tail);
	vsnprintf(err->msg + n + m, size - n - m, tail, ap);
	va_end(ap);
	return code;
}

int sigp_report(struct sigp_diag *diag, int code, size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = sigp_vreport(diag, code, off, len, fmt, ap);
	va_end(ap);
	return code;
}

int sigp_report_plain(struct iosig_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	memset(err, 0, sizeof(*err));
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void sigp_src_map(const struct sigp_src *src, size_t off, size_t len, size_t *ret_off,
		  size_t *ret_len)
{
	if (src->exact) {
		*ret_off = src->base + off;
		*ret_len = len;
	} else {
		*ret_off = src->whole_off;
		*ret_len = src->whole_len;
	}
}

int sigp_src_error(const struct sigp_src *src, int code, size_t off, size_t len,
		   const char *fmt, ...)
{
	size_t o, l;
	va_list ap;

	sigp_src_map(src, off, len, &o, &l);
	va_start(ap, fmt);
	code = sigp_vreport(src->diag, code, o, l, fmt, ap);
	va_end(ap);
	return code;
}

#define SIGP_EDIT_MAX 32

unsigned sigp_edit_distance(const char *a, size_t alen, const char *b, size_t blen,
			    unsigned cap)
{
	unsigned d[SIGP_EDIT_MAX + 1][SIGP_EDIT_MAX + 1];

	if (alen > SIGP_EDIT_MAX || blen > SIGP_EDIT_MAX)
		return cap + 1;
	for (size_t i = 0; i <= alen; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= blen; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= alen; i++) {
		for (size_t j = 1; j <= blen; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[alen][blen] > cap ? cap + 1 : d[alen][blen];
}

static bool equal_nocase(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);

	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
			return false;
	return true;
}

const char *sigp_suggest(const char *word, size_t len, const char *const *cands, size_t ncands)
{
	/* A typo of a short word is a different word: allow one edit for up
	 * to 4 characters, two for longer words, three from 10 on. */
	unsigned cap = len <= 4 ? 1 : len < 10 ? 2 : 3;
	const char *best = NULL;
	unsigned best_d = cap + 1;

	for (size_t i = 0; i < ncands; i++)
		if (equal_nocase(word, len, cands[i]))
			return cands[i];
	for (size_t i = 0; i < ncands; i++) {
		unsigned d = sigp_edit_distance(word, len, cands[i], strlen(cands[i]), cap);

		if (d < best_d && d < strlen(cands[i])) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}
