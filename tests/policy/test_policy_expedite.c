/* SPDX-License-Identifier: MIT */
/*
 * The expedite hook of the home-device policies (noop, deadline, cfq, bfq,
 * bid-hdd, burst): a request a program starts waiting for while the policy
 * holds it is served as the policy serves a request a process blocks on.
 * Each case runs the same workload twice, with and without the expedite,
 * and compares when the waited request was issued.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "policy.h"

static const struct hx_model flat1 = { .overhead_ns = 1 * MS };

/* A workload: scripts requests into h and returns the index of the one a
 * program will wait for. */
typedef unsigned (*workload_fn)(struct hx *h);

struct outcome {
	uint64_t issue_ns;       /* when the waited request was issued */
	unsigned before;         /* workload requests issued before it */
	double expedited;        /* the policy's "expedited" counter */
};

/* Runs `spec` on the workload; expedites the target at `at` unless `at`
 * is UINT64_MAX. */
static struct outcome run(const char *spec, workload_fn load, uint64_t at)
{
	struct hx *h = hx_new(1, &hx_hdd, &flat1);
	struct outcome o = { 0 };
	char err[256];
	unsigned target, n;
	struct hx_req *t;

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	target = load(h);
	if (at != UINT64_MAX)
		hx_expedite(h, at, target);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	t = hx_r(h, target);
	assert_true(t->issued);
	assert_int_equal(t->expedited, at != UINT64_MAX);
	if (at != UINT64_MAX)
		assert_true(t->r.flags & POLICY_REQ_SYNC);
	o.issue_ns = t->r.issue_ns;
	n = 0;
	for (unsigned i = 0; i < hx_nreq(h); i++)
		n += i != target && hx_r(h, i)->r.issue_ns < o.issue_ns;
	o.before = n;
	o.expedited = hx_report(h, "expedited");
	hx_free(h);
	return o;
}

/* 20 writes of stream 1 far apart, then one of stream 2: all at t = 0. */
static unsigned writes_then_one(struct hx *h)
{
	for (unsigned i = 0; i < 20; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, (uint64_t)i * 10 * MiB, 4 * KiB, 0);
	return hx_add(h, 0, 2, 0, POLICY_OP_WRITE, 500 * MiB, 4 * KiB, 0);
}

static void test_noop(void **state)
{
	struct outcome plain = run("noop", writes_then_one, UINT64_MAX);
	struct outcome waited = run("noop", writes_then_one, 500 * US);

	/* FIFO: last of 21.  Waited: right after the command in flight. */
	assert_int_equal(plain.before, 20);
	assert_int_equal(waited.before, 1);
	assert_int_equal(waited.issue_ns, 1 * MS);
	assert_int_equal(waited.expedited, 1);
	assert_int_equal(plain.expedited, 0);
}

/* Two waited requests keep their order, ahead of the rest. */
static unsigned two_waited_load(struct hx *h)
{
	for (unsigned i = 0; i < 10; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, (uint64_t)i * 10 * MiB, 4 * KiB, 0);
	hx_add(h, 0, 2, 0, POLICY_OP_WRITE, 700 * MiB, 4 * KiB, 0);
	return hx_add(h, 0, 3, 0, POLICY_OP_WRITE, 600 * MiB, 4 * KiB, 0);
}

static void test_order_among_waited(void **state)
{
	/* fifo_batch=1: deadline finishes the batch under way first. */
	static const char *const specs[] = { "noop", "deadline:fifo_batch=1" };

	for (unsigned s = 0; s < 2; s++) {
		struct hx *h = hx_new(1, &hx_hdd, &flat1);
		char err[256];
		unsigned last;

		assert_int_equal(hx_policy(h, specs[s], err, sizeof(err)), 0);
		last = two_waited_load(h);
		hx_expedite(h, 100 * US, last - 1);
		hx_expedite(h, 200 * US, last);
		hx_run(h, UINT64_MAX);
		/* Command 0 was issued at t = 0; then the two waited ones, in the
		 * order they were expedited. */
		assert_int_equal(hx_cmd(h, 1)->first_id, hx_r(h, last - 1)->r.id);
		assert_int_equal(hx_cmd(h, 2)->first_id, hx_r(h, last)->r.id);
		hx_free(h);
	}
}

/* 20 reads of stream 1 and, 100 us later, one write of stream 2: deadline
 * prefers the reads (batches of fifo_batch, and the write waits until
 * writes_starved = 2 read batches went while it was queued).  The write
 * comes after the first read batch started: mq-deadline's first batch is a
 * write batch (last_dir starts as WRITE), which would take a write queued
 * at t = 0 first. */
