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

int sigp_vreport(struct sigp_diag *diag, int code, size_t off, size_t len, const char *fmt,
		 va_list ap)
{
	struct iosig_error *err;
	size_t line_start = 0;
	int line = 1;

	if (!diag || diag->reported)
		return code;
	diag->reported = true;
	err = diag->err;
	if (!err)
		return code;
	if (off > diag->len)
		off = diag->len;
	if (len > diag->len - off)
		len = diag->len - off;
	for (size_t i = 0; i < off; i++) {
		if (diag->text[i] == '\n') {
			line++;
			line_start = i + 1;
		}
	}
	err->file[0] = '\0';
	err->line = line;
	err->column = (int)(off - line_start) + 1;
	err->offset = off;
	err->length = len;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
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
