/* SPDX-License-Identifier: MIT */
/*
 * hdd.h - the hard-disk model: zoned layout with spares and skews, a seek
 * curve (measured distance->time table or the Ruemmler-Wilkes two-regime
 * form, optionally with the first ten distances measured), rotation,
 * head/cylinder switches, command and per-sector bus overheads, and an
 * on-board cache in DiskSim's style (segments, read-ahead, write-back with
 * background destage).  Optionally, writes follow the BCW paper's buffered
 * write model (Fast/Mid/Slow states, W_f, W_m, L_f, L_m, L_s) instead of the
 * write-back cache.  See docs/sim.md ("HDD") and docs/calibration.md.
 */
#ifndef IOSIG_SIM_HDD_H
#define IOSIG_SIM_HDD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_HDD_MAX_ZONES 256
#define SIM_HDD_MAX_SEEK 1024
#define SIM_HDD_MAX_SLIPS 4096       /* slipped locations, all zones together */
#define SIM_HDD_MAX_DEFECTS 1024     /* remapped locations, all zones together */

/*
 * DiskSim 4's sparing schemes (diskmodel layout_g1), all of them.  A unit
 * is the region its spares serve: a track, a cylinder, a range of
 * cylinders or a zone.  Slipped locations (a zone's `slips`) are skipped
 * by the logical blocks; in schemes 1, 2, 3, 5, 8 and 9 a slip uses one of
 * its unit's spares (the blocks after it move within the unit), in the
 * "slip to end" schemes 4, 6, 7 and 10 every later block of the zone moves
 * by one and the spares stay free for remapping.  Remapped locations (a
 * zone's `defects`) are served from their replacement.  docs/calibration.md
 * says how each is read.
 */
enum sim_hdd_sparing {
	SIM_SPARE_NONE = 0,                 /* no spares; slips and defects ignored (as DiskSim) */
	SIM_SPARE_TRACK = 1,                /* `spares` whole tracks at the end of each zone;
	                                       slips and defects are track numbers */
	SIM_SPARE_PER_CYL = 2,              /* `spares` sectors at the end of each cylinder */
	SIM_SPARE_PER_TRACK = 3,            /* `spares` sectors at the end of each track */
	SIM_SPARE_PER_CYL_SLIP_END = 4,     /* as 2, slips move everything after them */
	SIM_SPARE_PER_CYL_FRONT = 5,        /* `spares` sectors at the front of each cylinder */
	SIM_SPARE_PER_CYL_FRONT_SLIP_END = 6, /* as 5, slips move everything after them */
	SIM_SPARE_AT_END = 7,               /* spares past the last block of the disk, none in
	                                       the zones; slips move everything after them */
	SIM_SPARE_PER_RANGE = 8,            /* `spares` sectors at the end of each range of
	                                       `range_size` cylinders (a partial last range has none) */
	SIM_SPARE_PER_ZONE = 9,             /* `spares` sectors at the end of each zone */
	SIM_SPARE_PER_ZONE_SLIP_END = 10,   /* as 9, slips move everything after them */
};
#define SIM_SPARE_MAX SIM_SPARE_PER_ZONE_SLIP_END

/* DiskSim 4's LBN-to-PBN mapping schemes: the order of a cylinder's tracks. */
enum sim_hdd_mapping {
	SIM_MAP_NORMAL = 0,          /* surfaces 0, 1, ... S-1 on every cylinder */
	SIM_MAP_SERPENTINE_ZONE = 1, /* every other cylinder of a zone, counted from its first,
	                                runs S-1 ... 0, so a cylinder switch needs no head switch */
	SIM_MAP_SERPENTINE = 2,      /* the same on odd cylinder numbers, whatever the zone */
};
#define SIM_MAP_MAX SIM_MAP_SERPENTINE

/* DiskSim's "Buffer continuous read": where read-ahead after a read stops
 * (besides the maximum read-ahead and the segment size). */
enum sim_hdd_contread {
	SIM_RA_NONE = 0,             /* no read-ahead */
	SIM_RA_TRACK = 1,            /* the end of the track holding the request's last sector */
	SIM_RA_CYLINDER = 2,         /* the end of that cylinder */
	SIM_RA_SEGMENT = 3,          /* as far as the segment holds */
	SIM_RA_TRACK_AHEAD = 4,      /* to the end of the track after the request, and one
	                                track further for a stream (DiskSim's "DEC" scheme) */
};

enum sim_hdd_seek_kind {
	SIM_SEEK_TABLE,              /* measured (distance, time) points, linear interpolation */
	SIM_SEEK_CURVE,              /* Ruemmler-Wilkes: a + b*sqrt(d) below `boundary`, c + e*d above */
};

