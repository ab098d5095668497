/* SPDX-License-Identifier: MIT */
/*
 * nvcache in isolation: direct hits from memory, bypass on read miss,
 * read-ahead for sequential readers and its fill into memory, write
 * caching with background
 * write-back (coalesced, rewritten bytes kept dirty and never written back
 * twice at once), write-through when the cache has no clean space left,
 * LRU eviction, extents that merge and split, the bypass of large
 * sequential writes (seq_bypass), POLICY_REQ_HOME on writes sent home as
 * they are, and waited block-device writes served first (expedite).
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

static const struct policy_dev_info devs[2] = {
	{ .name = "ssd0", .cls = IOSIG_CLASS_SSD, .capacity = 64 * GiB, .queue_depth = 8,
	  .block_size = 4096 },
	{ .name = "nvm0", .cls = IOSIG_CLASS_NVM, .capacity = 64 * MiB, .queue_depth = 64,
	  .block_size = 64 },
};
static const struct hx_model models[2] = {
	{ .overhead_ns = 100 * US, .bytes_per_s = 500 * MiB },
	{ .overhead_ns = 1 * US },
};

static struct hx *mk(const char *spec, uint64_t blk_lat)
{
	struct hx_model m[2] = { models[0], models[1] };
	struct hx *h;
	char err[256];

	if (blk_lat)
		m[0] = (struct hx_model){ .overhead_ns = blk_lat };
	h = hx_new(2, devs, m);
	if (hx_policy(h, spec, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return h;
}

static void test_nvcache_bypass_on_miss(void **state)
{
	struct hx *h = mk("nvcache", 0);

	/* Random reads: each misses, goes to the SSD, and is not cached. */
	for (unsigned i = 0; i < 10; i++)
		hx_add(h, i * MS, 1, 0, POLICY_OP_READ, (i * 37 % 10) * MiB + 8 * KiB, 4 * KiB,
		       POLICY_REQ_SYNC);
	hx_add(h, 20 * MS, 1, 0, POLICY_OP_READ, 8 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "read_misses"), 11);
	assert_int_equal(hx_report(h, "read_hits"), 0);
	assert_int_equal(hx_report(h, "readahead_cmds"), 0);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		assert_int_equal(hx_cmd(h, i)->dev, 0);
	hx_free(h);
}

static void test_nvcache_read_ahead(void **state)
{
	struct hx *h = mk("nvcache:ra_size=64KiB", 0);
	unsigned mem = 0;

	/* A sequential reader, 4 KiB every 100 us, 64 reads (256 KiB). */
	for (unsigned i = 0; i < 64; i++)
		hx_add(h, i * 100 * US, 1, 0, POLICY_OP_READ, 1 * GiB + i * 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	/* The first two reads miss (the second shows the stream sequential
	 * and starts the read-ahead); the read-ahead keeps ahead of the rest. */
	assert_int_equal(hx_report(h, "read_misses"), 2);
	assert_int_equal(hx_report(h, "read_hits"), 62);
	for (unsigned i = 0; i < hx_ncmd(h); i++)   /* the fills are the other commands there */
		mem += hx_cmd(h, i)->dev == 1 && !(hx_cmd(h, i)->flags & POLICY_REQ_INTERNAL);
	assert_int_equal(mem, 62);
	assert_true(hx_report(h, "readahead_bytes") >= 252 * KiB);
	/* Reads that arrive while their read-ahead is in flight wait for it
	 * rather than reading the SSD a second time. */
	assert_true(hx_report(h, "parked_reads") >= 1);
	hx_free(h);

	/* A reader that jumps back to a lower offset (next chunk) gets a new
	 * read-ahead window there (regression: it kept the old one). */
	h = mk("nvcache:ra_size=64KiB", 0);
	for (unsigned i = 0; i < 64; i++)
		hx_add(h, i * 100 * US, 1, 0, POLICY_OP_READ,
		       (i < 32 ? 2 * GiB : 1 * GiB) + (i % 32) * 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "read_misses"), 4);
	assert_int_equal(hx_report(h, "read_hits"), 60);
	hx_free(h);

	/* ra_size=0: every sequential read misses. */
	h = mk("nvcache:ra_size=0", 0);
	for (unsigned i = 0; i < 16; i++)
		hx_add(h, i * MS, 1, 0, POLICY_OP_READ, 1 * GiB + i * 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "read_misses"), 16);
	hx_free(h);
}

