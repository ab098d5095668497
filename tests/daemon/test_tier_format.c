/* SPDX-License-Identifier: MIT */
/*
 * The tier store format (iosigd/tier_format.c): CRC-32C against published
 * check values, superblocks and records round-trip, every way a slot or a
 * record can be damaged is refused with a reason, and a journal scan finds
 * exactly the valid records of the current generation whatever was torn,
 * zeroed or left over from an earlier generation.
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

static void test_crc32c(void **state)
{
	static const char check[] = "123456789";
	uint8_t zeros[32] = { 0 }, ones[32], inc[32];

	(void)state;
	/* RFC 3720 B.4 and the usual check value. */
	assert_int_equal(tier_crc32c(0, check, 9), 0xe3069283u);
	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		inc[i] = (uint8_t)i;
	assert_int_equal(tier_crc32c(0, zeros, 32), 0x8a9136aau);
	assert_int_equal(tier_crc32c(0, ones, 32), 0x62a8ab43u);
	assert_int_equal(tier_crc32c(0, inc, 32), 0x46dd794eu);
	/* Continuation: crc(a b) = crc(b) continued from crc(a); any split. */
	for (size_t k = 0; k <= 9; k++)
		assert_int_equal(tier_crc32c(tier_crc32c(0, check, k), check + k, 9 - k), 0xe3069283u);
	/* Unaligned starts and lengths take the same result. */
	{
		uint8_t big[1000 + 8];

		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (uint8_t)(i * 7 + 3);
		uint32_t ref = tier_crc32c(0, big + 3, 997);

		for (size_t i = 0; i < 997; i += 97)
			assert_int_equal(tier_crc32c(tier_crc32c(0, big + 3, i), big + 3 + i, 997 - i), ref);
	}
}

static struct tier_sb sample_sb(void)
{
	struct tier_sb sb;

	memset(&sb, 0, sizeof(sb));
	assert_int_equal(tier_sb_geometry(64ull << 20, 0, &sb), 0);
	sb.format = TIER_FORMAT;
	for (int i = 0; i < 16; i++)
		sb.uuid[i] = (uint8_t)(i + 1);
	sb.generation = 3;
	sb.seq_base = 1000;
	sb.flags = TIER_SB_VOLATILE;
	sb.created_ns = 123456789;
	snprintf(sb.name, sizeof(sb.name), "ssd");
	return sb;
}

static void test_sb(void **state)
{
	static uint8_t slot[TIER_SB_SLOT];
	struct tier_sb sb = sample_sb(), back;
	const char *why = NULL;
	uint32_t fmt = 0;

	(void)state;
	assert_int_equal(sb.journal_off, TIER_HEAD_BYTES);
	assert_int_equal(sb.journal_bytes, 4ull << 20);
	assert_int_equal(sb.data_off + sb.data_bytes, 64ull << 20);
	tier_sb_encode(&sb, slot);
	assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_OK);
	assert_memory_equal(&sb, &back, sizeof(sb));

	/* Every byte the checksum covers matters. */
	for (unsigned i = 12; i < TIER_SB_BYTES; i += 7) {
		slot[i] ^= 0x40;
		assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_CORRUPT);
		assert_non_null(why);
		slot[i] ^= 0x40;
	}
	/* A newer format is recognised before its checksum is looked at. */
	slot[8] = TIER_FORMAT + 1;
	assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_NEWER);
	assert_int_equal(fmt, TIER_FORMAT + 1);
	assert_non_null(strstr(why, "newer"));
	slot[8] = TIER_FORMAT;
	/* Foreign: no magic (zeros, a text file). */
	memcpy(slot, "#!/bin/s", 8);
	assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_FOREIGN);
	memset(slot, 0, sizeof(slot));
	assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_FOREIGN);

	/* Geometry: a valid checksum over impossible regions is refused. */
	sb.data_off = sb.journal_off;   /* journal overlaps data */
	tier_sb_encode(&sb, slot);
	assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_CORRUPT);
	assert_non_null(strstr(why, "overlaps"));
	sb = sample_sb();
	sb.data_bytes += TIER_ALIGN;    /* past the end */
	tier_sb_encode(&sb, slot);
	assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_CORRUPT);
	sb = sample_sb();
	sb.generation = 0;
	tier_sb_encode(&sb, slot);
	assert_int_equal(tier_sb_decode(slot, &back, &fmt, &why), TIER_SB_CORRUPT);

	/* Too small for anything; an explicit journal that leaves no data. */
	assert_int_equal(tier_sb_geometry(16 << 10, 0, &sb), -EINVAL);
	assert_int_equal(tier_sb_geometry(1 << 20, 1 << 20, &sb), -EINVAL);
	assert_int_equal(tier_sb_geometry(1 << 20, 0, &sb), 0);
	assert_true(sb.data_bytes >= TIER_DATA_MIN && sb.journal_bytes >= TIER_JOURNAL_MIN);
	assert_true(tier_sb_geometry_ok(&sb, &why));
}