struct sim_hdd_zone {
	uint32_t first_cyl, last_cyl;    /* inclusive */
	uint32_t bpt;                    /* sectors per track */
	double track_skew, cyl_skew;     /* sectors the next track's first sector is rotated by */
	double first_offset;             /* angle of the zone's first sector, in sectors */
	uint32_t deadspace;              /* unused data positions at the zone front */
	uint32_t spares;                 /* spare sectors (tracks for SIM_SPARE_TRACK) per unit */
	uint32_t slip0, nslips;          /* its slips: slip[slip0 .. slip0 + nslips) */
	uint32_t defect0, ndefects;      /* its defects: defect[defect0 .. defect0 + ndefects) */
	/* derived by sim_hdd_params_finish() */
	uint64_t first_lbn, nlbn;        /* logical blocks of the zone */
	uint64_t nphys;                  /* physical sectors of the zone */
	uint64_t unit, udata;            /* sectors per sparing unit, and its data sectors */
	uint64_t nunits;                 /* whole units (a partial last range follows) */
	uint32_t ufront;                 /* spare sectors at the front of each unit */
	uint32_t nslip_pos;              /* slip-to-end schemes: slips in data sectors */
};

/* Everything the model needs; times in milliseconds as DiskSim writes them. */
struct sim_hdd_params {
	char name[64];                   /* "barracuda" */
	/* geometry */
	uint32_t surfaces, cylinders;
	uint64_t blocks;                 /* logical blocks (512 B) exposed; 0 = all the zones hold */
	enum sim_hdd_mapping mapping;
	enum sim_hdd_sparing sparing;
	uint32_t range_size;             /* cylinders per range (SIM_SPARE_PER_RANGE) */
	unsigned nzones;
	struct sim_hdd_zone zone[SIM_HDD_MAX_ZONES];
	/* Slipped locations, zone relative: physical sector numbers (track
	 * numbers for SIM_SPARE_TRACK), a zone's sorted by finish().  A sector
	 * number counts the zone's sectors cylinder by cylinder, each cylinder's
	 * tracks in mapping order, as DiskSim's do. */
	uint32_t nslip;
	uint64_t slip[SIM_HDD_MAX_SLIPS];
	/* Remapped locations: (defective, replacement) pairs in the same units,
	 * a zone's sorted by the defective one by finish(). */
	uint32_t ndefect;
	uint64_t defect[SIM_HDD_MAX_DEFECTS][2];
	/* derived by finish(): for the slip-to-end schemes, each slip's index
	 * among the zone's data positions (UINT64_MAX: it lies in a spare) */
	uint64_t slip_pos[SIM_HDD_MAX_SLIPS];
	/* mechanics */
	double rpm;
	enum sim_hdd_seek_kind seek_kind;
	unsigned nseek;                  /* SIM_SEEK_TABLE points, increasing distance */
	uint32_t seek_dist[SIM_HDD_MAX_SEEK];
	double seek_ms[SIM_HDD_MAX_SEEK];
	double rw_a, rw_b, rw_c, rw_e;   /* SIM_SEEK_CURVE coefficients (ms, ms/sqrt(cyl), ms, ms/cyl) */
	uint32_t rw_boundary;            /* distance where the linear regime starts */
	bool rw_single;                  /* SIM_SEEK_CURVE: distance 1 takes seek_one_ms */
	bool have_first10;               /* first10_ms overrides distances 1..10 */
	double first10_ms[10];
	double seek_one_ms;              /* single-cylinder seek */
	double head_switch_ms;
	double write_settle_ms;          /* extra settling before a write */
	/* controller and interface */
	double ovh_ms[8];                /* command overhead, indexed by SIM_OVH_* */
	double read_complete_ms, write_complete_ms;
	double data_prep_ms;             /* before a transfer that starts at once (read hits) */
	double read_disconnect_ms[2];    /* read miss: bus released for the seek (after read, write) */
	double reselect_ms;              /* read miss: bus taken back to send the data */
	double read_hwm;                 /* read miss: fraction of the data in the buffer before
	                                    the drive reconnects (DiskSim high water mark) */
	bool hwm_by_request;             /* read_hwm is a fraction of the request, else of a segment */
	double xfer_ms;                  /* bus time per sector (max of drive and buses) */
	double media_rate;               /* derived: bytes/ns of the outermost zone (BCW drain) */
	/* on-board cache */
	unsigned nsegs;                  /* cache segments (0 = no cache) */
	unsigned seg_blocks;             /* sectors per segment */
	unsigned max_write_segs;         /* segments that may hold unwritten data */
	unsigned max_readahead;          /* sectors read ahead after a read miss */
	enum sim_hdd_contread contread;  /* how far read-ahead goes (DiskSim's
	                                    "Buffer continuous read") */
	unsigned fast_write;             /* 0 = write-through; else write-back (DiskSim level) */
	bool read_hits_on_write_data;    /* reads may hit data not yet destaged */
	bool readahead_on_idle_hit;      /* a hit at a segment's end restarts read-ahead */
	/* BCW buffered-write model (replaces the write-back cache for writes) */
	bool bcw;
	double bcw_wf, bcw_wm;           /* bytes: W_f, W_m */
	double bcw_lf_ms, bcw_lm_ms, bcw_ls_ms;  /* L_f, L_m, L_s */
	unsigned queue_depth;            /* commands the drive accepts (FIFO), >= 1 */
};