/* Whether command c is a fill: an internal write to the memory device. */
static bool is_fill(const struct hx_cmd *c)
{
	return c->dev == 1 && c->op == POLICY_OP_WRITE && (c->flags & POLICY_REQ_INTERNAL);
}

/* The index of the command request id went in. */
static unsigned cmd_of(struct hx *h, uint64_t id)
{
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->first_id == id)
			return i;
	fail_msg("request %llu was not issued", (unsigned long long)id);
	return 0;
}

/* The last write to the memory device covering home [off, off + len) among
 * the first n commands (a fill, or a cached workload write), or -1. */
static int last_mem_write(struct hx *h, unsigned n, uint64_t off, uint64_t len)
{
	int last = -1;

	for (unsigned i = 0; i < n; i++) {
		const struct hx_cmd *c = hx_cmd(h, i);

		if (c->dev == 1 && c->op == POLICY_OP_WRITE && c->hoff <= off &&
		    c->hoff + c->hlen >= off + len)
			last = (int)i;
	}
	return last;
}

/* Path (b) for real: what a read-ahead loaded is written into memory (a
 * fill), at the place the hits of those bytes read. */
static void test_nvcache_fill(void **state)
{
	struct hx *h = mk("nvcache:ra_size=64KiB", 0);
	uint64_t ra = 0, filled = 0, cap = devs[1].capacity;
	unsigned nra = 0, hits = 0;

	for (unsigned i = 0; i < 64; i++)
		hx_add(h, i * 100 * US, 1, 0, POLICY_OP_READ, 1 * GiB + i * 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	/* Each read-ahead is followed, as soon as it completed, by its fill:
	 * an internal write of the same home range to the memory device at
	 * that range's place there. */
	for (unsigned i = 0; i < hx_ncmd(h); i++) {
		const struct hx_cmd *c = hx_cmd(h, i), *f = NULL;

		if (!(c->flags & POLICY_REQ_INTERNAL) || c->op != POLICY_OP_READ)
			continue;
		assert_int_equal(c->dev, 0);
		nra++;
		ra += c->hlen;
		for (unsigned j = i + 1; j < hx_ncmd(h) && !f; j++)
			if (is_fill(hx_cmd(h, j)) && hx_cmd(h, j)->hoff == c->hoff)
				f = hx_cmd(h, j);
		assert_non_null(f);
		assert_int_equal(f->hlen, c->hlen);
		assert_int_equal(f->off, c->hoff % cap);
		assert_int_equal(f->t, c->done);
		filled += f->hlen;
	}
	assert_true(nra >= 2);
	assert_int_equal(filled, ra);
	assert_int_equal(hx_report(h, "fill_cmds"), nra);
	assert_int_equal(hx_report(h, "fill_bytes"), ra);
	/* Every hit reads the memory device where the fill of its bytes wrote
	 * them, after that fill was issued (the reads that waited for a
	 * read-ahead queue behind its fill). */
	for (unsigned i = 0; i < hx_nreq(h); i++) {
		const struct policy_req *r = &hx_r(h, i)->r;
		unsigned k = cmd_of(h, r->id);
		int w;

		if (r->issued_dev != 1)
			continue;
		hits++;
		assert_int_equal(r->issued_off, r->offset % cap);
		w = last_mem_write(h, k, r->offset, r->len);
		assert_true(w >= 0);
		assert_true(is_fill(hx_cmd(h, (unsigned)w)));
	}
	assert_int_equal(hits, 62);
	hx_free(h);
}

/* A write to bytes a read-ahead is loading, or whose fill waits for the
 * memory device, leaves the newest data in memory: the fill never writes
 * over it. */
static void test_nvcache_fill_vs_write(void **state)
{
	/* A slow SSD (10 ms a command, one at a time): the read-ahead issued
	 * at 100 us (by the second read) loads [1 GiB + 8 KiB, + 64 KiB) until
	 * 20 ms; a write of 4 KiB in its middle comes at 1 ms. */
	struct hx *h = mk("nvcache:ra_size=64KiB", 10 * MS);
	uint64_t base = 1 * GiB, woff = base + 32 * KiB;
	unsigned w, rw, ro;

	hx_add(h, 0, 1, 0, POLICY_OP_READ, base, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 100 * US, 1, 0, POLICY_OP_READ, base + 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	w = hx_add(h, 1 * MS, 2, 0, POLICY_OP_WRITE, woff, 4 * KiB, 0);
	rw = hx_add(h, 50 * MS, 3, 0, POLICY_OP_READ, woff, 4 * KiB, POLICY_REQ_SYNC);
	ro = hx_add(h, 50 * MS, 4, 0, POLICY_OP_READ, base + 16 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_report(h, "readahead_bytes"), 64 * KiB);
	/* The write took its bytes from the loading extent: the fill writes
	 * the rest (two commands, around it), never the written bytes. */
	assert_int_equal(hx_report(h, "fill_bytes"), 60 * KiB);
	assert_int_equal(hx_report(h, "fill_cmds"), 2);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (is_fill(hx_cmd(h, i)))
			assert_true(hx_cmd(h, i)->hoff + hx_cmd(h, i)->hlen <= woff ||
				    hx_cmd(h, i)->hoff >= woff + 4 * KiB);
	/* Both reads hit memory, the written bytes as the write left them. */
	assert_int_equal(hx_r(h, w)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, rw)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, ro)->r.issued_dev, 1);
	assert_int_equal(last_mem_write(h, cmd_of(h, hx_r(h, rw)->r.id), woff, 4 * KiB),
			 (int)cmd_of(h, hx_r(h, w)->r.id));
	assert_true(is_fill(hx_cmd(h, (unsigned)last_mem_write(h, cmd_of(h, hx_r(h, ro)->r.id),
								base + 16 * KiB, 4 * KiB))));
	/* The written bytes are written back; everything ends clean. */
	assert_int_equal(hx_report(h, "writeback_bytes"), 4 * KiB);
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	assert_int_equal(hx_report(h, "cached_bytes"), 64 * KiB);
	hx_free(h);

	/* The memory device is full when the read-ahead completes (20 ms):
	 * its fill waits in the memory queue; a write of 4 KiB of it comes at
	 * 40 ms and queues behind it.  Once the device has room the fill goes
	 * first and the write after it, so memory holds the write's bytes. */
	h = mk("nvcache:ra_size=64KiB", 10 * MS);
	hx_add(h, 0, 1, 0, POLICY_OP_READ, base, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 100 * US, 1, 0, POLICY_OP_READ, base + 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, 5 * MS);
	hx_fake_inflight(h, 1, 64);
	w = hx_add(h, 40 * MS, 2, 0, POLICY_OP_WRITE, woff, 4 * KiB, 0);
	hx_run(h, 45 * MS);
	assert_int_equal(hx_report(h, "fill_bytes"), 64 * KiB);   /* made before the write */
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		assert_false(hx_cmd(h, i)->dev == 1);                  /* nothing issued to memory yet */
	hx_fake_inflight(h, 1, -1);
	rw = hx_add(h, 50 * MS, 3, 0, POLICY_OP_READ, woff, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_r(h, rw)->r.issued_dev, 1);
	assert_int_equal(last_mem_write(h, cmd_of(h, hx_r(h, rw)->r.id), woff, 4 * KiB),
			 (int)cmd_of(h, hx_r(h, w)->r.id));
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	hx_free(h);
}

