/* SPDX-License-Identifier: MIT */
/*
 * tier_store.h - one tier store on disk (docs/tiers.md): a preallocated
 * file on the tier's mount, or a raw block device, in the format of
 * tier_format.h.  Opening never overwrites what it does not recognise as
 * its own: a foreign file, a store of a newer format, a damaged or a
 * truncated one is refused with the path and what to do.
 */
#ifndef IOSIGD_TIER_STORE_H
#define IOSIGD_TIER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tier_format.h"

/* What the configuration asks for. */
struct tstore_cfg {
	const char *name;          /* tier name (kept in the superblock) */
	const char *path;          /* store file or block device */
	uint64_t size;             /* bytes of a store file to create (a block device: all of it) */
	uint64_t journal;          /* journal bytes, 0 = the default */
	bool is_volatile;          /* on memory: lost at reboot (tmpfs) */
	bool mkdir_parent;         /* create the missing parent directory (0700) */
};

struct tstore {
	char *path;
	char *name;
	int fd;
	bool blockdev;
	bool created;              /* made by this open (nothing to recover) */
	dev_t st_dev;              /* of the store file (never registered as a home file) */
	ino_t st_ino;
	struct tier_sb sb;
	unsigned slot;             /* superblock slot holding sb */
	uint64_t jhead;            /* next free journal byte (relative) */
	uint64_t jhigh;            /* journal bytes possibly not zero (zeroed at reset) */
	uint64_t dev_bytes;        /* size of the file or device */
	uint8_t *rec;              /* TIER_REC_MAX bytes: the record being written */
	uint32_t *crcs;            /* its checksums */
	/* Every data-area sector this generation's records wrote: its checksum
	 * as written (tstore_read_data() verifies reads against it).  4 bytes
	 * and a bit per 512-byte sector: 0.8 % of the data area in memory. */
	uint32_t *sec_crc;
	uint64_t *sec_known;       /* bitmap: sec_crc holds the sector's checksum */
	uint64_t nsec;
	uint64_t records;          /* records written in this generation */
	uint64_t ordered;          /* ordered data writes (a sync each) */
};

/*
 * Opens (or creates) the store cfg describes.  0 with *ret set, or -errno
 * with a message in err that names the path and what to do; nothing on
 * disk is changed by a refusal.  An existing store is opened as it is
 * (recovery reads it; tstore_reset() starts a new generation).
 */
int tstore_open(const struct tstore_cfg *cfg, struct tstore **ret, char *err, size_t errlen);
void tstore_close(struct tstore *s);

/* Maps the journal read-only (recovery); NULL with -errno in *ret_err. */
const void *tstore_map_journal(struct tstore *s, int *ret_err);
void tstore_unmap_journal(struct tstore *s, const void *map);

/*
 * Starts a new generation: the superblock (in the other slot, made
 * durable) gets generation + 1 and seq_base, then the journal bytes the
 * last generation may have used are zeroed; a new size (a store file
 * whose configured size changed, 0 = keep) is applied first.  Only when
 * every record of the old generation is applied and durable at home.
 * 0 or -errno (err says what failed).
 */
int tstore_reset(struct tstore *s, uint64_t seq_base, uint64_t new_size, uint64_t journal,
		 char *err, size_t errlen);

/* Appends len bytes (a whole encoded record) to the journal: 0, -ENOSPC
 * when it is full, or the write's -errno. */
int tstore_append(struct tstore *s, const void *rec, size_t len);
/* Journal bytes still free. */
static inline uint64_t tstore_journal_free(const struct tstore *s)
{
	return s->sb.journal_bytes - s->jhead;
}

/*
 * Records.  seq is the daemon's sequence number for this record (strictly
 * increasing across every store).  Each returns 0, -ENOSPC when the
 * journal has no room for the record (nothing was written then), or the
 * -errno of a failed write.
 */
/* FILE: fid names the home file id. */
int tstore_log_file(struct tstore *s, uint64_t seq, uint32_t fid, const struct tier_file_id *id);
/*
 * DATA (type TIER_REC_DATA), a clean copy (TIER_REC_FILL) or padding
 * (TIER_REC_PAD, buf NULL: zeros, fid and file_off 0): writes len bytes of
 * buf at loc in the data area and the record with the checksum of every
 * sector touched as it is afterwards (its other bytes read from the
 * store).  The journal room is checked first, so a full journal leaves the
 * data area untouched.
 *
 * The record always goes into the journal before the payload: a daemon
 * killed between the two leaves the touched sectors as they were, which
 * the older records still describe.  Written the other way round, a
 * payload whose record never came would leave a sector shared with
 * another record's acknowledged bytes (a neighbour in the log or the data
 * area, not yet synced but in the page cache, which outlives a kill -9)
 * matching no record, and recovery would drop those bytes.
 *
 * `ordered`: the sectors touched hold bytes a sync may have made durable
 * that must survive this write (an update in place, a neighbour in a
 * shared sector).  The record is then also made durable before the
 * payload is written: after a power loss a payload that reached the disk
 * while its record did not would leave those sectors matching no record.
 */
int tstore_log_data(struct tstore *s, uint64_t seq, uint16_t type, uint32_t fid,
		    uint64_t file_off, const void *buf, uint64_t len, uint64_t loc, bool ordered);
/* HOME: [file_off, + len) of fid's home file holds newer data than every
 * earlier record, durable (the caller fsync'ed the home file after the
 * data got there). */
int tstore_log_home(struct tstore *s, uint64_t seq, uint32_t fid, uint64_t file_off,
		    uint64_t len);
/* FENCE: every earlier record of fid is obsolete. */
int tstore_log_fence(struct tstore *s, uint64_t seq, uint32_t fid);

/* Data area I/O at loc (relative to the data area), whole or -errno. */
int tstore_pwrite(struct tstore *s, const void *buf, size_t len, uint64_t loc);
int tstore_pread(struct tstore *s, void *buf, size_t len, uint64_t loc);
/*
 * tstore_pread() of data this generation's records wrote, verified: every
 * sector it touches that a record of this generation wrote must still have
 * the checksum it was written with, else -EBADMSG.  A store whose device
 * failed a write-back can read back zeros without an error (a page the
 * write-back failed is dropped, and the filesystem's extent is still
 * unwritten); without the check those zeros would go home as data.
 */
int tstore_read_data(struct tstore *s, void *buf, size_t len, uint64_t loc);
/* The file offset of data-area byte loc (for io_uring). */
static inline uint64_t tstore_data_pos(const struct tstore *s, uint64_t loc)
{
	return s->sb.data_off + loc;
}
/* fdatasync (a block device: fsync); 0 or -errno. */
int tstore_sync(struct tstore *s);

#endif /* IOSIGD_TIER_STORE_H */
