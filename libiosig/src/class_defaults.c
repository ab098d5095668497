/* SPDX-License-Identifier: MIT */
/*
 * class_defaults.c - the embedded defaults of each device class, the first
 * and weakest source of the catalog (docs/design.md §5.1).
 *
 * Where the numbers come from (docs/catalog.md has the full discussion):
 *  - Performance: the IOSIG paper's Table 2, measured on the authors' test
 *    machine (Table 1) with dd writing and syncing every chunk (Sect. 7.1,
 *    7.2).  One machine and one method for every class, so that classes
 *    compare fairly with each other under the paper's Eq. 3; they are
 *    pessimistic for buffered I/O (the HDD's 150 ms is a write+sync) and
 *    `iosig probe` replaces them with measurements of the real devices.
 *    The paper writes "MB/s"; IOSIG units are binary (docs/design.md §3), so
 *    430 MB/s is 430 MiB/s here - a decimal reading would scale every class
 *    alike and change no ranking.
 *  - Reliability: the paper's Sect. 7.4 (MTTF 10 years per device, citing
 *    [26]; MTTR one day, citing Greenan [20]; raw BER 1e-6 with an ECC that
 *    corrects 2 bits per 512-bit sector, citing Mielke et al. [33], which
 *    gives UBER ~1e-14 as manufacturers quote).  Field studies (Schroeder and
 *    Gibson, FAST'07; Pinheiro et al., FAST'07) report annual replacement
 *    rates of a few percent, i.e. MTTFs of tens of years: 10 years is the
 *    pessimistic end, kept because it is the paper's.
 *  - Block size: the page size of the paper's machine (Table 1: 4 KB);
 *    discovery replaces it with the filesystem's.
 */
#include "catalog_internal.h"

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * 1024.0 * 1024.0)
#define MS 1e-3
#define DAY 86400.0
#define YEAR (365.0 * DAY)

/* Every class default sets these fields. */
#define ALL_FIELDS                                                                            \
	(CAT_BIT(IOSIG_F_CLASS) | CAT_BIT(IOSIG_F_GLOBAL) | CAT_BIT(IOSIG_F_VOLATILE) |       \
	 CAT_BIT(IOSIG_F_ROTATIONAL) | CAT_BIT(IOSIG_F_LABELS) | CAT_BIT(IOSIG_F_RESERVE) |   \
	 CAT_BIT(IOSIG_F_BLOCK_SIZE) | CAT_BIT(IOSIG_F_MAX_FILESIZE) |                       \
	 CAT_BIT(IOSIG_F_SEQ_READ_BW) | CAT_BIT(IOSIG_F_SEQ_WRITE_BW) |                       \
	 CAT_BIT(IOSIG_F_RAND_READ_BW) | CAT_BIT(IOSIG_F_RAND_WRITE_BW) |                     \
	 CAT_BIT(IOSIG_F_LATENCY) | CAT_BIT(IOSIG_F_SEEK) | CAT_BIT(IOSIG_F_IOPS) |            \
	 CAT_BIT(IOSIG_F_MTTF) | CAT_BIT(IOSIG_F_MTTR) | CAT_BIT(IOSIG_F_BER) |                \
	 CAT_BIT(IOSIG_F_ECC) | CAT_BIT(IOSIG_F_SECTOR_BITS) | CAT_BIT(IOSIG_F_LAYOUT))

/* Reliability and generic values shared by every class (see the file head). */
#define COMMON                                                                                \
	.set = ALL_FIELDS, .labels = 0, .reserve = 0, .reserve_pct = CAT_RESERVE_PCT,        \
	.block_size = 4096, .max_filesize = 0, .rand_read_bw = 0, .rand_write_bw = 0,        \
	.mttf = 10 * YEAR, .mttr = 1 * DAY, .ber = 1e-6, .ecc = 2, .sector_bits = 512

