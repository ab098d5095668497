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

#define SIM_HDD_MAX_ZONES 64
#define SIM_HDD_MAX_SEEK 1024

/* DiskSim's sparing schemes that the layout understands (layout_g1). */
enum sim_hdd_sparing {
	SIM_SPARE_NONE = 0,          /* no spare sectors */
	SIM_SPARE_TRACK = 1,         /* `spares` whole tracks at the end of each zone */
	SIM_SPARE_PER_CYL = 2,       /* `spares` sectors at the end of each cylinder */
	SIM_SPARE_PER_TRACK = 3,     /* `spares` sectors at the end of each track */
	SIM_SPARE_PER_RANGE = 8,     /* `spares` sectors at the end of each range of cylinders */
	SIM_SPARE_PER_ZONE = 9,      /* `spares` sectors at the end of each zone */
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
	uint32_t deadspace;              /* unused sectors at the zone front */
	uint32_t spares;                 /* spare sectors (tracks for SIM_SPARE_TRACK) per unit */
	/* derived by sim_hdd_params_finish() */
	uint64_t first_lbn, nlbn;        /* logical blocks of the zone */
};

/* Everything the model needs; times in milliseconds as DiskSim writes them. */
struct sim_hdd_params {
	char name[64];                   /* "barracuda" */
	/* geometry */
	uint32_t surfaces, cylinders;
	uint64_t blocks;                 /* logical blocks (512 B) exposed */
	enum sim_hdd_sparing sparing;
	uint32_t range_size;             /* cylinders per range (SIM_SPARE_PER_RANGE) */
	unsigned nzones;
	struct sim_hdd_zone zone[SIM_HDD_MAX_ZONES];
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
/* Checks p and derives the zone LBN ranges.  0 or -EINVAL with a reason. */
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
