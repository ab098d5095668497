/* SPDX-License-Identifier: MIT */
/*
 * bench.h - helpers for benchmark programs: a monotonic clock and a robust
 * per-operation figure (median of repeated batches), so that figures are
 * comparable side by side within one run on a noisy shared machine.
 */
#ifndef IOSIG_BENCH_H
#define IOSIG_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n samples (sorts the array in place). */
static inline double bench_median(double *samples, unsigned n)
{
	qsort(samples, n, sizeof(*samples), bench_cmp_double);
	return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

/* Most batches bench_ns_per_call() takes. */
#define BENCH_MAX_BATCHES 64

/*
 * Nanoseconds per call of call(i), i = 0 .. calls-1 (so that inputs rotate
 * and no call can be hoisted out of the loop): the median over `batches`
 * batches (at most BENCH_MAX_BATCHES) of a batch's mean.  The results are
 * summed into a volatile sink so that the calls cannot be dropped.
 */
static inline double bench_ns_per_call(double (*call)(unsigned i), unsigned batches,
				       unsigned calls)
{
	static volatile double sink;
	double samples[BENCH_MAX_BATCHES];

	if (batches > BENCH_MAX_BATCHES)
		batches = BENCH_MAX_BATCHES;
	for (unsigned b = 0; b < batches; b++) {
		double t0 = bench_now(), acc = 0;

		for (unsigned i = 0; i < calls; i++)
			acc += call(i);
		samples[b] = (bench_now() - t0) / calls * 1e9;
		sink += acc;
	}
	(void)sink; /* a read: clang counts the sink as used */
	return bench_median(samples, batches);
}

/*
 * Two ways of doing one thing, side by side: like bench_ns_per_call() for
 * `a` and `b`, their batches alternating (a, b, a, b ...) so that a noisy
 * machine slows both alike.  The medians go to ret_a and ret_b; returns the
 * median of the batches' ratios b / a.
 */
static inline double bench_ns_per_call_pair(double (*a)(unsigned), double (*b)(unsigned),
					    unsigned batches, unsigned calls, double *ret_a,
					    double *ret_b)
{
	static volatile double sink;
	double sa[BENCH_MAX_BATCHES], sb[BENCH_MAX_BATCHES], ratio[BENCH_MAX_BATCHES];

	if (batches > BENCH_MAX_BATCHES)
		batches = BENCH_MAX_BATCHES;
	for (unsigned k = 0; k < batches; k++) {
		double t0 = bench_now(), acc = 0, t1;

		for (unsigned i = 0; i < calls; i++)
			acc += a(i);
		t1 = bench_now();
		for (unsigned i = 0; i < calls; i++)
			acc += b(i);
		sa[k] = (t1 - t0) / calls * 1e9;
		sb[k] = (bench_now() - t1) / calls * 1e9;
		ratio[k] = sb[k] / sa[k];
		sink += acc;
	}
	(void)sink;
	*ret_a = bench_median(sa, batches);
	*ret_b = bench_median(sb, batches);
	return bench_median(ratio, batches);
}

#endif /* IOSIG_BENCH_H */
