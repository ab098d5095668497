/* SPDX-License-Identifier: MIT */
/*
 * hist.h - a fixed-size log-linear histogram of non-negative integers
 * (latencies in ns).  Values below 256 are kept exactly; above, each power
 * of two is split into 128 buckets, so a reported percentile is within
 * 0.4 % of the true sample (bucket midpoint, clamped to the observed
 * min/max).  Memory is constant whatever the number of samples, which keeps
 * the simulator's memory bounded by outstanding requests, not trace length.
 */
#ifndef IOSIG_SIM_HIST_H
#define IOSIG_SIM_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_HIST_SUB_BITS 7                       /* 128 buckets per octave */
#define SIM_HIST_MAX_BITS 48                      /* values >= 2^48 ns (78 h) are clamped */
#define SIM_HIST_BUCKETS (((SIM_HIST_MAX_BITS - SIM_HIST_SUB_BITS) << SIM_HIST_SUB_BITS) + \
			  (2 << SIM_HIST_SUB_BITS))

struct sim_hist {
	uint64_t count;                 /* samples added */
	double sum;                     /* sum of the samples (for the mean) */
	uint64_t min, max;              /* extreme samples (exact) */
	uint64_t *bucket;               /* SIM_HIST_BUCKETS counters, allocated lazily */
};

/* Empties h (no allocation until the first sample). */
void sim_hist_init(struct sim_hist *h);
/* Frees the buckets; h may be reused after sim_hist_init(). */
void sim_hist_free(struct sim_hist *h);
/* Adds one sample.  0 or -ENOMEM. */
int sim_hist_add(struct sim_hist *h, uint64_t v);
/* Adds every sample of src to dst.  0 or -ENOMEM. */
int sim_hist_merge(struct sim_hist *dst, const struct sim_hist *src);
/* Mean of the samples (0 when empty). */
double sim_hist_mean(const struct sim_hist *h);
/* Nearest-rank percentile, p in [0, 100]: the smallest sample value v such
 * that at least p % of the samples are <= v (approximated as above);
 * 0 when empty. */
double sim_hist_percentile(const struct sim_hist *h, double p);

#endif /* IOSIG_SIM_HIST_H */
