/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for probe_analyze.c: quantiles, block-size detection from a
 * linear chunk-size sweep and the BCW state classifier, on synthetic data
 * whose answer is known (Eq. 3 with a given block size; the BCW paper's
 * staircase with given W_f, W_m, L_f, L_m, L_s).
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

#include "prng.h"
#include "probe.h"

#define KiB 1024.0

static void test_quantile(void **state)
{
	double v[] = { 5, 1, 4, 2, 3 };
	double e[] = { 7 };

	(void)state;
	assert_true(isnan(prb_quantile(v, 0, 0.5)));
	assert_float_equal(prb_quantile(e, 1, 0.5), 7, 0);
	assert_float_equal(prb_quantile(v, 5, 0.5), 3, 0);
	assert_float_equal(prb_quantile(v, 5, 0.0), 1, 0);
	assert_float_equal(prb_quantile(v, 5, 1.0), 5, 0);
	assert_float_equal(prb_quantile(v, 5, 0.25), 2, 1e-12);
	assert_float_equal(prb_quantile(v, 4, 0.5), 2.5, 1e-12); /* sorted: 1 2 3 4 */
}

/* Throughput of synchronous writes of ds bytes on a device with internal
 * block size bs (Eq. 3 shape: a partial block costs a read), with a
 * multiplicative jitter of +-noise. */
static void sweep(double *tput, size_t n, double step, double bs, double noise, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		double ds = (double)(i + 1) * step;
		double blocks = ceil(ds / bs);
		bool partial = fmod(ds, bs) != 0;
		double t = 100e-6 + blocks * bs / 500e6 + (partial ? 200e-6 : 0);
		double j = (double)(prng_splitmix64(&seed) % 2001) / 1000.0 - 1.0;

		tput[i] = ds / t * (1 + noise * j);
	}
}

static void test_block_detect_page(void **state)
{
	double tput[72];
	uint64_t bs = 0;
	double score = 0;

	(void)state;
	sweep(tput, 72, KiB, 4 * KiB, 0, 1);
	assert_int_equal(prb_block_detect(tput, 72, 1024, log(1.2), &bs, &score), 0);
	assert_int_equal(bs, 4096);
	assert_true(score > log(1.2));
	/* The same with 5 % jitter on every point. */
	sweep(tput, 72, KiB, 4 * KiB, 0.05, 2);
	assert_int_equal(prb_block_detect(tput, 72, 1024, log(1.2), &bs, &score), 0);
	assert_int_equal(bs, 4096);
}

/* The paper's shared NFS showed peaks every 22 KB (Fig. 6c). */
static void test_block_detect_22k(void **state)
{
	double tput[72];
	uint64_t bs = 0;

	(void)state;
	sweep(tput, 72, KiB, 22 * KiB, 0.03, 3);
	assert_int_equal(prb_block_detect(tput, 72, 1024, log(1.2), &bs, NULL), 0);
	assert_int_equal(bs, 22 * 1024);
}

/* A memory filesystem: no read-modify-write, only timing noise. */
static void test_block_detect_none(void **state)
{
	double tput[72];
	uint64_t bs = 12345;

	(void)state;
	for (uint64_t seed = 1; seed < 40; seed++) {
		for (size_t i = 0; i < 72; i++) {
			double j = (double)(prng_splitmix64(&seed) % 2001) / 1000.0 - 1.0;

			tput[i] = (double)(i + 1) * KiB / 1e-6 * (1 + 0.15 * j);
		}
		assert_int_equal(prb_block_detect(tput, 72, 1024, log(1.2), &bs, NULL), -ENODATA);
	}
	assert_int_equal(bs, 12345); /* untouched on failure */
}

static void test_block_detect_bad(void **state)
{
	double tput[72];
	uint64_t bs;

	(void)state;
	sweep(tput, 72, KiB, 4 * KiB, 0, 1);
	assert_int_equal(prb_block_detect(tput, 5, 1024, 0.1, &bs, NULL), -EINVAL);
	assert_int_equal(prb_block_detect(tput, 72, 0, 0.1, &bs, NULL), -EINVAL);
	tput[10] = 0;
	assert_int_equal(prb_block_detect(tput, 72, 1024, 0.1, &bs, NULL), -EINVAL);
	tput[10] = NAN;
	assert_int_equal(prb_block_detect(tput, 72, 1024, 0.1, &bs, NULL), -EINVAL);
}

