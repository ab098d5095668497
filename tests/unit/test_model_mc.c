/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the Monte Carlo MTTDL estimator (model_mc.c): its random
 * variate samplers, the Markov chain and its exact mean, the fast lifetime
 * sampler against a plain event-by-event simulation, and the estimate
 * against Eq. 2 where the rare-event approximation holds (the paper's
 * Fig. 12) and where it does not (Sect. 7.4's 1 TB on RAID5).
 *
 * Every test uses a fixed seed, so it is deterministic, but every
 * statistical assertion compares with an independently computed value at
 * 4 or 5 standard errors (or at 10 %, far wider than the statistical
 * spread, for the rare-event approximation), so a wrong sampler fails.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "iosig.h"
#include "model.h"

#define YEAR (365.0 * 86400)
#define DAY 86400.0
#define TIB 1099511627776.0
#define GIB 1073741824.0
/* UBER of the paper's Sect. 7.4 (BER 1e-6, ECC 2 per 512-bit sector). */
#define PAPER_UBER 4.358869037939248643520297029522325295266e-14

static void assert_rel(double got, double want, double rel)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("got %.17g, want %.17g (relative tolerance %g, off by %g)", got, want,
			 rel, fabs(got - want) / fabs(want));
}

/* |got - want| <= k standard errors. */
static void assert_within_se(double got, double want, double se, double k)
{
	if (!(fabs(got - want) <= k * se))
		fail_msg("got %.10g, want %.10g: %.2f standard errors (%.4g) off, limit %.1f", got,
			 want, fabs(got - want) / se, se, k);
}

static struct iosig_layout layout(enum iosig_layout_kind kind, unsigned disks, unsigned m)
{
	return (struct iosig_layout){ .kind = kind, .disks = disks, .tolerated = m };
}

/* ---- samplers -------------------------------------------------------------
 * n variates; the sample mean must be within 5 standard errors of the true
 * mean (sd / sqrt(n)) and the sample variance within 5 % of the true one
 * (its own relative standard error is sqrt((kurtosis - 1) / n) < 1 % here).
 */
#define NSAMPLES 200000

struct moments {
	double mean, var;
};

static struct moments sample(double (*draw)(struct mdl_rng *, double, double), double a,
			     double b, uint64_t seed)
{
	struct mdl_rng rng;
	double mean = 0, m2 = 0;

	mdl_rng_seed(&rng, seed);
	for (int i = 1; i <= NSAMPLES; i++) {
		double x = draw(&rng, a, b), d = x - mean;

		mean += d / i;
		m2 += d * (x - mean);
	}
	return (struct moments){ mean, m2 / (NSAMPLES - 1) };
}

static void check_moments(struct moments got, double mean, double var)
{
	assert_within_se(got.mean, mean, sqrt(var / NSAMPLES), 5);
	assert_rel(got.var, var, 0.05);
}

static double draw_gamma(struct mdl_rng *rng, double shape, double unused)
{
	return mdl_rng_gamma(rng, shape);
}

static double draw_poisson(struct mdl_rng *rng, double mean, double unused)
{
	return mdl_rng_poisson(rng, mean);
}

static double draw_negbin(struct mdl_rng *rng, double n, double odds)
{
	return mdl_rng_negbin(rng, n, odds);
}

static double draw_uniform(struct mdl_rng *rng, double unused1, double unused2)
{
	return mdl_rng_uniform(rng);
}

