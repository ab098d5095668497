/* SPDX-License-Identifier: MIT */
/*
 * Recovery's plan (iosigd/tier_plan.c) on simulated stores and home files:
 * the data area and the home files are byte arrays, every write records
 * the sector checksums it leaves, and a crash is a sector put back to what
 * it held before.  Checked: the newest valid copy wins; a torn in-place
 * update falls back to the bytes it overwrote and keeps the rest; a reused
 * place never hands another file's bytes out; HOME and FENCE forget what
 * came before them; several stores merge by sequence.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tier_format.h"
#include "tier_plan.h"

#define AREA (64 << 10)
#define HOME (64 << 10)
#define NSTORE 2
#define NFILE 3
#define MAXREC 64

struct world {
	uint8_t area[NSTORE][AREA];
	uint8_t home[NFILE][HOME];
	struct tplan_rec rec[MAXREC];
	uint8_t crcs[MAXREC][4 * (AREA / TIER_SECTOR + 2)];
	size_t n;
	uint64_t seq;
	/* the sectors of the last write as they were before it (a crash) */
	uint8_t undo[AREA];
	uint64_t undo_lo, undo_hi;
	unsigned undo_store;
};

static struct world W;

static void put_crc(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static struct tplan_rec *new_rec(uint16_t type, int file, unsigned store)
{
	struct tplan_rec *r = &W.rec[W.n];

	assert_true(W.n < MAXREC);
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->file = file;
	r->store = (uint16_t)store;
	r->seq = ++W.seq;
	r->crcs = W.crcs[W.n];
	W.n++;
	return r;
}

/* Writes bytes (value v) of file at foff into store at loc: a DATA (or
 * FILL/PAD) record with the sector checksums the area has afterwards. */
static struct tplan_rec *store_write(uint16_t type, int file, unsigned store, uint64_t foff,
				     uint64_t loc, uint64_t len, uint8_t v)
{
	struct tplan_rec *r = new_rec(type, file, store);
	uint64_t s0 = loc / TIER_SECTOR, s1 = (loc + len + TIER_SECTOR - 1) / TIER_SECTOR;

	W.undo_lo = s0 * TIER_SECTOR;
	W.undo_hi = s1 * TIER_SECTOR;
	W.undo_store = store;
	memcpy(W.undo + W.undo_lo, W.area[store] + W.undo_lo, W.undo_hi - W.undo_lo);
	memset(W.area[store] + loc, v, len);
	r->file_off = type == TIER_REC_PAD ? 0 : foff;
	r->len = len;
	r->loc = loc;
	r->ncrc = (uint32_t)(s1 - s0);
	for (uint64_t s = s0; s < s1; s++)
		put_crc(W.crcs[W.n - 1] + 4 * (s - s0),
			tier_crc32c(0, W.area[store] + s * TIER_SECTOR, TIER_SECTOR));
	return r;
}

/* The crash: sector `sector` of the last write did not reach the disk. */
static void tear(uint64_t sector)
{
	uint64_t off = sector * TIER_SECTOR;

	assert_true(off >= W.undo_lo && off < W.undo_hi);
	memcpy(W.area[W.undo_store] + off, W.undo + off, TIER_SECTOR);
}

/* A HOME record: the range was written home and made durable there. */
static void home_write(int file, uint64_t off, uint64_t len, uint8_t v)
{
	struct tplan_rec *r = new_rec(TIER_REC_HOME, file, 0);

	memset(W.home[file] + off, v, len);
	r->file_off = off;
	r->len = len;
}

static int sector_crc(void *ctx, unsigned store, uint64_t sector, uint32_t *ret)
{
	(void)ctx;
	assert_true(store < NSTORE && sector < AREA / TIER_SECTOR);
	*ret = tier_crc32c(0, W.area[store] + sector * TIER_SECTOR, TIER_SECTOR);
	return 0;
}

static const struct tplan_ops ops = { .sector_crc = sector_crc };

/* Applies the plan to copies of the home files: what recovery would leave. */
static void recovered(struct tplan *p, uint8_t out[NFILE][HOME])
{
	memcpy(out, W.home, sizeof(W.home));
	for (unsigned f = 0; f < p->nfiles; f++)
		for (size_t i = 0; i < p->npieces[f]; i++) {
			const struct tplan_piece *x = &p->pieces[f][i];

			memcpy(out[f] + x->file_off, W.area[x->store] + x->loc, x->len);
		}
}

static struct tplan plan(void)
{
	struct tplan p;

	assert_int_equal(tplan_build(W.rec, W.n, NFILE, &ops, NULL, &p), 0);
	return p;
}

static int setup(void **state)
{
	(void)state;
	memset(&W, 0, sizeof(W));
	return 0;
}

/* Bytes [off, off + len) of buf all equal v. */
static void assert_bytes(const uint8_t *buf, uint64_t off, uint64_t len, uint8_t v)
{
	for (uint64_t i = 0; i < len; i++)
		if (buf[off + i] != v)
			fail_msg("byte %llu is %u, expected %u", (unsigned long long)(off + i),
				 buf[off + i], v);
}

static void test_newest_wins(void **state)
{
	static uint8_t out[NFILE][HOME];
	struct tplan p;

	(void)state;
	store_write(TIER_REC_DATA, 0, 0, 0, 0, 8192, 1);
	store_write(TIER_REC_DATA, 0, 0, 4096, 8192, 4096, 2);   /* newer copy elsewhere */
	p = plan();
	assert_int_equal(p.npieces[0], 2);
	assert_int_equal(p.copy_bytes, 8192);
	recovered(&p, out);
	assert_bytes(out[0], 0, 4096, 1);
	assert_bytes(out[0], 4096, 4096, 2);
	assert_bytes(out[1], 0, HOME, 0);
	assert_int_equal(p.torn_sectors, 0);
	tplan_free(&p);
}

static void test_torn_update_in_place(void **state)
{
	static uint8_t out[NFILE][HOME];
	struct tplan p;

	(void)state;
	/* R1: 4 KiB of file 0 at an unaligned place; R2 updates 100 bytes in
	 * its middle, in place - and the sector holding them is torn. */
	store_write(TIER_REC_DATA, 0, 0, 1000, 300, 4096, 1);
	store_write(TIER_REC_DATA, 0, 0, 2000, 1300, 100, 2);
	tear(1300 / TIER_SECTOR);
	p = plan();
	recovered(&p, out);
	assert_bytes(out[0], 1000, 4096, 1);   /* all of R1, R2 lost */
	assert_int_equal(p.data_rejected_bytes, 100);
	assert_int_equal(p.torn_sectors, 0);
	tplan_free(&p);

	/* Without the tear, R2 shows through R1. */
	memset(W.area[0] + 1300, 2, 100);
	p = plan();
	recovered(&p, out);
	assert_bytes(out[0], 1000, 1000, 1);
	assert_bytes(out[0], 2000, 100, 2);
	assert_bytes(out[0], 2100, 2996, 1);
	assert_int_equal(p.data_rejected_bytes, 0);
	tplan_free(&p);
}

static void test_reused_place(void **state)
{
	static uint8_t out[NFILE][HOME];
	struct tplan p;

	(void)state;
	/* R1 of file 0 at 0; written home (HOME); the place reused by file 1.
	 * File 0 needs nothing; file 1 gets its bytes. */
	store_write(TIER_REC_DATA, 0, 0, 0, 0, 4096, 1);
	home_write(0, 0, 4096, 1);
	store_write(TIER_REC_DATA, 1, 0, 8192, 0, 4096, 3);
	p = plan();
	assert_int_equal(p.npieces[0], 0);
	assert_int_equal(p.npieces[1], 1);
	assert_int_equal(p.homes, 1);
	recovered(&p, out);
	assert_bytes(out[0], 0, 4096, 1);
	assert_bytes(out[1], 8192, 4096, 3);
	tplan_free(&p);

	/* The HOME record did not reach the disk (the home bytes did, before
	 * it): file 0 would fall back to R1 - whose place now holds file 1's
	 * bytes, which must never be handed to file 0. */
	setup(NULL);
	store_write(TIER_REC_DATA, 0, 0, 0, 0, 4096, 1);
	memset(W.home[0], 1, 4096);
	store_write(TIER_REC_DATA, 1, 0, 8192, 0, 4096, 3);
	p = plan();
	assert_int_equal(p.npieces[0], 0);
	recovered(&p, out);
	assert_bytes(out[0], 0, 4096, 1);
	tplan_free(&p);
}

static void test_shared_sector(void **state)
{
	static uint8_t out[NFILE][HOME];
	struct tplan p;

	(void)state;
	/* Two files' records share sector 0; the newer one is torn: the older
	 * file keeps its bytes. */
	store_write(TIER_REC_DATA, 0, 0, 0, 0, 200, 1);
	store_write(TIER_REC_DATA, 1, 0, 0, 200, 200, 2);
	tear(0);
	p = plan();
	recovered(&p, out);
	assert_bytes(out[0], 0, 200, 1);
	assert_bytes(out[1], 0, 200, 0);
	tplan_free(&p);

	/* Padding after them in the same sector keeps both. */
	memset(W.area[0] + 200, 2, 200);
	store_write(TIER_REC_PAD, -1, 0, 0, 400, 112, 0);
	p = plan();
	recovered(&p, out);
	assert_bytes(out[0], 0, 200, 1);
	assert_bytes(out[1], 0, 200, 2);
	tplan_free(&p);

	/* A sector that matches nothing (garbage): counted, none of its bytes
	 * used; the rest of the record still counts. */
	setup(NULL);
	store_write(TIER_REC_DATA, 2, 0, 0, 1024, 1024, 7);
	W.area[0][1024 + 5] ^= 0x55;
	p = plan();
	assert_int_equal(p.torn_sectors, 1);
	assert_int_equal(p.copy_bytes, 512);
	recovered(&p, out);
	assert_bytes(out[2], 512, 512, 7);
	assert_bytes(out[2], 0, 512, 0);
	tplan_free(&p);
}

static void test_home_and_fence(void **state)
{
	static uint8_t out[NFILE][HOME];
	struct tplan p;

	(void)state;
	/* A newer write went home over part of a tiered range. */
	store_write(TIER_REC_DATA, 0, 0, 0, 0, 8192, 1);
	home_write(0, 4096, 100, 9);
	p = plan();
	recovered(&p, out);
	assert_bytes(out[0], 0, 4096, 1);
	assert_bytes(out[0], 4096, 100, 9);
	assert_bytes(out[0], 4196, 8192 - 4196, 1);
	assert_int_equal(p.npieces[0], 2);
	tplan_free(&p);

	/* A tier write after the HOME wins again. */
	store_write(TIER_REC_DATA, 0, 0, 4100, 16384, 10, 4);
	p = plan();
	recovered(&p, out);
	assert_bytes(out[0], 4096, 4, 9);
	assert_bytes(out[0], 4100, 10, 4);
	assert_bytes(out[0], 4110, 86, 9);
	tplan_free(&p);

	/* FENCE forgets every earlier record of its file, not later ones. */
	new_rec(TIER_REC_FENCE, 0, 0);
	store_write(TIER_REC_DATA, 0, 0, 100, 20480, 10, 5);
	store_write(TIER_REC_DATA, 1, 0, 100, 24576, 10, 6);
	p = plan();
	assert_int_equal(p.npieces[0], 1);
	assert_int_equal(p.pieces[0][0].file_off, 100);
	assert_int_equal(p.npieces[1], 1);
	assert_int_equal(p.fences, 1);
	tplan_free(&p);
}

static void test_two_stores(void **state)
{
	static uint8_t out[NFILE][HOME];
	struct tplan p;

	(void)state;
	/* File 0's range went to store 1, then newer bytes to store 0, then
	 * newer again to store 1: sequence order across stores decides. */
	store_write(TIER_REC_DATA, 0, 1, 0, 0, 4096, 1);
	store_write(TIER_REC_DATA, 0, 0, 1024, 0, 1024, 2);
	store_write(TIER_REC_DATA, 0, 1, 1536, 8192, 100, 3);
	/* Records handed over out of order: the planner sorts them. */
	{
		struct tplan_rec t = W.rec[0];   /* crcs point into W.crcs: still right */

		W.rec[0] = W.rec[2];
		W.rec[2] = t;
	}
	p = plan();
	recovered(&p, out);
	assert_bytes(out[0], 0, 1024, 1);
	assert_bytes(out[0], 1024, 512, 2);
	assert_bytes(out[0], 1536, 100, 3);
	assert_bytes(out[0], 1636, 2048 - 1636, 2);
	assert_bytes(out[0], 2048, 2048, 1);
	tplan_free(&p);

	/* FILL records are never applied, but their checksums keep the
	 * sector's state: a later DATA in the same sector still verifies. */
	setup(NULL);
	store_write(TIER_REC_FILL, 2, 0, 0, 0, 300, 6);
	store_write(TIER_REC_DATA, 2, 0, 300, 300, 100, 8);
	p = plan();
	assert_int_equal(p.copy_bytes, 100);
	assert_int_equal(p.pieces[2][0].file_off, 300);
	tplan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_newest_wins, setup),
		cmocka_unit_test_setup(test_torn_update_in_place, setup),
		cmocka_unit_test_setup(test_reused_place, setup),
		cmocka_unit_test_setup(test_shared_sector, setup),
		cmocka_unit_test_setup(test_home_and_fence, setup),
		cmocka_unit_test_setup(test_two_stores, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
