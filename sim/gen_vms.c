/* SPDX-License-Identifier: MIT */
/*
 * gen_vms.c - N virtual machines sharing one disk (burstiness-aware
 * scheduler paper): each VM (stream id 1..N) owns a disk image region and
 * alternates a burst - `burst` bytes transferred sequentially in `size`
 * requests paced at `rate`, as a map task's spill or merge - and a quiet
 * period (exponential, mean `idle`) with sparse small random reads.  All
 * VMs start their first burst together, as the name node dispatches the
 * map tasks at once.
 */
#include <errno.h>

#include "gen.h"

struct vms_opts {
	struct sim_gen_common c;
	uint64_t vms, size, burst, rate, idle;
	double idle_iops, write;
};

static const struct policy_opt vms_tab[] = {
	SIM_GEN_COMMON_OPTS(struct vms_opts),
	{ .name = "vms", .type = POLICY_OPT_UINT, .off = offsetof(struct vms_opts, vms), .def = "4",
	  .min = 1, .max = SIM_GEN_MAX_STREAMS, .help = "virtual machines" },
	{ .name = "size", .type = POLICY_OPT_SIZE, .off = offsetof(struct vms_opts, size),
	  .def = "256KiB", .min = 512, .max = 64ull << 20, .help = "request size within a burst" },
	{ .name = "burst", .type = POLICY_OPT_SIZE, .off = offsetof(struct vms_opts, burst),
	  .def = "64MiB", .min = 4096, .max = 1ull << 40, .help = "bytes moved by one burst" },
	{ .name = "rate", .type = POLICY_OPT_RATE, .off = offsetof(struct vms_opts, rate),
	  .def = "8MiB/s", .min = 1024, .max = 1ull << 40,
	  .help = "bandwidth a VM asks for during a burst (above B_threshold = bursty)" },
	{ .name = "idle", .type = POLICY_OPT_TIME, .off = offsetof(struct vms_opts, idle),
	  .def = "1s", .min = 0, .max = 3600 * POLICY_NS_PER_S,
	  .help = "mean quiet time between bursts (exponential)" },
	{ .name = "idle_iops", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct vms_opts, idle_iops),
	  .def = "5", .fmin = 0, .fmax = 1e6, .help = "small random reads per second while quiet" },
	{ .name = "write", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct vms_opts, write),
	  .def = "0.5", .fmin = 0, .fmax = 1, .help = "probability that a burst writes (else reads)" },
	{ .name = NULL },
};

enum { BURST, QUIET };

static uint64_t gap_ns(const struct vms_opts *o, uint64_t len)
{
	uint64_t g = (uint64_t)((double)len * 1e9 / (double)o->rate);

	return g ? g : 1;
}

static void start_burst(struct sim_gen_stream *s, const struct vms_opts *o, uint64_t t)
{
	s->kind = BURST;
	s->left = o->burst;
	s->op = sim_rng_uniform(&s->rng) < o->write ? POLICY_OP_WRITE : POLICY_OP_READ;
	s->t = t;
}

/* Enters a quiet period at t and schedules the next event. */
static void start_quiet(struct sim_gen_stream *s, const struct vms_opts *o, uint64_t t)
{
	s->kind = QUIET;
	s->until = t + (uint64_t)sim_rng_exp(&s->rng, (double)o->idle);
	s->t = t;
}

/* Next event of a quiet stream after time t: a small read or the next burst. */
static void quiet_next(struct sim_gen_stream *s, const struct vms_opts *o, uint64_t t)
{
	uint64_t next = o->idle_iops > 0 ? t + 1 + (uint64_t)sim_rng_exp(&s->rng, 1e9 / o->idle_iops)
					 : UINT64_MAX;

	if (next >= s->until)
		start_burst(s, o, s->until > t ? s->until : t + 1);
	else
		s->t = next;
}

static int vms_init(struct sim_gen *g, char *err, size_t errlen)
{
	const struct vms_opts *o = g->opts;
	uint64_t region;
	int r;

	r = sim_gen_common(g, &o->c, o->vms * (o->size > 4096 ? o->size : 4096) * 2, err, errlen);
	if (r < 0)
		return r;
	r = sim_gen_streams(g, (unsigned)o->vms);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	region = g->span / o->vms;
	region -= region % 4096;
	for (unsigned i = 0; i < g->nstream; i++) {
		struct sim_gen_stream *s = &g->stream[i];

		s->id = i + 1;
		s->base = (uint64_t)i * region;
		s->size = region;
		s->pos = 0;
		start_burst(s, o, 0);
	}
	return 0;
}

static void vms_emit(struct sim_gen *g, unsigned i, struct sim_io *io)
{
	const struct vms_opts *o = g->opts;
	struct sim_gen_stream *s = &g->stream[i];

	io->stream = s->id;
	/* What its signature declares: a disk image moved in bulky sequential runs. */
	io->hint_size = o->size;
	io->hint_pattern = POLICY_PATTERN_SEQUENTIAL;
	if (s->kind == QUIET) {
		io->op = POLICY_OP_READ;
		io->len = 4096;
		io->offset = sim_gen_offset(&s->rng, s->base, s->size, 4096, 4096);
		quiet_next(s, o, s->t);
		return;
	}
	io->op = s->op;
	io->len = s->left < o->size ? s->left : o->size;
	if (io->len > s->size)
		io->len = s->size;
	if (s->pos + io->len > s->size)
		s->pos = 0;               /* the image wraps */
	io->offset = s->base + s->pos;
	s->pos += io->len;
	s->left -= s->left < io->len ? s->left : io->len;
	if (s->left) {
		s->t += gap_ns(o, io->len);
	} else {
		start_quiet(s, o, s->t + gap_ns(o, io->len));
		quiet_next(s, o, s->t);
	}
}

const struct sim_gen_kind sim_gen_vms = {
	.name = "vms",
	.summary = "N VMs alternating sequential bursts and quiet periods (burstiness-aware scheduler)",
	.opts = vms_tab,
	.opts_size = sizeof(struct vms_opts),
	.init = vms_init,
	.emit = vms_emit,
};
