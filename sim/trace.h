/* SPDX-License-Identifier: MIT */
/*
 * trace.h - block trace readers (blkparse text, DiskSim ASCII, DiskSim
 * validate, MQSim, CSV) as streaming sources.  Every reader reports bad
 * input as "file:line: what is wrong"; see docs/sim.md for each format and
 * which fields are used.
 */
#ifndef IOSIG_SIM_TRACE_H
#define IOSIG_SIM_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "source.h"

#define SIM_TRACE_LINE_MAX 4096   /* longest accepted line, without the newline */
#define SIM_TRACE_FIELDS_MAX 32   /* fields kept per line (extra ones are ignored) */

struct sim_trace;

/* One trace format. */
struct sim_trace_format {
	const char *name;          /* as given to --format */
	const char *summary;       /* one line for --help */
	char sep;                  /* field separator; 0 = runs of blanks */
	bool closed_loop;          /* see struct sim_source */
	size_t state_size;         /* bytes of zeroed per-reader state (t->state) */
	/* Parses the current line (t->field[0..t->nfield-1], never empty).
	 * Returns 1 with *ret filled, 0 to skip the line, 2 at the end of the
	 * events (e.g. blkparse's summary), or -EINVAL after sim_trace_error(). */
	int (*parse)(struct sim_trace *t, struct sim_io *ret);
};

/* A reader; formats see these fields. */
struct sim_trace {
	struct sim_source src;
	const struct sim_trace_format *fmt;
	FILE *fp;
	bool own_fp;
	char *name;                        /* file name for messages */
	unsigned long line;                /* current line number (1-based) */
	long long size;                    /* file size for progress, -1 unknown */
	uint64_t last_arrival;             /* to keep arrivals in order */
	bool started;                      /* a request was returned */
	bool done;                         /* end reached */
	void *state;                       /* fmt->state_size bytes */
	unsigned nfield;                   /* fields of the current line */
	char *field[SIM_TRACE_FIELDS_MAX];
	char buf[SIM_TRACE_LINE_MAX + 2];
};

/* The formats, in --help order, NULL-terminated. */
extern const struct sim_trace_format *const sim_trace_formats[];
/* Format called name, or NULL. */
const struct sim_trace_format *sim_trace_format_find(const char *name);

/*
 * Opens a trace file ("-" = standard input) in the named format.  On
 * failure returns -errno (-ENOENT unknown format or missing file) with a
 * message in err and leaves *ret untouched.
 */
int sim_trace_open(const char *path, const char *format, struct sim_source **ret,
		   char *err, size_t errlen);
/* Same on an open stream; name is used in messages; the stream is closed
 * by the source's destroy() only if own is true. */
int sim_trace_open_fp(FILE *fp, const char *name, bool own, const char *format,
		      struct sim_source **ret, char *err, size_t errlen);

/* For formats: records "name:line: message" in t->src.err; returns -EINVAL. */
int sim_trace_error(struct sim_trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- number parsing shared by the readers (and the CLI) ---- */

/* Whole string is a decimal integer without sign; no overflow. */
bool sim_parse_u64(const char *s, uint64_t *ret);
/* Whole string is a non-negative decimal "123", "12.5", ".5" (no sign, no
 * exponent); *ret = value * 10^scale, rounded to nearest.  False if
 * malformed or the result does not fit in 63 bits. */
bool sim_parse_fixed(const char *s, unsigned scale, uint64_t *ret);

#endif /* IOSIG_SIM_TRACE_H */