static void test_nvcache_write_back(void **state)
{
	struct hx *h = mk("nvcache", 0);
	unsigned wb = 0, rd;

	/* 16 contiguous 4 KiB writes then a read of one of them. */
	for (unsigned i = 0; i < 16; i++)
		hx_add(h, i * 10 * US, 1, 0, POLICY_OP_WRITE, 2 * GiB + i * 4 * KiB, 4 * KiB, 0);
	rd = hx_add(h, 100 * MS, 2, 0, POLICY_OP_READ, 2 * GiB + 20 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "writes_cached"), 16);
	assert_int_equal(hx_report(h, "writes_through"), 0);
	/* Every workload write was served by memory. */
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(hx_r(h, i)->r.issued_dev, 1);
	/* The written data is read from memory. */
	assert_int_equal(hx_r(h, rd)->r.issued_dev, 1);
	assert_int_equal(hx_report(h, "read_hits"), 1);
	/* Write-back reached the SSD with all 64 KiB, in few commands. */
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 0) {
			assert_true(hx_cmd(h, i)->flags & POLICY_REQ_INTERNAL);
			assert_int_equal(hx_cmd(h, i)->op, POLICY_OP_WRITE);
			wb++;
		}
	assert_int_equal(hx_report(h, "writeback_bytes"), 64 * KiB);
	assert_true(wb < 16);
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	hx_free(h);
}

