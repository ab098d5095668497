/* SPDX-License-Identifier: MIT */
/* pol_hist.c - log-linear latency histogram (see pol_hist.h). */
#include "pol_hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define SUB (1u << POL_HIST_SUB_BITS)

static unsigned bucket_of(uint64_t v)
{
	unsigned msb, e;

	if (v >= (1ull << POL_HIST_MAX_BITS))
		v = (1ull << POL_HIST_MAX_BITS) - 1;
	if (v < 2 * SUB)
		return (unsigned)v;
	msb = 63 - (unsigned)__builtin_clzll(v);
	e = msb - POL_HIST_SUB_BITS;     /* >= 1; v >> e is in [SUB, 2*SUB) */
	return e * SUB + (unsigned)(v >> e);
}

/* Lowest value of bucket i and its width. */
static void bucket_range(unsigned i, double *lo, double *width)
{
	unsigned e, m;

	if (i < 2 * SUB) {
		*lo = i;
		*width = 1;
		return;
	}
	e = i / SUB - 1;
	m = i - e * SUB;
	*lo = ldexp((double)m, (int)e);
	*width = ldexp(1.0, (int)e);
}

void pol_hist_init(struct pol_hist *h)
{
	h->count = 0;
	h->sum = 0;
	h->min = UINT64_MAX;
	h->max = 0;
	h->bucket = NULL;
}

void pol_hist_free(struct pol_hist *h)
{
	if (!h)
		return;
	free(h->bucket);
	h->bucket = NULL;
}

static int ensure(struct pol_hist *h)
{
	if (h->bucket)
		return 0;
	h->bucket = calloc(POL_HIST_BUCKETS, sizeof(*h->bucket));
	return h->bucket ? 0 : -ENOMEM;
}

int pol_hist_add(struct pol_hist *h, uint64_t v)
{
	int ret = ensure(h);

	if (ret < 0)
		return ret;
	h->bucket[bucket_of(v)]++;
	h->count++;
	h->sum += (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	return 0;
}

int pol_hist_merge(struct pol_hist *dst, const struct pol_hist *src)
{
	int ret;

	if (!src->count)
		return 0;
	ret = ensure(dst);
	if (ret < 0)
		return ret;
	for (unsigned i = 0; i < POL_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

double pol_hist_mean(const struct pol_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0;
}

double pol_hist_percentile(const struct pol_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (p <= 0)
		return (double)h->min;
	if (p >= 100)
		return (double)h->max;
	/* Nearest rank: ceil(p/100 * n), at least 1. */
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count - 1e-9);
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < POL_HIST_BUCKETS; i++) {
		double lo, width, v;

		seen += h->bucket[i];
		if (seen < rank)
			continue;
		bucket_range(i, &lo, &width);
		v = width == 1 ? lo : lo + width / 2;
		if (v < (double)h->min)
			v = (double)h->min;
		if (v > (double)h->max)
			v = (double)h->max;
		return v;
	}
	return (double)h->max;
}
