/* SPDX-License-Identifier: MIT */
/*
 * BID-HDD and BID-Hybrid in isolation: staging per process, adaptive wait
 * timers, deadlines, flushing whole queues in marking order, packing
 * fraction tiering, the location table, and signature hints.
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

#define US IOSIG_NS_PER_US
#define MS IOSIG_NS_PER_MS
#define KiB 1024ull
#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

static const struct iosig_dev_info hdd = {
	.name = "hdd0", .cls = IOSIG_DEV_HDD, .capacity = 1ull << 40, .queue_depth = 1,
	.block_size = 512,
};
static const struct iosig_dev_info ssd = {
	.name = "ssd0", .cls = IOSIG_DEV_SSD, .capacity = 64 * GiB, .queue_depth = 8,
	.block_size = 4096,
};
static const struct hx_model flat1 = { .overhead_ns = 1 * MS };
static const struct hx_model fast = { .overhead_ns = 50 * US };

static struct hx *mk1(const char *spec, const struct hx_model *m)
{
	struct hx *h = hx_new(1, &hdd, m);
	char err[256];

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

/* ---- BID-HDD ---- */

static void test_bid_whole_queues_in_marking_order(void **state)
{
	struct hx *h = mk1("bid-hdd:wait_mult=1.5", &flat1);
	unsigned i;

	/* A and B interleave sequential 4 KiB writes every 100 us (each
	 * process every 200 us); B lies below A on disk and stops first. */
	for (i = 0; i < 20; i++) {
		hx_add(h, i * 200 * US, 1, 0, IOSIG_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0);
		if (i < 19)
			hx_add(h, i * 200 * US + 100 * US, 2, 0, IOSIG_OP_WRITE, i * 4 * KiB,
			       4 * KiB, 0);
	}
	/* A late request of A after its queue was marked: a new queue. */
	hx_add(h, 20 * MS, 1, 0, IOSIG_OP_WRITE, 20 * GiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	/* B's queue (last request 3.7 ms, wait 300 us) is marked before A's
	 * (last 3.8 ms): B flushes first, whole, as one merged command; then A. */
	assert_int_equal(hx_ncmd(h), 3);
	assert_int_equal(hx_cmd(h, 0)->stream, 2);
	assert_int_equal(hx_cmd(h, 0)->nreq, 19);
	assert_int_equal(hx_cmd(h, 0)->t, 3700 * US + 300 * US);
	assert_int_equal(hx_cmd(h, 1)->stream, 1);
	assert_int_equal(hx_cmd(h, 1)->nreq, 20);
	assert_int_equal(hx_cmd(h, 1)->len, 80 * KiB);
	assert_int_equal(hx_cmd(h, 2)->off, 20 * GiB);
	assert_int_equal(hx_report(h, "flushed_queues"), 3);
	assert_int_equal(hx_report(h, "marked_by_wait"), 3);
	hx_free(h);

	/* noop on the same load alternates between the processes. */
	h = mk1("noop", &flat1);
	for (i = 0; i < 20; i++) {
		hx_add(h, i * 200 * US, 1, 0, IOSIG_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0);
		if (i < 19)
			hx_add(h, i * 200 * US + 100 * US, 2, 0, IOSIG_OP_WRITE, i * 4 * KiB,
			       4 * KiB, 0);
	}
	hx_run(h, UINT64_MAX);
	assert_true(hx_ncmd(h) > 3);
	hx_free(h);
}

static void test_bid_adaptive_wait(void **state)
{
	struct hx *h;

	/* A lone request waits the default timer. */
	h = mk1("bid-hdd:wait_default=10ms", &flat1);
	hx_add(h, 0, 1, 0, IOSIG_OP_WRITE, 0, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 10 * MS);
	hx_free(h);

	/* Gaps 1, 1, 1 ms: wait 1 ms after the last (3 ms) -> flush at 4 ms. */
	h = mk1("bid-hdd:wait_default=10ms", &flat1);
	for (unsigned i = 0; i < 4; i++)
		hx_add(h, i * MS, 1, 0, IOSIG_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 4 * MS);
	assert_int_equal(hx_cmd(h, 0)->nreq, 4);
	hx_free(h);

	/* Gaps 4, 1, 1 ms (each shorter than the wait then in force), weights
	 * 1, 2, 3 oldest to newest: (4 + 2 + 3) / 6 = 1.5 ms after 6 ms. */
	h = mk1("bid-hdd:wait_default=10ms", &flat1);
	hx_add(h, 0, 1, 0, IOSIG_OP_WRITE, 0, 4 * KiB, 0);
	hx_add(h, 4 * MS, 1, 0, IOSIG_OP_WRITE, 4 * KiB, 4 * KiB, 0);
	hx_add(h, 5 * MS, 1, 0, IOSIG_OP_WRITE, 8 * KiB, 4 * KiB, 0);
	hx_add(h, 6 * MS, 1, 0, IOSIG_OP_WRITE, 12 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 1);
	assert_int_equal(hx_cmd(h, 0)->t, 7500 * US);
	hx_free(h);

	/* wait_k=1: only the last gap counts (1 ms) -> 7 ms. */
	h = mk1("bid-hdd:wait_default=10ms,wait_k=1", &flat1);
	hx_add(h, 0, 1, 0, IOSIG_OP_WRITE, 0, 4 * KiB, 0);
	hx_add(h, 4 * MS, 1, 0, IOSIG_OP_WRITE, 4 * KiB, 4 * KiB, 0);
	hx_add(h, 5 * MS, 1, 0, IOSIG_OP_WRITE, 8 * KiB, 4 * KiB, 0);
	hx_add(h, 6 * MS, 1, 0, IOSIG_OP_WRITE, 12 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 7 * MS);
	hx_free(h);

	/* A gap longer than the mean marks the queue early: gaps 1, 1 then 3
	 * ms: the wait (1 ms) expires at 3 ms, before the 4th request. */
	h = mk1("bid-hdd:wait_default=10ms", &flat1);
	hx_add(h, 0, 1, 0, IOSIG_OP_WRITE, 0, 4 * KiB, 0);
	hx_add(h, 1 * MS, 1, 0, IOSIG_OP_WRITE, 4 * KiB, 4 * KiB, 0);
	hx_add(h, 2 * MS, 1, 0, IOSIG_OP_WRITE, 8 * KiB, 4 * KiB, 0);
	hx_add(h, 5 * MS, 1, 0, IOSIG_OP_WRITE, 12 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 2);
	assert_int_equal(hx_cmd(h, 0)->t, 3 * MS);
	assert_int_equal(hx_cmd(h, 0)->nreq, 3);
	/* The new queue starts over with the default wait. */
	assert_int_equal(hx_cmd(h, 1)->t, 15 * MS);
	hx_free(h);

	/* keep_history: the new queue inherits the 1 ms wait. */
	h = mk1("bid-hdd:wait_default=10ms,keep_history=1", &flat1);
	hx_add(h, 0, 1, 0, IOSIG_OP_WRITE, 0, 4 * KiB, 0);
	hx_add(h, 1 * MS, 1, 0, IOSIG_OP_WRITE, 4 * KiB, 4 * KiB, 0);
	hx_add(h, 2 * MS, 1, 0, IOSIG_OP_WRITE, 8 * KiB, 4 * KiB, 0);
	hx_add(h, 5 * MS, 1, 0, IOSIG_OP_WRITE, 12 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 1)->t, 6 * MS);
	hx_free(h);
}

