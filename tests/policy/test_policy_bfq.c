/* SPDX-License-Identifier: MIT */
/*
 * BFQ in isolation, on hand-worked cases: B-WF2Q+ with budgets that grow
 * when exhausted, weights, idling for a sync queue with a short think
 * time, the budget timeout and time charging of slow queues, weight
 * raising of an interactive queue, and the order within a queue (short
 * backward seeks, FIFO expiry).
 *
 * Virtual times below are in sectors per weight unit: a queue of weight w
 * with budget B has F = S + B / w; serving s sectors advances V by s / W,
 * W the sum of the busy queues' weights.  Default weight 40 (ioprio 4).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "policy.h"

static const struct hx_model flat5 = { .overhead_ns = 5 * MS };
static const struct hx_model flat05 = { .overhead_ns = 500 * US };
static const struct hx_model flat10 = { .overhead_ns = 10 * MS };

static struct hx *mk(const char *spec, const struct hx_model *m)
{
	struct hx *h = hx_new(1, &hx_hdd, m);
	char err[256];

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

/* The streams of the first n commands as letters: stream 1 = 'A', ... */
static void expect_streams(struct hx *h, const char *want)
{
	char got[256] = "";
	size_t n = strlen(want);

	assert_true(hx_ncmd(h) >= n && n < sizeof(got));
	for (size_t i = 0; i < n; i++)
		got[i] = (char)('A' + hx_cmd(h, (unsigned)i)->stream - 1);
	assert_string_equal(got, want);
}

/* Two backlogged processes of equal weight, 1 MiB reads, max_budget 4 MiB
 * (8192 sectors).  A new queue's budget is 2/3 of it, 5461 sectors: two
 * 2048-sector reads fit, the third does not (exhausted), and the next
 * budget is min(5461 x 4, 8192) = 8192: four reads.
 *   t0: A S=0 F=136.5, B S=0 F=136.5; tie: A, queued first.
 *   A serves 4096: V = 4096/80 = 51.2; A requeued S=102.4 F=307.2.
 *   A not eligible (102.4 > 51.2): B, 4096: V = 102.4; B S=102.4 F=307.2.
 *   Both eligible, F tie: A (requeued first), 8192: V = 204.8; A S=307.2.
 *   B (S=102.4): 8192; and so on, four each. */
static void test_bfq_budgets_wf2q(void **state)
{
	struct hx *h = mk("bfq:max_budget=4MiB,max_merge=0,low_latency=0,slice_idle=0", &flat5);

	for (unsigned i = 0; i < 20; i++) {
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 1 * MiB, POLICY_REQ_SYNC);
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 100 * GiB + i * MiB, 1 * MiB, POLICY_REQ_SYNC);
	}
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 40);
	expect_streams(h, "AABBAAAABBBBAAAABBBBAAAABBBBAAAABBBBAABB");
	/* In sector order within a queue. */
	for (unsigned i = 1; i < 40; i++)
		if (hx_cmd(h, i)->stream == hx_cmd(h, i - 1)->stream)
			assert_true(hx_cmd(h, i)->off > hx_cmd(h, i - 1)->off);
	/* Every run but each queue's last ended by exhaustion: 5 + 5. */
	assert_int_equal(hx_report(h, "expired_budget_exhausted"), 10);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

/* B has twice A's weight (ioprio 0: 80; A ioprio 4: 40).  W = 120.
 *   t0: A S=0 F=136.5; B S=0 F=68.3: B, 4096 sectors: V=34.1; B S=51.2 F=153.6.
 *   A (S=0): 4096: V=68.3; A S=102.4 F=307.2.   B (51.2): 8192: V=136.5;
 *   B S=153.6 F=256.   A (102.4): 8192: V=204.8; A S=307.2 F=512.
 *   B (153.6): 8192: V=273.1; B S=256 F=358.4.   B again (A's S=307.2 is
 *   ahead): V=341.3; B S=358.4 F=460.8.   A (307.2): V=409.6 ... two budgets
 *   of B for every budget of A. */
