/* SPDX-License-Identifier: MIT */
/*
 * model_mc.c - Monte Carlo estimator of the MTTDL (the validation of the
 * IOSIG paper's Fig. 12, docs/design.md §5.2).
 *
 * It samples the continuous-time Markov chain that Eq. 2 approximates:
 * devices fail at rate lambda each, one rebuild at a time completes at rate
 * mu, data is lost at one failure too many or when the rebuild that restores
 * the last redundancy meets an uncorrectable bit error.  A trial does not
 * step through the chain event by event (in the regime Eq. 2 is meant for,
 * a lifetime holds thousands to billions of failures and repairs); it
 * samples the number of visits to each level from the excursion structure of
 * the chain and then the total holding time per level as one Gamma variate
 * (holding times of a CTMC are independent exponentials given the path).
 * The cost of a trial is O(levels), independent of MTTF/MTTR.
 * docs/models.md ("The Markov chain", "Sampling a lifetime") derives it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "iosig.h"
#include "model.h"
#include "prng.h"

/* ------------------------------------------------------------------------
 * Random numbers
 * ---------------------------------------------------------------------- */

void mdl_rng_seed(struct mdl_rng *rng, uint64_t seed)
{
	prng_seed(rng->s, seed);
}

uint64_t mdl_rng_next(struct mdl_rng *rng)
{
	return prng_next(rng->s);
}

double mdl_rng_uniform(struct mdl_rng *rng)
{
	return (double)((mdl_rng_next(rng) >> 11) + 1) * 0x1.0p-53;
}

/* Standard normal by Marsaglia's polar method. */
static double rng_normal(struct mdl_rng *rng)
{
	double u, v, s;

	do {
		u = 2 * mdl_rng_uniform(rng) - 1;
		v = 2 * mdl_rng_uniform(rng) - 1;
		s = u * u + v * v;
	} while (s >= 1 || s == 0);
	return u * sqrt(-2 * log(s) / s);
}

/* Below this shape a Gamma variate is a sum of exponentials (one log). */
#define GAMMA_SUM_MAX 12

/* Gamma(shape, 1): small integer shapes as -log of a product of uniforms,
 * otherwise Marsaglia and Tsang's squeeze method (shape >= 1). */
double mdl_rng_gamma(struct mdl_rng *rng, double shape)
{
	double d, c;

	if (shape < GAMMA_SUM_MAX && shape == floor(shape)) {
		double p = 1;

		for (double i = 0; i < shape; i++)
			p *= mdl_rng_uniform(rng);
		return -log(p);
	}
	d = shape - 1.0 / 3;
	c = 1 / sqrt(9 * d);
	for (;;) {
		double x = rng_normal(rng), v = 1 + c * x, u;

		if (v <= 0)
			continue;
		v = v * v * v;
		u = mdl_rng_uniform(rng);
		if (u < 1 - 0.0331 * x * x * x * x)
			return d * v;
		if (log(u) < 0.5 * x * x + d * (1 - v + log(v)))
			return d * v;
	}
}

/* Means below this use the multiplication method, above it transformed
 * rejection; beyond POISSON_NORMAL_MIN the normal approximation (relative
 * skewness < 3e-8: below what a double mean can resolve anyway). */
#define POISSON_PTRS_MIN 10
#define POISSON_NORMAL_MIN 1e15

/*
 * Poisson(mean).  For mean >= 10: Hoermann's PTRS ("The transformed
 * rejection method for generating Poisson random variables", 1993), exact,
 * about 1.1 uniform pairs per variate.
 */
double mdl_rng_poisson(struct mdl_rng *rng, double mean)
{
	double slam, loglam, b, a, invalpha, vr;

	if (!(mean > 0))
		return 0;
	if (mean < POISSON_PTRS_MIN) {
		double limit = exp(-mean), p = mdl_rng_uniform(rng), k = 0;

		while (p > limit) {
			p *= mdl_rng_uniform(rng);
			k++;
		}
		return k;
	}
	if (mean >= POISSON_NORMAL_MIN) {
		double k = floor(mean + sqrt(mean) * rng_normal(rng) + 0.5);

		return k > 0 ? k : 0;
	}
	slam = sqrt(mean);
	loglam = log(mean);
	b = 0.931 + 2.53 * slam;
	a = -0.059 + 0.02483 * b;
	invalpha = 1.1239 + 1.1328 / (b - 3.4);
	vr = 0.9277 - 3.6224 / (b - 2);
	for (;;) {
		double u = mdl_rng_uniform(rng) - 0.5, v = mdl_rng_uniform(rng);
		double us = 0.5 - fabs(u), k;
		int sign;

		k = floor((2 * a / us + b) * u + mean + 0.43);
		if (us >= 0.07 && v <= vr)
			return k;
		if (k < 0 || (us < 0.013 && v > us))
			continue;
		if (log(v) + log(invalpha) - log(a / (us * us) + b) <=
		    -mean + k * loglam - lgamma_r(k + 1, &sign))
			return k;
	}
}

