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


/* The original BID-Hybrid, without our migration back to the HDD (the
 * default; spelled out so these tests keep testing it). */
#define NOMIG "migrate_at=1,migrate_idle=0"

static const struct policy_dev_info ssd = {
	.name = "ssd0", .cls = IOSIG_CLASS_SSD, .capacity = 64 * GiB, .queue_depth = 8,
	.block_size = 4096,
};
static const struct hx_model flat1 = { .overhead_ns = 1 * MS };
static const struct hx_model fast = { .overhead_ns = 50 * US };

static struct hx *mk1(const char *spec, const struct hx_model *m)
{
	struct hx *h = hx_new(1, &hx_hdd, m);
	char err[256];

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

/* ---- BID-HDD ---- */

/* Four 4 KiB writes of stream 1, each right after the other on the disk,
 * at the times t[0..3]. */
static void writes_at(struct hx *h, const uint64_t t[4])
{
	for (unsigned i = 0; i < 4; i++)
		hx_add(h, t[i], 1, 0, POLICY_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
}

static void test_bid_whole_queues_in_marking_order(void **state)
{
	struct hx *h = mk1("bid-hdd:wait_mult=1.5", &flat1);
	unsigned i;

	/* A and B interleave sequential 4 KiB writes every 100 us (each
	 * process every 200 us); B lies below A on disk and stops first. */
	for (i = 0; i < 20; i++) {
		hx_add(h, i * 200 * US, 1, 0, POLICY_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0);
		if (i < 19)
			hx_add(h, i * 200 * US + 100 * US, 2, 0, POLICY_OP_WRITE, i * 4 * KiB,
			       4 * KiB, 0);
	}
	/* A late request of A after its queue was marked: a new queue. */
	hx_add(h, 20 * MS, 1, 0, POLICY_OP_WRITE, 20 * GiB, 4 * KiB, 0);
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
		hx_add(h, i * 200 * US, 1, 0, POLICY_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0);
		if (i < 19)
			hx_add(h, i * 200 * US + 100 * US, 2, 0, POLICY_OP_WRITE, i * 4 * KiB,
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
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 10 * MS);
	hx_free(h);

	/* Gaps 1, 1, 1 ms: wait 1 ms after the last (3 ms) -> flush at 4 ms. */
	h = mk1("bid-hdd:wait_default=10ms", &flat1);
	for (unsigned i = 0; i < 4; i++)
		hx_add(h, i * MS, 1, 0, POLICY_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 4 * MS);
	assert_int_equal(hx_cmd(h, 0)->nreq, 4);
	hx_free(h);

	/* Gaps 4, 1, 1 ms (each shorter than the wait then in force), weights
	 * 1, 2, 3 oldest to newest: (4 + 2 + 3) / 6 = 1.5 ms after 6 ms. */
	h = mk1("bid-hdd:wait_default=10ms", &flat1);
	writes_at(h, (const uint64_t[]){ 0, 4 * MS, 5 * MS, 6 * MS });
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 1);
	assert_int_equal(hx_cmd(h, 0)->t, 7500 * US);
	hx_free(h);

	/* wait_k=1: only the last gap counts (1 ms) -> 7 ms. */
	h = mk1("bid-hdd:wait_default=10ms,wait_k=1", &flat1);
	writes_at(h, (const uint64_t[]){ 0, 4 * MS, 5 * MS, 6 * MS });
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 7 * MS);
	hx_free(h);