static void test_nvcache_rewrite_during_writeback(void **state)
{
	/* A slow SSD (50 ms per command): the block is rewritten while its
	 * write-back runs, so it stays dirty and is written back again, but
	 * only after the first write-back completed (two write-backs of the
	 * same bytes in flight could land in either order). */
	struct hx *h = mk("nvcache", 50 * MS);
	const struct hx_cmd *wb[2];
	unsigned n = 0;

	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 3 * GiB, 4 * KiB, 0);
	hx_add(h, 10 * MS, 1, 0, POLICY_OP_WRITE, 3 * GiB + 2 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "writeback_cmds"), 2);
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 0)
			wb[n++] = hx_cmd(h, i);
	assert_int_equal(n, 2);
	/* First: the 4 KiB written at 0; second: the 4 KiB rewritten at 10 ms
	 * (its first 2 KiB overlap the first write-back), issued when the
	 * first completed at 50 ms. */
	assert_int_equal(wb[0]->t, 0);
	assert_int_equal(wb[0]->off, 3 * GiB);
	assert_int_equal(wb[0]->len, 4 * KiB);
	assert_int_equal(wb[1]->t, 50 * MS);
	assert_int_equal(wb[1]->off, 3 * GiB + 2 * KiB);
	assert_int_equal(wb[1]->len, 4 * KiB);
	/* Both halves are cached: 6 KiB in one clean extent. */
	assert_int_equal(hx_report(h, "cached_bytes"), 6 * KiB);
	assert_int_equal(hx_report(h, "extents"), 1);
	hx_free(h);
}

static void test_nvcache_lru_eviction(void **state)
{
	/* A 16 KiB cache, a fast SSD: four 4 KiB writes fill it and are
	 * written back (clean).  Reading block 0 makes it the most recently
	 * used, so the fifth write evicts block 1, the least recently used. */
	struct hx *h = mk("nvcache:cache_size=16KiB", 0);
	unsigned r0, r1, r2;

	for (unsigned i = 0; i < 4; i++)
		hx_add(h, i * MS, 1, 0, POLICY_OP_WRITE, i * MiB, 4 * KiB, 0);
	hx_add(h, 10 * MS, 2, 0, POLICY_OP_READ, 0, 4 * KiB, POLICY_REQ_SYNC);
	hx_add(h, 11 * MS, 1, 0, POLICY_OP_WRITE, 9 * MiB, 4 * KiB, 0);
	r0 = hx_add(h, 20 * MS, 3, 0, POLICY_OP_READ, 0, 4 * KiB, POLICY_REQ_SYNC);
	r1 = hx_add(h, 21 * MS, 4, 0, POLICY_OP_READ, 1 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	r2 = hx_add(h, 22 * MS, 5, 0, POLICY_OP_READ, 2 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "writes_cached"), 5);
	assert_int_equal(hx_report(h, "evicted_bytes"), 4 * KiB);
	assert_int_equal(hx_r(h, r0)->r.issued_dev, 1);   /* kept: used recently */
	assert_int_equal(hx_r(h, r1)->r.issued_dev, 0);   /* evicted: a miss */
	assert_int_equal(hx_r(h, r2)->r.issued_dev, 1);
	assert_int_equal(hx_report(h, "cached_bytes"), 16 * KiB);
	hx_free(h);
}

