/* SPDX-License-Identifier: MIT */
/*
 * pol_hist.h - a fixed-size log-linear histogram of non-negative integers
 * (latencies in ns), the one both engines measure with: iosig-sim's metrics
 * and iosigd's per-device latencies (status).  Values below 256 are kept exactly; above, each power
 * of two is split into 128 buckets, so a reported percentile is within
 * 0.4 % of the true sample (bucket midpoint, clamped to the observed
 * min/max).  Memory is constant whatever the number of samples, which keeps
 * an engine's memory bounded by outstanding requests, not by how long it runs.
 */
#ifndef IOSIG_POL_HIST_H
#define IOSIG_POL_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define POL_HIST_SUB_BITS 7                       /* 128 buckets per octave */
#define POL_HIST_MAX_BITS 48                      /* values >= 2^48 ns (78 h) are clamped */
#define POL_HIST_BUCKETS (((POL_HIST_MAX_BITS - POL_HIST_SUB_BITS) << POL_HIST_SUB_BITS) + \
			  (2 << POL_HIST_SUB_BITS))

struct pol_hist {
	uint64_t count;                 /* samples added */
	double sum;                     /* sum of the samples (for the mean) */
	uint64_t min, max;              /* extreme samples (exact) */
	uint64_t *bucket;               /* POL_HIST_BUCKETS counters, allocated lazily */
};

/* Empties h (no allocation until the first sample). */
void pol_hist_init(struct pol_hist *h);
/* Frees the buckets; h may be reused after pol_hist_init(). */
void pol_hist_free(struct pol_hist *h);
/* Adds one sample.  0 or -ENOMEM. */
int pol_hist_add(struct pol_hist *h, uint64_t v);
/* Adds every sample of src to dst.  0 or -ENOMEM. */
int pol_hist_merge(struct pol_hist *dst, const struct pol_hist *src);
/* Mean of the samples (0 when empty). */
double pol_hist_mean(const struct pol_hist *h);
/* Nearest-rank percentile, p in [0, 100]: the smallest sample value v such
 * that at least p % of the samples are <= v (approximated as above);
 * 0 when empty. */
double pol_hist_percentile(const struct pol_hist *h, double p);

#endif /* IOSIG_POL_HIST_H */