	/* A gap longer than the mean marks the queue early: gaps 1, 1 then 3
	 * ms: the wait (1 ms) expires at 3 ms, before the 4th request. */
	h = mk1("bid-hdd:wait_default=10ms", &flat1);
	writes_at(h, (const uint64_t[]){ 0, 1 * MS, 2 * MS, 5 * MS });
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 2);
	assert_int_equal(hx_cmd(h, 0)->t, 3 * MS);
	assert_int_equal(hx_cmd(h, 0)->nreq, 3);
	/* The new queue starts over with the default wait. */
	assert_int_equal(hx_cmd(h, 1)->t, 15 * MS);
	hx_free(h);

	/* keep_history: the new queue inherits the 1 ms wait. */
	h = mk1("bid-hdd:wait_default=10ms,keep_history=1", &flat1);
	writes_at(h, (const uint64_t[]){ 0, 1 * MS, 2 * MS, 5 * MS });
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
		hx_add(h, i * MS, 1, 0, POLICY_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 50 * MS);
	assert_int_equal(hx_cmd(h, 0)->nreq, 51);
	assert_true(hx_report(h, "marked_by_deadline") >= 1);
	hx_free(h);

	/* A read joining at 10 ms cuts the deadline to 10 + 20 ms. */
	h = mk1("bid-hdd:deadline_write=50ms,deadline_read=20ms,wait_mult=2", &fast);
	for (unsigned i = 0; i < 100; i++)
		hx_add(h, i * MS, 1, 0, i == 10 ? POLICY_OP_READ : POLICY_OP_WRITE, i * 4 * KiB,
		       4 * KiB, i == 10 ? POLICY_REQ_SYNC : 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->t, 30 * MS);
	hx_free(h);

	/* Paper defaults: 5000 ms for writes, 500 ms once a read is in. */
	h = mk1("bid-hdd:wait_mult=2", &fast);
	for (unsigned i = 0; i < 700; i++)
		hx_add(h, i * MS, 1, 0, i == 100 ? POLICY_OP_READ : POLICY_OP_WRITE, i * 4 * KiB,
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
		hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0);
		hx_add(h, 0, 2, 0, POLICY_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
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

static const struct hx_model flat10 = { .overhead_ns = 10 * MS };

/* SQ_p exists until its flush begins: requests of p join it while it waits
 * in the marked list; after its flush began they open a new SQ_p. */
static void test_bid_join_marked_queue(void **state)
{
	struct hx *h = mk1("bid-hdd:wait_default=1ms", &flat10);

	for (unsigned i = 0; i < 5; i++)
		hx_add(h, i * 10 * US, 2, 0, POLICY_OP_WRITE, 1 * GiB + i * 4 * KiB, 4 * KiB, 0);
	for (unsigned i = 0; i < 5; i++)
		hx_add(h, 100 * US + i * 10 * US, 1, 0, POLICY_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
	hx_add(h, 5 * MS, 1, 0, POLICY_OP_WRITE, 20 * KiB, 4 * KiB, 0);   /* joins */
	hx_add(h, 12 * MS, 1, 0, POLICY_OP_WRITE, 24 * KiB, 4 * KiB, 0);  /* too late */
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 3);
	assert_int_equal(hx_cmd(h, 0)->stream, 2);
	assert_int_equal(hx_cmd(h, 0)->nreq, 5);
	assert_int_equal(hx_cmd(h, 1)->stream, 1);
	assert_int_equal(hx_cmd(h, 1)->nreq, 6);
	assert_int_equal(hx_cmd(h, 1)->len, 24 * KiB);
	assert_int_equal(hx_cmd(h, 2)->off, 24 * KiB);
	assert_int_equal(hx_cmd(h, 2)->nreq, 1);
	hx_free(h);
}

/* A command continues into the next marked queue when that queue's first
 * request continues it (the paper's LBA-sorted dispatch queue merges). */
static void test_bid_merge_across_queues(void **state)
{
	struct hx *h = mk1("bid-hdd:wait_default=1ms,max_merge=16KiB", &flat10);

	for (unsigned i = 0; i < 6; i++)
		hx_add(h, i * 10 * US, 1, 0, POLICY_OP_WRITE, i * 4 * KiB, 4 * KiB, 0);
	/* After the first queue's flush began: a second queue, contiguous. */
	hx_add(h, 1 * MS, 1, 0, POLICY_OP_WRITE, 24 * KiB, 4 * KiB, 0);
	hx_add(h, 1 * MS + 10 * US, 1, 0, POLICY_OP_WRITE, 28 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 2);
	assert_int_equal(hx_cmd(h, 0)->nreq, 4);
	assert_int_equal(hx_cmd(h, 1)->nreq, 4);
	assert_int_equal(hx_cmd(h, 1)->off, 16 * KiB);
	assert_int_equal(hx_cmd(h, 1)->len, 16 * KiB);
	assert_int_equal(hx_report(h, "flushed_queues"), 2);
	hx_free(h);
}

static void test_bid_bad_options(void **state)
{
	struct hx *h = hx_new(1, &hx_hdd, &flat1);
	char err[256];

	assert_int_equal(hx_policy(h, "bid-hdd:wait_k=0", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bid-hdd: option 'wait_k': 0 is out of range [1, 64]");
	assert_int_equal(hx_policy(h, "bid-hdd:deadline_write=5", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a time unit"));
	assert_int_equal(hx_policy(h, "bid-hdd:wait_mult=-1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range [0, 1000]"));
	hx_free(h);
}

/* ---- BID-Hybrid ---- */

static struct hx *mk2(const char *spec, uint64_t ssd_cap)
{
	struct policy_dev_info devs[2] = { hx_hdd, ssd };
	struct hx_model models[2] = { flat1, fast };
	struct hx *h;
	char err[256];

	devs[1].capacity = ssd_cap;
	h = hx_new(2, devs, models);
	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

/* Light process 1: 8 random 4 KiB writes; bulky process 2: 64 sequential
 * 4 KiB writes (merge into 256 KiB requests: PF 512 sectors). */
static void light_and_bulky(struct hx *h, uint64_t hint_light, uint64_t hint_bulky)
{
	for (unsigned i = 0; i < 64; i++) {
		hx_add_hint(h, i * 50 * US, 2, 0, POLICY_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0,
			    hint_bulky, POLICY_PATTERN_SEQUENTIAL);
		if (i % 8 == 0)
			hx_add_hint(h, i * 50 * US + 10 * US, 1, 0, POLICY_OP_WRITE,
				    (100 + i * 7) * MiB, 4 * KiB, 0, hint_light,
				    POLICY_PATTERN_RANDOM);
	}
}

static void test_hybrid_packing_fraction(void **state)
{
	struct hx *h = mk2("bid-hybrid:" NOMIG, 64 * GiB);
	unsigned on_ssd = 0, on_hdd = 0;

	light_and_bulky(h, 0, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	for (unsigned i = 0; i < hx_ncmd(h); i++) {
		const struct hx_cmd *c = hx_cmd(h, i);

		if (c->dev == 1) {
			assert_int_equal(c->stream, 1);
			on_ssd++;
		} else {
			assert_int_equal(c->stream, 2);
			on_hdd += c->nreq;
		}
	}
	assert_int_equal(on_ssd, 8);
	assert_int_equal(on_hdd, 64);
	assert_int_equal(hx_report(h, "tiered_queues"), 1);
	assert_int_equal(hx_report(h, "bulky_queues"), 1);
	assert_int_equal(hx_report(h, "ssd_write_bytes"), 8 * 4 * KiB);
	assert_int_equal(hx_report(h, "location_extents"), 8);
	hx_free(h);

	/* With pf_threshold=8 sectors the 4 KiB writes count as bulky. */
	h = mk2("bid-hybrid:pf_threshold=8," NOMIG, 64 * GiB);
	light_and_bulky(h, 0, 0);
	hx_run(h, UINT64_MAX);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		assert_int_equal(hx_cmd(h, i)->dev, 0);
	assert_int_equal(hx_report(h, "tiered_queues"), 0);
	hx_free(h);
}

/* A sequential writer whose queues are marked small is still bulky: its
 * runs continue across queues (the paper's request queue merges bios
 * before staging); a random writer with the same timing stays light. */
static void test_hybrid_pf_counts_runs_across_queues(void **state)
{
	for (int random = 0; random <= 1; random++) {
		struct hx *h = mk2("bid-hybrid:wait_default=1ms," NOMIG, 64 * GiB);
		unsigned late_on_ssd = 0;

		/* 20 bursts of 3 x 4 KiB, 5 ms apart: one queue per burst. */
		for (unsigned b = 0; b < 20; b++)
			for (unsigned i = 0; i < 3; i++)
				hx_add(h, b * 5 * MS + i * 10 * US, 1, 0, POLICY_OP_WRITE,
				       random ? (b * 3 + i) * 7 * MiB : (b * 3 + i) * 4 * KiB, 4 * KiB, 0);
		hx_run(h, UINT64_MAX);
		assert_int_equal(hx_outstanding(h), 0);
		for (unsigned i = 30; i < 60; i++)
			late_on_ssd += hx_r(h, i)->r.issued_dev == 1;
		assert_int_equal(late_on_ssd, random ? 30 : 0);
		assert_int_equal(hx_report(h, "tiered_queues") + hx_report(h, "bulky_queues"), 20);
		hx_free(h);
	}
}

static void test_hybrid_location_table(void **state)
{
	struct hx *h = mk2("bid-hybrid:" NOMIG, 64 * GiB);
	unsigned rd_ssd, rd_hdd, rd_split, rd_after;

	/* Light process writes 3 random blocks (-> SSD) ... */
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 100 * MiB, 4 * KiB, 0);
	hx_add(h, 10 * US, 1, 0, POLICY_OP_WRITE, 200 * MiB, 4 * KiB, 0);
	hx_add(h, 20 * US, 1, 0, POLICY_OP_WRITE, 300 * MiB, 8 * KiB, 0);
	/* ... later reads: on the SSD, on the HDD, and straddling both. */
	rd_ssd = hx_add(h, 100 * MS, 3, 0, POLICY_OP_READ, 200 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	rd_hdd = hx_add(h, 100 * MS, 4, 0, POLICY_OP_READ, 500 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	rd_split = hx_add(h, 100 * MS, 5, 0, POLICY_OP_READ, 300 * MiB + 4 * KiB, 12 * KiB,
			  POLICY_REQ_SYNC);
	/* An update wholly inside a tiered extent stays on the SSD ... */
	hx_add(h, 150 * MS, 6, 0, POLICY_OP_WRITE, 100 * MiB, 4 * KiB, 0);
	/* ... a bulky rewrite overlapping 200 MiB moves it back to the HDD ... */
	hx_add(h, 200 * MS, 6, 0, POLICY_OP_WRITE, 200 * MiB - 64 * KiB, 128 * KiB, 0);
	hx_add(h, 200 * MS + 10 * US, 6, 0, POLICY_OP_WRITE, 200 * MiB + 64 * KiB, 128 * KiB, 0);
	/* ... so a read afterwards is served by the HDD. */
	rd_after = hx_add(h, 400 * MS, 7, 0, POLICY_OP_READ, 200 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);

	assert_int_equal(hx_r(h, rd_ssd)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, rd_ssd)->r.issued_off, 4 * KiB);   /* second block allocated */
	assert_int_equal(hx_r(h, rd_hdd)->r.issued_dev, 0);
	assert_int_equal(hx_r(h, rd_hdd)->r.issued_off, 500 * MiB);
	/* The split read: 4 KiB from the SSD (300 MiB + 4 KiB is the second
	 * half of the 8 KiB extent at SSD offset 8 KiB) + 8 KiB from the HDD. */
	assert_int_equal(hx_r(h, rd_split)->status, 0);
	assert_int_equal(hx_report(h, "split_reads"), 1);
	{
		bool ssd_piece = false, hdd_piece = false;

		for (unsigned i = 0; i < hx_ncmd(h); i++) {
			const struct hx_cmd *c = hx_cmd(h, i);

			if (c->stream != 5)
				continue;
			if (c->dev == 1 && c->off == 12 * KiB && c->len == 4 * KiB)
				ssd_piece = true;
			if (c->dev == 0 && c->off == 300 * MiB + 8 * KiB && c->len == 8 * KiB)
				hdd_piece = true;
			assert_true(c->t <= hx_r(h, rd_split)->done_t);
		}
		assert_true(ssd_piece && hdd_piece);
	}
	/* The update of tiered data: on the SSD, at a new place (16 KiB: after
	 * the three extents, never over an older copy). */
	assert_int_equal(hx_r(h, 6)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, 6)->r.issued_off, 16 * KiB);
	assert_int_equal(hx_r(h, rd_after)->r.issued_dev, 0);
	assert_int_equal(hx_r(h, rd_after)->r.issued_off, 200 * MiB);
	hx_free(h);
}

static void test_hybrid_hints(void **state)
{
	struct hx *h;
	uint64_t first_ssd_profiled = 0, first_ssd_hinted = 0;

	/* Profiling: the light writes reach the SSD only once their queue is
	 * marked (wait timer). */
	h = mk2("bid-hybrid:" NOMIG, 64 * GiB);
	light_and_bulky(h, 4 * KiB, 1 * MiB);
	hx_run(h, UINT64_MAX);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 1) {
			first_ssd_profiled = hx_cmd(h, i)->t;
			break;
		}
	assert_true(first_ssd_profiled > 2 * MS);
	hx_free(h);

	/* With hints the light process (4 KiB, random) goes straight to the
	 * SSD on arrival. */
	h = mk2("bid-hybrid:use_hints=1," NOMIG, 64 * GiB);
	light_and_bulky(h, 4 * KiB, 1 * MiB);
	hx_run(h, UINT64_MAX);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 1) {
			first_ssd_hinted = hx_cmd(h, i)->t;
			break;
		}
	assert_int_equal(first_ssd_hinted, 10 * US);
	assert_int_equal(hx_report(h, "hinted_light_streams"), 1);
	assert_int_equal(hx_report(h, "hinted_bulky_streams"), 1);
	assert_int_equal(hx_report(h, "ssd_write_bytes"), 8 * 4 * KiB);
	hx_free(h);

	/* A declared big size_per_io keeps small random writes on the HDD. */
	h = mk2("bid-hybrid:use_hints=1," NOMIG, 64 * GiB);
	for (unsigned i = 0; i < 8; i++)
		hx_add_hint(h, i * 10 * US, 1, 0, POLICY_OP_WRITE, (100 + i * 7) * MiB, 4 * KiB, 0,
			    1 * MiB, POLICY_PATTERN_RANDOM);
	hx_run(h, UINT64_MAX);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		assert_int_equal(hx_cmd(h, i)->dev, 0);
	hx_free(h);
}

static void test_hybrid_tier_limits(void **state)
{
	struct hx *h;
	struct policy_dev_info only_hdd = hx_hdd;
	char err[256];

	/* A 16 KiB tier at ssd_fill 1 takes the first 4 light writes only. */
	h = mk2("bid-hybrid:ssd_fill=1," NOMIG, 16 * KiB);
	for (unsigned i = 0; i < 4; i++)
		hx_add(h, i * 10 * US, 1, 0, POLICY_OP_WRITE, (100 + i * 7) * MiB, 4 * KiB, 0);
	for (unsigned i = 0; i < 4; i++)
		hx_add(h, 100 * MS + i * 10 * US, 1, 0, POLICY_OP_WRITE, (900 + i * 7) * MiB,
		       4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "ssd_write_bytes"), 16 * KiB);
	assert_int_equal(hx_report(h, "bulky_queues"), 1);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);

	/* Requests addressed to the tier itself are refused. */
	h = mk2("bid-hybrid:" NOMIG, 64 * GiB);
	hx_add(h, 0, 1, 1, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_r(h, 0)->submit_ret, -EINVAL);
	hx_free(h);

	/* No SSD: init refuses with a reason. */
	h = hx_new(1, &only_hdd, &flat1);
	assert_int_equal(hx_policy(h, "bid-hybrid", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bid-hybrid: needs an SSD (or NVM) device for its tier; the engine offers none");
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bid_whole_queues_in_marking_order),
		cmocka_unit_test(test_bid_adaptive_wait),
		cmocka_unit_test(test_bid_deadlines),
		cmocka_unit_test(test_bid_queue_not_interleaved),
		cmocka_unit_test(test_bid_join_marked_queue),
		cmocka_unit_test(test_bid_merge_across_queues),
		cmocka_unit_test(test_bid_bad_options),
		cmocka_unit_test(test_hybrid_packing_fraction),
		cmocka_unit_test(test_hybrid_pf_counts_runs_across_queues),
		cmocka_unit_test(test_hybrid_location_table),
		cmocka_unit_test(test_hybrid_hints),
		cmocka_unit_test(test_hybrid_tier_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