static void test_samplers(void **state)
{
	/* Uniform on (0, 1]: mean 1/2, variance 1/12. */
	check_moments(sample(draw_uniform, 0, 0, 1), 0.5, 1.0 / 12);
	/* Gamma(k, 1): mean k, variance k; 3 is the sum-of-exponentials path,
	 * 12.5 and 1e6 the squeeze method. */
	check_moments(sample(draw_gamma, 3, 0, 2), 3, 3);
	check_moments(sample(draw_gamma, 12.5, 0, 3), 12.5, 12.5);
	check_moments(sample(draw_gamma, 1e6, 0, 4), 1e6, 1e6);
	/* Poisson(l): mean l, variance l; 3 multiplication, 10 and 5000 PTRS. */
	check_moments(sample(draw_poisson, 3, 0, 5), 3, 3);
	check_moments(sample(draw_poisson, 10, 0, 6), 10, 10);
	check_moments(sample(draw_poisson, 5000, 0, 7), 5000, 5000);
	assert_true(mdl_rng_poisson(NULL, 0) == 0); /* no draw needed */
	/* Negative binomial, n successes at odds o: mean n o, variance
	 * n o (1 + o).  n = 5: sum of geometrics; n = 1000: Gamma-Poisson. */
	check_moments(sample(draw_negbin, 5, 0.5, 8), 2.5, 2.5 * 1.5);
	check_moments(sample(draw_negbin, 5, 30, 9), 150, 150 * 31);
	check_moments(sample(draw_negbin, 1000, 0.02, 10), 20, 20 * 1.02);
	check_moments(sample(draw_negbin, 1000, 7, 11), 7000, 7000 * 8);
	assert_true(mdl_rng_negbin(NULL, 0, 3) == 0);
	assert_true(mdl_rng_negbin(NULL, 10, 0) == 0);
}

static void test_rng_deterministic(void **state)
{
	struct mdl_rng a, b, c;
	bool differ = false;

	mdl_rng_seed(&a, 42);
	mdl_rng_seed(&b, 42);
	mdl_rng_seed(&c, 43);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = mdl_rng_next(&a);

		assert_true(x == mdl_rng_next(&b));
		differ |= x != mdl_rng_next(&c);
	}
	assert_true(differ);
	/* Seed 0 is as good as any other (splitmix64 never yields a zero state). */
	mdl_rng_seed(&a, 0);
	assert_false(a.s[0] == 0 && a.s[1] == 0 && a.s[2] == 0 && a.s[3] == 0);
}

/* ---- the chain -------------------------------------------------------------- */

static struct mdl_chain *chain_of(enum iosig_layout_kind kind, unsigned disks, unsigned m,
				  double mttf, double mttr, double h)
{
	struct iosig_layout l = layout(kind, disks, m);
	struct mdl_shape s;
	struct mdl_chain *c = NULL;

	assert_int_equal(mdl_layout_shape(&l, &s), 0);
	assert_int_equal(mdl_chain_new(&s, mttf, mttr, h, &c), 0);
	return c;
}

/*
 * Mean time to absorption from level 0 by first-step analysis, solved
 * directly (Thomas algorithm): for every level k,
 *   rate_k T_k - up_k T_{k+1} - down_k T_{k-1} = 1.
 * Independent of the excursion argument mdl_chain_mttdl() uses.
 */
static double solve_chain(const struct mdl_chain *c)
{
	unsigned n = c->levels;
	double *cp = calloc(n, sizeof(double)), *dp = calloc(n, sizeof(double)), t0;

	assert_non_null(cp);
	assert_non_null(dp);
	for (unsigned k = 0; k < n; k++) {
		double diag = c->up[k] + c->down[k] + c->loss_fail[k] + c->loss_err[k];
		double sub = k ? -c->down[k] : 0, sup = -c->up[k];
		double den = diag - (k ? sub * cp[k - 1] : 0);

		cp[k] = sup / den;
		dp[k] = (1 - (k ? sub * dp[k - 1] : 0)) / den;
	}
	for (unsigned k = n - 1; k-- > 0;)
		dp[k] -= cp[k] * dp[k + 1];
	t0 = dp[0];
	free(cp);
	free(dp);
	return t0;
}