/* Overhead index: (op, cache outcome, previous op), DiskSim's eight values. */
enum {
	SIM_OVH_READ_HIT_AFTER_READ, SIM_OVH_READ_HIT_AFTER_WRITE,
	SIM_OVH_READ_MISS_AFTER_READ, SIM_OVH_READ_MISS_AFTER_WRITE,
	SIM_OVH_WRITE_HIT_AFTER_READ, SIM_OVH_WRITE_HIT_AFTER_WRITE,
	SIM_OVH_WRITE_MISS_AFTER_READ, SIM_OVH_WRITE_MISS_AFTER_WRITE,
};

/* Physical address of a logical block. */
struct sim_hdd_pbn {
	uint32_t cyl, head, sector, zone;
	uint32_t track;                  /* the track's place in its cylinder's mapping order
	                                    (= head unless the mapping is serpentine) */
};

/* Counters of one drive. */
struct sim_hdd_stats {
	uint64_t arm_moves;              /* changes of cylinder (any cause) */
	uint64_t tmd;                    /* sum of |cylinder distance| of those moves */
	uint64_t read_hits;              /* reads served entirely from the cache */
	uint64_t read_partial_hits;      /* reads served by an ongoing read-ahead */
	uint64_t read_misses;
	uint64_t writes_buffered;        /* write-back or BCW writes acknowledged from the buffer */
	uint64_t writes_through;         /* writes that waited for the media */
	uint64_t destages;               /* background writes of buffered data */
	uint64_t readahead_blocks;       /* sectors read ahead */
	uint64_t bcw_fast, bcw_mid, bcw_slow;  /* BCW write states */
	double mech_ms;                  /* time the mechanism was busy (incl. background) */
};

/* Optional observer of every arm position (for --plot): time in ns. */
typedef void (*sim_hdd_arm_fn)(void *ctx, uint64_t t_ns, uint32_t cyl);

struct sim_hdd;

/* Fills p with the built-in generic drive (no files needed): 7200 rpm,
 * capacity `bytes` (0 = 1 TiB), 16 zones, Ruemmler-Wilkes seek curve. */
void sim_hdd_params_generic(struct sim_hdd_params *p, uint64_t bytes);
/* Checks p and derives the zone LBN ranges and sparing units; sorts each
 * zone's slips and defects.  0 or -EINVAL with a reason. */
int sim_hdd_params_finish(struct sim_hdd_params *p, char *err, size_t errlen);

/* Seek time in ms for a distance in cylinders (0 -> 0), writes excluded. */
double sim_hdd_seek_ms(const struct sim_hdd_params *p, uint32_t dist);
/* Maps a logical block; false if lbn is beyond the drive. */
bool sim_hdd_map(const struct sim_hdd_params *p, uint64_t lbn, struct sim_hdd_pbn *ret);

/* A drive at cylinder 0, head 0, empty cache, at time 0.  NULL on ENOMEM. */
struct sim_hdd *sim_hdd_create(const struct sim_hdd_params *p);
void sim_hdd_destroy(struct sim_hdd *h);
const struct sim_hdd_params *sim_hdd_params(const struct sim_hdd *h);
void sim_hdd_set_arm_observer(struct sim_hdd *h, sim_hdd_arm_fn fn, void *ctx);
/*
 * Serves one command that the host issues at now_ns: op (POLICY_OP_READ,
 * POLICY_OP_WRITE or POLICY_OP_FLUSH), nblocks sectors from lbn.  Commands are
 * served one at a time in call order (a command issued while the previous
 * one is still running starts when it completes).  Returns the completion
 * time in ns.  lbn + nblocks must not exceed the drive.
 */
uint64_t sim_hdd_serve(struct sim_hdd *h, int op, uint64_t lbn, uint32_t nblocks, uint64_t now_ns);
const struct sim_hdd_stats *sim_hdd_stats(const struct sim_hdd *h);

/* Reads a DiskSim drive: DIR/NAME.parv if present (it sources the
 * .diskspecs, which sources the .model and names the .seek file), else
 * DIR/NAME.diskspecs.  0 or -errno with "file:line: what" in err. */
int sim_disksim_load(const char *dir, const char *name, struct sim_hdd_params *ret,
		     char *err, size_t errlen);
/* Same from text holding everything ("source" is refused); for tests and
 * fuzzing.  Messages name "<text>". */
int sim_disksim_parse_text(const char *text, size_t len, struct sim_hdd_params *ret, char *err,
			   size_t errlen);

#endif /* IOSIG_SIM_HDD_H */
