/* SPDX-License-Identifier: MIT */
/*
 * gen_pangu.c - a Pangu-like storage node (BCW/MIOS paper, Table 1 and
 * Fig. 2): most requests are writes, most of them small (4-16 KiB, a few
 * large ones up to 1 MiB), arriving as a Poisson process whose rate jumps
 * to burst_rate for burst_len every burst_every.  Writes append to the log
 * of one of `clients` chunk streams (ids 1..clients); reads are random.
 */
#include <errno.h>
#include <math.h>

#include "gen.h"

struct pangu_opts {
	struct sim_gen_common c;
	double rate, burst_rate;
	uint64_t burst_len, burst_every;
	double write, large;
	uint64_t clients;
};

static const struct policy_opt pangu_tab[] = {
	SIM_GEN_COMMON_OPTS(struct pangu_opts),
	{ .name = "rate", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct pangu_opts, rate),
	  .def = "1500", .fmin = 0.001, .fmax = 1e8, .help = "requests per second between bursts" },
	{ .name = "burst_rate", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct pangu_opts, burst_rate),
	  .def = "11000", .fmin = 0.001, .fmax = 1e8,
	  .help = "requests per second during a burst (11K/s in the paper's workload D)" },
	{ .name = "burst_len", .type = POLICY_OPT_TIME, .off = offsetof(struct pangu_opts, burst_len),
	  .def = "200ms", .min = 0, .max = 3600 * POLICY_NS_PER_S, .help = "length of a burst" },
	{ .name = "burst_every", .type = POLICY_OPT_TIME, .off = offsetof(struct pangu_opts, burst_every),
	  .def = "2s", .min = 1, .max = 3600 * POLICY_NS_PER_S, .help = "period of the bursts" },
	{ .name = "write", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct pangu_opts, write),
	  .def = "0.9", .fmin = 0, .fmax = 1, .help = "write fraction (77-95% in Pangu)" },
	{ .name = "large", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct pangu_opts, large),
	  .def = "0.05", .fmin = 0, .fmax = 1,
	  .help = "fraction of large requests (64 KiB, 256 KiB or 1 MiB); the rest are 4, 8 or 16 KiB" },
	{ .name = "clients", .type = POLICY_OPT_UINT, .off = offsetof(struct pangu_opts, clients),
	  .def = "8", .min = 1, .max = SIM_GEN_MAX_STREAMS - 1, .help = "append streams (chunk logs)" },
	{ .name = NULL },
};

static bool in_burst(const struct sim_gen *g, uint64_t t, uint64_t *ret_boundary)
{
	const struct pangu_opts *o = g->opts;
	uint64_t phase = g->stream[0].base;   /* start of the first burst */
	uint64_t k, start;

	if (t < phase) {
		*ret_boundary = phase;
		return false;
	}
	k = (t - phase) / o->burst_every;
	start = phase + k * o->burst_every;
	if (t < start + o->burst_len) {
		*ret_boundary = start + o->burst_len;
		return true;
	}
	*ret_boundary = start + o->burst_every;
	return false;
}

/* Next arrival after t of the piecewise-constant-rate Poisson process. */
static uint64_t next_arrival(struct sim_gen *g, uint64_t t)
{
	const struct pangu_opts *o = g->opts;
	double need = sim_rng_exp(&g->stream[0].rng, 1.0);

	for (;;) {
		uint64_t boundary;
		double rate = in_burst(g, t, &boundary) ? o->burst_rate : o->rate;
		double seg = (double)(boundary - t) / 1e9 * rate;

		if (o->burst_len == 0)
			rate = o->rate, seg = INFINITY;
		if (need <= seg)
			return t + 1 + (uint64_t)(need / rate * 1e9);
		need -= seg;
		t = boundary;
	}
}

static int pangu_init(struct sim_gen *g, char *err, size_t errlen)
{
	const struct pangu_opts *o = g->opts;
	uint64_t region;
	int r;

	if (o->burst_len > o->burst_every) {
		snprintf(err, errlen, "burst_len is longer than burst_every");
		return -EINVAL;
	}
	r = sim_gen_common(g, &o->c, o->clients * (4ull << 20), err, errlen);
	if (r < 0)
		return r;
	/* Stream 0 is the arrival process; streams 1..clients hold the logs. */
	r = sim_gen_streams(g, (unsigned)o->clients + 1);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	region = g->span / o->clients;
	region -= region % 4096;
	g->stream[0].base = sim_rng_below(&g->rng, o->burst_every);   /* burst phase */
	for (unsigned i = 1; i < g->nstream; i++) {
		g->stream[i].t = UINT64_MAX;
		g->stream[i].base = (uint64_t)(i - 1) * region;
		g->stream[i].size = region;
		g->stream[i].pos = 0;
	}
	g->stream[0].t = next_arrival(g, 0);
	return 0;
}

static uint64_t draw_size(struct sim_rng *r, double large)
{
	static const uint64_t big[] = { 64 << 10, 256 << 10, 1 << 20 };
	double u = sim_rng_uniform(r);

	if (u < large)
		return big[sim_rng_below(r, 3)];
	u = sim_rng_uniform(r);
	return u < 0.7 ? 4096 : u < 0.9 ? 8192 : 16384;
}

static void pangu_emit(struct sim_gen *g, unsigned i, struct sim_io *io)
{
	const struct pangu_opts *o = g->opts;
	struct sim_gen_stream *s0 = &g->stream[0];
	uint64_t len = draw_size(&s0->rng, o->large);
	unsigned c = 1 + (unsigned)sim_rng_below(&s0->rng, o->clients);
	struct sim_gen_stream *cl = &g->stream[c];

	(void)i;
	io->stream = c;
	io->len = len;
	/* What its signature declares: small sequential appends to a log. */
	io->hint_size = 4096;
	io->hint_pattern = POLICY_PATTERN_SEQUENTIAL;
	if (sim_rng_uniform(&s0->rng) < o->write) {
		io->op = POLICY_OP_WRITE;
		if (cl->pos + len > cl->size)
			cl->pos = 0;          /* the log wraps */
		io->offset = cl->base + cl->pos;
		cl->pos += len;
	} else {
		io->op = POLICY_OP_READ;
		io->offset = sim_gen_offset(&s0->rng, 0, g->span, len, 4096);
	}
	s0->t = next_arrival(g, s0->t);
}

const struct sim_gen_kind sim_gen_pangu = {
	.name = "pangu",
	.summary = "write-dominated bursty small requests on append logs (BCW/MIOS, Pangu)",
	.opts = pangu_tab,
	.opts_size = sizeof(struct pangu_opts),
	.init = pangu_init,
	.emit = pangu_emit,
};