static unsigned reads_and_a_write(struct hx *h)
{
	unsigned w;

	for (unsigned i = 0; i < 20; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_READ, (uint64_t)i * 10 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	w = hx_add(h, 100 * US, 2, 0, POLICY_OP_WRITE, 900 * MiB, 4 * KiB, 0);
	return w;
}

static void test_deadline(void **state)
{
	struct outcome plain = run("deadline:fifo_batch=4", reads_and_a_write, UINT64_MAX);
	struct outcome waited = run("deadline:fifo_batch=4", reads_and_a_write, 500 * US);

	/* Plain: two read batches of 4 go before the starved write. */
	assert_true(plain.before >= 8);
	/* Waited: the batch under way ends (fifo_batch), then the write. */
	assert_true(waited.before <= 4);
	assert_true(waited.issue_ns < plain.issue_ns);
	assert_int_equal(waited.expedited, 1);
}

/* 100 async writes of stream 1 at rising offsets and one async write of
 * stream 2 below them: in CFQ's shared async queue it waits for the C-LOOK
 * sweep to come back. */
static unsigned async_sweep(struct hx *h)
{
	for (unsigned i = 0; i < 100; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 100 * MiB + (uint64_t)i * 10 * MiB, 4 * KiB, 0);
	return hx_add(h, 1 * MS + 1, 2, 0, POLICY_OP_WRITE, 1 * MiB, 4 * KiB, 0);
}

static void test_cfq(void **state)
{
	struct outcome plain = run("cfq", async_sweep, UINT64_MAX);
	struct outcome waited = run("cfq", async_sweep, 2 * MS);

	/* Plain: after the whole sweep of the async queue's 100 writes. */
	assert_true(plain.before >= 90);
	/* Waited: in stream 2's sync queue, served when the async slice
	 * (40 ms, one write per ms) ends. */
	assert_true(waited.before >= 30 && waited.before <= 45);
	assert_true(waited.issue_ns <= 45 * MS);
	assert_int_equal(waited.expedited, 1);
}

/* BFQ: the same sweep of the shared async queue.  Waited, the write
 * moves to stream 2's new sync queue, which is weight raised (a new queue
 * is interactive) and preempts the async queue in service. */
static void test_bfq(void **state)
{
	struct outcome plain = run("bfq", async_sweep, UINT64_MAX);
	struct outcome waited = run("bfq", async_sweep, 2 * MS);

	/* Plain: behind the sweep, more than back_seek_max away. */
	assert_true(plain.before >= 90);
	/* Waited: right after the command in flight at 2 ms. */
	assert_true(waited.before <= 3);
	assert_true(waited.issue_ns <= 4 * MS);
	assert_int_equal(waited.expedited, 1);
	assert_int_equal(plain.expedited, 0);
}

/* An already sync request (a read behind the sweep of its own queue) that
 * a program waits for goes to the head of its queue's FIFO: next. */
static unsigned sync_sweep(struct hx *h)
{
	for (unsigned i = 0; i < 60; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_READ, 100 * MiB + (uint64_t)i * 256 * KiB, 4 * KiB,
		       POLICY_REQ_SYNC);
	return hx_add(h, 1 * MS + 1, 1, 0, POLICY_OP_READ, 1 * MiB, 4 * KiB, POLICY_REQ_SYNC);
}

static void test_bfq_sync(void **state)
{
	struct outcome plain = run("bfq", sync_sweep, UINT64_MAX);
	struct outcome waited = run("bfq", sync_sweep, 2 * MS);

	assert_true(plain.before >= 50);
	assert_true(waited.before <= 3);
	assert_int_equal(waited.expedited, 1);
}

/* Three writes of stream 1 staged together; a wait of at least 1 s. */
static unsigned staged_three(struct hx *h)
{
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 3 * MiB, 4 * KiB, 0);
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 1 * MiB, 4 * KiB, 0);
	return hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 2 * MiB, 4 * KiB, 0);
}

static void test_bid_hdd(void **state)
{
	const char *spec = "bid-hdd:wait_min=1s,wait_max=2s,wait_default=1s";
	struct outcome plain = run(spec, staged_three, UINT64_MAX);
	struct outcome waited = run(spec, staged_three, 10 * MS);

	/* The whole queue goes when it is marked: at its wait without the
	 * expedite, at once with it; in ascending offsets either way. */
	assert_int_equal(plain.issue_ns, 1000 * MS + 1 * MS);
	assert_int_equal(waited.issue_ns, 11 * MS);
	assert_int_equal(waited.before, 1);
	assert_int_equal(waited.expedited, 1);
}