static void test_chain_rates(void **state)
{
	/* RAID6 on 5 disks, MTTF 10, MTTR 2, h = 0.1: levels 0..2;
	 * up = 5/10, 4/10; down = 0, 1/2, and at the critical level
	 * (1/2)(1 - q) with q = 1 - exp(-(5-2) 0.1) = 0.25918; losses there:
	 * failure 3/10, error (1/2) q. */
	struct mdl_chain *c = chain_of(IOSIG_LAYOUT_RAID6, 5, 0, 10, 2, 0.1);
	double q = -expm1(-0.3);

	assert_int_equal(c->levels, 3);
	assert_rel(c->up[0], 0.5, 1e-15);
	assert_rel(c->up[1], 0.4, 1e-15);
	assert_true(c->up[2] == 0 && c->down[0] == 0);
	assert_rel(c->down[1], 0.5, 1e-15);
	assert_rel(c->down[2], 0.5 * (1 - q), 1e-15);
	assert_rel(c->loss_fail[2], 0.3, 1e-15);
	assert_rel(c->loss_err[2], 0.5 * q, 1e-15);
	assert_true(c->loss_fail[0] == 0 && c->loss_fail[1] == 0 && c->loss_err[1] == 0);
	mdl_chain_free(c);

	/* RAID10 on 6 disks = 3 pairs, h = 0.3 (0.1 per pair): level j = pairs
	 * degraded; up = (3 - j) 2/10, down = j (1/2)(1 - q), q = 1 - e^-0.1,
	 * loss by the partner's failure j/10, by error j (1/2) q. */
	c = chain_of(IOSIG_LAYOUT_RAID10, 6, 0, 10, 2, 0.3);
	q = -expm1(-0.1);
	assert_int_equal(c->levels, 4);
	for (unsigned j = 0; j <= 3; j++) {
		assert_rel(c->up[j] + 1, (3 - j) * 0.2 + 1, 1e-15);
		assert_rel(c->down[j] + 1, j * 0.5 * (1 - q) + 1, 1e-15);
		assert_rel(c->loss_fail[j] + 1, j * 0.1 + 1, 1e-15);
		assert_rel(c->loss_err[j] + 1, j * 0.5 * q + 1, 1e-15);
	}
	mdl_chain_free(c);

	/* RAID0 on 4 disks: one level, lost at rate 4/MTTF. */
	c = chain_of(IOSIG_LAYOUT_RAID0, 4, 0, 10, 2, 0.1);
	assert_int_equal(c->levels, 1);
	assert_rel(c->loss_fail[0], 0.4, 1e-15);
	assert_true(c->loss_err[0] == 0 && c->up[0] == 0);
	assert_rel(mdl_chain_mttdl(c), 2.5, 1e-15);
	mdl_chain_free(c);
	mdl_chain_free(NULL);
}

