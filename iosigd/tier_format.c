/* SPDX-License-Identifier: MIT */
/*
 * tier_format.c - encoding and decoding of a tier store's superblock and
 * journal records (layout in tier_format.h and docs/tiers.md).  Pure: no
 * I/O, every length checked against what the buffer holds.
 */
#include <errno.h>
#include <string.h>

#include "tier_format.h"

/* ------------------------------------------------------------------------
 * CRC-32C: slicing-by-8 tables, or the SSE4.2 instruction where the CPU
 * has it (the same polynomial, so stores move between machines).
 * ---------------------------------------------------------------------- */

#define CRC32C_POLY 0x82f63b78u   /* reflected Castagnoli polynomial */

static uint32_t crc_tab[8][256];
static int crc_hw = -1;           /* -1 unknown, 0 tables, 1 instruction */

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
	crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
	crc_hw = 0;
#endif
}

static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		n--;
	}
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= c;   /* little endian: the low word meets the crc */
		c = crc_tab[7][w & 0xff] ^ crc_tab[6][(w >> 8) & 0xff] ^
		    crc_tab[5][(w >> 16) & 0xff] ^ crc_tab[4][(w >> 24) & 0xff] ^
		    crc_tab[3][(w >> 32) & 0xff] ^ crc_tab[2][(w >> 40) & 0xff] ^
		    crc_tab[1][(w >> 48) & 0xff] ^ crc_tab[0][w >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw_run(uint32_t c, const uint8_t *p,
							      size_t n)
{
	uint64_t c64;

	while (n && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi(c, *p++);
		n--;
	}
	c64 = c;
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c64 = __builtin_ia32_crc32di(c64, w);
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t tier_crc32c(uint32_t crc, const void *buf, size_t len)
{
	/* The engine is one thread; the tests and the fuzzer call this from
	 * one thread too, so a plain lazy initialisation is enough. */
	if (crc_hw < 0)
		crc_init();
	crc = ~crc;
#if defined(__x86_64__)
	if (crc_hw)
		return ~crc_hw_run(crc, buf, len);
#endif
	return ~crc_sw(crc, buf, len);
}

/* ------------------------------------------------------------------------
 * little-endian fields
 * ---------------------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* ------------------------------------------------------------------------
 * superblock
 *
 *   0  magic[8]   8 format   12 bytes used (TIER_SB_BYTES)   16 uuid[16]
 *  32  generation 40 seq_base 48 store_bytes 56 journal_off 64 journal_bytes
 *  72  data_off   80 data_bytes 88 flags (u32) 92 reserved (u32)
 *  96  created_ns 104 name[64]  168..251 zero  252 crc32c of [0, 252)
 * ---------------------------------------------------------------------- */

void tier_sb_encode(const struct tier_sb *sb, void *slot)
{
	uint8_t *p = slot;

	memset(p, 0, TIER_SB_SLOT);
	memcpy(p, TIER_SB_MAGIC, 8);
	put32(p + 8, sb->format);
	put32(p + 12, TIER_SB_BYTES);
	memcpy(p + 16, sb->uuid, 16);
	put64(p + 32, sb->generation);
	put64(p + 40, sb->seq_base);
	put64(p + 48, sb->store_bytes);
	put64(p + 56, sb->journal_off);
	put64(p + 64, sb->journal_bytes);
	put64(p + 72, sb->data_off);
	put64(p + 80, sb->data_bytes);
	put32(p + 88, sb->flags);
	put64(p + 96, sb->created_ns);
	memcpy(p + 104, sb->name, strnlen(sb->name, TIER_NAME_MAX - 1));
	put32(p + TIER_SB_BYTES - 4, tier_crc32c(0, p, TIER_SB_BYTES - 4));
}

static bool aligned(uint64_t v)
{
	return v % TIER_ALIGN == 0;
}

bool tier_sb_geometry_ok(const struct tier_sb *sb, const char **ret_why)
{
	const char *why = NULL;

	if (sb->journal_off < TIER_HEAD_BYTES || !aligned(sb->journal_off) ||
	    !aligned(sb->journal_bytes) || sb->journal_bytes < TIER_JOURNAL_MIN)
		why = "the journal is misplaced or too small";
	else if (!aligned(sb->data_off) || !aligned(sb->data_bytes) || sb->data_bytes < TIER_DATA_MIN)
		why = "the data area is misplaced or too small";
	else if (sb->journal_bytes > UINT64_MAX - sb->journal_off ||
		 sb->journal_off + sb->journal_bytes > sb->data_off)
		why = "the journal overlaps the data area";
	else if (sb->data_bytes > UINT64_MAX - sb->data_off ||
		 sb->data_off + sb->data_bytes > sb->store_bytes)
		why = "the data area ends after the store";
	if (why && ret_why)
		*ret_why = why;
	return !why;
}

enum tier_sb_verdict tier_sb_decode(const void *slot, struct tier_sb *ret, uint32_t *ret_format,
				    const char **ret_why)
{
	const uint8_t *p = slot;
	struct tier_sb sb;
	const char *why = NULL;

	if (memcmp(p, TIER_SB_MAGIC, 8)) {
		*ret_why = "no tier store superblock (magic " TIER_SB_MAGIC ")";
		return TIER_SB_FOREIGN;
	}
	sb.format = get32(p + 8);
	if (sb.format > TIER_FORMAT) {
		if (ret_format)
			*ret_format = sb.format;
		*ret_why = "written by a newer iosigd (a newer store format)";
		return TIER_SB_NEWER;
	}
	if (sb.format < 1 || get32(p + 12) != TIER_SB_BYTES || get32(p + 92) ||
	    !all_zero(p + 168, TIER_SB_BYTES - 4 - 168)) {
		*ret_why = "superblock fields out of range";
		return TIER_SB_CORRUPT;
	}
	if (get32(p + TIER_SB_BYTES - 4) != tier_crc32c(0, p, TIER_SB_BYTES - 4)) {
		*ret_why = "superblock checksum mismatch";
		return TIER_SB_CORRUPT;
	}
	memcpy(sb.uuid, p + 16, 16);
	sb.generation = get64(p + 32);
	sb.seq_base = get64(p + 40);
	sb.store_bytes = get64(p + 48);
	sb.journal_off = get64(p + 56);
	sb.journal_bytes = get64(p + 64);
	sb.data_off = get64(p + 72);
	sb.data_bytes = get64(p + 80);
	sb.flags = get32(p + 88);
	sb.created_ns = get64(p + 96);
	memcpy(sb.name, p + 104, TIER_NAME_MAX);
	if (sb.name[TIER_NAME_MAX - 1])
		why = "superblock name not terminated";
	else if (!sb.generation)
		why = "superblock generation 0";
	if (why || !tier_sb_geometry_ok(&sb, &why)) {
		*ret_why = why;
		return TIER_SB_CORRUPT;
	}
	*ret = sb;
	return TIER_SB_OK;
}

int tier_sb_geometry(uint64_t bytes, uint64_t journal_bytes, struct tier_sb *ret)
{
	uint64_t j = journal_bytes, rest;

	bytes -= bytes % TIER_ALIGN;
	if (bytes < TIER_HEAD_BYTES + TIER_JOURNAL_MIN + TIER_DATA_MIN)
		return -EINVAL;
	if (!j) {
		j = bytes / 16;
		if (j < (1u << 20))
			j = 1u << 20;
		if (j > (1ull << 30))
			j = 1ull << 30;
	}
	j -= j % TIER_ALIGN;
	if (j < TIER_JOURNAL_MIN)
		j = TIER_JOURNAL_MIN;
	rest = bytes - TIER_HEAD_BYTES;
	/* A journal that would leave no data area takes at most half. */
	if (j > rest - TIER_DATA_MIN) {
		if (journal_bytes)
			return -EINVAL;
		j = rest / 2 - (rest / 2) % TIER_ALIGN;
	}
	ret->store_bytes = bytes;
	ret->journal_off = TIER_HEAD_BYTES;
	ret->journal_bytes = j;
	ret->data_off = TIER_HEAD_BYTES + j;
	ret->data_bytes = bytes - ret->data_off;
	return 0;
}

/* ------------------------------------------------------------------------
 * records
 *
 *   0 magic  4 type (u16)  6 flags (u16, 0)  8 length  12 fid
 *  16 generation  24 seq  32 file_off  40 len  48 loc  56 ncrc  60 body bytes
 *  64 body: ncrc u32 checksums, or the FILE identity
 *   ... zero padding ... length-4: crc32c of [0, length-4)
 *
 * FILE identity: 0 st_dev 8 ino 16 fsid 24 igen 28 flags 32 handle_type
 * 36 handle_bytes 40 handle[128] 168 path_len (u16) 170 path[path_len]
 * ---------------------------------------------------------------------- */

#define ID_FIXED 170u

static uint32_t round_up(uint64_t v)
{
	return (uint32_t)((v + TIER_REC_ALIGN - 1) / TIER_REC_ALIGN * TIER_REC_ALIGN);
}

static uint64_t body_bytes(unsigned type, uint32_t ncrc, uint32_t path_len)
{
	if (type == TIER_REC_FILE)
		return ID_FIXED + (uint64_t)path_len;
	if (type == TIER_REC_FENCE || type == TIER_REC_HOME)
		return 0;
	return 4ull * ncrc;
}

uint32_t tier_rec_size(unsigned type, uint32_t ncrc, const struct tier_file_id *id)
{
	uint64_t b = body_bytes(type, ncrc, id ? id->path_len : 0);
	uint64_t n = (uint64_t)TIER_REC_HDR + b + 4;

	return n > TIER_REC_MAX ? 0 : round_up(n);
}

/* Whether r's fields fit its type (shared by encode and decode). */
static const char *rec_check(const struct tier_rec *r)
{
	switch (r->type) {
	case TIER_REC_FILE:
	case TIER_REC_FENCE:
		if (r->file_off || r->len || r->loc || r->ncrc)
			return "range fields set on a FILE or FENCE record";
		return NULL;
	case TIER_REC_DATA:
	case TIER_REC_FILL:
	case TIER_REC_PAD:
		if (!r->len || r->len > TIER_LEN_MAX)
			return "length 0 or beyond the limit";
		if (r->loc > UINT64_MAX - r->len || r->ncrc != tier_sectors(r->loc, r->len))
			return "sector count does not match the data range";
		if (r->type == TIER_REC_PAD && (r->fid || r->file_off))
			return "PAD record names a file";
		if (r->type != TIER_REC_PAD && r->file_off > UINT64_MAX - r->len)
			return "file range wraps";
		return NULL;
	case TIER_REC_HOME:
		if (!r->len || r->loc || r->ncrc || r->file_off > UINT64_MAX - r->len)
			return "HOME record with a bad range, a data location or checksums";
		return NULL;
	default:
		return "unknown record type";
	}
}

int tier_rec_encode(struct tier_rec *r, const uint32_t *crcs, void *buf, size_t cap)
{
	const struct tier_file_id *id = r->id;
	uint32_t size;
	uint8_t *p = buf, *b;

	if (rec_check(r))
		return -EINVAL;
	if (r->type == TIER_REC_FILE &&
	    (!id || id->handle_bytes > TIER_HANDLE_MAX || id->path_len > TIER_PATH_MAX ||
	     memchr(id->path, '\0', id->path_len)))
		return -EINVAL;
	size = tier_rec_size(r->type, r->ncrc, id);
	if (!size)
		return -EINVAL;
	if (cap < size)
		return -ENOSPC;
	memset(p, 0, size);
	put32(p, TIER_REC_MAGIC);
	put16(p + 4, r->type);
	put32(p + 8, size);
	put32(p + 12, r->fid);
	put64(p + 16, r->generation);
	put64(p + 24, r->seq);
	put64(p + 32, r->file_off);
	put64(p + 40, r->len);
	put64(p + 48, r->loc);
	put32(p + 56, r->ncrc);
	put32(p + 60, (uint32_t)body_bytes(r->type, r->ncrc, id ? id->path_len : 0));
	b = p + TIER_REC_HDR;
	if (r->type == TIER_REC_FILE) {
		put64(b, id->st_dev);
		put64(b + 8, id->ino);
		put64(b + 16, id->fsid);
		put32(b + 24, id->igen);
		put32(b + 28, id->flags);
		put32(b + 32, (uint32_t)id->handle_type);
		put32(b + 36, id->handle_bytes);
		memcpy(b + 40, id->handle, id->handle_bytes);
		put16(b + 168, id->path_len);
		memcpy(b + ID_FIXED, id->path, id->path_len);
	} else {
		for (uint32_t i = 0; i < r->ncrc; i++)
			put32(b + 4 * (size_t)i, crcs[i]);
	}
	put32(p + size - 4, tier_crc32c(0, p, size - 4));
	r->length = size;
	return (int)size;
}

static int bad(const char **ret_why, const char *why)
{
	*ret_why = why;
	return -EINVAL;
}

int tier_rec_decode(const void *buf, size_t avail, struct tier_rec *ret, bool *ret_zero,
		    const char **ret_why)
{
	const uint8_t *p = buf, *b;
	struct tier_rec r;
	uint32_t body;
	const char *why;

	*ret_zero = false;
	if (avail < TIER_REC_HDR + 4) {
		*ret_zero = all_zero(p, avail);
		return bad(ret_why, "too short for a record");
	}
	if (get32(p) != TIER_REC_MAGIC) {
		*ret_zero = all_zero(p, TIER_REC_ALIGN);
		return bad(ret_why, "no record magic");
	}
	memset(&r, 0, sizeof(r));
	r.id = ret->id;
	r.type = get16(p + 4);
	r.length = get32(p + 8);
	if (get16(p + 6))
		return bad(ret_why, "unknown record flags");
	if (r.length < TIER_REC_HDR + 4 || r.length > TIER_REC_MAX || r.length % TIER_REC_ALIGN)
		return bad(ret_why, "record length out of range");
	if (r.length > avail)
		return bad(ret_why, "record runs past the end of the journal");
	if (get32(p + r.length - 4) != tier_crc32c(0, p, r.length - 4))
		return bad(ret_why, "record checksum mismatch");
	r.fid = get32(p + 12);
	r.generation = get64(p + 16);
	r.seq = get64(p + 24);
	r.file_off = get64(p + 32);
	r.len = get64(p + 40);
	r.loc = get64(p + 48);
	r.ncrc = get32(p + 56);
	body = get32(p + 60);
	why = rec_check(&r);
	if (why)
		return bad(ret_why, why);
	b = p + TIER_REC_HDR;
	if (r.type == TIER_REC_FILE) {
		uint32_t hb, pl;

		if (body < ID_FIXED || body > r.length - TIER_REC_HDR - 4)
			return bad(ret_why, "FILE record body out of range");
		hb = get32(b + 36);
		pl = get16(b + 168);
		if (hb > TIER_HANDLE_MAX || pl > TIER_PATH_MAX || body != ID_FIXED + pl)
			return bad(ret_why, "FILE record handle or path length out of range");
		if (memchr(b + ID_FIXED, '\0', pl))
			return bad(ret_why, "FILE record path holds a NUL byte");
		if (!all_zero(b + 40 + hb, TIER_HANDLE_MAX - hb))
			return bad(ret_why, "FILE record handle padding not zero");
		if (r.id) {
			struct tier_file_id *id = r.id;

			id->st_dev = get64(b);
			id->ino = get64(b + 8);
			id->fsid = get64(b + 16);
			id->igen = get32(b + 24);
			id->flags = get32(b + 28);
			id->handle_type = (int32_t)get32(b + 32);
			id->handle_bytes = hb;
			memset(id->handle, 0, sizeof(id->handle));
			memcpy(id->handle, b + 40, hb);
			id->path_len = (uint16_t)pl;
			memcpy(id->path, b + ID_FIXED, pl);
			id->path[pl] = '\0';
		}
	} else if (body != body_bytes(r.type, r.ncrc, 0) ||
		   (uint64_t)TIER_REC_HDR + body + 4 > r.length) {
		return bad(ret_why, "record body does not match its checksum count");
	}
	/* Nothing unchecked may hide in a record: its padding is zero, and it
	 * is exactly as long as its body needs. */
	if (!all_zero(b + body, r.length - TIER_REC_HDR - 4 - body) ||
	    r.length != round_up((uint64_t)TIER_REC_HDR + body + 4))
		return bad(ret_why, "record padding not zero or record longer than its body");
	r.crcs = b;
	*ret = r;
	return 0;
}

/* ------------------------------------------------------------------------
 * journal scan
 * ---------------------------------------------------------------------- */

/* Whether a valid record's data range lies inside the data area. */
static bool in_area(const struct tier_rec *r, const struct tier_sb *sb)
{
	if (r->type != TIER_REC_DATA && r->type != TIER_REC_FILL && r->type != TIER_REC_PAD)
		return true;
	return r->loc <= sb->data_bytes && r->len <= sb->data_bytes - r->loc;
}

int tier_journal_scan(const void *journal, uint64_t bytes, const struct tier_sb *sb,
		      struct tier_file_id *id, tier_scan_fn fn, void *ctx,
		      struct tier_scan_stats *ret_stats)
{
	const uint8_t *j = journal;
	struct tier_scan_stats st = { 0 };
	uint64_t pos = 0, last_seq = 0;
	bool have_seq = false, in_bad = false;
	int r = 0;

	bytes -= bytes % TIER_REC_ALIGN;
	while (pos < bytes) {
		struct tier_rec rec = { .id = id };
		const char *why;
		bool zero;

		if (tier_rec_decode(j + pos, (size_t)(bytes - pos), &rec, &zero, &why) == 0 &&
		    rec.generation <= sb->generation) {
			in_bad = false;
			if (rec.generation < sb->generation) {
				pos += rec.length;   /* from before the last reset */
				continue;
			}
			if (rec.seq < sb->seq_base || (have_seq && rec.seq <= last_seq)) {
				st.stale_seq++;
			} else if (!in_area(&rec, sb)) {
				st.out_of_area++;
			} else {
				last_seq = rec.seq;
				have_seq = true;
				st.records++;
				st.end = pos + rec.length;
				if (fn) {
					r = fn(ctx, &rec, pos);
					if (r)
						break;
				}
			}
			pos += rec.length;
			continue;
		}
		/* Not a record here: skip one alignment unit. */
		if (!zero && !in_bad) {
			st.corrupt++;
			in_bad = true;
		} else if (zero) {
			in_bad = false;
		}
		pos += TIER_REC_ALIGN;
	}
	if (ret_stats)
		*ret_stats = st;
	return r;
}