static void test_nvcache_extents(void **state)
{
	/* A slow SSD keeps the data dirty while we look. */
	struct hx *h = mk("nvcache", 1000 * MS);
	unsigned rd;

	/* 16 contiguous 4 KiB writes while the SSD has no room for a
	 * write-back become one dirty extent of 64 KiB ... */
	hx_fake_inflight(h, 0, 8);
	for (unsigned i = 0; i < 16; i++)
		hx_add(h, i * US, 1, 0, POLICY_OP_WRITE, 4 * GiB + i * 4 * KiB, 4 * KiB, 0);
	hx_run(h, 1 * MS);
	assert_int_equal(hx_report(h, "extents"), 1);
	assert_int_equal(hx_report(h, "dirty_bytes"), 64 * KiB);
	assert_int_equal(hx_report(h, "writeback_cmds"), 0);
	/* ... written back in one command once the SSD has room (max_merge is
	 * 512 KiB), and read from memory. */
	hx_fake_inflight(h, 0, -1);
	rd = hx_add(h, 2 * MS, 2, 0, POLICY_OP_READ, 4 * GiB + 60 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, 2 * MS);
	assert_int_equal(hx_report(h, "writeback_cmds"), 1);
	assert_int_equal(hx_r(h, rd)->r.issued_dev, 1);
	/* Once clean, a 512-byte overwrite in its middle splits it in three
	 * (clean, dirty, clean); after its own write-back the three merge. */
	hx_run(h, 1100 * MS);
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	hx_add(h, 1200 * MS, 1, 0, POLICY_OP_WRITE, 4 * GiB + 10 * KiB, 512, 0);
	hx_run(h, 1200 * MS);
	assert_int_equal(hx_report(h, "extents"), 3);
	assert_int_equal(hx_report(h, "dirty_bytes"), 512);
	assert_int_equal(hx_report(h, "cached_bytes"), 64 * KiB);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "extents"), 1);
	assert_int_equal(hx_report(h, "writeback_bytes"), 64 * KiB + 512);
	hx_free(h);
}

static void test_nvcache_wb_delay(void **state)
{
	/* wb_delay=50ms: dirty data stays in memory until it is 50 ms old, then
	 * the tick writes it back, oldest first. */
	struct hx *h = mk("nvcache:wb_delay=50ms", 100 * US);

	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 1 * GiB, 4 * KiB, 0);
	hx_add(h, 20 * MS, 1, 0, POLICY_OP_WRITE, 2 * GiB, 4 * KiB, 0);
	hx_run(h, 49 * MS);
	assert_int_equal(hx_report(h, "writeback_cmds"), 0);
	assert_int_equal(hx_report(h, "dirty_bytes"), 8 * KiB);
	hx_run(h, 60 * MS);
	assert_int_equal(hx_report(h, "writeback_cmds"), 1);
	assert_int_equal(hx_report(h, "dirty_bytes"), 4 * KiB);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "writeback_cmds"), 2);
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 0)
			assert_true(hx_cmd(h, i)->t >= 50 * MS);
	hx_free(h);
}

static void test_nvcache_write_through_when_full(void **state)
{
	/* Room for 8 blocks, and an SSD so slow nothing is written back yet. */
	struct hx *h = mk("nvcache:cache_size=32KiB", 1000 * MS);
	unsigned late;

	for (unsigned i = 0; i < 8; i++)
		hx_add(h, i * US, 1, 0, POLICY_OP_WRITE, i * MiB, 4 * KiB, 0);
	/* The 9th line has no room: write-through to the SSD. */
	late = hx_add(h, 1 * MS, 1, 0, POLICY_OP_WRITE, 100 * MiB, 4 * KiB, 0);
	hx_run(h, 2 * MS);
	assert_int_equal(hx_report(h, "writes_cached"), 8);
	assert_int_equal(hx_report(h, "writes_through"), 1);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_r(h, late)->r.issued_dev, 0);
	assert_int_equal(hx_r(h, late)->r.issued_off, 100 * MiB);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	hx_free(h);

	/* A write-through drops a stale cached copy: the later read misses. */
	h = mk("nvcache:cache_size=32KiB", 1000 * MS);
	for (unsigned i = 0; i < 8; i++)
		hx_add(h, i * US, 1, 0, POLICY_OP_WRITE, i * MiB, 4 * KiB, 0);
	hx_add(h, 1 * MS, 1, 0, POLICY_OP_WRITE, 0, 8 * KiB, 0);  /* 4 KiB more: no room */
	late = hx_add(h, 2 * MS, 2, 0, POLICY_OP_READ, 0, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "writes_through"), 1);
	assert_int_equal(hx_r(h, late)->r.issued_dev, 0);
	hx_free(h);
}

