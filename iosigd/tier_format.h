/* SPDX-License-Identifier: MIT */
/*
 * tier_format.h - the on-disk format of a tier store (docs/tiers.md): a
 * self-describing file (or block device) holding data that lives outside
 * its home file for a while, and the journal that says whose data it is.
 *
 *   offset 0        superblock slot 0 (4 KiB)
 *   offset 4096     superblock slot 1 (4 KiB): the valid slot with the
 *                   higher generation is the superblock; a reset writes
 *                   the other slot, so a torn superblock write loses
 *                   nothing
 *   journal_off     journal: records appended one after the other
 *   data_off        data area: payload at the places the policy chose
 *
 * Every record ends with the CRC-32C of all its bytes.  A record describing
 * bytes of the data area (DATA, FILL, PAD) carries, for every 512-byte
 * sector of the data area it touches, the CRC-32C of that whole sector as
 * it is once the record's bytes are in it.  Recovery (tier_plan.c) takes a
 * sector as the newest record whose checksum matches it, so a torn or
 * reordered payload write falls back to the sector's previous state and a
 * write in place never invalidates the older bytes it did not touch.  A
 * HOME record says a range of the home file holds newer data than every
 * earlier record, and is written only once those home bytes are durable
 * (fsync), so recovery believes it as it is.
 *
 * Everything here is pure: buffers in, structures out, no I/O, so the
 * parser can be fuzzed (tests/fuzz/fuzz_tier_record.c).  Integers are
 * little endian on disk.
 */
#ifndef IOSIGD_TIER_FORMAT_H
#define IOSIGD_TIER_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIER_FORMAT 1                  /* format of stores this code writes */
#define TIER_SB_MAGIC "IOSIG-TS"       /* 8 bytes at offset 0 of each slot */
#define TIER_SB_SLOT 4096u             /* bytes per superblock slot */
#define TIER_SB_BYTES 256u             /* bytes of a slot the format uses */
#define TIER_HEAD_BYTES (2 * TIER_SB_SLOT)   /* both slots */
#define TIER_SECTOR 512u               /* checksum unit of data and home bytes */
#define TIER_ALIGN 4096u               /* journal and data area alignment */
#define TIER_REC_ALIGN 64u             /* records start and end on this */
#define TIER_REC_HDR 64u               /* fixed record header */
#define TIER_REC_MAGIC 0x52534f49u     /* "IOSR" little endian */
#define TIER_REC_MAX (1u << 20)        /* largest record (bytes) */
#define TIER_LEN_MAX (64ull << 20)     /* largest range one record describes */
#define TIER_HANDLE_MAX 128u           /* MAX_HANDLE_SZ */
#define TIER_PATH_MAX 4095u            /* path hint bytes */
#define TIER_NAME_MAX 64u              /* tier name, NUL included */
#define TIER_JOURNAL_MIN (64u << 10)
#define TIER_DATA_MIN TIER_ALIGN

/* ---- CRC-32C (Castagnoli), as iSCSI, ext4 and btrfs use it ---- */

/* crc of len bytes continuing from crc (start with 0). */
uint32_t tier_crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- superblock ---- */

enum tier_sb_flag {
	TIER_SB_VOLATILE = 1u << 0,    /* the store is on memory (tmpfs): lost at reboot */
	TIER_SB_BLOCKDEV = 1u << 1,    /* the store is a raw block device */
};

struct tier_sb {
	uint32_t format;               /* TIER_FORMAT when written by this code */
	uint8_t uuid[16];              /* random at creation, never changes */
	uint64_t generation;           /* bumped at every reset; records carry it */
	uint64_t seq_base;             /* records of this generation have seq >= this */
	uint64_t store_bytes;          /* bytes the geometry covers */
	uint64_t journal_off, journal_bytes;
	uint64_t data_off, data_bytes;
	uint32_t flags;                /* enum tier_sb_flag */
	uint64_t created_ns;           /* CLOCK_REALTIME at creation */
	char name[TIER_NAME_MAX];      /* the tier's name in the configuration */
};

/* Why a superblock slot is refused (TIER_SB_OK when it is not). */
enum tier_sb_verdict {
	TIER_SB_OK = 0,
	TIER_SB_FOREIGN,               /* no magic: not a tier store (or never written) */
	TIER_SB_NEWER,                 /* magic, but a format this code does not know */
	TIER_SB_CORRUPT,               /* magic and format, but checksum or fields wrong */
};

/* Writes sb into slot[TIER_SB_SLOT] (the unused rest zeroed). */
void tier_sb_encode(const struct tier_sb *sb, void *slot);
/*
 * Reads one slot.  TIER_SB_OK fills *ret; otherwise *ret is untouched and
 * *ret_why says what is wrong (static text).  For TIER_SB_NEWER *ret_format
 * is the format found.
 */
enum tier_sb_verdict tier_sb_decode(const void *slot, struct tier_sb *ret, uint32_t *ret_format,
				    const char **ret_why);
/* Geometry for a store of `bytes` with a journal of about journal_bytes
 * (0 = the default: 1/16 of the store, at least 1 MiB, at most 1 GiB).
 * 0, or -EINVAL when the store is too small (*ret untouched). */
int tier_sb_geometry(uint64_t bytes, uint64_t journal_bytes, struct tier_sb *ret);
/* Whether the geometry of sb is sound (regions aligned, inside the store,
 * apart); a reason in *ret_why when not. */
bool tier_sb_geometry_ok(const struct tier_sb *sb, const char **ret_why);