static void test_chain_mean(void **state)
{
	static const struct {
		enum iosig_layout_kind kind;
		unsigned disks, m;
		double mttf, mttr, h;
	} cases[] = {
		{ IOSIG_LAYOUT_RAID1, 2, 0, 10, 1, 0.2 },
		{ IOSIG_LAYOUT_RAID5, 5, 0, 10, 3, 0.05 },
		{ IOSIG_LAYOUT_RAID6, 5, 0, 10, 2, 0.1 },
		{ IOSIG_LAYOUT_ERASURE, 7, 3, 10, 4, 0.01 },
		{ IOSIG_LAYOUT_RAID10, 6, 0, 10, 2, 0.3 },
		{ IOSIG_LAYOUT_RAID10, 16, 0, 10 * YEAR, DAY, 0.01 },
		{ IOSIG_LAYOUT_REPLICATION, 4, 0, 10 * YEAR, DAY, 0.4 },
		{ IOSIG_LAYOUT_RAID5, 5, 0, 10 * YEAR, DAY, 0.38341 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mdl_chain *c = chain_of(cases[i].kind, cases[i].disks, cases[i].m,
					       cases[i].mttf, cases[i].mttr, cases[i].h);

		/* Both are exact; 1e-9 allows for the linear solve losing
		 * digits on the stiff chains (rates 1e5 apart). */
		assert_rel(mdl_chain_mttdl(c), solve_chain(c), 1e-9);
		mdl_chain_free(c);
	}
}

static void test_chain_mean_closed_form(void **state)
{
	/* m = 1 by hand (first-step analysis): from 0 the chain waits
	 * 1/(d lambda) and moves to 1; from 1 it leaves after 1/S,
	 * S = mu + (d-1) lambda, back to 0 with probability mu (1-q) / S:
	 *   T0 = (mu + (2d - 1) lambda) / (d lambda ((d-1) lambda + mu q)).
	 * RAID5 on 4 disks, MTTF 100, MTTR 1, h = 0.02, q = 1 - e^-0.06. */
	struct mdl_chain *c = chain_of(IOSIG_LAYOUT_RAID5, 4, 0, 100, 1, 0.02);
	double lambda = 0.01, mu = 1, q = -expm1(-0.06);

	assert_rel(mdl_chain_mttdl(c), (mu + 7 * lambda) / (4 * lambda * (3 * lambda + mu * q)),
		   1e-14);
	mdl_chain_free(c);
}

/* ---- fast sampler against a plain event-by-event simulation ---------------- */

struct plain_result {
	double mean, se, error_fraction;
};

/* Simulates the chain one transition at a time (only feasible when MTTF and
 * MTTR are close, i.e. few transitions per lifetime). */
static struct plain_result plain_simulate(const struct mdl_chain *c, unsigned trials,
					  uint64_t seed)
{
	struct mdl_rng rng;
	double mean = 0, m2 = 0;
	unsigned errors = 0;

	mdl_rng_seed(&rng, seed);
	for (unsigned i = 1; i <= trials; i++) {
		unsigned k = 0;
		double t = 0, d;

		for (;;) {
			double rate = c->up[k] + c->down[k] + c->loss_fail[k] + c->loss_err[k];
			double x = mdl_rng_uniform(&rng) * rate;

			t += -log(mdl_rng_uniform(&rng)) / rate;
			if (x <= c->up[k]) {
				k++;
			} else if (x <= c->up[k] + c->down[k]) {
				k--;
			} else {
				errors += x > c->up[k] + c->down[k] + c->loss_fail[k];
				break;
			}
		}
		d = t - mean;
		mean += d / i;
		m2 += d * (t - mean);
	}
	return (struct plain_result){ mean, sqrt(m2 / (trials - 1) / trials),
				      (double)errors / trials };
}

static void test_sampler_vs_plain(void **state)
{
	static const struct {
		enum iosig_layout_kind kind;
		unsigned disks, m;
		double mttf, mttr, uber, size;
	} cases[] = {
		/* h = size x 8 x uber */
		{ IOSIG_LAYOUT_RAID6, 5, 0, 10, 2, 1e-3, 12.5 },   /* h = 0.1 */
		{ IOSIG_LAYOUT_RAID10, 6, 0, 10, 2, 1e-3, 37.5 },  /* h = 0.3 */
		{ IOSIG_LAYOUT_ERASURE, 7, 3, 10, 3, 1e-3, 2.5 },  /* h = 0.02 */
		{ IOSIG_LAYOUT_RAID1, 2, 0, 10, 1, 1e-2, 10 },     /* h = 0.8 */
	};
	const unsigned trials = 20000;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_layout l = layout(cases[i].kind, cases[i].disks, cases[i].m);
		struct mdl_chain *c = chain_of(cases[i].kind, cases[i].disks, cases[i].m,
					       cases[i].mttf, cases[i].mttr,
					       cases[i].size * 8 * cases[i].uber);
		struct iosig_mc_result fast;
		struct plain_result plain = plain_simulate(c, trials, 1000 + i);
		double exact = mdl_chain_mttdl(c), p_err, frac;

		assert_int_equal(iosig_mttdl_simulate(&l, cases[i].mttf, cases[i].mttr,
						      cases[i].uber, cases[i].size, trials, 7 + i,
						      &fast),
				 0);
		assert_int_equal(fast.trials, trials);
		assert_int_equal(fast.by_error + fast.by_failure, trials);
		/* Both estimate the exact mean ... */
		assert_within_se(plain.mean, exact, plain.se, 4);
		assert_within_se(fast.mean, exact, fast.stderr_, 4);
		/* ... with the same spread: the standard errors estimate the same
		 * sd (each to ~1 % at 20000 trials). */
		assert_rel(fast.stderr_, plain.se, 0.10);
		/* ... and the same split of causes (binomial, 4 sd of the
		 * difference of two fractions). */
		frac = (double)fast.by_error / trials;
		p_err = (frac + plain.error_fraction) / 2;
		assert_within_se(frac, plain.error_fraction, sqrt(2 * p_err * (1 - p_err) / trials) + 1e-12,
				 4);
		mdl_chain_free(c);
	}
}

/* ---- against Eq. 2 (Fig. 12) -------------------------------------------------
 * MTTF 10 y, MTTR 1 d, the paper's UBER, 1 GiB (h = 3.7e-4): lambda/mu =
 * 2.7e-4 and (d - m) h < 4e-3, deep in the rare-event regime where the
 * chain's mean and Eq. 2 differ by well under 1 %.  100000 trials give a
 * standard error of ~0.3 %; the MC must be within 10 % of Eq. 2 (the
 * paper's "match") and within 4 standard errors of the exact chain.
 */
