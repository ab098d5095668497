/* SPDX-License-Identifier: MIT */
/*
 * The tier-using policies (bid-hybrid, mios-d, mios-e, nvcache) and the
 * contract an engine that keeps real data relies on (policy.h, iosigd's
 * tiers): every request names the home range it concerns, so that
 *
 *  - a write-back or migration issued to the home device moves only a home
 *    range that was put on another device before;
 *  - a write issued to another device without a parent (GC, a read-ahead
 *    fill) moves a range that was written elsewhere or read ahead before;
 *  - a read issued to another device loads a range that was put there;
 *  - a piece of a workload request says so (parent), lies inside it and
 *    does what it does;
 *  - padding and FLUSH are the only exceptions.
 *
 * Also BID-Hybrid's migration back to the HDD (ours): when idle, under
 * pressure, and never forgetting a range rewritten while it moved.
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

/* ---- a small set of byte ranges ---- */

#define SPANS 4096

struct spans {
	uint64_t lo[SPANS], hi[SPANS];
	unsigned n;
};

static void span_add(struct spans *s, uint64_t lo, uint64_t hi)
{
	assert_true(s->n < SPANS);
	s->lo[s->n] = lo;
	s->hi[s->n] = hi;
	s->n++;
}

/* Whether [lo, hi) is covered by the union of s's ranges. */
static bool span_covers(const struct spans *s, uint64_t lo, uint64_t hi)
{
	bool progress = true;

	while (lo < hi && progress) {
		progress = false;
		for (unsigned i = 0; i < s->n; i++)
			if (s->lo[i] <= lo && s->hi[i] > lo) {
				lo = s->hi[i];
				progress = true;
			}
	}
	return lo >= hi;
}

/*
 * Checks every command of a run against the contract (see the head),
 * home = the home device's index.  Returns how many internal requests were
 * checked (the run must have made some for the check to mean anything).
 */
static unsigned check_contract(struct hx *h, unsigned home, uint64_t home_cap)
{
	static struct spans elsewhere, ahead;
	unsigned checked = 0;

	memset(&elsewhere, 0, sizeof(elsewhere));
	memset(&ahead, 0, sizeof(ahead));
	for (unsigned i = 0; i < hx_ncmd(h); i++) {
		const struct hx_cmd *c = hx_cmd(h, i);
		uint64_t lo = c->hoff, hi = c->hoff + c->hlen;

		if (!(c->flags & POLICY_REQ_INTERNAL)) {
			assert_int_equal(c->hdev, home);
			if (c->op == POLICY_OP_WRITE && c->dev != home)
				span_add(&elsewhere, lo, hi);
			continue;
		}
		if ((c->flags & POLICY_REQ_PAD) || c->op == POLICY_OP_FLUSH)
			continue;
		checked++;
		if (c->hdev != home || hi > home_cap)
			fail_msg("command %u: internal request names device %u [%llu, %llu), not a home range",
				 i, c->hdev, (unsigned long long)lo, (unsigned long long)hi);
		if (c->piece) {
			assert_true(c->parent_workload);
			assert_int_equal(c->parent_op, c->op);
			assert_true(lo >= c->parent_off && hi <= c->parent_off + c->parent_len);
			if (c->op == POLICY_OP_WRITE && c->dev != home)
				span_add(&elsewhere, lo, hi);
			continue;
		}
		if (c->op == POLICY_OP_READ && c->dev == home) {
			span_add(&ahead, lo, hi);   /* read-ahead: any home range */
			continue;
		}
		if (c->op == POLICY_OP_READ || c->dev == home) {
			/* Loading from a tier, or writing a range home: it was put
			 * elsewhere before. */
			if (!span_covers(&elsewhere, lo, hi))
				fail_msg("command %u (%s to device %u) moves home [%llu, %llu), never put elsewhere",
					 i, c->op == POLICY_OP_READ ? "read" : "write", c->dev,
					 (unsigned long long)lo, (unsigned long long)hi);
			continue;
		}
		/* A write to a tier without a parent: GC or a fill. */
		if (!span_covers(&elsewhere, lo, hi) && !span_covers(&ahead, lo, hi))
			fail_msg("command %u writes home [%llu, %llu) to device %u, neither written nor read ahead",
				 i, (unsigned long long)lo, (unsigned long long)hi, c->dev);
		span_add(&elsewhere, lo, hi);
	}
	return checked;
}

