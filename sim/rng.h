/* SPDX-License-Identifier: MIT */
/*
 * rng.h - the simulator's random streams (libiosig's xoshiro256**, seeded
 * through splitmix64: prng.h) and the distributions the workload generators
 * need.
 * Same seed, same sequence, on every platform and libc: nothing here calls
 * rand() or reads the clock.
 */
#ifndef IOSIG_SIM_RNG_H
#define IOSIG_SIM_RNG_H

#include <stdint.h>

struct sim_rng {
	uint64_t s[4];  /* generator state; never all zero */
};

/* Seeds the generator; every seed (including 0) gives a valid state. */
void sim_rng_seed(struct sim_rng *r, uint64_t seed);
/* Next 64 random bits. */
uint64_t sim_rng_next(struct sim_rng *r);
/* Uniform double in [0, 1) with 53 random bits. */
double sim_rng_uniform(struct sim_rng *r);
/* Uniform integer in [0, n); n > 0 (unbiased, by rejection). */
uint64_t sim_rng_below(struct sim_rng *r, uint64_t n);
/* Exponential variate with the given mean (mean <= 0 gives 0). */
double sim_rng_exp(struct sim_rng *r, double mean);
/* Standard normal variate (Box-Muller, both halves used in turn is avoided
 * on purpose: one call consumes exactly two uniforms, which keeps streams
 * aligned when parameters change). */
double sim_rng_normal(struct sim_rng *r);
/* Log-normal variate whose logarithm has mean mu and deviation sigma. */
double sim_rng_lognormal(struct sim_rng *r, double mu, double sigma);
/* Pareto variate with scale xm > 0 and shape alpha > 0 (values >= xm). */
double sim_rng_pareto(struct sim_rng *r, double xm, double alpha);

#endif /* IOSIG_SIM_RNG_H */