/* A write larger than the free space is written through whole; a write
 * filling the cache exactly is cached (regression: the set-associative
 * version crashed on a write spanning a whole set). */
static void test_nvcache_multi_line_write_one_set(void **state)
{
	/* A 16 KiB cache: a 16 KiB write takes all of it. */
	struct hx *h = mk("nvcache:cache_size=16KiB", 0);

	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 1 * MiB, 16 * KiB, 0);
	hx_add(h, 1 * MS, 1, 0, POLICY_OP_WRITE, 2 * MiB, 20 * KiB, 0);  /* 5 lines: no room */
	hx_add(h, 100 * MS, 2, 0, POLICY_OP_READ, 1 * MiB + 4 * KiB, 8 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_report(h, "writes_cached"), 1);
	assert_int_equal(hx_report(h, "writes_through"), 1);
	assert_int_equal(hx_r(h, 0)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, 2)->r.issued_dev, 1);   /* still cached */
	hx_free(h);
}

/* seq_bypass (ours): a stream's writes go home once it has written that
 * many contiguous bytes; random writes stay cached; a bypassing write drops
 * the older cached copy of its range; queued contiguous writes go as one
 * command; 0 (the default, the paper's policy) caches everything. */
static void test_nvcache_seq_bypass(void **state)
{
	struct hx *h = mk("nvcache:seq_bypass=1MiB", 0);
	unsigned rd, blk = 0, merged = 0;

	/* Stream 1: 8 sequential 256 KiB writes; stream 3: random 4 KiB ones. */
	for (unsigned i = 0; i < 8; i++)
		hx_add(h, i * MS, 1, 0, POLICY_OP_WRITE, 1 * GiB + i * 256 * KiB, 256 * KiB, 0);
	for (unsigned i = 0; i < 4; i++)
		hx_add(h, i * MS, 3, 0, POLICY_OP_WRITE, (i * 37 % 10) * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(hx_r(h, i)->r.issued_dev, i < 3 ? 1 : 0);
	for (unsigned i = 8; i < 12; i++)
		assert_int_equal(hx_r(h, i)->r.issued_dev, 1);
	assert_int_equal(hx_report(h, "writes_bypassed"), 5);
	assert_int_equal(hx_report(h, "write_bypass_bytes"), 5 * 256 * KiB);
	assert_int_equal(hx_report(h, "writes_cached"), 7);
	assert_int_equal(hx_report(h, "writeback_bytes"), 3 * 256 * KiB + 4 * 4 * KiB);
	hx_free(h);

	/* A cached range rewritten by a bypassing stream is read from home. */
	h = mk("nvcache:seq_bypass=64KiB", 0);
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 2 * GiB + 64 * KiB, 4 * KiB, 0);      /* cached */
	hx_add(h, 1 * MS, 2, 0, POLICY_OP_WRITE, 2 * GiB + 32 * KiB, 32 * KiB, 0);     /* cached */
	hx_add(h, 2 * MS, 2, 0, POLICY_OP_WRITE, 2 * GiB + 64 * KiB, 64 * KiB, 0); /* bypass */
	rd = hx_add(h, 500 * MS, 3, 0, POLICY_OP_READ, 2 * GiB + 64 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_r(h, 0)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, 1)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, 2)->r.issued_dev, 0);
	assert_int_equal(hx_r(h, rd)->r.issued_dev, 0);
	assert_int_equal(hx_report(h, "read_misses"), 1);
	assert_int_equal(hx_outstanding(h), 0);
	assert_int_equal(hx_report(h, "dirty_bytes"), 0);
	hx_free(h);

	/* Small sequential writes past the threshold, queued behind a slow
	 * block device: merged into few commands. */
	h = mk("nvcache:seq_bypass=16KiB", 50 * MS);
	for (unsigned i = 0; i < 64; i++)
		hx_add(h, i * 10 * US, 1, 0, POLICY_OP_WRITE, 3 * GiB + i * 4 * KiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "writes_bypassed"), 61);
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 0 && !(hx_cmd(h, i)->flags & POLICY_REQ_INTERNAL)) {
			blk++;
			merged += hx_cmd(h, i)->nreq;
		}
	assert_int_equal(merged, 61);
	assert_true(blk < 20);
	hx_free(h);

	/* The default caches a sequential stream whole. */
	h = mk("nvcache", 0);
	for (unsigned i = 0; i < 8; i++)
		hx_add(h, i * MS, 1, 0, POLICY_OP_WRITE, 1 * GiB + i * 256 * KiB, 256 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_report(h, "writes_cached"), 8);
	assert_int_equal(hx_report(h, "writes_bypassed"), 0);
	hx_free(h);
}