/* Up to this many successes, a negative binomial is a sum of geometrics. */
#define NEGBIN_SUM_MAX 16

double mdl_rng_negbin(struct mdl_rng *rng, double n, double odds)
{
	if (n <= 0 || odds == 0)
		return 0;
	if (isinf(odds))
		return INFINITY;
	if (n <= NEGBIN_SUM_MAX) {
		/* Geometric: floor(log U / log(1 - p)), log(1 - p) = -log1p(1/odds). */
		double lq = -log1p(1 / odds), k = 0;

		for (double i = 0; i < n; i++)
			k += floor(log(mdl_rng_uniform(rng)) / lq);
		return k;
	}
	/* Gamma-Poisson mixture. */
	return mdl_rng_poisson(rng, mdl_rng_gamma(rng, n) * odds);
}

/* ------------------------------------------------------------------------
 * The chain
 * ---------------------------------------------------------------------- */

void mdl_chain_free(struct mdl_chain *chain)
{
	if (!chain)
		return;
	free(chain->up);
	free(chain);
}

int mdl_chain_new(const struct mdl_shape *shape, double mttf, double mttr, double h,
		  struct mdl_chain **ret_chain)
{
	double lambda = 1 / mttf, mu = 1 / mttr, q;
	unsigned g = shape->groups, d = shape->disks, m = shape->tolerated, n;
	struct mdl_chain *c;

	if (!(mttf > 0 && isfinite(mttf) && mttr > 0 && isfinite(mttr) && h >= 0 &&
	      isfinite(h)) || g < 1 || m >= d || (g > 1 && m != 1))
		return -EINVAL;
	/* P(at least one uncorrectable error reading (d - m) h / g expected). */
	q = -expm1(-(double)(d - m) * h / g);
	n = g > 1 ? g + 1 : m + 1;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->levels = n;
	c->up = calloc(4 * (size_t)n, sizeof(double));
	if (!c->up) {
		free(c);
		return -ENOMEM;
	}
	c->down = c->up + n;
	c->loss_fail = c->down + n;
	c->loss_err = c->loss_fail + n;

	if (g > 1) {
		/* Level j = groups running degraded; each repairs on its own. */
		for (unsigned j = 0; j <= g; j++) {
			c->up[j] = (double)(g - j) * d * lambda;
			c->down[j] = j * mu * (1 - q);
			c->loss_fail[j] = (double)j * (d - 1) * lambda;
			c->loss_err[j] = j * mu * q;
		}
	} else {
		/* Level k = failed devices of one MDS group, one rebuild at a time;
		 * the rebuild at level m restores the last redundancy. */
		for (unsigned k = 0; k < m; k++) {
			c->up[k] = (double)(d - k) * lambda;
			c->down[k] = k ? mu : 0;
		}
		c->loss_fail[m] = (double)(d - m) * lambda;
		if (m) {
			c->down[m] = mu * (1 - q);
			c->loss_err[m] = mu * q;
		}
	}
	*ret_chain = c;
	return 0;
}

/*
 * Per-level quantities of the excursion structure (docs/models.md):
 *   F[k]    probability that an excursion entered at level k (from k-1) ends
 *           in a loss rather than returning to k-1; F[levels] = 0;
 *   back[k] probability that it returns, computed directly (not 1 - F[k]);
 *   odds[k] failure/success odds of "leave level k upwards and come back",
 *           whose count per excursion is geometric;
 *   stay[k] probability that the fatal excursion at level k dies at level k
 *           rather than going up into a fatal excursion at k+1, and
 *   climb[k] the probability of the latter (computed, not 1 - stay[k]).
 * All from sums of non-negative terms: no cancellation.
 */
struct excursions {
	double *fatal, *back, *odds, *stay, *climb, *rate;
};

static void excursions_compute(const struct mdl_chain *c, struct excursions *x)
{
	double f_up = 0, b_up = 0;

	for (unsigned k = c->levels; k-- > 0;) {
		double loss = c->loss_fail[k] + c->loss_err[k];
		double not_back = loss + c->up[k] * f_up;
		double den = c->down[k] + not_back;

		x->rate[k] = c->up[k] + c->down[k] + loss;
		x->fatal[k] = den > 0 ? not_back / den : 0;
		x->back[k] = den > 0 ? c->down[k] / den : 0;
		x->odds[k] = c->up[k] * b_up == 0 ? 0 : c->up[k] * b_up / den;
		x->stay[k] = not_back > 0 ? loss / not_back : 1;
		x->climb[k] = not_back > 0 ? c->up[k] * f_up / not_back : 0;
		f_up = x->fatal[k];
		b_up = x->back[k];
	}
}

