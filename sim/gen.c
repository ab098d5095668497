/* SPDX-License-Identifier: MIT */
/*
 * gen.c - what the workload generators share: option parsing, per-stream
 * PRNGs, and the merge of the streams in time order (a small heap keyed
 * by (due time, stream index), so ties are broken the same way each run).
 */
#include "gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const struct sim_gen_kind sim_gen_mapreduce, sim_gen_pangu, sim_gen_vms, sim_gen_dfsio;

const struct sim_gen_kind *const sim_gen_kinds[] = {
	&sim_gen_mapreduce, &sim_gen_pangu, &sim_gen_vms, &sim_gen_dfsio, NULL,
};

static bool before(const struct sim_gen *g, unsigned a, unsigned b)
{
	const struct sim_gen_stream *x = &g->stream[a], *y = &g->stream[b];

	return x->t != y->t ? x->t < y->t : a < b;
}

static void sift_down(struct sim_gen *g, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i, tmp;

		if (l < g->nheap && before(g, g->heap[l], g->heap[m]))
			m = l;
		if (r < g->nheap && before(g, g->heap[r], g->heap[m]))
			m = r;
		if (m == i)
			return;
		tmp = g->heap[i];
		g->heap[i] = g->heap[m];
		g->heap[m] = tmp;
		i = m;
	}
}

int sim_gen_streams(struct sim_gen *g, unsigned n)
{
	g->stream = calloc(n, sizeof(*g->stream));
	g->heap = calloc(n, sizeof(*g->heap));
	if (!g->stream || !g->heap)
		return -ENOMEM;
	g->nstream = n;
	for (unsigned i = 0; i < n; i++) {
		/* Independent streams: the seed mixed with the stream number. */
		sim_rng_seed(&g->stream[i].rng, g->seed ^ (0x9e3779b97f4a7c15ull * (i + 1)));
		g->stream[i].id = i;
	}
	return 0;
}

uint64_t sim_gen_offset(struct sim_rng *r, uint64_t base, uint64_t size, uint64_t len,
			uint64_t align)
{
	uint64_t slots;

	if (!align)
		align = 512;
	if (len >= size)
		return base;
	slots = (size - len) / align + 1;
	return base + sim_rng_below(r, slots) * align;
}

static int gen_next(struct sim_source *src, struct sim_io *ret)
{
	struct sim_gen *g = (struct sim_gen *)src;
	unsigned s;

	if (!g->nheap || (g->max_requests && g->emitted >= g->max_requests))
		return 0;
	s = g->heap[0];
	if (g->stream[s].t == UINT64_MAX || (g->end_ns && g->stream[s].t >= g->end_ns)) {
		g->nheap = 0;
		return 0;
	}
	memset(ret, 0, sizeof(*ret));
	ret->arrival_ns = g->stream[s].t;
	g->kind->emit(g, s, ret);
	if (ret->op == POLICY_OP_READ)
		ret->flags |= POLICY_REQ_SYNC;
	g->emitted++;
	sift_down(g, 0);
	return 1;
}

static double gen_progress(struct sim_source *src)
{
	struct sim_gen *g = (struct sim_gen *)src;
	double a = -1, b = -1;

	if (g->max_requests)
		a = (double)g->emitted / (double)g->max_requests;
	if (g->end_ns && g->nheap)
		b = (double)g->stream[g->heap[0]].t / (double)g->end_ns;
	return a > b ? (a > 1 ? 1 : a) : (b > 1 ? 1 : b);
}

static void gen_destroy(struct sim_source *src)
{
	struct sim_gen *g = (struct sim_gen *)src;

	free(g->stream);
	free(g->heap);
	free(g->opts);
	free(g);
}

static const struct sim_source_ops gen_ops = {
	.next = gen_next,
	.progress = gen_progress,
	.destroy = gen_destroy,
};

int sim_gen_create(const char *spec, uint64_t seed, uint64_t capacity, struct sim_source **ret,
		   char *err, size_t errlen)
{
	const struct sim_gen_kind *kind = NULL;
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
	struct sim_gen *g;
	char msg[256];
	int r;

	for (unsigned i = 0; sim_gen_kinds[i]; i++)
		if (strlen(sim_gen_kinds[i]->name) == n && !strncasecmp(sim_gen_kinds[i]->name, spec, n))
			kind = sim_gen_kinds[i];
	if (!kind) {
		char known[256] = "";

		for (unsigned i = 0; sim_gen_kinds[i]; i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				 i ? ", " : "", sim_gen_kinds[i]->name);
		snprintf(err, errlen, "unknown workload '%.*s' (known: %s)", (int)n, spec, known);
		return -ENOENT;
	}
	g = calloc(1, sizeof(*g));
	if (!g || !(g->opts = calloc(1, kind->opts_size))) {
		free(g);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->src.ops = &gen_ops;
	g->src.kind = kind->name;
	g->kind = kind;
	g->seed = seed;
	g->span = capacity;
	sim_rng_seed(&g->rng, seed);
	r = policy_opts_defaults(kind->opts, g->opts, msg, sizeof(msg));
	if (r == 0)
		r = policy_opts_parse(kind->opts, g->opts, colon ? colon + 1 : NULL, msg, sizeof(msg));
	if (r < 0) {
		snprintf(err, errlen, "workload %s: %s", kind->name, msg);
		gen_destroy(&g->src);
		return -EINVAL;
	}
	r = kind->init(g, msg, sizeof(msg));
	if (r < 0) {
		snprintf(err, errlen, "workload %s: %s", kind->name, msg);
		gen_destroy(&g->src);
		return r;
	}
	if (!g->max_requests && !g->end_ns) {
		snprintf(err, errlen, "workload %s: give requests=N or duration=T (both are 0)",
			 kind->name);
		gen_destroy(&g->src);
		return -EINVAL;
	}
	g->nheap = g->nstream;
	for (unsigned i = 0; i < g->nstream; i++)
		g->heap[i] = i;
	for (unsigned i = g->nheap / 2 + 1; i-- > 0;)
		sift_down(g, i);
	*ret = &g->src;
	return 0;
}

void sim_gen_help(FILE *fp)
{
	for (unsigned i = 0; sim_gen_kinds[i]; i++) {
		struct policy_ops fake = {
			.name = sim_gen_kinds[i]->name, .summary = sim_gen_kinds[i]->summary,
			.opts = sim_gen_kinds[i]->opts,
		};

		fputs("\n", fp);
		policy_help(&fake, fp);
	}
}

int sim_gen_common(struct sim_gen *g, const struct sim_gen_common *c, uint64_t min_span,
		   char *err, size_t errlen)
{
	g->max_requests = c->requests;
	g->end_ns = c->duration;
	if (c->span)
		g->span = c->span;
	g->span -= g->span % 4096;
	if (g->span < min_span) {
		snprintf(err, errlen, "address span of %llu bytes is smaller than the %llu this "
			 "workload needs", (unsigned long long)g->span, (unsigned long long)min_span);
		return -EINVAL;
	}
	return 0;
}