static const struct cat_values defaults[IOSIG_CLASS_COUNT] = {
	/* Table 2 "Ramdisk": 2.3 / 2.4 GB/s, 0.001 ms, no seek, 800.000 IOPS,
	 * local, not persistent. */
	[IOSIG_CLASS_RAM] = {
		COMMON, .cls = IOSIG_CLASS_RAM, .global = false, .volatile_ = true,
		.rotational = false, .seq_read_bw = 2.3 * GiB, .seq_write_bw = 2.4 * GiB,
		.latency = 0.001 * MS, .seek = 0, .iops = 800000,
		.layout = { .kind = IOSIG_LAYOUT_SINGLE, .disks = 1, .tolerated = 0 },
	},
	/* Table 2 "NVRAM" (2 x 16 GB NVDIMM-N, Table 1): 1.7 / 1.7 GB/s,
	 * 0.1 ms, no seek, 9000 IOPS, local, persistent. */
	[IOSIG_CLASS_NVM] = {
		COMMON, .cls = IOSIG_CLASS_NVM, .global = false, .volatile_ = false,
		.rotational = false, .seq_read_bw = 1.7 * GiB, .seq_write_bw = 1.7 * GiB,
		.latency = 0.1 * MS, .seek = 0, .iops = 9000,
		.layout = { .kind = IOSIG_LAYOUT_SINGLE, .disks = 1, .tolerated = 0 },
	},
	/* Table 2 "Raid1 (2 x SSD)" (240 GB SATA SSDs, Table 1): 430 / 415 MB/s,
	 * 0.11 ms, no seek, 6000 IOPS.  A RAID1 writes at one member's speed,
	 * and 430 MB/s is within one SATA 6 Gb/s link (600 MB/s after 8b/10b),
	 * so this is the paper's figure for one SATA SSD.  NVMe drives are
	 * several times faster: run `iosig probe`. */
	[IOSIG_CLASS_SSD] = {
		COMMON, .cls = IOSIG_CLASS_SSD, .global = false, .volatile_ = false,
		.rotational = false, .seq_read_bw = 430 * MiB, .seq_write_bw = 415 * MiB,
		.latency = 0.11 * MS, .seek = 0, .iops = 6000,
		.layout = { .kind = IOSIG_LAYOUT_SINGLE, .disks = 1, .tolerated = 0 },
	},
	/* Table 2 "HDD" (Seagate ST2000LM015, 2 TB, xfs, Table 1): 130 / 125
	 * MB/s, 150 ms operation latency (a synced write), 0.02 s seek, "< 10"
	 * IOPS (10 is the bound). */
	[IOSIG_CLASS_HDD] = {
		COMMON, .cls = IOSIG_CLASS_HDD, .global = false, .volatile_ = false,
		.rotational = true, .seq_read_bw = 130 * MiB, .seq_write_bw = 125 * MiB,
		.latency = 150 * MS, .seek = 0.02, .iops = 10,
		.layout = { .kind = IOSIG_LAYOUT_SINGLE, .disks = 1, .tolerated = 0 },
	},
	/* Table 2 "Raid1 (2 x SSD)" as measured, layout RAID1 of 2.  An md RAID
	 * whose members discovery can classify takes its members' class
	 * defaults instead (catalog.c), keeping class raid and its layout. */
	[IOSIG_CLASS_RAID] = {
		COMMON, .cls = IOSIG_CLASS_RAID, .global = false, .volatile_ = false,
		.rotational = false, .seq_read_bw = 430 * MiB, .seq_write_bw = 415 * MiB,
		.latency = 0.11 * MS, .seek = 0, .iops = 6000,
		.layout = { .kind = IOSIG_LAYOUT_RAID1, .disks = 2, .tolerated = 1 },
	},
	/* Table 2 "Shared NFS" (NFS 4.1 over 1 Gb Ethernet, Table 1): 105 / 103
	 * MB/s, 0.4 ms, no seek, 1000 IOPS, global, persistent.  The layout
	 * behind a network filesystem is unknown in general: single (no
	 * redundancy) is the conservative assumption; set `layout` in the
	 * configuration (the paper's NFS server is a RAID1 of 2 HDDs). */
	[IOSIG_CLASS_NETWORK] = {
		COMMON, .cls = IOSIG_CLASS_NETWORK, .global = true, .volatile_ = false,
		.rotational = false, .seq_read_bw = 105 * MiB, .seq_write_bw = 103 * MiB,
		.latency = 0.4 * MS, .seek = 0, .iops = 1000,
		.layout = { .kind = IOSIG_LAYOUT_SINGLE, .disks = 1, .tolerated = 0 },
	},
};

const struct cat_values *cat_class_defaults(enum iosig_class cls)
{
	if ((unsigned)cls >= IOSIG_CLASS_COUNT)
		return NULL;
	return &defaults[cls];
}

/* Table 2 row names, for citations. */
static const char *const table2_row[IOSIG_CLASS_COUNT] = {
	[IOSIG_CLASS_RAM] = "IOSIG Table 2 (Ramdisk)",
	[IOSIG_CLASS_NVM] = "IOSIG Table 2 (NVRAM)",
	[IOSIG_CLASS_SSD] = "IOSIG Table 2 (Raid1 2xSSD)",
	[IOSIG_CLASS_HDD] = "IOSIG Table 2 (HDD)",
	[IOSIG_CLASS_RAID] = "IOSIG Table 2 (Raid1 2xSSD)",
	[IOSIG_CLASS_NETWORK] = "IOSIG Table 2 (Shared NFS)",
};

const char *cat_class_default_origin(enum iosig_class cls, enum iosig_field field)
{
	if ((unsigned)cls >= IOSIG_CLASS_COUNT)
		return NULL;
	switch (field) {
	case IOSIG_F_CLASS:
		return NULL;
	case IOSIG_F_GLOBAL:
	case IOSIG_F_VOLATILE:
	case IOSIG_F_SEQ_READ_BW:
	case IOSIG_F_SEQ_WRITE_BW:
	case IOSIG_F_LATENCY:
	case IOSIG_F_SEEK:
	case IOSIG_F_IOPS:
		return table2_row[cls];
	case IOSIG_F_ROTATIONAL:
		return "class";
	case IOSIG_F_RAND_READ_BW:
	case IOSIG_F_RAND_WRITE_BW:
		return "same as sequential (Eq. 3)";
	case IOSIG_F_LABELS:
		return "none";
	case IOSIG_F_RESERVE:
		return "1% of capacity, at most 1 GiB";
	case IOSIG_F_BLOCK_SIZE:
		return "IOSIG Table 1 (page size)";
	case IOSIG_F_MAX_FILESIZE:
		return "no limit known";
	case IOSIG_F_MTTF:
	case IOSIG_F_MTTR:
	case IOSIG_F_BER:
	case IOSIG_F_ECC:
	case IOSIG_F_SECTOR_BITS:
		return "IOSIG Sect. 7.4";
	case IOSIG_F_LAYOUT:
		if (cls == IOSIG_CLASS_RAID)
			return table2_row[cls];
		return cls == IOSIG_CLASS_NETWORK ? "unknown: no redundancy assumed" : "one device";
	default:
		return NULL;
	}
}