/* POLICY_REQ_HOME marks the writes nvcache sends home as they are (bypassed
 * or written through), never a cached one; a waited one of them goes ahead
 * of the block device's other queued commands, in the order waited for. */
static void test_nvcache_home_and_expedite(void **state)
{
	struct hx *h = mk("nvcache:seq_bypass=64KiB,cache_size=32KiB", 20 * MS);
	unsigned a[4], b[4], c, blk[2], n = 0;

	/* The SSD busy (as the policy sees it) until 1 ms: writes queue. */
	hx_fake_inflight(h, 0, 8);
	/* Streams 1, then 2: 4 x 64 KiB sequential writes each, all bypass;
	 * stream 3: one small cached write. */
	for (unsigned i = 0; i < 4; i++)
		a[i] = hx_add(h, 10 * US + i * US, 1, 0, POLICY_OP_WRITE, 1 * GiB + i * 64 * KiB,
			      64 * KiB, 0);
	for (unsigned i = 0; i < 4; i++)
		b[i] = hx_add(h, 20 * US + i * US, 2, 0, POLICY_OP_WRITE, 2 * GiB + i * 64 * KiB,
			      64 * KiB, 0);
	c = hx_add(h, 30 * US, 3, 0, POLICY_OP_WRITE, 5 * MiB, 4 * KiB, 0);
	/* Stream 2 syncs: its queued writes go before stream 1's. */
	for (unsigned i = 0; i < 4; i++)
		hx_expedite(h, 40 * US, b[i]);
	hx_run(h, 1 * MS);
	for (unsigned i = 0; i < 4; i++)
		assert_false(hx_r(h, a[i])->issued || hx_r(h, b[i])->issued);
	hx_fake_inflight(h, 0, -1);
	hx_add(h, 2 * MS, 4, 0, POLICY_OP_READ, 9 * GiB, 4 * KiB, POLICY_REQ_SYNC);   /* an event */
	hx_run(h, UINT64_MAX);
	for (unsigned i = 0; i < 4; i++) {
		assert_true(hx_r(h, a[i])->r.flags & POLICY_REQ_HOME);
		assert_true(hx_r(h, b[i])->r.flags & POLICY_REQ_HOME);
		assert_true(hx_r(h, b[i])->expedited);
		assert_true(hx_r(h, a[i])->issued && hx_r(h, b[i])->issued);
		assert_int_equal(hx_r(h, a[i])->r.issued_dev, 0);
	}
	assert_false(hx_r(h, c)->r.flags & POLICY_REQ_HOME);
	assert_int_equal(hx_r(h, c)->r.issued_dev, 1);
	assert_int_equal(hx_report(h, "write_expedited"), 4);
	/* Two block commands (each stream's writes merged), stream 2's first. */
	for (unsigned i = 0; i < hx_ncmd(h); i++)
		if (hx_cmd(h, i)->dev == 0 && !(hx_cmd(h, i)->flags & POLICY_REQ_INTERNAL) && n < 2)
			blk[n++] = i;
	assert_int_equal(n, 2);
	assert_int_equal(hx_cmd(h, blk[0])->stream, 2);
	assert_int_equal(hx_cmd(h, blk[0])->nreq, 4);
	assert_int_equal(hx_cmd(h, blk[1])->stream, 1);
	assert_int_equal(hx_cmd(h, blk[1])->nreq, 4);
	hx_free(h);

	/* Written through (no room): marked too. */
	h = mk("nvcache:cache_size=8KiB", 1000 * MS);
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 0, 8 * KiB, 0);
	c = hx_add(h, 1 * MS, 1, 0, POLICY_OP_WRITE, 1 * MiB, 4 * KiB, 0);
	hx_run(h, UINT64_MAX);
	assert_false(hx_r(h, 0)->r.flags & POLICY_REQ_HOME);
	assert_true(hx_r(h, c)->r.flags & POLICY_REQ_HOME);
	hx_free(h);
}