static void test_bfq_weights(void **state)
{
	struct hx *h = mk("bfq:max_budget=4MiB,max_merge=0,low_latency=0,slice_idle=0,"
			  "ioprio_stream=2,stream_ioprio=0", &flat5);

	for (unsigned i = 0; i < 40; i++) {
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 1 * MiB, POLICY_REQ_SYNC);
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 100 * GiB + i * MiB, 1 * MiB, POLICY_REQ_SYNC);
	}
	hx_run(h, UINT64_MAX);
	expect_streams(h, "BBAABBBBAAAABBBBBBBBAAAABBBBBBBB");
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

/* A reads sequentially every 2 ms (think time 1.5 ms < slice_idle); B has
 * a backlog.  On a drive without command queueing BFQ idles for A: A
 * keeps the disk for its 21 reads; B starts one idle period (8 ms) after
 * A's last completion (40.5 ms).  Without idling (slice_idle=0) the disk
 * turns to B as soon as A's queue drains. */
static void test_bfq_idling(void **state)
{
	struct hx *h;
	unsigned first_b;

	h = mk("bfq:low_latency=0", &flat05);
	for (unsigned i = 0; i <= 20; i++)
		hx_add(h, i * 2 * MS, 1, 0, POLICY_OP_READ, i * 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 50; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1024 * MiB + i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	for (first_b = 0; hx_cmd(h, first_b)->stream == 1; first_b++)
		;
	assert_int_equal(first_b, 21);
	assert_int_equal(hx_cmd(h, 21)->t, 40 * MS + 500 * US + 8 * MS);
	assert_true(hx_report(h, "idle_hits") >= 20);
	assert_true(hx_report(h, "expired_too_idle") >= 1);
	hx_free(h);

	h = mk("bfq:low_latency=0,slice_idle=0", &flat05);
	for (unsigned i = 0; i <= 20; i++)
		hx_add(h, i * 2 * MS, 1, 0, POLICY_OP_READ, i * 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 50; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1024 * MiB + i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->stream, 1);
	assert_int_equal(hx_cmd(h, 1)->stream, 2);
	assert_true(hx_report(h, "idle_waits") == 0);
	hx_free(h);
}

/* The idling case above on a drive that queues 32 commands: BFQ still
 * idles for sequential, I/O-bound A on a rotational drive (A's 21 reads
 * first), but not on a non-rotational one (B's first read follows A's
 * first).  Rotational is every class but SSD, NVM and RAM: a RAID or
 * network device, of no particular kind, is rotational as in Linux. */
static unsigned idling_first_b(enum iosig_class cls)
{
	struct policy_dev_info d = hx_hdd;
	struct hx *h;
	char err[256];
	unsigned first_b;

	d.cls = cls;
	d.queue_depth = 32;
	h = hx_new(1, &d, &flat05);
	assert_int_equal(hx_policy(h, "bfq:low_latency=0", err, sizeof(err)), 0);
	for (unsigned i = 0; i <= 20; i++)
		hx_add(h, i * 2 * MS, 1, 0, POLICY_OP_READ, i * 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 50; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1024 * MiB + i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	for (first_b = 0; hx_cmd(h, first_b)->stream == 1; first_b++)
		;
	hx_free(h);
	return first_b;
}

static void test_bfq_idling_rotational(void **state)
{
	assert_int_equal(idling_first_b(IOSIG_CLASS_HDD), 21);
	assert_int_equal(idling_first_b(IOSIG_CLASS_RAID), 21);
	assert_int_equal(idling_first_b(IOSIG_CLASS_NETWORK), 21);
	assert_int_equal(idling_first_b(IOSIG_CLASS_SSD), 1);
	assert_int_equal(idling_first_b(IOSIG_CLASS_NVM), 1);
	assert_int_equal(idling_first_b(IOSIG_CLASS_RAM), 1);
}

/* A does slow random 4 KiB reads (10 ms each), B 512 KiB sequential ones.
 * A cannot use its budget within timeout_sync (125 ms): expired at 130 ms
 * after 13 reads, and, being slow, charged the time: its service becomes
 * the whole maximum budget (8192 x 125/125 ms), so B gets the next 13
 * commands (5 of its first budget, 8 of its second) before A is eligible
 * again.  Without the time charge A would be back after B's first 5. */
static void test_bfq_timeout_time_charge(void **state)
{
	struct hx *h = mk("bfq:max_budget=4MiB,max_merge=0,low_latency=0,slice_idle=0", &flat10);

	for (unsigned i = 0; i < 40; i++) {
		hx_add(h, 0, 1, 0, POLICY_OP_READ, (i * 37 % 40) * 10 * GiB + 8 * KiB, 4 * KiB,
		       POLICY_REQ_SYNC);
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 900 * GiB + i * 512 * KiB, 512 * KiB, POLICY_REQ_SYNC);
	}
	hx_run(h, UINT64_MAX);
	expect_streams(h, "AAAAAAAAAAAAABBBBBBBBBBBBBA");
	assert_int_equal(hx_cmd(h, 12)->t, 120 * MS);
	assert_true(hx_report(h, "expired_budget_timeout") >= 1);
	assert_true(hx_report(h, "time_charged_expirations") >= 1);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

/* A greedy reader (stream 1) has a backlog of 1 MiB reads; at 3 s an
 * interactive process (stream 2, idle since ever) reads 4 KiB.  With
 * low_latency its weight is raised 30-fold and it preempts the greedy
 * queue: its read goes next, after the command in flight (5 ms).  Without
 * it, it waits until the greedy queue's budget is used. */
static void test_bfq_weight_raising(void **state)
{
	struct hx *h;
	unsigned rd;
	uint64_t lat_wr, lat_plain;

	h = mk("bfq:max_merge=0", &flat5);
	for (unsigned i = 0; i < 1000; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 1 * MiB, POLICY_REQ_SYNC);
	rd = hx_add(h, 3000 * MS + 1 * MS, 2, 0, POLICY_OP_READ, 700 * GiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	lat_wr = hx_r(h, rd)->done_t - hx_r(h, rd)->submit_t;
	assert_true(lat_wr <= 10 * MS);   /* the command in flight, then its own */
	assert_true(hx_report(h, "weight_raised_interactive") >= 2);   /* both started raised */
	assert_true(hx_report(h, "preemptions") >= 1);
	hx_free(h);

	h = mk("bfq:max_merge=0,low_latency=0", &flat5);
	for (unsigned i = 0; i < 1000; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 1 * MiB, POLICY_REQ_SYNC);
	rd = hx_add(h, 3000 * MS + 1 * MS, 2, 0, POLICY_OP_READ, 700 * GiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	lat_plain = hx_r(h, rd)->done_t - hx_r(h, rd)->submit_t;
	assert_true(lat_plain > lat_wr);
	assert_int_equal(hx_report(h, "weight_raised_interactive"), 0);
	hx_free(h);

	/* A process given another priority (ionice -n 3: weight 50) keeps
	 * that weight: only default-weight queues are raised.  Only the
	 * greedy reader (weight 40) started raised. */
	h = mk("bfq:max_merge=0,ioprio_stream=2,stream_ioprio=3", &flat5);
	for (unsigned i = 0; i < 1000; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 1 * MiB, POLICY_REQ_SYNC);
	rd = hx_add(h, 3000 * MS + 1 * MS, 2, 0, POLICY_OP_READ, 700 * GiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "weight_raised_interactive"), 1);
	assert_true(hx_r(h, rd)->done_t - hx_r(h, rd)->submit_t > lat_wr);
	hx_free(h);
}

/* Within a queue: after 100 MiB, the request at 95 MiB (5 MiB back, cost
 * 2 x 5 = 10) goes before the one at 115 (15 forward); 70 MiB is further
 * back than back_seek_max (16 MiB), so 115 goes before it.  An expired
 * FIFO head is served first, once per budget. */
static void test_bfq_request_order(void **state)
{
	static const unsigned want[] = { 100, 95, 115, 70 };
	struct hx *h = mk("bfq:low_latency=0", &flat5);

	hx_add(h, 0, 1, 0, POLICY_OP_READ, 100 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 1 * MS, 1, 0, POLICY_OP_READ, 95 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 1 * MS, 1, 0, POLICY_OP_READ, 115 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 1 * MS, 1, 0, POLICY_OP_READ, 70 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(hx_cmd(h, i)->off, want[i] * MiB);
	hx_free(h);

	/* fifo_expire_sync=1ms: 300 arrives first (1 ms), 290 and 295 at 2 ms,
	 * while stream 2's read at 900 GiB is served.  All lie further back
	 * than back_seek_max from there, so the queue's next request is the
	 * one furthest back, 290, which starts its slot (bfq_check_fifo looks
	 * at the FIFO when choosing the request after one); then the expired
	 * FIFO head 300 jumps the sector order, once per budget; then 295. */
	h = mk("bfq:low_latency=0,fifo_expire_sync=1ms,slice_idle=0", &flat5);
	hx_add(h, 0, 2, 0, POLICY_OP_READ, 900 * GiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 1 * MS, 1, 0, POLICY_OP_READ, 300 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 2 * MS, 1, 0, POLICY_OP_READ, 290 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 2 * MS, 1, 0, POLICY_OP_READ, 295 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 4);
	assert_int_equal(hx_cmd(h, 1)->off, 290 * MiB);
	assert_int_equal(hx_cmd(h, 2)->off, 300 * MiB);
	assert_int_equal(hx_cmd(h, 3)->off, 295 * MiB);
	hx_free(h);
}

/* Sync reads and async writes of many streams on a queueing drive with
 * tiny service times: everything completes (no lost wake-up), and async
 * writes of all streams share one queue. */
static void test_bfq_mixed_completes(void **state)
{
	struct policy_dev_info d = hx_hdd;
	struct hx_model m = { .overhead_ns = 20 * US };
	struct hx *h;
	char err[256];

	d.queue_depth = 32;
	h = hx_new(1, &d, &m);
	assert_int_equal(hx_policy(h, "bfq", err, sizeof(err)), 0);
	for (unsigned i = 0; i < 400; i++)
		hx_add(h, i * 10 * US, i % 11, 0, i % 7 ? POLICY_OP_WRITE : POLICY_OP_READ,
		       (uint64_t)(i * 7919 % 400) * 64 * KiB, 4 * KiB, i % 7 ? 0 : POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);

	/* A flush is not a scheduling request. */
	h = hx_new(1, &hx_hdd, &flat5);
	assert_int_equal(hx_policy(h, "bfq", err, sizeof(err)), 0);
	hx_add(h, 0, 1, 0, POLICY_OP_FLUSH, 0, 0, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_r(h, 0)->status, -EINVAL);
	hx_free(h);
}

static void test_bfq_options(void **state)
{
	struct hx *h = hx_new(1, &hx_hdd, &flat5);
	char err[256];

	assert_int_equal(hx_policy(h, "bfq:ioprio=8", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bfq: option 'ioprio': 8 is out of range [0, 7]"));
	assert_int_equal(hx_policy(h, "bfq:slice_idle=8", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a time unit"));
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bfq_budgets_wf2q),
		cmocka_unit_test(test_bfq_weights),
		cmocka_unit_test(test_bfq_idling),
		cmocka_unit_test(test_bfq_idling_rotational),
		cmocka_unit_test(test_bfq_timeout_time_charge),
		cmocka_unit_test(test_bfq_weight_raising),
		cmocka_unit_test(test_bfq_request_order),
		cmocka_unit_test(test_bfq_mixed_completes),
		cmocka_unit_test(test_bfq_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
