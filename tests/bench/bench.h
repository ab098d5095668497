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

#endif /* IOSIG_BENCH_H */