/* A single staged write: marked only by the default wait (1 s). */
static unsigned one_staged(struct hx *h)
{
	return hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 1 * MiB, 4 * KiB, 0);
}

static void test_bid_hdd_alone(void **state)
{
	const char *spec = "bid-hdd:wait_default=1s";
	struct outcome plain = run(spec, one_staged, UINT64_MAX);
	struct outcome waited = run(spec, one_staged, 10 * MS);

	assert_int_equal(plain.issue_ns, 1000 * MS);
	assert_int_equal(waited.issue_ns, 10 * MS);
	assert_int_equal(waited.expedited, 1);
}

/* Two bursty streams; stream 1 owns the disk for a 1 s quantum. */
static unsigned two_bursts(struct hx *h)
{
	for (unsigned i = 0; i < 300; i++)
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, (uint64_t)i * MiB, 64 * KiB, 0);
	for (unsigned i = 0; i < 299; i++)
		hx_add(h, 0, 2, 0, POLICY_OP_WRITE, 1 * GiB + (uint64_t)i * MiB, 64 * KiB, 0);
	return hx_add(h, 0, 2, 0, POLICY_OP_WRITE, 1 * GiB + 299 * MiB, 64 * KiB, 0);
}

static void test_burst(void **state)
{
	struct outcome plain = run("burst", two_bursts, UINT64_MAX);
	struct outcome waited = run("burst", two_bursts, 5 * MS + 1);

	/* Plain: after stream 1's 300 writes and the grace of its turn. */
	assert_true(plain.issue_ns >= 300 * MS);
	assert_int_equal(waited.issue_ns, 6 * MS);
	assert_int_equal(waited.expedited, 1);
}

/* Random workloads with random expedites - some of requests already
 * issued, some twice, some of sync ones: every policy still serves every
 * request exactly once (the harness checks issues and completions). */
static void test_random_expedites(void **state)
{
	static const char *const names[] = { "noop", "deadline", "cfq", "bfq", "bid-hdd", "burst" };

	for (unsigned p = 0; p < sizeof(names) / sizeof(names[0]); p++) {
		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct hx *h = hx_new(1, &hx_hdd, &flat1);
			uint64_t x = seed * 0x9e3779b97f4a7c15ull;
			unsigned n = 400, waited = 0;
			char err[256];

			if (hx_policy(h, names[p], err, sizeof(err)) != 0)
				fail_msg("%s: %s", names[p], err);
			for (unsigned i = 0; i < n; i++) {
				uint32_t stream = (uint32_t)(x >> 60) % 6 + 1;
				bool read = (x >> 20) % 5 == 0;

				hx_add(h, (x >> 8) % (200 * MS), stream, 0, read ? POLICY_OP_READ : POLICY_OP_WRITE,
				       stream * GiB + ((x >> 30) % 4096) * 64 * KiB, (1 + (x >> 40) % 16) * 4 * KiB,
				       read || (x >> 50) % 7 == 0 ? POLICY_REQ_SYNC : 0);
				x = x * 6364136223846793005ull + 1442695040888963407ull;
			}
			for (unsigned i = 0; i < 200; i++) {
				hx_expedite(h, (x >> 8) % (300 * MS), (unsigned)((x >> 33) % n));
				x = x * 6364136223846793005ull + 1442695040888963407ull;
			}
			hx_run(h, UINT64_MAX);
			assert_int_equal(hx_outstanding(h), 0);
			for (unsigned i = 0; i < n; i++) {
				assert_true(hx_r(h, i)->issued);
				assert_int_equal(hx_r(h, i)->status, 0);
				waited += hx_r(h, i)->expedited;
			}
			/* The expedites found requests held: the hook ran. */
			assert_true(waited > 0);
			hx_free(h);
		}
	}
}

/* Every home-device policy has the hook; a policy without it still gets
 * the SYNC flag from the engine (the harness shows it: run() checks). */
static void test_all_have_it(void **state)
{
	static const char *const names[] = { "noop", "deadline", "cfq", "bfq", "bid-hdd", "burst" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct policy_ops *ops = policy_find(names[i]);

		assert_non_null(ops);
		assert_non_null(ops->expedite);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noop),
		cmocka_unit_test(test_order_among_waited),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_cfq),
		cmocka_unit_test(test_bfq),
		cmocka_unit_test(test_bfq_sync),
		cmocka_unit_test(test_bid_hdd),
		cmocka_unit_test(test_bid_hdd_alone),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_random_expedites),
		cmocka_unit_test(test_all_have_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
