/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c - DiskSim validation replay (see calibrate.h).  Unlike the
 * simulator proper, calibration keeps every service time (16 bytes per
 * request) because the demerit compares whole distributions exactly.
 */
#include "calibrate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank quantile of sorted v. */
static double quantile(const double *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n - 1e-9);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

double sim_demerit(double *a, size_t na, double *b, size_t nb)
{
	double sum = 0;
	unsigned count = 0;

	if (!na || !nb)
		return 0;
	qsort(a, na, sizeof(*a), cmp_double);
	qsort(b, nb, sizeof(*b), cmp_double);
	for (unsigned i = 1; i <= 10000; i++) {
		double p = i / 10000.0, d = quantile(a, na, p) - quantile(b, nb, p);

		sum += d * d;
		count++;
	}
	return sqrt(sum / count);
}

static void add_class(struct sim_calib_class *c, double meas, double pred)
{
	c->n++;
	c->meas_mean_ms += meas;
	c->pred_mean_ms += pred;
}

static void finish_class(struct sim_calib_class *c)
{
	if (c->n) {
		c->meas_mean_ms /= (double)c->n;
		c->pred_mean_ms /= (double)c->n;
	}
}

int sim_calibrate_params(const struct sim_hdd_params *p, const char *trace_path,
			 struct sim_calib_result *ret, FILE *cdf, char *err, size_t errlen)
{
	struct sim_calib_result res;
	struct sim_source *src = NULL;
	struct sim_hdd *h = NULL;
	double *meas = NULL, *pred = NULL;
	size_t n = 0, cap = 0;
	uint64_t t = 0;
	struct sim_io io;
	int r;

	memset(&res, 0, sizeof(res));
	snprintf(res.drive, sizeof(res.drive), "%s", p->name);
	r = sim_trace_open(trace_path, "validate", &src, err, errlen);
	if (r < 0)
		return r;
	h = sim_hdd_create(p);
	if (!h) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	while ((r = sim_source_next(src, &io)) > 0) {
		uint64_t lbn = io.offset / SIM_SECTOR, nb = io.len / SIM_SECTOR, done;
		double m, q;

		if (lbn + nb > p->blocks) {
			r = -EINVAL;
			snprintf(err, errlen, "%s: request %zu (block %llu + %llu) lies beyond the %llu "
				 "blocks of %s", trace_path, n + 1, (unsigned long long)lbn,
				 (unsigned long long)nb, (unsigned long long)p->blocks, p->name);
			goto out;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			double *nm = realloc(meas, ncap * sizeof(*nm)), *np;

			if (!nm) {
				r = -ENOMEM;
				goto out_nomem;
			}
			meas = nm;
			np = realloc(pred, ncap * sizeof(*np));
			if (!np) {
				r = -ENOMEM;
				goto out_nomem;
			}
			pred = np;
			cap = ncap;
		}
		done = sim_hdd_serve(h, io.op, lbn, (uint32_t)nb, t);
		m = (double)io.measured_ns / 1e6;
		q = (double)(done - t) / 1e6;
		meas[n] = m;
		pred[n] = q;
		n++;
		res.meas_mean_ms += m;
		res.pred_mean_ms += q;
		add_class(io.op == POLICY_OP_READ ? &res.read : &res.write, m, q);
		t = done + io.think_ns;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s", src->err);
		goto out;
	}
	if (!n) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: no request", trace_path);
		goto out;
	}
	res.n = n;
	res.meas_mean_ms /= (double)n;
	res.pred_mean_ms /= (double)n;
	finish_class(&res.read);
	finish_class(&res.write);
	res.mean_err_pct = (res.pred_mean_ms - res.meas_mean_ms) / res.meas_mean_ms * 100;
	res.demerit_ms = sim_demerit(meas, n, pred, n);
	res.demerit_pct = res.demerit_ms / res.meas_mean_ms * 100;
	res.stats = *sim_hdd_stats(h);
	if (cdf) {
		for (unsigned i = 1; i <= 1000; i++) {
			double q = i / 1000.0;

			fprintf(cdf, "%.3f %.6f %.6f\n", q, quantile(meas, n, q), quantile(pred, n, q));
		}
	}
	*ret = res;
	r = 0;
	goto out;
out_nomem:
	snprintf(err, errlen, "out of memory");
out:
	free(meas);
	free(pred);
	sim_hdd_destroy(h);
	sim_source_destroy(src);
	return r;
}

int sim_calibrate(const char *dir, const char *drive, struct sim_calib_result *ret, FILE *cdf,
		  char *err, size_t errlen)
{
	struct sim_hdd_params *p = calloc(1, sizeof(*p));
	char path[1024];
	int r;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = sim_disksim_load(dir, drive, p, err, errlen);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/%s.trace", dir, drive);
		r = sim_calibrate_params(p, path, ret, cdf, err, errlen);
	}
	free(p);
	return r;
}
