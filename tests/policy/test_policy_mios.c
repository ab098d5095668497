/* SPDX-License-Identifier: MIT */
/*
 * MIOS (BCW) in isolation: the F/M/S predictor, padding decisions (PS to
 * skip S, PF in an idle M state, none in F), steering by SSD queue length
 * (mios-d) and by the Fast state (mios-e), the location table for reads,
 * HDD GC, and size-aware steering with signature hints.  The HDD is
 * scripted as a write buffer: F writes while fewer than W_f bytes went in
 * since it was empty (40 us each), then an S write (10 ms) and M writes
 * (1 ms) for W_m bytes, then S again.
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

#define WF (64 * KiB)
#define WM (32 * KiB)
#define OPTS "w_fast=64KiB,w_mid=32KiB,pad_slow=16KiB,slow_lat=5ms,seq_pairs=3"

static const struct policy_dev_info devs[2] = {
	{ .name = "ssd0", .cls = IOSIG_CLASS_SSD, .capacity = 16 * GiB, .queue_depth = 4,
	  .block_size = 4096 },
	{ .name = "hdd0", .cls = IOSIG_CLASS_HDD, .capacity = 1ull << 40, .queue_depth = 1,
	  .block_size = 512 },
};
static const struct hx_model models[2] = {
	{ .overhead_ns = 200 * US },
	{ .overhead_ns = 50 * US },   /* replaced by the buffer script */
};

/* The scripted HDD write buffer. */
struct buf {
	int st;            /* 0 = F, 1 = M */
	uint64_t acc;
	unsigned slow;     /* S writes served */
	unsigned user_slow;
};

static uint64_t buf_lat(void *ctx, const struct hx_cmd *c)
{
	struct buf *b = ctx;
	uint64_t lim = b->st ? WM : WF;

	if (c->op == POLICY_OP_READ)
		return 4 * MS;
	if (c->op == POLICY_OP_FLUSH) {
		b->st = 0;
		b->acc = 0;
		return 100 * MS;
	}
	if (c->off >= 512 * GiB)
		return 2 * MS;   /* GC writes to the data area */
	if (b->acc + c->len < lim) {
		b->acc += c->len;
		return b->st ? 1 * MS : 40 * US;
	}
	b->st = 1;
	b->acc = 0;
	b->slow++;
	if (!(c->flags & POLICY_REQ_PAD))
		b->user_slow++;
	return 10 * MS;
}

static struct hx *mk(const char *spec, struct buf *b)
{
	struct hx *h = hx_new(2, devs, models);
	char err[256];

	memset(b, 0, sizeof(*b));
	hx_set_latency_fn(h, 1, buf_lat, b);
	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

static void dump(struct hx *h)
{
	if (getenv("MIOS_DEBUG"))
		for (unsigned i = 0; i < hx_ncmd(h); i++)
			fprintf(stderr, "%u t=%llu done=%llu dev=%u op=%u off=%llu len=%llu flags=%u stream=%u\n", i,
				(unsigned long long)hx_cmd(h, i)->t, (unsigned long long)hx_cmd(h, i)->done,
				hx_cmd(h, i)->dev, hx_cmd(h, i)->op,
				(unsigned long long)hx_cmd(h, i)->off, (unsigned long long)hx_cmd(h, i)->len,
				hx_cmd(h, i)->flags, hx_cmd(h, i)->stream);
}

static uint64_t bytes_on(struct hx *h, unsigned dev, bool pad)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < hx_ncmd(h); i++) {
		const struct hx_cmd *c = hx_cmd(h, i);

		if (c->dev == dev && c->op == POLICY_OP_WRITE &&
		    (pad ? (c->flags & POLICY_REQ_PAD) : !(c->flags & POLICY_REQ_INTERNAL)))
			n += c->len;
	}
	return n;
}