static void all_done(struct hx *h)
{
	assert_int_equal(hx_outstanding(h), 0);
	for (unsigned i = 0; i < hx_nreq(h); i++)
		assert_int_equal(hx_r(h, i)->status, 0);
}

static struct hx *mk(unsigned n, const struct policy_dev_info *devs, const struct hx_model *m,
		     const char *spec)
{
	struct hx *h = hx_new(n, devs, m);
	char err[256];

	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

/* ---- bid-hybrid ---- */

/* Migration as iosigd runs it (off in the paper's BID-Hybrid). */
#define MIG "migrate_at=0.5,migrate_idle=1s"

static const struct policy_dev_info hyb_devs[2] = {
	{ .name = "hdd0", .cls = IOSIG_CLASS_HDD, .capacity = 1ull << 40, .queue_depth = 1,
	  .block_size = 512 },
	{ .name = "ssd0", .cls = IOSIG_CLASS_SSD, .capacity = 1 * GiB, .queue_depth = 8,
	  .block_size = 4096 },
};
static const struct hx_model hyb_models[2] = {
	{ .overhead_ns = 5 * MS, .seek_ns_per_gib = 10 * US, .bytes_per_s = 150 * MiB },
	{ .overhead_ns = 50 * US, .bytes_per_s = 1024 * MiB },
};

/* Light random writes (to the SSD), a bulky writer, reads across both
 * tiers, updates of tiered data, then quiet. */
static void hyb_workload(struct hx *h)
{
	for (unsigned i = 0; i < 64; i++) {
		hx_add(h, i * 50 * US, 2, 0, POLICY_OP_WRITE, 10 * GiB + i * 4 * KiB, 4 * KiB, 0);
		if (i % 4 == 0)
			hx_add(h, i * 50 * US + 10 * US, 1, 0, POLICY_OP_WRITE,
			       (100 + i * 7) * MiB + 1000, 3000, 0);
	}
	for (unsigned i = 0; i < 16; i += 3)
		hx_add(h, 200 * MS + i * MS, 3, 0, POLICY_OP_READ, (100 + i * 28) * MiB, 8 * KiB,
		       POLICY_REQ_SYNC);
	hx_add(h, 300 * MS, 1, 0, POLICY_OP_WRITE, 100 * MiB + 1000, 3000, 0);
	hx_add(h, 400 * MS, 4, 0, POLICY_OP_READ, 100 * MiB, 16 * KiB, POLICY_REQ_SYNC);
}

static void test_contract_bid_hybrid(void **state)
{
	struct hx *h = mk(2, hyb_devs, hyb_models, "bid-hybrid:" MIG);

	(void)state;
	hyb_workload(h);
	hx_run(h, UINT64_MAX);
	all_done(h);
	assert_true(hx_report(h, "ssd_writes") > 0);
	assert_true(hx_report(h, "migrations") > 0);
	assert_true(check_contract(h, 0, hyb_devs[0].capacity) > 0);
	hx_free(h);
}

static void test_bid_hybrid_migration(void **state)
{
	struct hx *h = mk(2, hyb_devs, hyb_models, "bid-hybrid:" MIG);
	uint64_t first_mig = UINT64_MAX, last_light = 0;
	unsigned rd;

	(void)state;
	/* Idle: light writes, then nothing: after migrate_idle (1 s) the
	 * extents go back, read from the SSD and written at their home place;
	 * the table empties and the SSD is used from its start again. */
	for (unsigned i = 0; i < 8; i++)
		hx_add(h, i * 10 * US, 1, 0, POLICY_OP_WRITE, (100 + i * 7) * MiB, 4 * KiB, 0);
	rd = hx_add(h, 10 * 1000 * MS, 2, 0, POLICY_OP_READ, 107 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	all_done(h);
	for (unsigned i = 0; i < hx_ncmd(h); i++) {
		const struct hx_cmd *c = hx_cmd(h, i);

		if (!(c->flags & POLICY_REQ_INTERNAL)) {
			if (c->dev == 1 && c->op == POLICY_OP_WRITE)
				last_light = c->done;
			continue;
		}
		if (c->op == POLICY_OP_READ) {
			assert_int_equal(c->dev, 1);
			if (first_mig == UINT64_MAX)
				first_mig = c->t;
		} else {
			assert_int_equal(c->dev, 0);
			assert_int_equal(c->off, c->hoff);   /* at its home place */
		}
	}
	assert_true(last_light < 10 * MS && first_mig >= 1000 * MS);   /* the HDD idled 1 s */
	assert_int_equal(hx_report(h, "migrated_bytes"), 8 * 4 * KiB);
	assert_int_equal(hx_report(h, "location_extents"), 0);
	assert_int_equal(hx_report(h, "recycles"), 1);
	assert_int_equal(hx_r(h, rd)->r.issued_dev, 0);   /* home again */
	hx_free(h);

	/* Pressure: with migrate_at=0.01 and no idle migration, moving back
	 * starts while the light writer is still writing. */
	h = mk(2, hyb_devs, hyb_models, "bid-hybrid:migrate_at=0.01,migrate_idle=0,use_hints=1");
	for (unsigned i = 0; i < 4096; i++)   /* declared small and random: to the SSD at once */
		hx_add_hint(h, i * 100 * US, 1, 0, POLICY_OP_WRITE, (100 + i * 7) * MiB, 4 * KiB, 0,
			    4 * KiB, POLICY_PATTERN_RANDOM);
	hx_run(h, UINT64_MAX);
	all_done(h);
	assert_true(hx_report(h, "migrations") > 0);
	first_mig = UINT64_MAX;
	for (unsigned i = 0; i < hx_ncmd(h) && first_mig == UINT64_MAX; i++)
		if (hx_cmd(h, i)->flags & POLICY_REQ_INTERNAL)
			first_mig = hx_cmd(h, i)->t;
	assert_true(first_mig < 4096 * 100 * US);
	hx_free(h);
}

/* An update that lands while its range is being moved keeps the newer copy
 * on the SSD: the finished move must not forget the range. */
static void test_bid_hybrid_rewrite_during_migration(void **state)
{
	struct hx *h = mk(2, hyb_devs, hyb_models, "bid-hybrid:" MIG);
	uint64_t t_read = 0;
	unsigned rd;

	(void)state;
	/* First run: when does the move of the only extent start? */
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 100 * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if ((hx_cmd(h, i)->flags & POLICY_REQ_INTERNAL) && hx_cmd(h, i)->op == POLICY_OP_READ)
			t_read = hx_cmd(h, i)->t;
	assert_true(t_read > 0);
	hx_free(h);

	/* Second run: an update just after that read was issued. */
	h = mk(2, hyb_devs, hyb_models, "bid-hybrid:" MIG);
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 100 * MiB, 4 * KiB, 0);
	hx_add(h, t_read + 1 * US, 1, 0, POLICY_OP_WRITE, 100 * MiB, 4 * KiB, 0);
	rd = hx_add(h, t_read + 2 * US, 2, 0, POLICY_OP_READ, 100 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, t_read + 500 * MS);
	assert_int_equal(hx_r(h, 1)->r.issued_dev, 1);          /* the update: SSD, new place */
	assert_int_equal(hx_r(h, rd)->r.issued_dev, 1);         /* read after it: the SSD */
	assert_int_equal(hx_r(h, rd)->r.issued_off, hx_r(h, 1)->r.issued_off);
	assert_int_equal(hx_report(h, "location_extents"), 1);  /* not forgotten */
	hx_run(h, UINT64_MAX);
	all_done(h);
	assert_true(check_contract(h, 0, hyb_devs[0].capacity) > 0);
	hx_free(h);
}

/* POLICY_REQ_HOME: a write joining a queue marked bulky, or a V_BULKY
 * stream's, goes home as it is (marked); with bulky_home, so do the writes
 * of a queue found bulky (marked then, each told to the engine once through
 * env->home) and a bulky stream's next writes, which stay on the HDD even
 * if their queue is then found non-bulky - while a light stream's never
 * are.  Without bulky_home (the paper's policy) neither is marked. */
static void test_bid_hybrid_home(void **state)
{
	for (int opt = 0; opt < 2; opt++) {
		struct hx *h = mk(2, hyb_devs, hyb_models,
				  opt ? "bid-hybrid:bulky_home=1" : "bid-hybrid:bulky_home=0");
		unsigned first[8], later[8], light[8], hinted;
		bool marked_later = true, any_later = false;

		(void)state;
		/* Stream 1: 1 MiB sequential writes (bulky); stream 2: small
		 * random ones (light). */
		for (unsigned i = 0; i < 8; i++) {
			first[i] = hx_add(h, i * 100 * US, 1, 0, POLICY_OP_WRITE, 1 * GiB + i * MiB, MiB, 0);
			light[i] = hx_add(h, i * 100 * US + 10 * US, 2, 0, POLICY_OP_WRITE,
					  (200 + i * 37) * MiB, 4 * KiB, 0);
		}
		/* Long after the first queues were marked and flushed. */
		for (unsigned i = 0; i < 8; i++)
			later[i] = hx_add(h, 2000 * MS + i * 100 * US, 1, 0, POLICY_OP_WRITE,
					  1 * GiB + (8 + i) * MiB, MiB, 0);
		hinted = hx_add_hint(h, 3000 * MS, 5, 0, POLICY_OP_WRITE, 5 * GiB, MiB, 0, MiB,
				     POLICY_PATTERN_SEQUENTIAL);
		hx_run(h, UINT64_MAX);
		all_done(h);
		for (unsigned i = 0; i < 8; i++) {
			/* Judged bulky with its queue: marked then, with bulky_home. */
			assert_int_equal(!!(hx_r(h, first[i])->r.flags & POLICY_REQ_HOME), opt);
			assert_int_equal(hx_r(h, first[i])->homed, opt);
			assert_false(hx_r(h, light[i])->r.flags & POLICY_REQ_HOME);
			assert_int_equal(hx_r(h, light[i])->homed, 0);
			/* Marked at submit: offered to the engine then. */
			assert_int_equal(hx_r(h, later[i])->homed, opt);
			assert_int_equal(hx_r(h, light[i])->r.issued_dev, 1);
			assert_int_equal(hx_r(h, first[i])->r.issued_dev, 0);
			marked_later &= !!(hx_r(h, later[i])->r.flags & POLICY_REQ_HOME);
			any_later |= !!(hx_r(h, later[i])->r.flags & POLICY_REQ_HOME);
			if (hx_r(h, later[i])->r.flags & POLICY_REQ_HOME)
				assert_int_equal(hx_r(h, later[i])->r.issued_dev, 0);
		}
		if (opt)
			assert_true(marked_later);
		else
			assert_false(any_later);
		/* Without use_hints a hint decides nothing: not marked at
		 * submit, only (bulky_home) once its queue is found bulky. */
		assert_int_equal(!!(hx_r(h, hinted)->r.flags & POLICY_REQ_HOME), opt);
		assert_int_equal(hx_r(h, hinted)->homed, opt);
		hx_free(h);
	}
	{
		struct hx *h = mk(2, hyb_devs, hyb_models, "bid-hybrid:use_hints=1");
		unsigned hinted = hx_add_hint(h, 0, 5, 0, POLICY_OP_WRITE, 5 * GiB, MiB, 0, MiB,
					      POLICY_PATTERN_SEQUENTIAL);

		hx_run(h, UINT64_MAX);
		all_done(h);
		assert_true(hx_r(h, hinted)->r.flags & POLICY_REQ_HOME);
		assert_int_equal(hx_r(h, hinted)->homed, 1);
		assert_int_equal(hx_r(h, hinted)->r.issued_dev, 0);
		hx_free(h);
	}
}

/*
 * env->home taking writes back: an engine with a page cache writes a
 * bulky stream's writes itself and hands their write-backs over later.
 * The writes of the queue found bulky are taken at its mark, the stream's
 * next ones at their submit; none of them is issued or finished by the
 * policy, a light stream's writes still go to the SSD, the write-backs
 * submitted afterwards (not taken) go home - and a taken write leaves no
 * SSD copy of its range behind: a read of it is served home.
 */
static void test_bid_hybrid_take_back(void **state)
{
	struct hx *h = mk(2, hyb_devs, hyb_models, "bid-hybrid:bulky_home=1,max_merge=4MiB");
	unsigned first[8], next[8], light[8], wb[4], over, rd;

	(void)state;
	hx_take_home(h, 1000 * MS);
	for (unsigned i = 0; i < 8; i++) {
		first[i] = hx_add(h, i * 100 * US, 1, 0, POLICY_OP_WRITE, 1 * GiB + i * MiB, MiB, 0);
		light[i] = hx_add(h, i * 100 * US + 10 * US, 2, 0, POLICY_OP_WRITE,
				  (200 + i * 37) * MiB, 4 * KiB, 0);
	}
	for (unsigned i = 0; i < 8; i++)
		next[i] = hx_add(h, 100 * MS + i * 100 * US, 1, 0, POLICY_OP_WRITE,
				 1 * GiB + (8 + i) * MiB, MiB, 0);
	/* The stream now writes over a light write's range (on the SSD). */
	over = hx_add(h, 200 * MS, 1, 0, POLICY_OP_WRITE, 200 * MiB, MiB, 0);
	/* The write-backs of the taken data, in the engine's 4 MiB runs. */
	for (unsigned i = 0; i < 4; i++)
		wb[i] = hx_add(h, 1500 * MS + i * 10 * US, 1, 0, POLICY_OP_WRITE,
			       1 * GiB + i * 4 * MiB, 4 * MiB, 0);
	rd = hx_add(h, 3000 * MS, 3, 0, POLICY_OP_READ, 200 * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	all_done(h);
	for (unsigned i = 0; i < 8; i++) {
		assert_true(hx_r(h, first[i])->taken);
		assert_true(hx_r(h, next[i])->taken);
		assert_false(hx_r(h, first[i])->issued);
		assert_false(hx_r(h, next[i])->issued);
		assert_false(hx_r(h, light[i])->taken);
		assert_int_equal(hx_r(h, light[i])->homed, 0);
		assert_int_equal(hx_r(h, light[i])->r.issued_dev, 1);
	}
	assert_true(hx_r(h, over)->taken);
	for (unsigned i = 0; i < 4; i++) {
		assert_false(hx_r(h, wb[i])->taken);
		assert_int_equal(hx_r(h, wb[i])->homed, 1);
		assert_true(hx_r(h, wb[i])->issued);
		assert_int_equal(hx_r(h, wb[i])->r.issued_dev, 0);
	}
	assert_int_equal(hx_r(h, rd)->r.issued_dev, 0);
	assert_int_equal(hx_report(h, "writes_given_home"), 17);
	assert_int_equal(hx_report(h, "homed_late_writes"), 8);
	hx_free(h);
}

/* ---- mios ---- */

static const struct policy_dev_info mios_devs[2] = {
	{ .name = "ssd0", .cls = IOSIG_CLASS_SSD, .capacity = 16 * GiB, .queue_depth = 4,
	  .block_size = 4096 },
	{ .name = "hdd0", .cls = IOSIG_CLASS_HDD, .capacity = 1ull << 40, .queue_depth = 1,
	  .block_size = 512 },
};
static const struct hx_model mios_models[2] = {
	{ .overhead_ns = 200 * US },
	{ .overhead_ns = 50 * US },
};

static void mios_run(const char *spec, bool busy_ssd)
{
	struct hx *h = mk(2, mios_devs, mios_models, spec);

	/* From 300 ms: the HDD's buffer counts as empty (idle_reset). */
	for (unsigned i = 0; i < 200; i++)
		hx_add(h, 300 * MS + i * 500 * US, 1 + i % 3, 0, POLICY_OP_WRITE,
		       (i * 37 % 500) * MiB + (i % 7) * 512, 4 * KiB + (i % 3) * 512, 0);
	for (unsigned i = 0; i < 40; i++)
		hx_add(h, 450 * MS + i * MS, 4, 0, POLICY_OP_READ, (i * 37 % 500) * MiB, 16 * KiB,
		       POLICY_REQ_SYNC);
	if (busy_ssd) {
		hx_run(h, 300 * MS - 1);
		hx_fake_inflight(h, 0, 3);   /* l(t) above L: steer to the HDD */
		hx_run(h, 400 * MS);
		hx_fake_inflight(h, 0, -1);
	}
	hx_run(h, UINT64_MAX);
	all_done(h);
	assert_true(hx_report(h, "redirected_writes") > 0);
	assert_true(hx_report(h, "gc_runs") > 0);
	assert_true(hx_report(h, "split_reads") + hx_report(h, "hdd_read_bytes") > 0);
	assert_true(check_contract(h, 0, mios_devs[0].capacity) > 0);
	hx_free(h);
}

static void test_contract_mios(void **state)
{
	(void)state;
	mios_run("mios-e:L=100,gc_idle=500ms,log_size=512GiB", false);
	mios_run("mios-d:L=2,gc_idle=500ms,log_size=512GiB", true);
}

/* ---- nvcache ---- */

static const struct policy_dev_info nv_devs[2] = {
	{ .name = "ssd0", .cls = IOSIG_CLASS_SSD, .capacity = 64 * GiB, .queue_depth = 8,
	  .block_size = 4096 },
	{ .name = "ram0", .cls = IOSIG_CLASS_RAM, .capacity = 1 * MiB, .queue_depth = 64,
	  .block_size = 64 },
};
static const struct hx_model nv_models[2] = {
	{ .overhead_ns = 100 * US, .bytes_per_s = 500 * MiB },
	{ .overhead_ns = 1 * US },
};

static void test_contract_nvcache(void **state)
{
	struct hx *h = mk(2, nv_devs, nv_models, "nvcache:ra_size=64KiB");

	(void)state;
	/* A sequential reader (read-ahead and its fills), writers, reads of
	 * what they wrote, enough writes to fill the cache (write-back,
	 * write-through).  A hit is one memory command of the request, so
	 * nvcache issues no pieces; a fill names the home range its
	 * read-ahead loaded. */
	for (unsigned i = 0; i < 64; i++)
		hx_add(h, i * 100 * US, 1, 0, POLICY_OP_READ, 1 * GiB + i * 4 * KiB, 4 * KiB,
		       POLICY_REQ_SYNC);
	for (unsigned i = 0; i < 300; i++)
		hx_add(h, 10 * MS + i * 50 * US, 2, 0, POLICY_OP_WRITE, (i * 13 % 97) * MiB + 512,
		       (1 + i % 4) * 4 * KiB, 0);
	for (unsigned i = 0; i < 50; i++)
		hx_add(h, 40 * MS + i * 100 * US, 3, 0, POLICY_OP_READ, (i * 13 % 97) * MiB,
		       12 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	all_done(h);
	assert_true(hx_report(h, "readahead_bytes") > 0);
	assert_true(hx_report(h, "fill_cmds") > 0);
	assert_true(hx_report(h, "writeback_bytes") > 0);
	assert_true(hx_report(h, "read_hits") > 0);
	assert_true(check_contract(h, 0, nv_devs[0].capacity) > 0);
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contract_bid_hybrid),
		cmocka_unit_test(test_bid_hybrid_migration),
		cmocka_unit_test(test_bid_hybrid_rewrite_during_migration),
		cmocka_unit_test(test_bid_hybrid_home),
		cmocka_unit_test(test_bid_hybrid_take_back),
		cmocka_unit_test(test_contract_mios),
		cmocka_unit_test(test_contract_nvcache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