/*
 * env->home taking bypassed writes back (an engine with a page cache writes
 * them itself, their write-backs come later as writes of their own): they
 * are neither issued nor finished by the policy, a cached copy of their
 * range is gone (a read of it goes to the block device), a cached write is
 * not offered, and a bypassed write the engine keeps is issued as before.
 */
static void test_nvcache_take_back(void **state)
{
	struct hx *h = mk("nvcache:seq_bypass=64KiB,ra_size=0", 0);
	unsigned a[4], small, later, rd;

	(void)state;
	hx_take_home(h, 1 * MS);
	small = hx_add(h, 0, 2, 0, POLICY_OP_WRITE, 1 * GiB + 64 * KiB, 4 * KiB, 0);
	for (unsigned i = 0; i < 4; i++)
		a[i] = hx_add(h, 500 * US + i * US, 1, 0, POLICY_OP_WRITE, 1 * GiB + i * 64 * KiB,
			      64 * KiB, 0);
	later = hx_add(h, 2 * MS, 1, 0, POLICY_OP_WRITE, 1 * GiB + 4 * 64 * KiB, 64 * KiB, 0);
	rd = hx_add(h, 3 * MS, 3, 0, POLICY_OP_READ, 1 * GiB + 64 * KiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	for (unsigned i = 0; i < 4; i++) {
		assert_true(hx_r(h, a[i])->taken);
		assert_false(hx_r(h, a[i])->issued);
	}
	assert_false(hx_r(h, small)->taken);
	assert_int_equal(hx_r(h, small)->homed, 0);
	assert_int_equal(hx_r(h, small)->r.issued_dev, 1);
	assert_int_equal(hx_r(h, later)->homed, 1);
	assert_false(hx_r(h, later)->taken);
	assert_int_equal(hx_r(h, later)->r.issued_dev, 0);
	assert_int_equal(hx_r(h, rd)->r.issued_dev, 0);
	assert_int_equal(hx_report(h, "writes_given_home"), 4);
	assert_int_equal(hx_report(h, "writes_bypassed"), 5);
	hx_free(h);
}

static void test_nvcache_setup_errors(void **state)
{
	struct hx *h = hx_new(1, devs, models);
	char err[256];

	assert_int_equal(hx_policy(h, "nvcache", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "nvcache: needs a memory device (ram or nvm) and a block device; the engine offers no memory device");
	hx_free(h);
	h = hx_new(2, devs, models);
	assert_int_equal(hx_policy(h, "nvcache:line=1000", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "nvcache: line 1000 is not a multiple of 512 bytes");
	assert_int_equal(hx_policy(h, "nvcache:line=64KiB", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range [512B, 32KiB]"));
	assert_int_equal(hx_policy(h, "nvcache:cache_size=2KiB", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "smaller than one line"));
	hx_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvcache_bypass_on_miss),
		cmocka_unit_test(test_nvcache_read_ahead),
		cmocka_unit_test(test_nvcache_fill),
		cmocka_unit_test(test_nvcache_fill_vs_write),
		cmocka_unit_test(test_nvcache_write_back),
		cmocka_unit_test(test_nvcache_rewrite_during_writeback),
		cmocka_unit_test(test_nvcache_lru_eviction),
		cmocka_unit_test(test_nvcache_extents),
		cmocka_unit_test(test_nvcache_wb_delay),
		cmocka_unit_test(test_nvcache_write_through_when_full),
		cmocka_unit_test(test_nvcache_multi_line_write_one_set),
		cmocka_unit_test(test_nvcache_seq_bypass),
		cmocka_unit_test(test_nvcache_home_and_expedite),
		cmocka_unit_test(test_nvcache_take_back),
		cmocka_unit_test(test_nvcache_setup_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
