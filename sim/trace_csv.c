/* SPDX-License-Identifier: MIT */
/*
 * trace_csv.c - a simple documented CSV trace.  Lines starting with '#' and
 * blank lines are ignored.  The first other line is a header naming the
 * columns, in any order (names are case-insensitive):
 *
 *   time_s | time_ms | time_us | time_ns   arrival (plain decimal), required
 *   op                                      R, W, F or read, write, flush
 *   offset (bytes) | lba (512-byte sectors) start address, required
 *   bytes | len (bytes) | sectors           size, required (0 only for flush)
 *   stream | pid                            issuing stream, default 0
 *   dev                                     device number, default 0
 *   sync                                    0 or 1; reads are always sync
 *
 * Example:
 *   time_ms,op,offset,bytes,stream
 *   0.125,W,1048576,65536,7
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "trace.h"

enum csv_col { C_TIME, C_OP, C_ADDR, C_SIZE, C_STREAM, C_DEV, C_SYNC, C_NUM };

struct csv_state {
	bool have_header;
	unsigned ncol;                 /* columns in the header */
	int col[C_NUM];                /* field index of each column, -1 = absent */
	unsigned time_scale;           /* decimals to get ns: 9 for s, 6 ms, 3 us, 0 ns */
	uint64_t addr_mult, size_mult; /* bytes per unit */
};

static const struct {
	const char *name;
	enum csv_col col;
	unsigned time_scale;
	uint64_t mult;
} names[] = {
	{ "time_s", C_TIME, 9, 0 },   { "time_ms", C_TIME, 6, 0 },
	{ "time_us", C_TIME, 3, 0 },  { "time_ns", C_TIME, 0, 0 },
	{ "op", C_OP, 0, 0 },
	{ "offset", C_ADDR, 0, 1 },   { "lba", C_ADDR, 0, SIM_SECTOR },
	{ "bytes", C_SIZE, 0, 1 },    { "len", C_SIZE, 0, 1 },
	{ "sectors", C_SIZE, 0, SIM_SECTOR },
	{ "stream", C_STREAM, 0, 0 }, { "pid", C_STREAM, 0, 0 },
	{ "dev", C_DEV, 0, 0 },       { "sync", C_SYNC, 0, 0 },
};

static int parse_header(struct sim_trace *t, struct csv_state *st)
{
	static const char time_col[] = "a time column (time_s, time_ms, time_us or time_ns)";
	static const char *const required[] = { time_col, "op", "offset or lba",
						"bytes, len or sectors" };

	for (unsigned c = 0; c < C_NUM; c++)
		st->col[c] = -1;
	for (unsigned i = 0; i < t->nfield; i++) {
		unsigned k;

		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcasecmp(t->field[i], names[k].name))
				break;
		if (k == sizeof(names) / sizeof(names[0]))
			return sim_trace_error(t, "header: unknown column '%s' (known: time_s, time_ms, "
					       "time_us, time_ns, op, offset, lba, bytes, len, "
					       "sectors, stream, pid, dev, sync)", t->field[i]);
		if (st->col[names[k].col] >= 0)
			return sim_trace_error(t, "header: column '%s' repeats '%s'", t->field[i],
					       t->field[st->col[names[k].col]]);
		st->col[names[k].col] = (int)i;
		if (names[k].col == C_TIME)
			st->time_scale = names[k].time_scale;
		else if (names[k].col == C_ADDR)
			st->addr_mult = names[k].mult;
		else if (names[k].col == C_SIZE)
			st->size_mult = names[k].mult;
	}
	for (unsigned c = 0; c < 4; c++)
		if (st->col[c] < 0)
			return sim_trace_error(t, "header: no %s column", required[c]);
	st->ncol = t->nfield;
	st->have_header = true;
	return 0;
}

static int parse_csv(struct sim_trace *t, struct sim_io *ret)
{
	struct csv_state *st = t->state;
	const char *op;
	uint64_t v;

	if (t->field[0][0] == '#')
		return 0;
	if (!st->have_header) {
		int r = parse_header(t, st);

		return r < 0 ? r : 0;
	}
	if (t->nfield != st->ncol)
		return sim_trace_error(t, "%u fields, the header has %u", t->nfield, st->ncol);

	if (!sim_parse_fixed(t->field[st->col[C_TIME]], st->time_scale, &ret->arrival_ns))
		return sim_trace_error(t, "time '%s' is not a non-negative decimal number",
				       t->field[st->col[C_TIME]]);
	op = t->field[st->col[C_OP]];
	if (!strcasecmp(op, "R") || !strcasecmp(op, "read"))
		ret->op = POLICY_OP_READ;
	else if (!strcasecmp(op, "W") || !strcasecmp(op, "write"))
		ret->op = POLICY_OP_WRITE;
	else if (!strcasecmp(op, "F") || !strcasecmp(op, "flush"))
		ret->op = POLICY_OP_FLUSH;
	else
		return sim_trace_error(t, "op '%s' is not R, W, F, read, write or flush", op);

	if (!sim_parse_u64(t->field[st->col[C_ADDR]], &v) || v > (UINT64_MAX >> 12) / st->addr_mult)
		return sim_trace_error(t, "address '%s' is not a non-negative integer",
				       t->field[st->col[C_ADDR]]);
	ret->offset = v * st->addr_mult;
	if (!sim_parse_u64(t->field[st->col[C_SIZE]], &v) || v > (1ull << 40) / st->size_mult)
		return sim_trace_error(t, "size '%s' is not an integer below 1 TiB",
				       t->field[st->col[C_SIZE]]);
	ret->len = v * st->size_mult;
	if (ret->op == POLICY_OP_FLUSH) {
		ret->offset = ret->len = 0;
	} else if (ret->len == 0) {
		return sim_trace_error(t, "size 0 for a %s", ret->op == POLICY_OP_READ ? "read" : "write");
	}
	if (st->col[C_STREAM] >= 0) {
		if (!sim_parse_u64(t->field[st->col[C_STREAM]], &v) || v > UINT32_MAX)
			return sim_trace_error(t, "stream '%s' is not a number below 2^32",
					       t->field[st->col[C_STREAM]]);
		ret->stream = (uint32_t)v;
	}
	if (st->col[C_DEV] >= 0) {
		if (!sim_parse_u64(t->field[st->col[C_DEV]], &v) || v > UINT32_MAX)
			return sim_trace_error(t, "dev '%s' is not a number below 2^32",
					       t->field[st->col[C_DEV]]);
		ret->dev = (uint32_t)v;
	}
	if (ret->op == POLICY_OP_READ)
		ret->flags |= POLICY_REQ_SYNC;
	if (st->col[C_SYNC] >= 0) {
		const char *s = t->field[st->col[C_SYNC]];

		if (strcmp(s, "0") && strcmp(s, "1"))
			return sim_trace_error(t, "sync '%s' is neither 0 nor 1", s);
		if (s[0] == '1')
			ret->flags |= POLICY_REQ_SYNC;
	}
	return 1;
}

const struct sim_trace_format sim_trace_fmt_csv = {
	.name = "csv",
	.summary = "CSV with a header: time_s|time_ms|time_us|time_ns,op,offset|lba,"
		   "bytes|sectors[,stream][,dev][,sync]",
	.sep = ',',
	.state_size = sizeof(struct csv_state),
	.parse = parse_csv,
};
