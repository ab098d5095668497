/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for prng.h, the generator that the Monte Carlo estimator, the
 * probe and iosig-sim share: splitmix64 and xoshiro256** against their
 * published reference outputs (so every user keeps the sequences it had
 * for a seed), seeding never giving the all-zero state, and the estimator's
 * stream (mdl_rng) being exactly this generator's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model.h"
#include "prng.h"

/* splitmix64 from state 0: the reference implementation's first outputs. */
static void test_splitmix64_reference(void **state)
{
	static const uint64_t want[] = { 0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull,
					 0x06c45d188009454full };
	uint64_t s = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_true(prng_splitmix64(&s) == want[i]);
	assert_true(s == 3 * 0x9e3779b97f4a7c15ull);
}

/* xoshiro256** seeded through splitmix64: the streams of seeds 0 and 42
 * that iosig-sim's and the estimator's results were produced with. */
static void test_xoshiro_reference(void **state)
{
	static const struct {
		uint64_t seed;
		uint64_t out[3];
	} cases[] = {
		{ 0, { 0x99ec5f36cb75f2b4ull, 0xbf6e1f784956452aull, 0x1a5f849d4933e6e0ull } },
		{ 42, { 0x15780b2e0c2ec716ull, 0x6104d9866d113a7eull, 0xae17533239e499a1ull } },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint64_t s[4];

		prng_seed(s, cases[c].seed);
		for (int i = 0; i < 3; i++)
			assert_true(prng_next(s) == cases[c].out[i]);
	}
}

/* The four seeded words are distinct (so never all zero), for small seeds,
 * large ones and those one golden gamma apart. */
static void test_seed_state_valid(void **state)
{
	(void)state;
	for (uint64_t k = 0; k < 4096; k++) {
		uint64_t seeds[] = { k, UINT64_MAX - k, k * 0x9e3779b97f4a7c15ull };

		for (size_t j = 0; j < 3; j++) {
			uint64_t s[4];

			prng_seed(s, seeds[j]);
			for (int a = 0; a < 4; a++)
				for (int b = a + 1; b < 4; b++)
					assert_true(s[a] != s[b]);
		}
	}
}

/* The estimator draws from this generator: same seed, same bits, and its
 * uniform variate is (x >> 11) + 1 in units of 2^-53, in (0, 1]. */
static void test_mdl_rng_is_prng(void **state)
{
	struct mdl_rng r;
	uint64_t s[4];

	(void)state;
	mdl_rng_seed(&r, 12345);
	prng_seed(s, 12345);
	for (int i = 0; i < 1000; i++)
		assert_true(mdl_rng_next(&r) == prng_next(s));
	assert_true(mdl_rng_uniform(&r) == (double)((prng_next(s) >> 11) + 1) * 0x1.0p-53);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splitmix64_reference),
		cmocka_unit_test(test_xoshiro_reference),
		cmocka_unit_test(test_seed_state_valid),
		cmocka_unit_test(test_mdl_rng_is_prng),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