static void test_mc_vs_eq2(void **state)
{
	static const struct {
		enum iosig_layout_kind kind;
		unsigned disks, m;
	} cases[] = {
		{ IOSIG_LAYOUT_RAID0, 4, 0 },      { IOSIG_LAYOUT_RAID1, 2, 0 },
		{ IOSIG_LAYOUT_RAID5, 5, 0 },      { IOSIG_LAYOUT_RAID6, 6, 0 },
		{ IOSIG_LAYOUT_RAID10, 8, 0 },     { IOSIG_LAYOUT_REPLICATION, 3, 0 },
		{ IOSIG_LAYOUT_ERASURE, 9, 3 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_layout l = layout(cases[i].kind, cases[i].disks, cases[i].m);
		struct iosig_mc_result r;
		struct mdl_chain *c = chain_of(cases[i].kind, cases[i].disks, cases[i].m,
					       10 * YEAR, DAY, GIB * 8 * PAPER_UBER);
		double eq2 = iosig_mttdl(&l, 10 * YEAR, DAY, PAPER_UBER, GIB);
		double exact = mdl_chain_mttdl(c);

		assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, PAPER_UBER, GIB, 100000,
						      2024, &r),
				 0);
		assert_rel(r.mean, eq2, 0.10);
		assert_rel(exact, eq2, 0.01);
		assert_within_se(r.mean, exact, r.stderr_, 4);
		/* An exponential-like lifetime: sd ~ mean, so se ~ mean/316. */
		assert_rel(r.stderr_, r.mean / sqrt(100000), 0.05);
		mdl_chain_free(c);
	}
}

static void test_mc_deterministic(void **state)
{
	struct iosig_layout l = layout(IOSIG_LAYOUT_RAID5, 5, 0);
	struct iosig_mc_result a, b, c;

	assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, PAPER_UBER, GIB, 1000, 5, &a), 0);
	assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, PAPER_UBER, GIB, 1000, 5, &b), 0);
	assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, PAPER_UBER, GIB, 1000, 6, &c), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(a.mean != c.mean);
}

static void test_mc_causes(void **state)
{
	struct iosig_layout l = layout(IOSIG_LAYOUT_RAID5, 5, 0);
	struct iosig_mc_result r;
	double q, p_err;

	/* No bit errors: every loss is a second failure. */
	assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, 0, TIB, 10000, 1, &r), 0);
	assert_int_equal(r.by_error, 0);
	assert_int_equal(r.by_failure, 10000);
	/* RAID0: no rebuild, so no rebuild errors either. */
	l = layout(IOSIG_LAYOUT_RAID0, 3, 0);
	assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, PAPER_UBER, TIB, 10000, 1, &r), 0);
	assert_int_equal(r.by_error, 0);
	assert_within_se(r.mean, 10 * YEAR / 3, r.stderr_, 4);
	/* RAID5 (m = 1): a lifetime ends at the critical level, by error with
	 * probability mu q / (mu q + (d-1) lambda); 1 GiB on 5 disks:
	 * q = 1 - exp(-4 h), h = 2^33 x 4.3589e-14 = 3.744e-4, so
	 * q = 1.4966e-3 and (d-1) lambda / mu = 4/3650 = 1.0959e-3:
	 * P(error) = 0.5773. */
	l = layout(IOSIG_LAYOUT_RAID5, 5, 0);
	q = -expm1(-4 * GIB * 8 * PAPER_UBER);
	p_err = q / (q + 4.0 / 3650);
	assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, PAPER_UBER, GIB, 100000, 3, &r),
			 0);
	assert_within_se((double)r.by_error / 100000, p_err, sqrt(p_err * (1 - p_err) / 100000), 4);
}

