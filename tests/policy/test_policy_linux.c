/* SPDX-License-Identifier: MIT */
/*
 * The Linux baselines in isolation: deadline as Linux 6.x's mq-deadline
 * (sorted batches continuing from each direction's latest position, FIFO
 * expiry, fifo_batch, writes_starved, the first batch a write batch) and
 * CFQ (time slices, idling, the shared async queue, quantum).
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

/* Every command takes exactly 5 ms: order effects only. */
static const struct hx_model flat5 = { .overhead_ns = 5 * MS };
static const struct hx_model flat1 = { .overhead_ns = 1 * MS };
static const struct hx_model flat05 = { .overhead_ns = 500 * US };

static struct hx *mk(const char *spec, const struct hx_model *m)
{
	struct hx *h = hx_new(1, &hx_hdd, m);
	char err[256];

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

/* Offsets (in MiB) of the commands, in issue order. */
static void expect_order(struct hx *h, const unsigned *mib, unsigned n)
{
	assert_int_equal(hx_ncmd(h), n);
	for (unsigned i = 0; i < n; i++)
		if (hx_cmd(h, i)->off != mib[i] * MiB)
			fail_msg("command %u at %llu MiB, want %u MiB", i,
				 (unsigned long long)(hx_cmd(h, i)->off / MiB), mib[i]);
}

/* ---- deadline ---- */

static void test_deadline_sorted_batches(void **state)
{
	struct hx *h = mk("deadline", &flat5);
	static const unsigned want[] = { 0, 10, 20, 30, 40, 50 };
	static const unsigned want_lower[] = { 40, 50, 10, 20, 30 };
	static const unsigned offs[] = { 50, 10, 30, 20, 40 };

	hx_add(h, 0, 1, 0, POLICY_OP_READ, 0, 4 * KiB, POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 5; i++)
		hx_add(h, 1 + i, 2 + i, 0, POLICY_OP_READ, offs[i] * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	/* The batch goes on from the latest position (0): the reads that
	 * arrived while 0 was served join the sweep in sector order (Linux
	 * before 6.x only knew the request after 0 when 0 was dispatched,
	 * none, and started over at the FIFO head, 50). */
	expect_order(h, want, 6);
	hx_free(h);

	/* 50 arrived further along and goes next; after it nothing lies
	 * further along: the next batch starts at the FIFO head (10) and sweeps
	 * up. */
	h = mk("deadline", &flat5);
	hx_add(h, 0, 1, 0, POLICY_OP_READ, 40 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 3; i++)
		hx_add(h, 1 + i, 2 + i, 0, POLICY_OP_READ, (10 * i + 10) * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 4, 9, 0, POLICY_OP_READ, 50 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	expect_order(h, want_lower, 5);
	hx_free(h);
}

static void test_deadline_expiry(void **state)
{
	static const unsigned expired[] = { 125, 100, 150, 200 };
	static const unsigned sorted[] = { 125, 150, 200, 100 };
	struct hx *h;

	/* 125 is served first (latest position 125); meanwhile 100, 150, 200
	 * arrive in that order.  With fifo_batch=1 each pick starts a batch:
	 * an expired FIFO head (100) beats the sorted continuation (150). */
	h = mk("deadline:fifo_batch=1,read_expire=1ms", &flat5);
	hx_add(h, 0, 1, 0, POLICY_OP_READ, 125 * MiB, 4 * KiB, 0);
	hx_add(h, 1, 2, 0, POLICY_OP_READ, 100 * MiB, 4 * KiB, 0);
	hx_add(h, 1, 3, 0, POLICY_OP_READ, 150 * MiB, 4 * KiB, 0);
	hx_add(h, 1, 4, 0, POLICY_OP_READ, 200 * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	expect_order(h, expired, 4);
	assert_true(hx_report(h, "expired_batches") >= 1);
	hx_free(h);

	/* Unexpired: up the sorted order, then back to the FIFO head. */
	h = mk("deadline:fifo_batch=1", &flat5);
	hx_add(h, 0, 1, 0, POLICY_OP_READ, 125 * MiB, 4 * KiB, 0);
	hx_add(h, 1, 2, 0, POLICY_OP_READ, 100 * MiB, 4 * KiB, 0);
	hx_add(h, 1, 3, 0, POLICY_OP_READ, 150 * MiB, 4 * KiB, 0);
	hx_add(h, 1, 4, 0, POLICY_OP_READ, 200 * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	expect_order(h, sorted, 4);
	assert_true(hx_report(h, "expired_batches") == 0);
	hx_free(h);
}

static void test_deadline_writes_starved(void **state)
{
	struct hx *h = mk("deadline:fifo_batch=1", &flat1);
	char ops[16] = "";

	for (unsigned i = 0; i < 3; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, (500 + 10 * i) * MiB, 4 * KiB, 0);
	for (unsigned i = 0; i < 6; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_READ, (10 * i) * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 9);
	for (unsigned i = 0; i < 9; i++)
		ops[i] = hx_cmd(h, i)->op == POLICY_OP_READ ? 'R' : 'W';
	/* The first batch is a write batch (mq-deadline starts with last_dir
	 * WRITE and an unfinished batch); then writes_starved=2: two read
	 * batches, then a write batch. */
	assert_string_equal(ops, "WRRWRRWRR");
	hx_free(h);

	h = mk("deadline:fifo_batch=1,writes_starved=1", &flat1);
	for (unsigned i = 0; i < 2; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, (500 + 10 * i) * MiB, 4 * KiB, 0);
	for (unsigned i = 0; i < 4; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_READ, (10 * i) * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	memset(ops, 0, sizeof(ops));
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		ops[i] = hx_cmd(h, i)->op == POLICY_OP_READ ? 'R' : 'W';
	assert_string_equal(ops, "WRWRRR");
	hx_free(h);
}

static void test_deadline_fifo_batch_and_merge(void **state)
{
	static const unsigned fifo[] = { 30, 10, 20, 40, 50, 60 };
	/* 25 is served first; the others arrive meanwhile (FIFO order above)
	 * and expire at 1.5 ms.  Expired heads only win at batch boundaries:
	 * with fifo_batch=3 the batch 25-30-40 completes before the expired
	 * 10 starts the next one (10-20-50, after which 60 heads the FIFO). */
	static const struct {
		const char *spec;
		unsigned order[7];
	} batches[] = {
		{ "deadline:fifo_batch=3,read_expire=1ms", { 25, 30, 40, 10, 20, 50, 60 } },
		{ "deadline:fifo_batch=1,read_expire=1ms", { 25, 30, 10, 20, 40, 50, 60 } },
	};
	struct hx *h;

	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		h = mk(batches[b].spec, &flat1);
		hx_add(h, 0, 1, 0, POLICY_OP_READ, 25 * MiB, 4 * KiB, 0);
		for (unsigned i = 0; i < 6; i++)
			hx_add(h, 500 * US, 1, 0, POLICY_OP_READ, fifo[i] * MiB, 4 * KiB, 0);
		hx_run(h, UINT64_MAX);
		expect_order(h, batches[b].order, 7);
		hx_free(h);
	}

	/* Contiguous writes along the sorted order become one command. */
	h = mk("deadline", &flat1);
	for (unsigned i = 0; i < 3; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_WRITE, 900 * MiB + (2 - i) * 4 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 1);
	assert_int_equal(hx_cmd(h, 0)->nreq, 3);
	assert_int_equal(hx_cmd(h, 0)->off, 900 * MiB);
	assert_int_equal(hx_cmd(h, 0)->len, 12 * KiB);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

/* ---- CFQ ---- */

/* Number of times consecutive commands change stream. */
static unsigned switches(struct hx *h)
{
	unsigned n = 0;

	for (unsigned i = 1; i < hx_ncmd(h); i++)
		n += hx_cmd(h, i)->stream != hx_cmd(h, i - 1)->stream;
	return n;
}

static void test_cfq_slices(void **state)
{
	struct hx *h = mk("cfq:slice_sync=10ms,slice_idle=0", &flat1);

	/* Two processes with a backlog of 30 sync reads each. */
	for (unsigned i = 0; i < 30; i++) {
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 4 * KiB, POLICY_REQ_SYNC);
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1024 * MiB + i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	}
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 60);
	/* 1 ms per request, 10 ms slices: runs of 10 commands per process. */
	for (unsigned i = 0; i < 60; i++)
		assert_int_equal(hx_cmd(h, i)->stream, (i / 10) % 2 ? 2 : 1);
	/* Within a slice, ascending offsets. */
	for (unsigned i = 1; i < 10; i++)
		assert_true(hx_cmd(h, i)->off > hx_cmd(h, i - 1)->off);
	assert_int_equal(switches(h), 5);
	assert_int_equal(hx_report(h, "slices"), 6);
	hx_free(h);
}

static void test_cfq_idling(void **state)
{
	struct hx *h;
	unsigned first_b;

	/* A reads every 2 ms (think time < slice_idle); B has a backlog. */
	h = mk("cfq", &flat05);
	for (unsigned i = 0; i <= 20; i++)
		hx_add(h, i * 2 * MS, 1, 0, POLICY_OP_READ, i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 50; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1024 * MiB + i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	/* With idling, A keeps the disk for all its 21 requests. */
	for (first_b = 0; hx_cmd(h, first_b)->stream == 1; first_b++)
		;
	assert_int_equal(first_b, 21);
	assert_true(hx_report(h, "idle_hits") >= 20);
	/* B waited for A's last request plus one idle period (8 ms). */
	assert_int_equal(hx_cmd(h, 21)->t, 40 * MS + 500 * US + 8 * MS);
	hx_free(h);

	/* Without idling the disk turns to B as soon as A's queue drains. */
	h = mk("cfq:slice_idle=0", &flat05);
	for (unsigned i = 0; i <= 20; i++)
		hx_add(h, i * 2 * MS, 1, 0, POLICY_OP_READ, i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 50; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_READ, 1024 * MiB + i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->stream, 1);
	assert_int_equal(hx_cmd(h, 1)->stream, 2);
	assert_true(hx_report(h, "idle_hits") == 0);
	hx_free(h);
}

static void test_cfq_async_shared_queue(void **state)
{
	struct hx *h = mk("cfq", &flat1);

	/* Async writes of two processes share one sorted queue: served in
	 * ascending offset order regardless of the process. */
	for (unsigned i = 0; i < 6; i++)
		hx_add(h, 0, 1 + i % 2, 0, POLICY_OP_WRITE, (60 - 10 * i) * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 6);
	for (unsigned i = 1; i < 6; i++)
		assert_true(hx_cmd(h, i)->off > hx_cmd(h, i - 1)->off || i == 1);
	assert_int_equal(hx_report(h, "slices"), 1);
	hx_free(h);
}

static void test_cfq_quantum(void **state)
{
	struct policy_dev_info d = hx_hdd;
	struct hx *h = hx_new(1, (d.queue_depth = 32, &d), &flat1);
	char err[256];

	assert_int_equal(hx_policy(h, "cfq:quantum=4", err, sizeof(err)), 0);
	for (unsigned i = 0; i < 20; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_READ, i * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, 0);
	/* The device could take 32, the active queue may send only 4. */
	assert_int_equal(hx_ncmd(h), 4);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 20);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

/* A drained sync queue idles; the wake-up it asked for may be consumed by
 * an earlier tick: it must ask again, or the async writes never run. */
static void test_cfq_idle_rearm(void **state)
{
	struct policy_dev_info d = hx_hdd;
	struct hx_model m = { .overhead_ns = 20 * US };
	struct hx *h;
	char err[256];

	d.queue_depth = 32;
	h = hx_new(1, &d, &m);
	assert_int_equal(hx_policy(h, "cfq", err, sizeof(err)), 0);
	for (unsigned i = 0; i < 100; i++)
		hx_add(h, i * 10 * US, 0, 0, i % 7 ? POLICY_OP_WRITE : POLICY_OP_READ, i * 4 * KiB,
		       4 * KiB, i % 7 ? 0 : POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_sorted_batches),
		cmocka_unit_test(test_deadline_expiry),
		cmocka_unit_test(test_deadline_writes_starved),
		cmocka_unit_test(test_deadline_fifo_batch_and_merge),
		cmocka_unit_test(test_cfq_slices),
		cmocka_unit_test(test_cfq_idling),
		cmocka_unit_test(test_cfq_async_shared_queue),
		cmocka_unit_test(test_cfq_quantum),
		cmocka_unit_test(test_cfq_idle_rearm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