/* mios-e, light load: writes use the Fast state only; PS skips the S. */
static void test_mios_e_fast_state_and_padding(void **state)
{
	struct buf b;
	struct hx *h = mk("mios-e:" OPTS ",L=100", &b);
	unsigned i;

	/* 40 writes of 4 KiB, 1 ms apart (the SSD queue stays short). */
	for (i = 0; i < 40; i++)
		hx_add(h, 300 * MS + i * MS, 1, 0, POLICY_OP_WRITE, i * 64 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	dump(h);
	assert_int_equal(hx_outstanding(h), 0);
	/* F holds 15 writes (15 * 4 KiB < 64 KiB, the 16th would reach it). */
	assert_int_equal(hx_report(h, "redirected_writes"), 15);
	assert_int_equal(bytes_on(h, 1, false), 15 * 4 * KiB);
	assert_int_equal(bytes_on(h, 0, false), 25 * 4 * KiB);
	/* No user write ever met an S: padding took them all. */
	assert_int_equal(b.user_slow, 0);
	assert_true(b.slow >= 3);
	assert_int_equal(hx_report(h, "s_events"), b.slow);
	/* In M with nothing queued, PF (4 KiB) padding fills the state and PS
	 * (16 KiB) triggers each S; the sequence ends after 3 pairs. */
	assert_true(hx_report(h, "padding_writes") > 3);
	assert_int_equal(hx_report(h, "padding_bytes"), bytes_on(h, 1, true));
	assert_int_equal(hx_report(h, "bcw_sequences"), 1);
	hx_free(h);
}

/* mios-d: no redirection while the SSD queue is short ... */
static void test_mios_d_steering_by_queue_length(void **state)
{
	struct buf b;
	struct hx *h = mk("mios-d:" OPTS ",L=2", &b);

	for (unsigned i = 0; i < 10; i++)
		hx_add(h, 300 * MS + i * MS, 1, 0, POLICY_OP_WRITE, i * 64 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "redirected_writes"), 0);
	assert_int_equal(bytes_on(h, 1, true), 0);   /* no BCW, no padding */
	assert_int_equal(hx_ncmd(h), 10);
	hx_free(h);

	/* ... and redirection to F/M while it is longer than L (faked). */
	h = mk("mios-d:" OPTS ",L=2", &b);
	hx_fake_inflight(h, 0, 3);
	for (unsigned i = 0; i < 30; i++)
		hx_add(h, 300 * MS + i * MS, 1, 0, POLICY_OP_WRITE, i * 64 * KiB, 4 * KiB, 0);
	hx_run(h, 330 * MS);
	/* F takes 15 writes; while the PS padding meets the S (10 ms) the
	 * writes go to the SSD; then M takes them again. */
	assert_true(hx_report(h, "redirected_writes") > 15);
	assert_true(hx_report(h, "redirected_writes") < 30);
	assert_int_equal(hx_r(h, 15)->r.issued_dev, 0);
	assert_int_equal(b.user_slow, 0);
	assert_true(hx_report(h, "s_events") >= 1);
	hx_fake_inflight(h, 0, -1);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

/* A recently busy HDD is recalibrated with PS before any user write. */
static void test_mios_recalibration(void **state)
{
	struct buf b;
	struct hx *h = mk("mios-e:" OPTS ",idle_reset=1s,L=100", &b);

	/* Arrives 10 ms after start: the HDD counts as recently busy. */
	hx_add(h, 10 * MS, 1, 0, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	hx_add(h, 40 * MS, 1, 0, POLICY_OP_WRITE, 64 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "recalibrations"), 1);
	/* The first write could not be placed (state unknown): SSD. */
	assert_int_equal(hx_r(h, 0)->r.issued_dev, 0);
	/* The first HDD command is a PS padding. */
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 1) {
			assert_true(hx_cmd(h, i)->flags & POLICY_REQ_PAD);
			assert_int_equal(hx_cmd(h, i)->len, 16 * KiB);
			break;
		}
	assert_int_equal(b.user_slow, 0);
	hx_free(h);

	/* sync_start: a FLUSH empties the buffer instead. */
	h = mk("mios-e:" OPTS ",idle_reset=1s,sync_start=1,L=100", &b);
	hx_add(h, 10 * MS, 1, 0, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	hx_add(h, 200 * MS, 1, 0, POLICY_OP_WRITE, 64 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_cmd(h, 0)->op, POLICY_OP_FLUSH);
	assert_int_equal(hx_cmd(h, 0)->dev, 1);
	assert_int_equal(hx_r(h, 0)->r.issued_dev, 0);   /* during the flush: SSD */
	assert_int_equal(hx_r(h, 1)->r.issued_dev, 1);   /* F after the flush */
	/* One write in F, far from W_f: no padding at all. */
	assert_int_equal(hx_report(h, "padding_writes"), 0);
	hx_free(h);
}

/* Reads follow the location table; GC moves the log to the data area. */
static void test_mios_location_and_gc(void **state)
{
	struct buf b;
	struct hx *h = mk("mios-e:" OPTS ",L=100,gc_idle=500ms,log_size=512GiB", &b);
	unsigned r_hdd, r_ssd, r_split, r_gc, w_new, r_new;

	hx_add(h, 300 * MS, 1, 0, POLICY_OP_WRITE, 1 * MiB, 4 * KiB, 0);     /* -> HDD log @0 */
	hx_add(h, 301 * MS, 1, 0, POLICY_OP_WRITE, 1 * MiB + 4 * KiB, 4 * KiB, 0); /* log @4K */
	r_hdd = hx_add(h, 310 * MS, 2, 0, POLICY_OP_READ, 1 * MiB + 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	r_ssd = hx_add(h, 310 * MS, 2, 0, POLICY_OP_READ, 5 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	r_split = hx_add(h, 310 * MS, 3, 0, POLICY_OP_READ, 1 * MiB - 4 * KiB, 12 * KiB,
			 POLICY_REQ_SYNC);
	/* Long after, GC has moved the data to 512 GiB + home offset. */
	r_gc = hx_add(h, 5000 * MS, 2, 0, POLICY_OP_READ, 1 * MiB, 8 * KiB, POLICY_REQ_SYNC);
	/* A new write steered to the SSD (faked busy HDD? no: L=100 and the
	 * Fast state is gone after recalibration) makes the SSD current. */
	w_new = hx_add(h, 5100 * MS, 1, 0, POLICY_OP_WRITE, 1 * MiB, 4 * KiB, 0);
	r_new = hx_add(h, 5200 * MS, 2, 0, POLICY_OP_READ, 1 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	dump(h);

	assert_int_equal(hx_r(h, 0)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, 0)->r.issued_off, 0);
	assert_int_equal(hx_r(h, 1)->r.issued_off, 4 * KiB);
	assert_int_equal(hx_r(h, r_hdd)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, r_hdd)->r.issued_off, 4 * KiB);
	assert_int_equal(hx_r(h, r_ssd)->r.issued_dev, 0);
	assert_int_equal(hx_r(h, r_split)->status, 0);
	assert_int_equal(hx_report(h, "split_reads"), 1);
	assert_int_equal(hx_report(h, "gc_runs"), 1);
	assert_int_equal(hx_report(h, "gc_bytes"), 8 * KiB);
	assert_int_equal(hx_r(h, r_gc)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, r_gc)->r.issued_off, 512 * GiB + 1 * MiB);
	/* The write after GC: wherever it went, the read finds it there. */
	if (hx_r(h, w_new)->r.issued_dev == 0) {
		assert_int_equal(hx_r(h, r_new)->r.issued_dev, 0);
		assert_int_equal(hx_r(h, r_new)->r.issued_off, 1 * MiB);
	} else {
		assert_int_equal(hx_r(h, r_new)->r.issued_dev, 1);
		assert_int_equal(hx_r(h, r_new)->r.issued_off, hx_r(h, w_new)->r.issued_off);
	}
	hx_free(h);
}

/* A log that padding alone filled (a sequence with nothing steered into
 * it) holds nothing to move: it is recycled, and a later sequence steers
 * writes into it again instead of sending them all to the SSD for good. */
static void test_mios_padding_only_log_recycled(void **state)
{
	struct buf b;
	struct hx *h = mk("mios-e:" OPTS ",idle_reset=1s,L=100,log_size=128KiB", &b);
	unsigned late;

	/* Recently busy: recalibrated, the write goes to the SSD, and the
	 * sequence pads the log until it cannot take a PS. */
	hx_add(h, 10 * MS, 1, 0, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	late = hx_add(h, 5000 * MS, 1, 0, POLICY_OP_WRITE, 64 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	dump(h);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_r(h, 0)->r.issued_dev, 0);
	assert_true(hx_report(h, "padding_bytes") > 96 * KiB);
	/* Long idle: a new sequence in F, the write steered to the HDD's log. */
	assert_int_equal(hx_r(h, late)->r.issued_dev, 1);
	assert_int_equal(hx_report(h, "redirected_writes"), 1);
	hx_free(h);
}

/* A "disk" that never shows an S (no write buffer: a loop device, an
 * SSD): recalibration gives up after a buffer's worth of padding instead of
 * padding the whole log, no sequence starts again from an unknown state,
 * and an idle disk still starts one in F. */
static uint64_t flat_lat(void *ctx, const struct hx_cmd *c)
{
	(void)ctx;
	return c->op == POLICY_OP_READ ? 4 * MS : 40 * US;
}

static void test_mios_no_s_gives_up(void **state)
{
	struct hx *h = hx_new(2, devs, models);
	char err[256];
	unsigned late;

	hx_set_latency_fn(h, 1, flat_lat, NULL);
	if (hx_policy(h, "mios-e:" OPTS ",idle_reset=1s,L=100,log_size=64MiB", err, sizeof(err)) != 0)
		fail_msg("%s", err);
	/* Recently busy: recalibration, which never sees its S. */
	hx_add(h, 10 * MS, 1, 0, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	/* Still not idle: no new sequence, no padding for these. */
	for (unsigned i = 0; i < 20; i++)
		hx_add(h, 100 * MS + i * MS, 1, 0, POLICY_OP_WRITE, (1 + i) * 64 * KiB, 4 * KiB, 0);
	/* Idle long enough: a sequence starts in F and steers. */
	late = hx_add(h, 5000 * MS, 1, 0, POLICY_OP_WRITE, 32 * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	dump(h);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_report(h, "s_events"), 0);
	assert_true(hx_report(h, "sequences_without_s") >= 1);
	/* At most a buffer's worth (W_f + W_m) and one PS per sequence. */
	assert_true(hx_report(h, "padding_bytes") <=
		    hx_report(h, "bcw_sequences") * (WF + WM + 16 * KiB));
	for (unsigned i = 1; i <= 20; i++)
		assert_int_equal(hx_r(h, i)->r.issued_dev, 0);
	assert_int_equal(hx_r(h, late)->r.issued_dev, 1);
	hx_free(h);
}

/* big_write: streams with large writes stay on the SSD; hints decide at
 * the first request, profiling after profile_n writes. */
static void test_mios_size_aware_hints(void **state)
{
	struct buf b;
	struct hx *h;
	uint64_t profiled, hinted;

	for (int use_hints = 0; use_hints <= 1; use_hints++) {
		char spec[256];

		snprintf(spec, sizeof(spec), "mios-e:%s,L=100,big_write=256KiB,profile_n=4,use_hints=%d",
			 OPTS, use_hints);
		h = mk(spec, &b);
		/* Stream 7 declares 1 MiB writes but starts with small ones. */
		for (unsigned i = 0; i < 8; i++)
			hx_add_hint(h, 300 * MS + i * MS, 7, 0, POLICY_OP_WRITE, i * 8 * MiB,
				    i < 4 ? 4 * KiB : 1 * MiB, 0, 1 * MiB, POLICY_PATTERN_SEQUENTIAL);
		hx_run(h, UINT64_MAX);
		if (use_hints)
			hinted = hx_report(h, "redirected_writes");
		else
			profiled = hx_report(h, "redirected_writes");
		hx_free(h);
	}
	/* Profiling lets the first 4 (small) writes go to the HDD before it
	 * knows; the hint keeps all of them on the SSD. */
	assert_int_equal(profiled, 4);
	assert_int_equal(hinted, 0);
}

static void test_mios_setup_errors(void **state)
{
	struct hx *h = hx_new(1, &devs[0], models);
	struct policy_dev_info small[2] = { devs[0], devs[1] };
	char err[256];

	assert_int_equal(hx_policy(h, "mios-d", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "mios-d: needs an SSD and an HDD; the engine offers no HDD");
	hx_free(h);
	small[1].capacity = 20 * GiB;
	h = hx_new(2, small, models);
	assert_int_equal(hx_policy(h, "mios-e", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "lower log_size"));
	assert_int_equal(hx_policy(h, "mios-e:log_size=1GiB", err, sizeof(err)), 0);
	hx_free(h);
	h = hx_new(2, devs, models);
	assert_int_equal(hx_policy(h, "mios-e:gc_threshold=0", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range [0.01, 1]"));
	assert_int_equal(hx_policy(h, "mios-d", err, sizeof(err)), 0);
	/* Requests homed on the HDD are refused: MIOS owns it. */
	hx_add(h, 0, 1, 1, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_r(h, 0)->submit_ret, -EINVAL);
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mios_e_fast_state_and_padding),
		cmocka_unit_test(test_mios_d_steering_by_queue_length),
		cmocka_unit_test(test_mios_recalibration),
		cmocka_unit_test(test_mios_location_and_gc),
		cmocka_unit_test(test_mios_padding_only_log_recycled),
		cmocka_unit_test(test_mios_no_s_gives_up),
		cmocka_unit_test(test_mios_size_aware_hints),
		cmocka_unit_test(test_mios_setup_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
