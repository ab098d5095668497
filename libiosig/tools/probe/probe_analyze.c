/* SPDX-License-Identifier: MIT */
/*
 * probe_analyze.c - turning probe samples into values: quantiles, the
 * effective block size from a linear chunk-size sweep (IOSIG Sect. 7.1), and
 * the F/M/S states of the BCW buffered-write model (probe.h).  Pure
 * functions: no I/O, unit-tested on synthetic traces (tests/probe/).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* How many standard errors the peaks of a block size must stand out by. */
#define BLOCK_MIN_T 5.0

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double prb_quantile(double *v, size_t n, double q)
{
	double pos;
	size_t i;

	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	if (q <= 0)
		return v[0];
	if (q >= 1)
		return v[n - 1];
	pos = q * (double)(n - 1);
	i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

double prb_quantile_of(const double *v, size_t n, double q)
{
	double *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	double r;

	if (!tmp)
		return NAN;
	memcpy(tmp, v, n * sizeof(*tmp));
	r = prb_quantile(tmp, n, q);
	free(tmp);
	return r;
}

int prb_samples_grow(struct prb_samples *s, size_t more)
{
	if (s->n + more > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		double *v;

		while (cap < s->n + more)
			cap *= 2;
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	return 0;
}

int prb_samples_push(struct prb_samples *s, double v)
{
	int r = prb_samples_grow(s, 1);

	if (r == 0)
		s->v[s->n++] = v;
	return r;
}

int prb_block_detect(const double *tput, size_t n, uint64_t step, double min_score,
		     uint64_t *ret_bs, double *ret_score)
{
	double *peak, best_score = -INFINITY;
	size_t best = 0;

	if (n < 6 || !step)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(tput[i] > 0) || !isfinite(tput[i]))
			return -EINVAL;
	peak = calloc(n, sizeof(*peak));
	if (!peak)
		return -ENOMEM;
	/* Height of each interior point over its two neighbours, in log space,
	 * so that the smooth growth of throughput with chunk size cancels. */
	for (size_t i = 1; i + 1 < n; i++)
		peak[i] = log(tput[i]) - 0.5 * (log(tput[i - 1]) + log(tput[i + 1]));

	/* Candidate b (in steps): sizes (i + 1) that are multiples of b should
	 * stand out.  b = 1 makes every size a multiple and says nothing. */
	for (size_t b = 2; 3 * b + 1 < n; b++) {
		double in = 0, out = 0, in2 = 0, out2 = 0, score, var;
		size_t nin = 0, nout = 0, up = 0;

		for (size_t i = 1; i + 1 < n; i++) {
			if ((i + 1) % b == 0) {
				in += peak[i];
				in2 += peak[i] * peak[i];
				nin++;
				up += peak[i] > 0;
			} else {
				out += peak[i];
				out2 += peak[i] * peak[i];
				nout++;
			}
		}
		if (nin < 3 || nout < 2)
			continue;
		/* Most multiples must be real peaks, not one outlier. */
		if (3 * up < 2 * nin)
			continue;
		in /= (double)nin;
		out /= (double)nout;
		score = in - out;
		/* Welch's t: the peaks must stand out of the scatter of the sweep
		 * (timing noise on a memory filesystem makes random "peaks"). */
		var = fmax(in2 / (double)nin - in * in, 0) / (double)nin +
		      fmax(out2 / (double)nout - out * out, 0) / (double)nout;
		if (score < BLOCK_MIN_T * sqrt(var))
			continue;
		if (score > best_score + 1e-12) {
			best_score = score;
			best = b;
		}
	}
	free(peak);
	if (!best || best_score < min_score)
		return -ENODATA;
	*ret_bs = best * step;
	if (ret_score)
		*ret_score = best_score;
	return 0;
}

/*
 * Three-means of sorted log latencies (Lloyd's algorithm in one dimension,
 * started at the 10th, 50th and 99.9th percentiles): the F, M and S levels
 * when the trace has them.  Only the lowest and highest centres are used,
 * which keeps the result sound when the trace has two levels and one of
 * them gets split in two.
 */
static void three_means(const double *sorted, size_t n, double *ret_lo, double *ret_hi)
{
	double c[3] = { sorted[n / 10], sorted[n / 2], sorted[n - 1 - n / 1000] };

	for (int it = 0; it < 50; it++) {
		double sum[3] = { 0 }, m[3];
		size_t cnt[3] = { 0 };
		bool moved = false;

		for (size_t i = 0; i < n; i++) {
			int k = sorted[i] < 0.5 * (c[0] + c[1]) ? 0 :
				sorted[i] < 0.5 * (c[1] + c[2]) ? 1 : 2;

			sum[k] += sorted[i];
			cnt[k]++;
		}
		for (int k = 0; k < 3; k++) {
			m[k] = cnt[k] ? sum[k] / (double)cnt[k] : c[k];
			moved |= m[k] != c[k];
			c[k] = m[k];
		}
		if (!moved)
			break;
	}
	*ret_lo = c[0];
	*ret_hi = c[2];
}

static double median_of(const double *lat, const char *state, size_t n, char want)
{
	double *tmp = malloc(n * sizeof(*tmp));
	size_t k = 0;
	double m;

	if (!tmp)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (state[i] == want)
			tmp[k++] = lat[i];
	m = prb_quantile(tmp, k, 0.5);
	free(tmp);
	return m;
}

int prb_bcw_classify(const double *lat, size_t n, uint64_t io_size, double min_ratio,
		     struct iosig_bcw *ret_bcw, struct prb_bcw_info *ret_info)
{
	struct prb_bcw_info info = { 0 };
	struct iosig_bcw bcw = { 0 };
	double *x = NULL, lo = 0, hi = 0, threshold;
	size_t *mid_runs = NULL, nruns = 0, first_slow = n, run = 0;
	char *state = NULL;
	bool in_slow = false;
	int r;

	if (n < 16 || !io_size)
		return -EINVAL;
	x = malloc(n * sizeof(*x));
	state = malloc(n);
	mid_runs = malloc(n * sizeof(*mid_runs));
	if (!x || !state || !mid_runs) {
		r = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(lat[i] > 0) || !isfinite(lat[i])) {
			r = -EINVAL;
			goto out_free;
		}
		x[i] = log(lat[i]);
	}
	qsort(x, n, sizeof(*x), cmp_double);
	three_means(x, n, &lo, &hi);
	info.ratio = exp(hi - lo);
	/* Slow = closer to the top level than to the bottom one (log space). */
	threshold = 0.5 * (lo + hi);
	for (size_t i = 0; i < n; i++) {
		bool slow = log(lat[i]) >= threshold;

		if (slow) {
			if (first_slow == n)
				first_slow = i;
			state[i] = 'S';
			info.slow++;
			if (!in_slow) {
				info.slow_runs++;
				/* A Mid run ends at this S run (if one started after an S run). */
				if (info.slow_runs > 1)
					mid_runs[nruns++] = run;
			}
			run = 0;
		} else {
			state[i] = first_slow == n ? 'F' : 'M';
			if (first_slow == n)
				info.fast++;
			else
				info.mid++;
			run++;
		}
		in_slow = slow;
	}
	if (info.ratio < min_ratio || !info.slow || 2 * info.slow > n || info.slow_runs < 2 ||
	    !nruns) {
		r = -ENODATA;
		goto out_info;
	}
	/* Runs are maximal, so every Mid run between two S runs is non-empty. */
	for (size_t i = 0; i < nruns; i++)
		x[i] = (double)mid_runs[i];
	bcw.wm = prb_quantile(x, nruns, 0.5) * (double)io_size;
	bcw.wf = (double)first_slow * (double)io_size;
	bcw.lm = median_of(lat, state, n, 'M');
	bcw.ls = median_of(lat, state, n, 'S');
	/* A trace that starts slow (the buffer was not empty) has no Fast
	 * writes: their latency is taken as the Mid one. */
	bcw.lf = info.fast ? median_of(lat, state, n, 'F') : bcw.lm;
	*ret_bcw = bcw;
	r = 0;
out_info:
	if (ret_info)
		*ret_info = info;
out_free:
	free(mid_runs);
	free(state);
	free(x);
	return r;
}
