/* SPDX-License-Identifier: MIT */
/* Histogram percentiles, size classes and the metrics of small hand-built
 * scenarios. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"
#include "source.h"

static void test_hist_exact_small(void **state)
{
	struct pol_hist h;

	pol_hist_init(&h);
	for (uint64_t v = 1; v <= 100; v++)
		assert_int_equal(pol_hist_add(&h, v), 0);
	assert_true(pol_hist_mean(&h) == 50.5);
	assert_true(pol_hist_percentile(&h, 50) == 50);
	assert_true(pol_hist_percentile(&h, 99) == 99);
	assert_true(pol_hist_percentile(&h, 99.9) == 100);
	assert_true(pol_hist_percentile(&h, 0) == 1);
	assert_true(pol_hist_percentile(&h, 100) == 100);
	pol_hist_free(&h);
}

static void test_hist_relative_error(void **state)
{
	struct pol_hist h;

	pol_hist_init(&h);
	/* 1000 samples 1 ms .. 1000 ms: p99 is the 990th = 990 ms, p99.9 = 999 ms. */
	for (uint64_t i = 1; i <= 1000; i++)
		assert_int_equal(pol_hist_add(&h, i * 1000000), 0);
	assert_true(fabs(pol_hist_percentile(&h, 99) / 990e6 - 1) < 0.004);
	assert_true(fabs(pol_hist_percentile(&h, 99.9) / 999e6 - 1) < 0.004);
	assert_true(fabs(pol_hist_percentile(&h, 50) / 500e6 - 1) < 0.004);
	assert_true(pol_hist_mean(&h) == 500.5e6);
	/* Clamped to the observed extremes. */
	assert_true(pol_hist_percentile(&h, 100) == 1000e6);
	pol_hist_free(&h);

	pol_hist_init(&h);
	assert_true(pol_hist_percentile(&h, 99) == 0);
	assert_int_equal(pol_hist_add(&h, UINT64_MAX), 0);   /* beyond the range: clamped */
	assert_true(pol_hist_percentile(&h, 50) == (double)UINT64_MAX);
	pol_hist_free(&h);
}

static void test_size_classes(void **state)
{
	assert_int_equal(sim_size_class(512), 0);
	assert_int_equal(sim_size_class(4095), 0);
	assert_int_equal(sim_size_class(4096), 1);
	assert_int_equal(sim_size_class(16383), 1);
	assert_int_equal(sim_size_class(16384), 2);
	assert_int_equal(sim_size_class(65536), 3);
	assert_int_equal(sim_size_class(262144), 4);
	assert_int_equal(sim_size_class(1048575), 4);
	assert_int_equal(sim_size_class(1048576), 5);
	assert_int_equal(sim_size_class(1ull << 40), 5);
	assert_string_equal(sim_size_class_name(1), "4KiB-16KiB");
}

static void test_metrics_scenario(void **state)
{
	struct sim_metrics m;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;
	struct json_writer w;

	sim_metrics_init(&m);
	/* Reads of 4 KiB taking 1, 2, 3 ms; a 1 MiB write taking 10 ms; a
	 * flush; a failed read. */
	assert_int_equal(sim_metrics_add(&m, POLICY_OP_READ, 4096, 0, 1000000, 0), 0);
	assert_int_equal(sim_metrics_add(&m, POLICY_OP_READ, 4096, 1000000, 3000000, 0), 0);
	assert_int_equal(sim_metrics_add(&m, POLICY_OP_READ, 4096, 2000000, 5000000, 0), 0);
	assert_int_equal(sim_metrics_add(&m, POLICY_OP_WRITE, 1 << 20, 5000000, 15000000, 0), 0);
	assert_int_equal(sim_metrics_add(&m, POLICY_OP_FLUSH, 0, 15000000, 15000000, 0), 0);
	assert_int_equal(sim_metrics_add(&m, POLICY_OP_READ, 4096, 15000000, 16000000, -EIO), 0);
	assert_int_equal(m.completed, 6);
	assert_int_equal(m.errors, 1);
	assert_int_equal(m.reads, 3);
	assert_int_equal(m.writes, 1);
	assert_int_equal(m.flushes, 1);
	assert_int_equal(m.bytes_read, 12288);
	assert_int_equal(m.bytes_written, 1 << 20);
	assert_true(m.latency_sum_ns == 1e6 + 2e6 + 3e6 + 10e6 + 0 + 1e6);
	assert_int_equal(m.lat_cls[0][1].count, 3);
	assert_int_equal(m.lat_cls[1][5].count, 1);
	assert_true(pol_hist_mean(&m.lat_op[0]) == 2e6);

	fp = open_memstream(&buf, &len);
	json_init(&w, fp, false);
	json_obj_begin(&w, NULL);
	sim_metrics_json(&m, 0.016, &w);
	json_obj_end(&w);
	assert_int_equal(json_finish(&w), 0);
	fclose(fp);
	assert_non_null(strstr(buf, "\"makespan_s\":0.016"));
	assert_non_null(strstr(buf, "\"cumulative_io_completion_s\":0.016"));
	assert_non_null(strstr(buf, "\"latency_sum_s\":0.017"));
	/* Per op over its own span: 12 KiB read in 0-5 ms (the failed read
	 * does not count), 1 MiB written in 5-15 ms. */
	assert_non_null(strstr(buf, "\"read_throughput_mib_s\":2.34375,"));
	assert_non_null(strstr(buf, "\"write_throughput_mib_s\":100}"));
	assert_non_null(strstr(buf, "\"read\":{\"count\":3,\"mean_us\":2000,\"p50_us\":200"));
	assert_non_null(strstr(buf, "{\"class\":\"ge1MiB\",\"read\":{\"count\":0"));
	free(buf);
	sim_metrics_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_exact_small),
		cmocka_unit_test(test_hist_relative_error),
		cmocka_unit_test(test_size_classes),
		cmocka_unit_test(test_metrics_scenario),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