static void test_bid_deadlines(void **state)
{
	struct hx *h;

	/* A process writing every 1 ms never leaves a gap: the write deadline
	 * (50 ms here) marks its queue. */
	h = mk1("bid-hdd:deadline_write=50ms,wait_mult=2", &fast);
	for (unsigned i = 0; i < 100; i++)
		hx_add(h, i * MS, 1, 0, IOSIG_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 50 * MS);
	assert_int_equal(hx_cmd(h, 0)->nreq, 51);
	assert_true(hx_report(h, "marked_by_deadline") >= 1);
	hx_free(h);

	/* A read joining at 10 ms cuts the deadline to 10 + 20 ms. */
	h = mk1("bid-hdd:deadline_write=50ms,deadline_read=20ms,wait_mult=2", &fast);
	for (unsigned i = 0; i < 100; i++)
		hx_add(h, i * MS, 1, 0, i == 10 ? IOSIG_OP_READ : IOSIG_OP_WRITE, i * 4 * KiB,
		       4 * KiB, i == 10 ? IOSIG_REQ_SYNC : 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 30 * MS);
	hx_free(h);

	/* Paper defaults: 5000 ms for writes, 500 ms once a read is in. */
	h = mk1("bid-hdd:wait_mult=2", &fast);
	for (unsigned i = 0; i < 700; i++)
		hx_add(h, i * MS, 1, 0, i == 100 ? IOSIG_OP_READ : IOSIG_OP_WRITE, i * 4 * KiB,
		       4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 600 * MS);
	hx_free(h);
}

static void test_bid_queue_not_interleaved(void **state)
{
	struct hx *h = mk1("bid-hdd:max_merge=0", &flat1);
	unsigned i;

	/* Two queues marked at once (same expiry): the first marked is
	 * flushed completely before any request of the second. */
	for (i = 0; i < 5; i++) {
		hx_add(h, 0, 1, 0, IOSIG_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0);
		hx_add(h, 0, 2, 0, IOSIG_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
	}
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 10);
	for (i = 0; i < 10; i++) {
		assert_int_equal(hx_cmd(h, i)->nreq, 1);
		assert_int_equal(hx_cmd(h, i)->stream, i < 5 ? hx_cmd(h, 0)->stream :
							     3 - hx_cmd(h, 0)->stream);
		if (i % 5)
			assert_true(hx_cmd(h, i)->off > hx_cmd(h, i - 1)->off);
	}
	hx_free(h);
}

static void test_bid_bad_options(void **state)
{
	struct hx *h = hx_new(1, &hdd, &flat1);
	char err[256];

	assert_int_equal(hx_policy(h, "bid-hdd:wait_k=0", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bid-hdd: option 'wait_k': 0 is out of range [1, 64]");
	assert_int_equal(hx_policy(h, "bid-hdd:deadline_write=5", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a time unit"));
	assert_int_equal(hx_policy(h, "bid-hdd:wait_mult=-1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range [0, 1000]"));
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bid_whole_queues_in_marking_order),
		cmocka_unit_test(test_bid_adaptive_wait),
		cmocka_unit_test(test_bid_deadlines),
		cmocka_unit_test(test_bid_queue_not_interleaved),
		cmocka_unit_test(test_bid_bad_options),
	};

	(void)ssd;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
