/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tier_record - a tier store's bytes as a crash, a bad disk or an
 * attacker with the store file could leave them (iosigd/tier_format.c):
 *   first byte 0..63:    the rest is one record; a record that decodes must
 *                        encode back to exactly its bytes;
 *   first byte 64..127:  the rest is a superblock slot (zero-padded);
 *   first byte 128..:    the rest is a journal, scanned as recovery scans
 *                        it; every record handed out must be of the
 *                        superblock's generation, in increasing sequence,
 *                        and inside the data area, and the scan must end.
 * Any input gives records or reasons, never a crash or a read out of
 * bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tier_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_record(const uint8_t *p, size_t n)
{
	static uint8_t again[TIER_REC_MAX];
	static uint32_t crcs[TIER_REC_MAX / 4];
	static struct tier_file_id id;
	struct tier_rec r = { .id = &id };
	const char *why = NULL;
	bool zero;

	if (tier_rec_decode(p, n, &r, &zero, &why) < 0) {
		if (!why || !*why)
			abort();
		return;
	}
	if (r.length > n || r.length % TIER_REC_ALIGN)
		abort();
	for (uint32_t i = 0; i < r.ncrc && r.type != TIER_REC_FILE && r.type != TIER_REC_FENCE; i++)
		crcs[i] = tier_rec_crc(&r, i);
	if (r.type != TIER_REC_FILE)
		r.id = NULL;
	if (tier_rec_encode(&r, crcs, again, sizeof(again)) != (int)r.length ||
	    memcmp(again, p, r.length))
		abort();
}

static void one_slot(const uint8_t *p, size_t n)
{
	static uint8_t slot[TIER_SB_SLOT];
	struct tier_sb sb;
	const char *why = NULL;
	uint32_t fmt = 0;

	memset(slot, 0, sizeof(slot));
	memcpy(slot, p, n < sizeof(slot) ? n : sizeof(slot));
	if (tier_sb_decode(slot, &sb, &fmt, &why) != TIER_SB_OK) {
		if (!why)
			abort();
		return;
	}
	if (!tier_sb_geometry_ok(&sb, &why) || sb.format > TIER_FORMAT || !sb.generation)
		abort();
}

struct scan_state {
	const struct tier_sb *sb;
	uint64_t last, at;
	bool any;
};

static int check(void *ctx, const struct tier_rec *r, uint64_t at)
{
	struct scan_state *s = ctx;

	if (r->generation != s->sb->generation || r->seq < s->sb->seq_base ||
	    (s->any && r->seq <= s->last) || (s->any && at < s->at))
		abort();
	if ((r->type == TIER_REC_DATA || r->type == TIER_REC_FILL || r->type == TIER_REC_PAD) &&
	    (r->loc > s->sb->data_bytes || r->len > s->sb->data_bytes - r->loc))
		abort();
	s->any = true;
	s->last = r->seq;
	s->at = at + r->length;
	return 0;
}

static void one_journal(const uint8_t *p, size_t n)
{
	static struct tier_file_id id;
	struct tier_sb sb;
	struct tier_scan_stats st;
	struct scan_state s = { .sb = &sb };

	memset(&sb, 0, sizeof(sb));
	if (tier_sb_geometry(1ull << 30, 0, &sb) < 0)
		abort();
	sb.format = TIER_FORMAT;
	sb.generation = 2;
	sb.seq_base = 10;
	tier_journal_scan(p, n, &sb, &id, check, &s, &st);
	if (st.end > n)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > TIER_REC_MAX + 1)
		return 0;
	if (data[0] < 64)
		one_record(data + 1, size - 1);
	else if (data[0] < 128)
		one_slot(data + 1, size - 1);
	else
		one_journal(data + 1, size - 1);
	return 0;
}
