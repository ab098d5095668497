/* SPDX-License-Identifier: MIT */
/*
 * The burstiness-aware scheduler in isolation: burst detection against
 * B_threshold, exclusive round-robin quanta (S_quantum), the reserved
 * bandwidth of calm reads (M_reserved), and calm streams turning bursty
 * by waiting.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "policy.h"

static const struct hx_model flat1 = { .overhead_ns = 1 * MS };

static struct hx *mk(const char *spec)
{
	struct hx *h = hx_new(1, &hx_hdd, &flat1);
	char err[256];

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

static void test_burst_detection(void **state)
{
	struct hx *h = mk("burst");

	/* Stream 1: 4 KiB every 4 ms = 1 MB/s: calm.  Stream 2: 64 KiB every
	 * 4 ms = 16 MB/s: bursty within its first ~130 KiB. */
	for (unsigned i = 0; i < 100; i++) {
		hx_add(h, i * 4 * MS, 1, 0, POLICY_OP_WRITE, i * MiB, 4 * KiB, 0);
		hx_add(h, i * 4 * MS + 1, 2, 0, POLICY_OP_WRITE, 1 * GiB + i * MiB, 64 * KiB, 0);
	}
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_report(h, "became_bursty"), 1);
	assert_true(hx_report(h, "turns") >= 1);
	hx_free(h);

	/* A lower threshold makes both bursty. */
	h = mk("burst:b_threshold=512KiB/s");
	for (unsigned i = 0; i < 100; i++) {
		hx_add(h, i * 4 * MS, 1, 0, POLICY_OP_WRITE, i * MiB, 4 * KiB, 0);
		hx_add(h, i * 4 * MS + 1, 2, 0, POLICY_OP_WRITE, 1 * GiB + i * MiB, 64 * KiB, 0);
	}
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "became_bursty"), 2);
	hx_free(h);
}

static void test_burst_quantum_rotation(void **state)
{
	struct hx *h = mk("burst:s_quantum=100ms");
	unsigned i, switches = 0;

	/* Two bursty streams, 300 non-contiguous requests each, at t=0. */
	for (i = 0; i < 300; i++) {
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 64 * KiB, POLICY_REQ_SYNC);
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1 * GiB + i * MiB, 64 * KiB, POLICY_REQ_SYNC);
	}
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 600);
	/* 1 ms per command, 100 ms turns: runs of 100 commands. */
	for (i = 0; i < 600; i++)
		assert_int_equal(hx_cmd(h, i)->stream, (i / 100) % 2 ? 2 : 1);
	for (i = 1; i < 600; i++)
		switches += hx_cmd(h, i)->stream != hx_cmd(h, i - 1)->stream;
	assert_int_equal(switches, 5);
	assert_int_equal(hx_report(h, "turns"), 6);
	hx_free(h);

	/* Default 1 s quantum: the first stream finishes before the other. */
	h = mk("burst");
	for (i = 0; i < 300; i++) {
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 64 * KiB, POLICY_REQ_SYNC);
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1 * GiB + i * MiB, 64 * KiB, POLICY_REQ_SYNC);
	}
	hx_run(h, UINT64_MAX);
	for (i = 0; i < 600; i++)
		assert_int_equal(hx_cmd(h, i)->stream, i < 300 ? 1 : 2);
	hx_free(h);
}

/* Latency of the calm stream's reads while a bursty stream runs. */
static uint64_t calm_read_latency(const char *spec, unsigned *ret_n)
{
	struct hx *h = mk(spec);
	uint64_t worst = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < 500; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, i * MiB, 64 * KiB, 0);
	for (unsigned i = 0; i < 8; i++)
		hx_add(h, 10 * MS + i * 50 * MS, 2, 0, POLICY_OP_READ, 2 * GiB + i * MiB, 4 * KiB,
		       POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	for (unsigned i = 500; i < 508; i++) {
		struct hx_req *r = hx_r(h, i);

		if (r->done_t - r->submit_t > worst)
			worst = r->done_t - r->submit_t;
	}
	n = (unsigned)hx_report(h, "reserved_reads");
	hx_free(h);
	*ret_n = n;
	return worst;
}

static void test_burst_reserved_bandwidth(void **state)
{
	unsigned n_res, n_none;
	uint64_t with = calm_read_latency("burst", &n_res);
	uint64_t without = calm_read_latency("burst:m_reserved=0", &n_none);

	/* With M_reserved the calm reads are served within a couple of
	 * commands; without it they wait for the bursty stream's 500 ms. */
	assert_int_equal(n_res, 8);
	assert_int_equal(n_none, 0);
	assert_true(with <= 2 * MS);
	assert_true(without >= 400 * MS);

	/* 40 reads of 16 KiB at once: the bucket (512 KiB) lets 32 go at
	 * once, the other 128 KiB trickle in at 2 MiB/s (62.5 ms), with the
	 * bursty stream's commands in between. */
	{
		struct hx *h = mk("burst");
		unsigned between = 0;

		for (unsigned i = 0; i < 500; i++)
			hx_add(h, 0, 1, 0, POLICY_OP_WRITE, i * MiB, 64 * KiB, 0);
		for (unsigned i = 0; i < 40; i++)
			hx_add(h, 1 * MS, 2, 0, POLICY_OP_READ, 2 * GiB + i * MiB, 16 * KiB, POLICY_REQ_SYNC);
		hx_run(h, UINT64_MAX);
		assert_true(hx_r(h, 539)->done_t >= 1 * MS + 62 * MS);
		assert_true(hx_r(h, 539)->done_t <= 1 * MS + 80 * MS);
		assert_true(hx_r(h, 531)->done_t <= 1 * MS + 40 * MS);
		for (unsigned i = 0; i < hx_ncmd(h); i++)
			if (hx_cmd(h, i)->stream == 1 && hx_cmd(h, i)->t > hx_r(h, 531)->done_t &&
			    hx_cmd(h, i)->t < hx_r(h, 539)->done_t)
				between++;
		assert_true(between > 10);
		assert_int_equal(hx_report(h, "reserved_reads"), 40);
		hx_free(h);
	}
}

static void test_burst_calm_writes_wait_then_turn_bursty(void **state)
{
	struct hx *h = mk("burst:s_quantum=200ms");
	unsigned first_calm = UINT32_MAX;

	/* A bursty stream of 1000 x 64 KiB, and a calm writer: 16 KiB every
	 * 10 ms (1.6 MB/s).  Its writes wait; once arrivals plus pending bytes
	 * pass 2 MB/s it becomes bursty and gets a turn before the bursty
	 * stream ends. */
	for (unsigned i = 0; i < 1000; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, i * MiB, 64 * KiB, 0);
	for (unsigned i = 0; i < 600; i++)
		hx_add(h, 1 * MS + i * 10 * MS, 2, 0, POLICY_OP_WRITE, 2 * GiB + i * 64 * KiB, 16 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->stream == 2) {
			first_calm = i;
			break;
		}
	/* Not served during the bursty stream's first turn ... */
	assert_true(hx_cmd(h, first_calm)->t >= 200 * MS);
	/* ... but long before the bursty stream's 1000 commands end. */
	assert_true(first_calm < 1000);
	assert_int_equal(hx_report(h, "became_bursty"), 2);
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_detection),
		cmocka_unit_test(test_burst_quantum_rotation),
		cmocka_unit_test(test_burst_reserved_bandwidth),
		cmocka_unit_test(test_burst_calm_writes_wait_then_turn_bursty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