static struct tier_file_id sample_id(void)
{
	struct tier_file_id id;

	memset(&id, 0, sizeof(id));
	id.st_dev = 0x803;
	id.ino = 12345;
	id.fsid = 0xabcdef0123ull;
	id.igen = 77;
	id.flags = TIER_ID_IGEN | TIER_ID_HANDLE;
	id.handle_type = 1;
	id.handle_bytes = 8;
	memcpy(id.handle, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	snprintf(id.path, sizeof(id.path), "/mnt/hdd/data/file one");
	id.path_len = (uint16_t)strlen(id.path);
	return id;
}

static void test_records(void **state)
{
	static uint8_t buf[TIER_REC_MAX];
	struct tier_file_id id = sample_id(), id2;
	uint32_t crcs[9];
	struct tier_rec r, d;
	const char *why;
	bool zero;
	int n;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.type = TIER_REC_FILE;
	r.fid = 4;
	r.generation = 3;
	r.seq = 1001;
	r.id = &id;
	n = tier_rec_encode(&r, NULL, buf, sizeof(buf));
	assert_true(n > 0 && n % TIER_REC_ALIGN == 0);
	memset(&d, 0, sizeof(d));
	d.id = &id2;
	assert_int_equal(tier_rec_decode(buf, (size_t)n, &d, &zero, &why), 0);
	assert_int_equal(d.type, TIER_REC_FILE);
	assert_int_equal(d.fid, 4);
	assert_int_equal(d.seq, 1001);
	assert_int_equal(id2.ino, 12345);
	assert_int_equal(id2.handle_bytes, 8);
	assert_memory_equal(id2.handle, id.handle, 8);
	assert_string_equal(id2.path, id.path);

	/* DATA at an unaligned place: 4000 bytes from 1000 touch 9 sectors. */
	memset(&r, 0, sizeof(r));
	r.type = TIER_REC_DATA;
	r.fid = 4;
	r.generation = 3;
	r.seq = 1002;
	r.file_off = 1 << 20;
	r.len = 4000;
	r.loc = 1000;
	r.ncrc = (uint32_t)tier_sectors(r.loc, r.len);
	assert_int_equal(r.ncrc, 9);
	for (int i = 0; i < 9; i++)
		crcs[i] = 0x11111111u * (uint32_t)i + 5;
	n = tier_rec_encode(&r, crcs, buf, sizeof(buf));
	assert_true(n > 0);
	memset(&d, 0, sizeof(d));
	assert_int_equal(tier_rec_decode(buf, (size_t)n, &d, &zero, &why), 0);
	assert_int_equal(d.ncrc, 9);
	for (uint32_t i = 0; i < 9; i++)
		assert_int_equal(tier_rec_crc(&d, i), crcs[i]);
	assert_int_equal(d.loc, 1000);

	/* Any flipped bit is refused; truncation too; neither reads as zero. */
	for (int i = 0; i < n; i += 3) {
		buf[i] ^= 1;
		assert_int_equal(tier_rec_decode(buf, (size_t)n, &d, &zero, &why), -EINVAL);
		assert_false(zero);
		buf[i] ^= 1;
	}
	assert_int_equal(tier_rec_decode(buf, (size_t)n - 28, &d, &zero, &why), -EINVAL);
	assert_non_null(strstr(why, "past the end"));

	/* Inconsistent records do not encode. */
	r.ncrc = 8;
	assert_int_equal(tier_rec_encode(&r, crcs, buf, sizeof(buf)), -EINVAL);
	r.ncrc = 9;
	assert_int_equal(tier_rec_encode(&r, crcs, buf, 64), -ENOSPC);
	r.type = TIER_REC_PAD;   /* PAD names no file */
	assert_int_equal(tier_rec_encode(&r, crcs, buf, sizeof(buf)), -EINVAL);
	r.type = 42;
	assert_int_equal(tier_rec_encode(&r, crcs, buf, sizeof(buf)), -EINVAL);
	memset(&r, 0, sizeof(r));
	r.type = TIER_REC_FENCE;
	r.fid = 4;
	r.generation = 1;
	r.seq = 1;
	assert_int_equal(tier_rec_encode(&r, NULL, buf, sizeof(buf)), 128);
	r.len = 5;
	assert_int_equal(tier_rec_encode(&r, NULL, buf, sizeof(buf)), -EINVAL);
	/* A FILE record whose path holds a NUL does not encode. */
	memset(&r, 0, sizeof(r));
	r.type = TIER_REC_FILE;
	r.id = &id;
	id.path[3] = '\0';
	assert_int_equal(tier_rec_encode(&r, NULL, buf, sizeof(buf)), -EINVAL);

	/* Zeros read as zeros (the end of a journal never written). */
	memset(buf, 0, 256);
	assert_int_equal(tier_rec_decode(buf, 256, &d, &zero, &why), -EINVAL);
	assert_true(zero);
}

/* ---- journal scans ---- */

struct seen {
	uint64_t seq[64];
	unsigned n;
};

static int collect(void *ctx, const struct tier_rec *rec, uint64_t at)
{
	struct seen *s = ctx;

	(void)at;
	if (s->n < 64)
		s->seq[s->n++] = rec->seq;
	return 0;
}

/* Appends a DATA record of generation gen and sequence seq at *pos. */
static void put_data(uint8_t *j, uint64_t *pos, uint64_t gen, uint64_t seq, uint64_t loc,
		     uint64_t len)
{
	uint32_t crcs[64] = { 0 };
	struct tier_rec r = { .type = TIER_REC_DATA, .fid = 1, .generation = gen, .seq = seq,
			      .file_off = seq * 4096, .len = len, .loc = loc };
	int n;

	r.ncrc = (uint32_t)tier_sectors(loc, len);
	n = tier_rec_encode(&r, crcs, j + *pos, 1 << 16);
	assert_true(n > 0);
	*pos += (uint64_t)n;
}

static void test_scan(void **state)
{
	static uint8_t j[64 << 10];
	struct tier_sb sb = sample_sb();
	struct tier_scan_stats st;
	struct seen s = { 0 };
	uint64_t pos = 0, mark[8];

	(void)state;
	/* Generation 2 left records all over the journal; generation 3 wrote
	 * five over the start of them. */
	for (uint64_t i = 0; i < 40; i++)
		put_data(j, &pos, 2, 500 + i, 0, 4096);
	pos = 0;
	for (uint64_t i = 0; i < 5; i++) {
		mark[i] = pos;
		put_data(j, &pos, 3, 1000 + i, i * 4096, 4096);
	}
	assert_int_equal(tier_journal_scan(j, sizeof(j), &sb, NULL, collect, &s, &st), 0);
	assert_int_equal(st.records, 5);
	assert_int_equal(st.corrupt, 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.seq[4], 1004);
	assert_int_equal(st.end, pos);

	/* Tear the fourth record in its middle: it is corrupt, the fifth (a
	 * later, unacknowledged write that reached the disk first) stays. */
	j[mark[3] + 70] ^= 0xff;
	s.n = 0;
	tier_journal_scan(j, sizeof(j), &sb, NULL, collect, &s, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.corrupt, 1);
	assert_int_equal(s.seq[3], 1004);
	/* Zero it instead: a hole is not corruption. */
	memset(j + mark[3], 0, mark[4] - mark[3]);
	s.n = 0;
	tier_journal_scan(j, sizeof(j), &sb, NULL, collect, &s, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.corrupt, 0);

	/* A record of a newer generation than the superblock's is garbage; a
	 * repeated or decreasing sequence is counted and skipped; a record
	 * outside the data area too. */
	pos = mark[3];
	put_data(j, &pos, 4, 1010, 0, 4096);
	put_data(j, &pos, 3, 1001, 0, 4096);
	put_data(j, &pos, 3, 1020, sb.data_bytes - 100, 4096);
	put_data(j, &pos, 3, 1021, 0, 4096);
	s.n = 0;
	tier_journal_scan(j, sizeof(j), &sb, NULL, collect, &s, &st);
	assert_int_equal(st.corrupt, 1);
	assert_int_equal(st.stale_seq, 1);
	assert_int_equal(st.out_of_area, 1);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.seq[3], 1021);

	/* seq_base: records below it belong to before the reset. */
	sb.seq_base = 1003;
	s.n = 0;
	tier_journal_scan(j, sizeof(j), &sb, NULL, collect, &s, &st);
	assert_int_equal(st.stale_seq, 4);   /* 1000, 1001, 1002 and the repeated 1001 */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.seq[0], 1021);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_sb),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
