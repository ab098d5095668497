/* SPDX-License-Identifier: MIT */
/*
 * tier_recover.h - a home file's durable identity, and recovery: what a
 * starting daemon does with the tier stores a previous one left before it
 * serves anybody (docs/tiers.md, "Recovery").
 */
#ifndef IOSIGD_TIER_RECOVER_H
#define IOSIGD_TIER_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tier_format.h"
#include "tier_store.h"

/* What a FILE record says about the file open at fd: device, inode and
 * generation, filesystem id, a handle (name_to_handle_at) and its path
 * now.  0 or -errno. */
int tier_file_id_of(int fd, struct tier_file_id *ret);

/*
 * Opens the file id names, read-write: through its handle when `handles`
 * (the caller may use open_by_handle_at: CAP_DAC_READ_SEARCH), else
 * through its path; either way only if it is the same inode (device or
 * filesystem id, inode number, generation when known).  The descriptor,
 * or -ENOENT (not found, or another file is there now) / -errno.
 */
int tier_file_open(const struct tier_file_id *id, bool handles);

/* What recovery found and did. */
struct trecover {
	uint64_t records;              /* valid records of the current generations */
	uint64_t corrupt;              /* torn or garbage stretches of the journals */
	uint64_t stale_seq, out_of_area;   /* valid records refused (sequence, place) */
	uint64_t files;                /* home files found */
	uint64_t files_missing;        /* named by records but not found (gone, replaced) */
	uint64_t orphan_records;       /* records of files not found, or with no FILE record */
	uint64_t torn_sectors;         /* data sectors matching no record */
	uint64_t data_rejected_bytes;  /* DATA bytes that did not make it to the data area */
	uint64_t copied_bytes;         /* written home */
	uint64_t max_seq;              /* highest sequence seen (new records go after it) */
};

/* Called with a line to log (a missing file, what was applied). */
typedef void (*trecover_note_fn)(void *ctx, const char *msg);

/*
 * Recovers the stores st[n] (their current generations): scans the
 * journals, finds the home files, plans (tier_plan.c), copies the planned
 * bytes home and fsyncs every file written.  The stores are not reset:
 * the caller does that once this returned 0.  -errno with a message in err
 * when the data could not be applied (a home file that cannot be written):
 * the stores must then be kept.
 */
int trecover_run(struct tstore **st, unsigned n, bool handles, trecover_note_fn note, void *ctx,
		 struct trecover *ret, char *err, size_t errlen);

#endif /* IOSIGD_TIER_RECOVER_H */