/* Appends `count` latencies `lat` (with a small deterministic wobble). */
static size_t put(double *v, size_t n, size_t count, double lat, uint64_t *seed)
{
	for (size_t i = 0; i < count; i++)
		v[n + i] = lat * (0.9 + 0.2 * (double)(prng_splitmix64(seed) % 1000) / 1000.0);
	return n + count;
}

/* The BCW paper's 10 TB drive with 16 KiB writes: F 66 us, M 135 us, S 12 ms;
 * W_f = 1000 writes, W_m = 500 writes. */
static void test_bcw_staircase(void **state)
{
	double *v = malloc(4000 * sizeof(*v));
	struct prb_bcw_info info;
	struct iosig_bcw bcw;
	uint64_t seed = 9;
	size_t n = 0;

	(void)state;
	assert_non_null(v);
	n = put(v, n, 1000, 66e-6, &seed);
	for (int k = 0; k < 4; k++) {
		n = put(v, n, 3, 12e-3, &seed);
		n = put(v, n, k == 3 ? 200 : 500, 135e-6, &seed);
	}
	assert_int_equal(prb_bcw_classify(v, n, 16384, 8, &bcw, &info), 0);
	assert_float_equal(bcw.wf, 1000 * 16384.0, 0);
	assert_float_equal(bcw.wm, 500 * 16384.0, 0);
	assert_float_equal(bcw.lf, 66e-6, 66e-6 * 0.1);
	assert_float_equal(bcw.lm, 135e-6, 135e-6 * 0.1);
	assert_float_equal(bcw.ls, 12e-3, 12e-3 * 0.1);
	assert_int_equal(info.fast, 1000);
	assert_int_equal(info.slow, 12);
	assert_int_equal(info.slow_runs, 4);
	assert_int_equal(info.mid, 1700);
	assert_true(info.ratio > 50);
	free(v);
}

/* A trace that starts in a slow state: no Fast writes, W_f = 0. */
static void test_bcw_starts_slow(void **state)
{
	double v[400];
	struct iosig_bcw bcw;
	uint64_t seed = 4;
	size_t n = 0;

	(void)state;
	for (int k = 0; k < 3; k++) {
		n = put(v, n, 2, 10e-3, &seed);
		n = put(v, n, 100, 100e-6, &seed);
	}
	assert_int_equal(prb_bcw_classify(v, n, 65536, 8, &bcw, NULL), 0);
	assert_float_equal(bcw.wf, 0, 0);
	assert_float_equal(bcw.wm, 100 * 65536.0, 0);
	assert_float_equal(bcw.lf, bcw.lm, 0);
}

static void test_bcw_none(void **state)
{
	double v[1000];
	struct iosig_bcw bcw = { .wf = 42 };
	struct prb_bcw_info info;
	uint64_t seed = 5;
	size_t n;

	(void)state;
	/* Flat latencies: two levels exist only by chance and are close. */
	n = put(v, 0, 1000, 200e-6, &seed);
	assert_int_equal(prb_bcw_classify(v, n, 16384, 8, &bcw, &info), -ENODATA);
	assert_true(info.ratio < 8);
	/* One slow spike: no complete Mid run, so no W_m. */
	n = put(v, 0, 500, 100e-6, &seed);
	n = put(v, n, 3, 20e-3, &seed);
	n = put(v, n, 300, 150e-6, &seed);
	assert_int_equal(prb_bcw_classify(v, n, 16384, 8, &bcw, &info), -ENODATA);
	assert_int_equal(info.slow_runs, 1);
	assert_float_equal(bcw.wf, 42, 0); /* untouched on failure */
	assert_int_equal(prb_bcw_classify(v, 10, 16384, 8, &bcw, NULL), -EINVAL);
	v[3] = -1;
	assert_int_equal(prb_bcw_classify(v, n, 16384, 8, &bcw, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_block_detect_page),
		cmocka_unit_test(test_block_detect_22k),
		cmocka_unit_test(test_block_detect_none),
		cmocka_unit_test(test_block_detect_bad),
		cmocka_unit_test(test_bcw_staircase),
		cmocka_unit_test(test_bcw_starts_slow),
		cmocka_unit_test(test_bcw_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
