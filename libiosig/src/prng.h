/* SPDX-License-Identifier: MIT */
/*
 * prng.h - the one pseudo-random generator of IOSIG: xoshiro256** (Blackman
 * and Vigna, 2018) seeded through splitmix64, and splitmix64 on its own
 * where 64 bits of state are enough.  Same seed, same sequence on every
 * platform and libc: nothing here calls rand() or reads the clock.
 *
 * Users: the Monte Carlo MTTDL estimator (model_mc.c, mdl_rng_*), the probe
 * (offsets and buffer contents, splitmix64) and iosig-sim's workload
 * generators (sim/rng.c, sim_rng_*).  The distributions stay with their
 * users; this header only makes the bits.  Header-only so that the inner
 * loops of the samplers inline it.
 */
#ifndef IOSIG_PRNG_H
#define IOSIG_PRNG_H

#include <stdint.h>

/* splitmix64 (Steele, Lea and Flood, 2014): advances *state by the golden
 * gamma and returns its mix.  Distinct states give distinct outputs (the
 * mix is a bijection). */
static inline uint64_t prng_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t prng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/*
 * Fills a xoshiro256** state from a seed; every seed, 0 included, is fine:
 * the four words are splitmix64 outputs of four distinct counters, so they
 * are distinct and never all zero (the one state xoshiro cannot leave).
 */
static inline void prng_seed(uint64_t s[4], uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		s[i] = prng_splitmix64(&seed);
}

/* xoshiro256**: the next 64 random bits, advancing the state. */
static inline uint64_t prng_next(uint64_t s[4])
{
	uint64_t result = prng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = prng_rotl(s[3], 45);
	return result;
}

#endif /* IOSIG_PRNG_H */