static int excursions_new(const struct mdl_chain *c, struct excursions *x)
{
	double *buf = calloc(6 * (size_t)c->levels, sizeof(double));

	if (!buf)
		return -ENOMEM;
	x->fatal = buf;
	x->back = buf + c->levels;
	x->odds = x->back + c->levels;
	x->stay = x->odds + c->levels;
	x->climb = x->stay + c->levels;
	x->rate = x->climb + c->levels;
	excursions_compute(c, x);
	return 0;
}

static void excursions_free(struct excursions *x)
{
	free(x->fatal);
}

/*
 * Expected visits: the whole lifetime is one fatal excursion at level 0.
 * n_k excursions at level k (n_ret returning + f fatal) leave upwards and
 * come back NB(n_k, odds[k]) times in total, which are the returning
 * excursions at level k+1; the fatal one continues upwards with probability
 * 1 - stay[k].  Visits to level k = n_k + returning excursions at k+1, each
 * holding Exp(rate[k]).
 */
double mdl_chain_mttdl(const struct mdl_chain *c)
{
	struct excursions x;
	double n_ret = 0, f = 1, t = 0;

	if (excursions_new(c, &x))
		return NAN;
	for (unsigned k = 0; k < c->levels; k++) {
		double n = n_ret + f;
		double up_ret = n * x.odds[k];

		if (isinf(x.odds[k]) || (k == 0 && x.fatal[0] == 0)) {
			t = INFINITY;
			break;
		}
		t += (n + up_ret) / x.rate[k];
		f *= x.climb[k];
		n_ret = up_ret;
	}
	excursions_free(&x);
	return t;
}

/* One simulated lifetime: its length, and whether it ended in an error. */
static double sample_lifetime(const struct mdl_chain *c, const struct excursions *x,
			      struct mdl_rng *rng, bool *ret_by_error)
{
	double n_ret = 0, t = 0;
	bool fatal = true;

	for (unsigned k = 0; k < c->levels && (n_ret > 0 || fatal); k++) {
		double n = n_ret + fatal;
		double up_ret = x->odds[k] > 0 ? mdl_rng_negbin(rng, n, x->odds[k]) : 0;

		t += mdl_rng_gamma(rng, n + up_ret) / x->rate[k];
		if (fatal && mdl_rng_uniform(rng) <= x->stay[k]) {
			double loss = c->loss_fail[k] + c->loss_err[k];

			*ret_by_error = mdl_rng_uniform(rng) * loss > c->loss_fail[k];
			fatal = false;
		}
		n_ret = up_ret;
	}
	return t;
}

int iosig_mttdl_simulate(const struct iosig_layout *layout, double mttf, double mttr,
			 double uber, double size, uint64_t trials, uint64_t seed,
			 struct iosig_mc_result *ret_result)
{
	struct iosig_mc_result res = { .trials = trials };
	struct mdl_chain *chain = NULL;
	struct excursions x;
	struct mdl_shape shape;
	struct mdl_rng rng;
	double mean = 0, m2 = 0;
	int r;

	if (!layout || !ret_result || trials == 0 || mdl_layout_shape(layout, &shape) ||
	    !mdl_params_valid(mttf, mttr, uber, size))
		return -EINVAL;
	r = mdl_chain_new(&shape, mttf, mttr, size * 8 * uber, &chain);
	if (r)
		return r;
	r = excursions_new(chain, &x);
	if (r)
		goto out_free_chain;
	/* A loss probability that underflowed to 0 would make every lifetime
	 * infinite: the chain is beyond what doubles can simulate. */
	if (x.fatal[0] == 0 || isinf(x.odds[0])) {
		r = -ERANGE;
		goto out_free_excursions;
	}

	mdl_rng_seed(&rng, seed);
	for (uint64_t i = 1; i <= trials; i++) {
		bool by_error = false;
		double t = sample_lifetime(chain, &x, &rng, &by_error), delta = t - mean;

		/* Welford: numerically stable running mean and variance. */
		mean += delta / (double)i;
		m2 += delta * (t - mean);
		if (by_error)
			res.by_error++;
		else
			res.by_failure++;
	}
	res.mean = mean;
	res.stderr_ = trials > 1 ? sqrt(m2 / (double)(trials - 1) / (double)trials) : NAN;
	if (!isfinite(res.mean)) {
		r = -ERANGE;
		goto out_free_excursions;
	}
	*ret_result = res;
	r = 0;
out_free_excursions:
	excursions_free(&x);
out_free_chain:
	mdl_chain_free(chain);
	return r;
}
