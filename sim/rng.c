/* SPDX-License-Identifier: MIT */
/*
 * rng.c - the distributions used by the workload generators, drawn from
 * libiosig's generator (prng.h: xoshiro256** seeded through splitmix64).
 */
#include "rng.h"

#include <math.h>

#include "prng.h"

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	prng_seed(r->s, seed);
}

uint64_t sim_rng_next(struct sim_rng *r)
{
	return prng_next(r->s);
}

double sim_rng_uniform(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t sim_rng_below(struct sim_rng *r, uint64_t n)
{
	/* Reject the top partial copy of [0, n) so every value is equally likely. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;

	do
		x = sim_rng_next(r);
	while (x >= limit);
	return x % n;
}

double sim_rng_exp(struct sim_rng *r, double mean)
{
	if (mean <= 0)
		return 0;
	/* 1 - u is in (0, 1], so the logarithm is finite. */
	return -mean * log(1.0 - sim_rng_uniform(r));
}

double sim_rng_normal(struct sim_rng *r)
{
	double u1 = 1.0 - sim_rng_uniform(r);
	double u2 = sim_rng_uniform(r);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double sim_rng_lognormal(struct sim_rng *r, double mu, double sigma)
{
	return exp(mu + sigma * sim_rng_normal(r));
}

double sim_rng_pareto(struct sim_rng *r, double xm, double alpha)
{
	return xm / pow(1.0 - sim_rng_uniform(r), 1.0 / alpha);
}