static void test_mc_paper_sect74(void **state)
{
	/* 1 TiB on RAID5 4+1 at the paper's parameters: h = 0.38341 and
	 * (d - m) h = 1.53 - more than one expected uncorrectable error per
	 * rebuild.  Eq. 2 (15.6 months) charges the rebuild a loss probability
	 * of (d - m) h = 153 %, which is not a probability; the chain charges
	 * 1 - e^-1.53 = 78 % and lives 2.55 y.  The MC follows the chain, not
	 * Eq. 2: this is outside the rare-event regime (docs/models.md). */
	struct iosig_layout l = layout(IOSIG_LAYOUT_RAID5, 5, 0);
	struct mdl_chain *c = chain_of(IOSIG_LAYOUT_RAID5, 5, 0, 10 * YEAR, DAY,
				       TIB * 8 * PAPER_UBER);
	struct iosig_mc_result r;
	double eq2 = iosig_mttdl(&l, 10 * YEAR, DAY, PAPER_UBER, TIB);
	double exact = mdl_chain_mttdl(c);

	assert_int_equal(iosig_mttdl_simulate(&l, 10 * YEAR, DAY, PAPER_UBER, TIB, 100000, 74, &r),
			 0);
	assert_within_se(r.mean, exact, r.stderr_, 4);
	assert_true(exact / eq2 > 1.9 && exact / eq2 < 2.0);
	/* Even a rebuild that always failed would give MTTF/d = 2 y > Eq. 2. */
	assert_true(eq2 < 10 * YEAR / 5);
	mdl_chain_free(c);
}

static void test_mc_invalid(void **state)
{
	struct iosig_layout l = layout(IOSIG_LAYOUT_RAID5, 5, 0);
	struct iosig_layout bad = layout(IOSIG_LAYOUT_RAID10, 5, 0);
	struct iosig_mc_result r, before;

	memset(&r, 0x5a, sizeof(r));
	before = r;
	assert_int_equal(iosig_mttdl_simulate(NULL, YEAR, DAY, 1e-14, GIB, 10, 1, &r), -EINVAL);
	assert_int_equal(iosig_mttdl_simulate(&bad, YEAR, DAY, 1e-14, GIB, 10, 1, &r), -EINVAL);
	assert_int_equal(iosig_mttdl_simulate(&l, YEAR, DAY, 1e-14, GIB, 0, 1, &r), -EINVAL);
	assert_int_equal(iosig_mttdl_simulate(&l, 0, DAY, 1e-14, GIB, 10, 1, &r), -EINVAL);
	assert_int_equal(iosig_mttdl_simulate(&l, YEAR, -1, 1e-14, GIB, 10, 1, &r), -EINVAL);
	assert_int_equal(iosig_mttdl_simulate(&l, YEAR, DAY, NAN, GIB, 10, 1, &r), -EINVAL);
	assert_int_equal(iosig_mttdl_simulate(&l, YEAR, DAY, 1e-14, -1, 10, 1, &r), -EINVAL);
	assert_int_equal(iosig_mttdl_simulate(&l, YEAR, DAY, 1e-14, GIB, 10, 1, NULL), -EINVAL);
	/* Erasure 70+30 with MTTF/MTTR = 3e13: an excursion ends in a loss with
	 * probability ~(100/3e13)^30 = 1e-345, below the smallest double. */
	l = layout(IOSIG_LAYOUT_ERASURE, 100, 30);
	assert_int_equal(iosig_mttdl_simulate(&l, 1e6 * YEAR, 1, 0, GIB, 10, 1, &r), -ERANGE);
	assert_memory_equal(&r, &before, sizeof(r));
	/* One trial: a mean, but no standard error. */
	l = layout(IOSIG_LAYOUT_RAID1, 2, 0);
	assert_int_equal(iosig_mttdl_simulate(&l, YEAR, DAY, 0, GIB, 1, 1, &r), 0);
	assert_true(r.mean > 0 && isnan(r.stderr_));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samplers),
		cmocka_unit_test(test_rng_deterministic),
		cmocka_unit_test(test_chain_rates),
		cmocka_unit_test(test_chain_mean),
		cmocka_unit_test(test_chain_mean_closed_form),
		cmocka_unit_test(test_sampler_vs_plain),
		cmocka_unit_test(test_mc_vs_eq2),
		cmocka_unit_test(test_mc_deterministic),
		cmocka_unit_test(test_mc_causes),
		cmocka_unit_test(test_mc_paper_sect74),
		cmocka_unit_test(test_mc_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
