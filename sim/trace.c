/* SPDX-License-Identifier: MIT */
/*
 * trace.c - what every trace reader shares: opening, bounded line reading,
 * splitting into fields, arrival ordering and error messages.  The formats
 * themselves are in trace_<format>.c.
 */
#include "trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

extern const struct sim_trace_format sim_trace_fmt_blkparse;
extern const struct sim_trace_format sim_trace_fmt_disksim;
extern const struct sim_trace_format sim_trace_fmt_validate;
extern const struct sim_trace_format sim_trace_fmt_mqsim;
extern const struct sim_trace_format sim_trace_fmt_csv;

const struct sim_trace_format *const sim_trace_formats[] = {
	&sim_trace_fmt_blkparse,
	&sim_trace_fmt_disksim,
	&sim_trace_fmt_validate,
	&sim_trace_fmt_mqsim,
	&sim_trace_fmt_csv,
	NULL,
};

const struct sim_trace_format *sim_trace_format_find(const char *name)
{
	for (unsigned i = 0; sim_trace_formats[i]; i++)
		if (!strcasecmp(sim_trace_formats[i]->name, name))
			return sim_trace_formats[i];
	return NULL;
}

int sim_trace_error(struct sim_trace *t, const char *fmt, ...)
{
	int n = snprintf(t->src.err, sizeof(t->src.err), "%s:%lu: ", t->name, t->line);
	va_list ap;

	if (n >= 0 && (size_t)n < sizeof(t->src.err)) {
		va_start(ap, fmt);
		vsnprintf(t->src.err + n, sizeof(t->src.err) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

bool sim_parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ret = v;
	return true;
}

bool sim_parse_fixed(const char *s, unsigned scale, uint64_t *ret)
{
	const uint64_t limit = (uint64_t)INT64_MAX;
	uint64_t v = 0;
	unsigned frac = 0;
	bool digits = false, dot = false, round_up = false;

	for (; *s; s++) {
		if (*s == '.') {
			if (dot)
				return false;
			dot = true;
			continue;
		}
		if (*s < '0' || *s > '9')
			return false;
		digits = true;
		if (dot && frac >= scale) {
			/* First dropped digit decides the rounding. */
			if (frac == scale && *s >= '5')
				round_up = true;
			frac = scale + 1;
			continue;
		}
		if (v > (limit - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
		if (dot)
			frac++;
	}
	if (!digits)
		return false;
	if (frac > scale)
		frac = scale;
	for (; frac < scale; frac++) {
		if (v > limit / 10)
			return false;
		v *= 10;
	}
	if (round_up) {
		if (v == limit)
			return false;
		v++;
	}
	*ret = v;
	return true;
}

/*
 * Reads one line into t->buf without its newline.  1 = a line, 0 = end of
 * file, -EINVAL = too long or contains a NUL byte, -EIO = read error.
 */
static int read_line(struct sim_trace *t)
{
	size_t n = 0;
	int c;

	while ((c = getc_unlocked(t->fp)) != EOF) {
		if (c == '\n')
			break;
		if (c == '\0') {
			t->line++;
			return sim_trace_error(t, "contains a NUL byte: is this a text trace?");
		}
		if (n >= SIM_TRACE_LINE_MAX) {
			t->line++;
			return sim_trace_error(t, "line longer than %u characters", SIM_TRACE_LINE_MAX);
		}
		t->buf[n++] = (char)c;
	}
	if (c == EOF) {
		if (ferror(t->fp)) {
			snprintf(t->src.err, sizeof(t->src.err), "%s:%lu: read error: %s", t->name,
				 t->line + 1, strerror(errno ? errno : EIO));
			return -EIO;
		}
		if (n == 0)
			return 0;
	}
	if (n > 0 && t->buf[n - 1] == '\r')   /* CRLF files */
		n--;
	t->buf[n] = '\0';
	t->line++;
	return 1;
}

/* Splits t->buf into t->field[]; separators are runs of blanks, or sep
 * (fields are then trimmed).  Returns the number of fields. */
static unsigned split(struct sim_trace *t)
{
	char *p = t->buf;
	unsigned n = 0;

	if (!t->fmt->sep) {
		for (;;) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (!*p)
				break;
			if (n < SIM_TRACE_FIELDS_MAX)
				t->field[n++] = p;
			while (*p && *p != ' ' && *p != '\t')
				p++;
			if (!*p)
				break;
			*p++ = '\0';
		}
		return n;
	}
	/* A line of blanks has no field at all. */
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return 0;
	for (;;) {
		char *end = strchr(p, t->fmt->sep), *q;

		if (end)
			*end = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		q = p + strlen(p);
		while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
			*--q = '\0';
		if (n < SIM_TRACE_FIELDS_MAX)
			t->field[n++] = p;
		if (!end)
			break;
		p = end + 1;
	}
	return n;
}

static int trace_next(struct sim_source *src, struct sim_io *ret)
{
	struct sim_trace *t = (struct sim_trace *)src;

	while (!t->done) {
		struct sim_io io;
		int r = read_line(t);

		if (r < 0)
			return r;
		if (r == 0)
			break;
		t->nfield = split(t);
		if (t->nfield == 0)
			continue;
		memset(&io, 0, sizeof(io));
		r = t->fmt->parse(t, &io);
		if (r < 0)
			return r;
		if (r == 2)
			break;
		if (r == 0)
			continue;
		if (t->started && io.arrival_ns < t->last_arrival) {
			io.arrival_ns = t->last_arrival;
			src->clamped++;
		}
		t->last_arrival = io.arrival_ns;
		t->started = true;
		*ret = io;
		return 1;
	}
	t->done = true;
	return 0;
}

static double trace_progress(struct sim_source *src)
{
	struct sim_trace *t = (struct sim_trace *)src;
	long pos;

	if (t->done)
		return 1;
	if (t->size <= 0)
		return -1;
	pos = ftell(t->fp);
	if (pos < 0)
		return -1;
	return (double)pos / (double)t->size;
}

static void trace_destroy(struct sim_source *src)
{
	struct sim_trace *t = (struct sim_trace *)src;

	if (t->own_fp && t->fp)
		fclose(t->fp);
	free(t->state);
	free(t->name);
	free(t);
}

static const struct sim_source_ops trace_ops = {
	.next = trace_next,
	.progress = trace_progress,
	.destroy = trace_destroy,
};

static int unknown_format(const char *format, char *err, size_t errlen)
{
	char list[256];
	size_t off = 0;

	list[0] = '\0';
	for (unsigned i = 0; sim_trace_formats[i] && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
					sim_trace_formats[i]->name);
	snprintf(err, errlen, "unknown trace format '%s' (known: %s)", format, list);
	return -ENOENT;
}

int sim_trace_open_fp(FILE *fp, const char *name, bool own, const char *format,
		      struct sim_source **ret, char *err, size_t errlen)
{
	const struct sim_trace_format *fmt = sim_trace_format_find(format);
	struct sim_trace *t;
	struct stat st;

	if (!fmt)
		return unknown_format(format, err, errlen);
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out_nomem;
	t->name = strdup(name);
	if (!t->name)
		goto out_free_t;
	if (fmt->state_size) {
		t->state = calloc(1, fmt->state_size);
		if (!t->state)
			goto out_free_name;
	}
	t->src.ops = &trace_ops;
	t->src.kind = fmt->name;
	t->src.closed_loop = fmt->closed_loop;
	t->fmt = fmt;
	t->fp = fp;
	t->own_fp = own;
	t->size = (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) ? st.st_size : -1;
	*ret = &t->src;
	return 0;

out_free_name:
	free(t->name);
out_free_t:
	free(t);
out_nomem:
	snprintf(err, errlen, "out of memory opening %s", name);
	return -ENOMEM;
}

int sim_trace_open(const char *path, const char *format, struct sim_source **ret,
		   char *err, size_t errlen)
{
	bool is_stdin = !strcmp(path, "-");
	FILE *fp;
	int r;

	if (!sim_trace_format_find(format))
		return unknown_format(format, err, errlen);
	fp = is_stdin ? stdin : fopen(path, "r");
	if (!fp) {
		r = -errno;
		snprintf(err, errlen, "cannot open trace %s: %s", path, strerror(errno));
		return r;
	}
	r = sim_trace_open_fp(fp, is_stdin ? "<stdin>" : path, !is_stdin, format, ret, err, errlen);
	if (r < 0 && !is_stdin)
		fclose(fp);
	return r;
}
