/* SPDX-License-Identifier: MIT */
/*
 * rng.c - xoshiro256** (Blackman and Vigna, 2018) with splitmix64 seeding,
 * and the distributions used by the workload generators.
 */
#include "rng.h"

#include <math.h>

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* splitmix64: spreads a (possibly small) seed over the 256-bit state. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
	/* splitmix64 never yields four zero words in a row, but be explicit. */
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
}

uint64_t sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
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
