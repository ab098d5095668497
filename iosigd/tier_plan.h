/* SPDX-License-Identifier: MIT */
/*
 * tier_plan.h - what recovery copies home: from the valid records of one
 * or more tier stores and what the data areas and the home files hold now,
 * for every home file the ranges whose newest acknowledged data is in a
 * store, and where (docs/tiers.md, "Recovery").
 *
 * Rules, per 512-byte sector of a data area: its state is the newest
 * record (DATA, FILL or PAD) whose checksum for the sector matches what the
 * sector holds; a record's bytes there are valid when no record between it
 * and that state wrote them.  A sector no record matches is torn: none of
 * its bytes count.  Per home file, in sequence order: valid DATA bytes map
 * their range to the store; a HOME record unmaps its range (its bytes were
 * durable at home before it was written); a FENCE unmaps all.  Whatever
 * stays mapped is copied.
 *
 * Pure: the data areas' contents come through a callback, so the rules are
 * tested without files (test_tier_plan.c).
 */
#ifndef IOSIGD_TIER_PLAN_H
#define IOSIGD_TIER_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* One record as recovery hands it to the planner. */
struct tplan_rec {
	uint64_t seq;
	uint64_t file_off, len, loc;
	const uint8_t *crcs;     /* ncrc little-endian u32 (in the mapped journal) */
	uint32_t ncrc;
	int file;                /* home file index, -1 = none (PAD) */
	uint16_t type;           /* enum tier_rec_type: DATA, FILL, PAD, HOME, FENCE */
	uint16_t store;
};

struct tplan_ops {
	/* CRC-32C of the 512-byte sector `sector` of store's data area. */
	int (*sector_crc)(void *ctx, unsigned store, uint64_t sector, uint32_t *ret_crc);
};

/* A range to copy: [file_off, + len) of a home file from loc of a store. */
struct tplan_piece {
	uint64_t file_off, len, loc;
	unsigned store;
};

struct tplan {
	unsigned nfiles;
	struct tplan_piece **pieces;   /* per file, by file offset */
	size_t *npieces;
	/* what the planner found */
	uint64_t sectors;              /* data-area sectors records touched */
	uint64_t torn_sectors;         /* matching no record */
	uint64_t data_records;         /* DATA records */
	uint64_t data_rejected_bytes;  /* DATA bytes whose sector holds an older state
	                                  or garbage (writes that did not make it) */
	uint64_t homes, fences;
	uint64_t copy_bytes;           /* to copy home */
};

/*
 * Plans recovery from recs[n] (any order; sorted here by sequence), with
 * nfiles home files.  0 with *ret filled, -ENOMEM, or the first error of a
 * callback (nothing planned then).
 */
int tplan_build(struct tplan_rec *recs, size_t n, unsigned nfiles, const struct tplan_ops *ops,
		void *ctx, struct tplan *ret);
void tplan_free(struct tplan *p);

#endif /* IOSIGD_TIER_PLAN_H */
