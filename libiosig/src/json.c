/* SPDX-License-Identifier: MIT */
/* json.c - streaming JSON writer (see json.h). */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>

#include "sig_internal.h"

void json_init(struct json_writer *w, FILE *fp, bool pretty)
{
	w->fp = fp;
	w->pretty = pretty;
	w->depth = 0;
	w->has_items[0] = false;
	w->err = 0;
}

static void indent(struct json_writer *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->fp);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->fp);
}

static bool cont(unsigned char c)
{
	return c >= 0x80 && c <= 0xbf;
}

/* Length of the well-formed UTF-8 sequence at p (Unicode Table 3-7: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 if there is
 * none.  p is NUL-terminated, and NUL is no continuation byte. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return cont(p[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ? 4 : 0;
	}
	return 0;
}

/*
 * JSON text is UTF-8, but mount points, paths and file names are bytes: a
 * byte that starts no well-formed sequence becomes U+FFFD, so that the
 * document stays valid (and parsers accept it) whatever the input.
 */
void json_write_escaped(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);

		switch (*p) {
		case '"': fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\r': fputs("\\r", fp); break;
		case '\t': fputs("\\t", fp); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(fp, "\\u%04x", *p);
			else if (n == 0)
				fputs("\\ufffd", fp);
			else
				fwrite(p, 1, n, fp);
		}
		p += n ? n : 1;
	}
	fputc('"', fp);
}

/* Separator, indentation and "key": before a value at the current depth. */
static void member(struct json_writer *w, const char *key)
{
	if (w->depth > 0) {
		if (w->has_items[w->depth])
			fputc(',', w->fp);
		indent(w);
	}
	w->has_items[w->depth] = true;
	if (key) {
		json_write_escaped(w->fp, key);
		fputs(w->pretty ? ": " : ":", w->fp);
	}
}

static void open_scope(struct json_writer *w, const char *key, char c)
{
	member(w, key);
	fputc(c, w->fp);
	if (w->depth + 1 >= JSON_MAX_DEPTH) {
		if (!w->err)
			w->err = -E2BIG;
		return;
	}
	w->depth++;
	w->has_items[w->depth] = false;
}

static void close_scope(struct json_writer *w, char c)
{
	bool had = w->has_items[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (had)
		indent(w);
	fputc(c, w->fp);
}

void json_obj_begin(struct json_writer *w, const char *key) { open_scope(w, key, '{'); }
void json_obj_end(struct json_writer *w) { close_scope(w, '}'); }
void json_arr_begin(struct json_writer *w, const char *key) { open_scope(w, key, '['); }
void json_arr_end(struct json_writer *w) { close_scope(w, ']'); }

void json_str(struct json_writer *w, const char *key, const char *val)
{
	member(w, key);
	if (val)
		json_write_escaped(w->fp, val);
	else
		fputs("null", w->fp);
}

/*
 * %.15g, or %.17g when that does not read back as the same double, in the C
 * locale whatever the program's LC_NUMERIC: the decision log is written
 * inside user programs, where "0,5" would be two JSON values.  (Not the
 * shortest form of sigp_fmt_double(), which tries every precision: JSON
 * output of the simulator has many numbers.)
 */
static char *fmt_number(double val, char *buf, size_t size)
{
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0), old;

	if (!c) /* out of memory: the slower form that needs no locale object */
		return sigp_fmt_double(val, buf, size);
	old = uselocale(c);
	snprintf(buf, size, "%.15g", val);
	if (strtod(buf, NULL) != val)
		snprintf(buf, size, "%.17g", val);
	uselocale(old);
	freelocale(c);
	return buf;
}

void json_num(struct json_writer *w, const char *key, double val)
{
	member(w, key);
	if (!isfinite(val))
		fputs("null", w->fp);
	else if (val == (double)(int64_t)val && fabs(val) < 9.007199254740992e15)
		fprintf(w->fp, "%" PRId64, (int64_t)val);
	else {
		char buf[32];

		fputs(fmt_number(val, buf, sizeof(buf)), w->fp);
	}
}

void json_int(struct json_writer *w, const char *key, int64_t val)
{
	member(w, key);
	fprintf(w->fp, "%" PRId64, val);
}

void json_uint(struct json_writer *w, const char *key, uint64_t val)
{
	member(w, key);
	fprintf(w->fp, "%" PRIu64, val);
}

void json_bool(struct json_writer *w, const char *key, bool val)
{
	member(w, key);
	fputs(val ? "true" : "false", w->fp);
}

void json_null(struct json_writer *w, const char *key)
{
	member(w, key);
	fputs("null", w->fp);
}

int json_finish(struct json_writer *w)
{
	if (w->pretty)
		fputc('\n', w->fp);
	if (ferror(w->fp) && !w->err)
		w->err = -EIO;
	return w->err;
}