/* ---- records ---- */

enum tier_rec_type {
	TIER_REC_FILE = 1,    /* fid -> the identity of a home file */
	TIER_REC_DATA = 2,    /* [file_off, +len) of fid is at loc in the data area: apply it */
	TIER_REC_FILL = 3,    /* the same, a clean copy (home holds it): never applied */
	TIER_REC_PAD = 4,     /* padding bytes at loc: no file */
	TIER_REC_HOME = 5,    /* [file_off, +len) of fid is newer and durable at home */
	TIER_REC_FENCE = 6,   /* every earlier record of fid is obsolete (home durable) */
	TIER_REC_TYPE_MAX = 6,
};

enum tier_id_flag {
	TIER_ID_IGEN = 1u << 0,      /* igen is the inode generation (FS_IOC_GETVERSION) */
	TIER_ID_HANDLE = 1u << 1,    /* handle_* is a name_to_handle_at() handle */
};

/* A home file's durable identity: what recovery uses to find it again. */
struct tier_file_id {
	uint64_t st_dev;               /* device of the filesystem when logged */
	uint64_t ino;
	uint64_t fsid;                 /* statfs f_fsid (both words) */
	uint32_t igen;                 /* inode generation, TIER_ID_IGEN */
	uint32_t flags;                /* enum tier_id_flag */
	int32_t handle_type;
	uint32_t handle_bytes;         /* <= TIER_HANDLE_MAX */
	uint8_t handle[TIER_HANDLE_MAX];
	uint16_t path_len;             /* <= TIER_PATH_MAX */
	char path[TIER_PATH_MAX + 1];  /* the path when logged (a hint, verified), NUL-terminated */
};

/* One record, decoded (or to encode). */
struct tier_rec {
	uint16_t type;                 /* enum tier_rec_type */
	uint32_t length;               /* bytes on disk (decode: set; encode: computed) */
	uint32_t fid;                  /* FILE, DATA, FILL, HOME, FENCE */
	uint64_t generation;
	uint64_t seq;
	uint64_t file_off;             /* DATA, FILL, HOME */
	uint64_t len;                  /* DATA, FILL, PAD, HOME */
	uint64_t loc;                  /* DATA, FILL, PAD: offset in the data area */
	uint32_t ncrc;                 /* DATA, FILL, PAD: data-area sectors touched */
	const uint8_t *crcs;           /* decode: ncrc little-endian u32 inside the buffer */
	struct tier_file_id *id;       /* FILE: decode fills it if not NULL; encode reads it */
};

/* Number of TIER_SECTOR sectors [off, off + len) touches (len > 0). */
static inline uint64_t tier_sectors(uint64_t off, uint64_t len)
{
	return (off + len + TIER_SECTOR - 1) / TIER_SECTOR - off / TIER_SECTOR;
}

/* The i-th sector checksum of a decoded record. */
static inline uint32_t tier_rec_crc(const struct tier_rec *r, uint32_t i)
{
	const uint8_t *p = r->crcs + 4 * (size_t)i;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bytes a record of this type with ncrc checksums (and, for FILE, the
 * identity id) takes on disk; 0 if it would exceed TIER_REC_MAX. */
uint32_t tier_rec_size(unsigned type, uint32_t ncrc, const struct tier_file_id *id);
/*
 * Encodes r (with crcs[r->ncrc] for DATA/FILL/PAD, r->id for FILE)
 * into buf[cap]; sets r->length.  Returns the bytes written, or -EINVAL
 * (inconsistent record) / -ENOSPC (cap too small).
 */
int tier_rec_encode(struct tier_rec *r, const uint32_t *crcs, void *buf, size_t cap);
/*
 * Decodes the record at buf (avail bytes readable).  0: *ret filled
 * (ret->crcs points into buf; ret->id, if set by the caller, receives a
 * FILE identity).  -EINVAL: not a valid record, reason in *ret_why (static
 * text); *ret_zero tells whether the bytes looked at were all zero (the
 * end of a journal that was never written that far).
 */
int tier_rec_decode(const void *buf, size_t avail, struct tier_rec *ret, bool *ret_zero,
		    const char **ret_why);

/* ---- journal scan ---- */

/* What a scan found. */
struct tier_scan_stats {
	uint64_t records;              /* valid records of this generation, in order */
	uint64_t corrupt;              /* stretches that are not records (torn, garbage) */
	uint64_t stale_seq;            /* valid records whose sequence did not increase */
	uint64_t out_of_area;          /* valid records pointing outside the data area */
	uint64_t end;                  /* byte after the last valid record */
};

/* Called for each valid record of the current generation, in journal
 * order; a non-zero return stops the scan and is returned. */
typedef int (*tier_scan_fn)(void *ctx, const struct tier_rec *rec, uint64_t at);

/*
 * Walks journal[bytes] (the journal area of the store sb describes).  A
 * record must decode, belong to sb's generation, carry a sequence above
 * the previous one and sb->seq_base, and lie inside the data area;
 * anything else is skipped 64 bytes at a time and counted, up to the end
 * of the area: zeros and records of older generations end nothing but are
 * not counted (a journal is never cleared, only restarted).  id, if not
 * NULL, is filled for FILE records before fn sees them.
 */
int tier_journal_scan(const void *journal, uint64_t bytes, const struct tier_sb *sb,
		      struct tier_file_id *id, tier_scan_fn fn, void *ctx,
		      struct tier_scan_stats *ret_stats);

#endif /* IOSIGD_TIER_FORMAT_H */
