/* SPDX-License-Identifier: MIT */
/*
 * gen_mapreduce.c - a MapReduce-like node as the BID paper describes it:
 * `bulky` processes each read or write whole HDFS chunks sequentially in
 * large requests with short gaps, then move to another chunk elsewhere on
 * the disk; `light` processes interrupt them with small random requests
 * (shuffle spills, logs, metadata).  Streams: bulky process i has id
 * 100 + i, light process j has id 200 + j.
 */
#include <errno.h>

#include "gen.h"

struct mr_opts {
	struct sim_gen_common c;
	uint64_t bulky, light;
	uint64_t bulky_size, chunk, bulky_gap, bulky_pause;
	double bulky_read;
	uint64_t light_size, light_gap;
	double light_read;
};

static const struct policy_opt mr_tab[] = {
	SIM_GEN_COMMON_OPTS(struct mr_opts),
	{ .name = "bulky", .type = POLICY_OPT_UINT, .off = offsetof(struct mr_opts, bulky), .def = "4",
	  .min = 0, .max = 1024, .help = "bulky sequential processes (map/reduce tasks)" },
	{ .name = "light", .type = POLICY_OPT_UINT, .off = offsetof(struct mr_opts, light), .def = "4",
	  .min = 0, .max = 1024, .help = "light interrupting processes" },
	{ .name = "bulky_size", .type = POLICY_OPT_SIZE, .off = offsetof(struct mr_opts, bulky_size),
	  .def = "128KiB", .min = 512, .max = 64ull << 20, .help = "request size of bulky processes" },
	{ .name = "chunk", .type = POLICY_OPT_SIZE, .off = offsetof(struct mr_opts, chunk),
	  .def = "64MiB", .min = 4096, .max = 1ull << 40,
	  .help = "sequential run before a bulky process moves on (HDFS block)" },
	{ .name = "bulky_gap", .type = POLICY_OPT_TIME, .off = offsetof(struct mr_opts, bulky_gap),
	  .def = "100ms", .min = 0, .max = 3600 * POLICY_NS_PER_S,
	  .help = "mean gap between a bulky process's requests (exponential)" },
	{ .name = "bulky_pause", .type = POLICY_OPT_TIME, .off = offsetof(struct mr_opts, bulky_pause),
	  .def = "50ms", .min = 0, .max = 3600 * POLICY_NS_PER_S,
	  .help = "mean pause between two chunks of a bulky process (exponential)" },
	{ .name = "bulky_read", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct mr_opts, bulky_read),
	  .def = "0.5", .fmin = 0, .fmax = 1, .help = "probability that a chunk is read (else written)" },
	{ .name = "light_size", .type = POLICY_OPT_SIZE, .off = offsetof(struct mr_opts, light_size),
	  .def = "4KiB", .min = 512, .max = 64ull << 20, .help = "request size of light processes" },
	{ .name = "light_gap", .type = POLICY_OPT_TIME, .off = offsetof(struct mr_opts, light_gap),
	  .def = "200ms", .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "mean gap between a light process's requests (exponential)" },
	{ .name = "light_read", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct mr_opts, light_read),
	  .def = "0.3", .fmin = 0, .fmax = 1, .help = "read fraction of light requests" },
	{ .name = NULL },
};

enum { BULKY, LIGHT };

static void new_chunk(struct sim_gen *g, struct sim_gen_stream *s, const struct mr_opts *o)
{
	s->pos = sim_gen_offset(&s->rng, 0, g->span, o->chunk, o->chunk);
	s->left = o->chunk;
	s->op = sim_rng_uniform(&s->rng) < o->bulky_read ? POLICY_OP_READ : POLICY_OP_WRITE;
}

static int mr_init(struct sim_gen *g, char *err, size_t errlen)
{
	const struct mr_opts *o = g->opts;
	int r;

	if (!o->bulky && !o->light) {
		snprintf(err, errlen, "needs at least one bulky or light process");
		return -EINVAL;
	}
	if (o->chunk < o->bulky_size) {
		snprintf(err, errlen, "chunk (%llu bytes) is smaller than bulky_size (%llu)",
			 (unsigned long long)o->chunk, (unsigned long long)o->bulky_size);
		return -EINVAL;
	}
	r = sim_gen_common(g, &o->c, o->chunk, err, errlen);
	if (r < 0)
		return r;
	r = sim_gen_streams(g, (unsigned)(o->bulky + o->light));
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	for (unsigned i = 0; i < g->nstream; i++) {
		struct sim_gen_stream *s = &g->stream[i];

		if (i < o->bulky) {
			s->kind = BULKY;
			s->id = 100 + i;
			new_chunk(g, s, o);
			s->t = (uint64_t)sim_rng_exp(&s->rng, (double)o->bulky_gap);
		} else {
			s->kind = LIGHT;
			s->id = 200 + (i - (unsigned)o->bulky);
			s->t = (uint64_t)sim_rng_exp(&s->rng, (double)o->light_gap);
		}
	}
	return 0;
}

static void mr_emit(struct sim_gen *g, unsigned i, struct sim_io *io)
{
	const struct mr_opts *o = g->opts;
	struct sim_gen_stream *s = &g->stream[i];

	io->stream = s->id;
	if (s->kind == BULKY) {
		uint64_t len = s->left < o->bulky_size ? s->left : o->bulky_size;

		io->op = s->op;
		io->offset = s->pos;
		io->len = len;
		io->hint_size = o->bulky_size;              /* what its signature declares */
		io->hint_pattern = POLICY_PATTERN_SEQUENTIAL;
		s->pos += len;
		s->left -= len;
		s->t += (uint64_t)sim_rng_exp(&s->rng, (double)o->bulky_gap);
		if (!s->left) {
			new_chunk(g, s, o);
			s->t += (uint64_t)sim_rng_exp(&s->rng, (double)o->bulky_pause);
		}
		return;
	}
	io->op = sim_rng_uniform(&s->rng) < o->light_read ? POLICY_OP_READ : POLICY_OP_WRITE;
	io->len = o->light_size;
	io->offset = sim_gen_offset(&s->rng, 0, g->span, o->light_size, 4096);
	io->hint_size = o->light_size;
	io->hint_pattern = POLICY_PATTERN_RANDOM;
	s->t += 1 + (uint64_t)sim_rng_exp(&s->rng, (double)o->light_gap);
}

const struct sim_gen_kind sim_gen_mapreduce = {
	.name = "mapreduce",
	.summary = "bulky sequential HDFS-chunk processes plus light random interrupting ones (BID)",
	.opts = mr_tab,
	.opts_size = sizeof(struct mr_opts),
	.init = mr_init,
	.emit = mr_emit,
};
