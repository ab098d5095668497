/* SPDX-License-Identifier: MIT */
/*
 * probe.h - the measurement engine behind `iosig probe` and `iosig validate`
 * (docs/design.md §5.1 source 3, §6; docs/probe.md).  Private to the iosig tool
 * and its tests.
 *
 * A probe works inside a *session*: a private directory created with
 * mkdtemp() in the directory the caller names (the mount's data directory or
 * its root), a space budget (at most PRB_SPACE_SHARE of the free space and
 * never less than PRB_MIN_SPACE), and test files that are unlinked the moment
 * they exist (O_TMPFILE, else O_EXCL + unlink), so that nothing but the empty
 * private directory can outlive the process, whatever kills it.
 *
 * Three engines measure inside a session:
 *  - probe_uring.c: bandwidth and IOPS at a queue depth, through io_uring,
 *    with O_DIRECT where the filesystem supports it;
 *  - probe_sync.c:  synchronous chunked writes (write, then fsync), the IOSIG
 *    paper's dd experiment: latency, seek, block-size sweep, BCW profile and
 *    the measurements of `iosig validate`;
 *  - probe_analyze.c: pure functions turning samples into values (medians,
 *    the block size from a linear sweep, the BCW states from a latency trace).
 * probe.c runs the phases of a whole-mount probe within a time budget.
 *
 * The library never prints: progress goes to a callback, errors to a
 * struct iosig_error.  Every function checks *cancel (set by the tool's
 * signal handler) between I/Os and returns -ECANCELED when it is set.
 */
#ifndef IOSIG_PROBE_H
#define IOSIG_PROBE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iosig.h"

/* Smallest space budget a probe or validation accepts: below this the
 * measurements would be dominated by caches and metadata. */
#define PRB_MIN_SPACE (8ull << 20)
/* A probe never allocates more than this share of the free space. */
#define PRB_SPACE_SHARE 0.10
/* Default --max-space of `iosig probe`. */
#define PRB_DEFAULT_SPACE (256ull << 20)
/* Default --time of `iosig probe`, seconds per mount. */
#define PRB_DEFAULT_TIME 20.0

/* Monotonic clock in seconds. */
double prb_now(void);
/* CPU time of the calling thread in seconds: the clock of memory
 * filesystems, whose every cost is CPU work in the writing thread, so that
 * other processes' load on a shared machine does not count. */
double prb_cpu_now(void);

/* ------------------------------------------------------------------------
 * Session: private directory, space budget, test files (probe_session.c)
 * ---------------------------------------------------------------------- */

struct prb_session;

/* What a session found out about the filesystem it runs on. */
struct prb_fsinfo {
	uint64_t free;        /* bytes available to us when the session opened */
	uint64_t budget;      /* bytes the session may allocate at most */
	uint64_t fs_bsize;    /* statvfs f_bsize: the filesystem's preferred I/O size */
	uint64_t blksize;     /* st_blksize of a test file */
	uint64_t dio_align;   /* O_DIRECT offset/length alignment, bytes (0 without O_DIRECT) */
	long fs_type;         /* statfs f_type */
	bool memory;          /* tmpfs/ramfs: the page cache is the storage */
	bool direct;          /* O_DIRECT is used (supported, and not a memory filesystem) */
	bool free_from_ram;   /* the filesystem reports no size (ramfs): free = MemAvailable */
};

/*
 * Opens a session in directory `parent`, allowed to allocate at most
 * min(max_space, PRB_SPACE_SHARE x free space) bytes.  Errors, each with a
 * message in *err saying what to do: -ENOENT (parent vanished: unmounted?),
 * -EROFS (read-only), -ENOSPC (too little free space for PRB_MIN_SPACE),
 * -EACCES, other -errno.  Nothing is left behind on failure.
 */
int prb_session_open(const char *parent, uint64_t max_space, struct prb_session **ret_session,
		     struct iosig_error *err);
/* Closes every file still open and removes the private directory. */
void prb_session_close(struct prb_session *s);
/* Measure through the page cache even where O_DIRECT works (what programs
 * that do not use O_DIRECT see; also how the fallback is tested).  Call
 * before creating files. */
void prb_session_set_buffered(struct prb_session *s);
const struct prb_fsinfo *prb_session_info(const struct prb_session *s);
/* The private directory (for a last-resort rmdir() from a signal handler). */
const char *prb_session_dir(const struct prb_session *s);

/*
 * Creates an anonymous test file in the session: O_TMPFILE where the
 * filesystem has it, else a unique O_EXCL name that is unlinked at once.
 * `direct` adds O_DIRECT (only if the session uses O_DIRECT).  The fd is owned
 * by the caller (close it to free the space).  0 or -errno.
 */
int prb_session_file(struct prb_session *s, bool direct, int *ret_fd);

/* Allocated bytes (st_blocks) of `fd`, 0 on error: for space accounting. */
uint64_t prb_file_usage(int fd);

/*
 * A buffer of `size` bytes aligned for O_DIRECT and filled with
 * incompressible bytes.  NULL on allocation failure.  free() it.
 */
void *prb_buffer(size_t size, uint64_t seed);

/* ------------------------------------------------------------------------
 * Synchronous chunked I/O (probe_sync.c)
 * ---------------------------------------------------------------------- */

enum prb_pattern {
	PRB_APPEND,  /* write at the end of the file (offset `start`, its current size; 0 =
			empty it first); empty it (untimed) when it would pass span */
	PRB_SEQ,     /* overwrite sequentially from `start`, wrapping at span */
	PRB_RANDOM,  /* uniformly random multiples of the chunk size within [0, span) */
};

struct prb_sync_job {
	int fd;
	const void *buf;       /* at least `ds` bytes (aligned when fd is O_DIRECT) */
	uint64_t ds;           /* chunk size (size-per-IO), bytes */
	enum prb_pattern pattern;
	uint64_t span;         /* file range used, bytes (>= ds) */
	uint64_t start;        /* PRB_SEQ: first offset; PRB_APPEND: current file size */
	bool read;             /* pread() instead of pwrite() (PRB_SEQ, PRB_RANDOM only) */
	bool fsync;            /* fsync() after every write (the dd experiment) */
	bool drop_cache;       /* drop the file's cached pages first (POSIX_FADV_DONTNEED),
				  so partial-page writes must read */
	bool cpu_time;         /* time ops with prb_cpu_now() (memory filesystems) */
	unsigned min_ops;      /* do at least this many (unless cancelled or failing) */
	unsigned max_ops;      /* and at most this many */
	double deadline;       /* prb_now() time after which no op starts once min_ops are done */
	const volatile sig_atomic_t *cancel; /* stop when *cancel != 0; may be NULL */
	uint64_t *rng;         /* PRB_RANDOM offsets: prng_splitmix64() state */
	double *times;         /* optional: receives the duration of each op (max_ops entries) */
};

struct prb_sync_stats {
	unsigned ops;          /* operations completed */
	uint64_t bytes;        /* bytes written or read */
	double total;          /* seconds spent in timed operations */
	double median;         /* median duration of one operation (write + fsync), seconds */
	double p25, p75;       /* quartiles of the operation duration, seconds */
	uint64_t next;         /* offset the next op would use (PRB_APPEND: the file size) */
};

/*
 * Runs a synchronous chunked job: per op pwrite(ds) (and fsync when asked)
 * or pread(ds), timed individually.  PRB_APPEND empties the file with an
 * untimed ftruncate + fsync, so blocks freed by earlier writes (and their
 * discards) are not charged to the timed writes.  0 or -errno (-ECANCELED when cancelled,
 * -ENOSPC, -EIO ...); *ret is filled with what was done even on error.
 */
int prb_sync_run(const struct prb_sync_job *job, struct prb_sync_stats *ret);

/* ------------------------------------------------------------------------
 * Queued I/O through io_uring (probe_uring.c)
 * ---------------------------------------------------------------------- */

struct prb_uring_job {
	int fd;
	bool write;            /* write, else read */
	bool random;           /* random multiples of bs within [0, span), else sequential */
	uint32_t bs;           /* bytes per I/O */
	unsigned qd;           /* queue depth */
	uint64_t span;         /* file range used (multiple of bs) */
	uint64_t start;        /* sequential: first offset (wraps at span) */
	uint64_t max_bytes;    /* stop submitting after this many bytes (0: no limit) */
	double deadline;       /* stop submitting at this prb_now() time */
	bool sync_at_end;      /* writes: fdatasync() inside the timed interval (buffered fallback) */
	const volatile sig_atomic_t *cancel; /* may be NULL */
	uint64_t *rng;
	void (*tick)(void *ctx, double done); /* progress: done in [0, 1]; may be NULL */
	void *tick_ctx;
};

struct prb_uring_stats {
	uint64_t ops;          /* completed I/Os */
	uint64_t bytes;        /* bytes transferred */
	double elapsed;        /* first submission to last completion (and sync), seconds */
	uint64_t next;         /* sequential: offset the next I/O would use */
};

/* Runs a queued job on a fresh ring.  0 or -errno (-ECANCELED, -ENOSPC, -EIO,
 * -ENOSYS when io_uring is unavailable); *ret holds what completed. */
int prb_uring_run(const struct prb_uring_job *job, struct prb_uring_stats *ret);

/* ------------------------------------------------------------------------
 * Analysis (probe_analyze.c): pure functions, unit-tested on synthetic data
 * ---------------------------------------------------------------------- */

/* The q-quantile (0..1, linear interpolation) of v[0..n); sorts v in place.
 * NaN when n == 0. */
double prb_quantile(double *v, size_t n, double q);
/* The same without touching v (sorts a copy); NaN also when out of memory. */
double prb_quantile_of(const double *v, size_t n, double q);

/* A growing array of samples (durations, ratios). */
struct prb_samples {
	double *v;
	size_t n, cap;
};

/* Room for `more` further samples: 0 or -ENOMEM. */
int prb_samples_grow(struct prb_samples *s, size_t more);
/* Appends one sample: 0 or -ENOMEM. */
int prb_samples_push(struct prb_samples *s, double v);

/*
 * Effective block size from a linear sweep (IOSIG Sect. 7.1, Fig. 6c):
 * sizes[i] = (i + 1) * step, tput[i] the throughput measured for that chunk
 * size.  A block size B shows as peaks of the throughput at multiples of B
 * against their neighbours.  Candidates are multiples of `step` (at least 2)
 * with at least three multiples inside the sweep.  A candidate qualifies when
 * two thirds of its multiples are peaks and their mean log height over the
 * other sizes is at least `min_score` and five standard errors; on success
 * *ret_bs is the qualifying candidate whose multiples stand out most and
 * *ret_score that mean log height.  -ENODATA when none qualifies (the caller
 * falls back to the filesystem's hint), -EINVAL if n < 6 or a throughput is
 * not a positive number.
 */
int prb_block_detect(const double *tput, size_t n, uint64_t step, double min_score,
		     uint64_t *ret_bs, double *ret_score);

/* What prb_bcw_classify() saw besides the profile. */
struct prb_bcw_info {
	size_t fast, mid, slow;  /* writes classified F, M, S */
	unsigned slow_runs;      /* runs of consecutive S writes */
	double ratio;            /* slow level over fast level (centroids) */
};

/*
 * BCW buffered-write profile (BCW paper Sect. 2.3, Fig. 4) from the latencies
 * lat[0..n) of sustained sequential writes of io_size bytes each, started
 * right after a sync: the latencies are clustered in three levels (k-means
 * on log latency); if the top level is at least `min_ratio` times the
 * bottom one, writes closer to the top than to the bottom (geometric mean
 * as threshold) are Slow.  Writes before the first S are Fast,
 * later non-S writes Mid.  W_f = bytes before the first S; W_m = median bytes
 * of the Mid runs between two S runs; L_f, L_m, L_s the median latency per
 * state.  -ENODATA when the trace shows no staircase (no S level, or fewer
 * than two S runs so no complete Mid run), -EINVAL for n < 16.
 */
int prb_bcw_classify(const double *lat, size_t n, uint64_t io_size, double min_ratio,
		     struct iosig_bcw *ret_bcw, struct prb_bcw_info *ret_info);

/* ------------------------------------------------------------------------
 * A whole-mount probe (probe.c)
 * ---------------------------------------------------------------------- */

enum prb_phase {
	PRB_PH_LATENCY,    /* small synchronous appends: operation latency */
	PRB_PH_SEQ_WRITE,  /* sequential write bandwidth (queued) */
	PRB_PH_SEQ_READ,   /* sequential read bandwidth (queued) */
	PRB_PH_RAND_WRITE, /* random write bandwidth (queued, large blocks) */
	PRB_PH_RAND_READ,  /* random read bandwidth (queued, large blocks) */
	PRB_PH_IOPS,       /* 4 KiB random reads and writes at queue depth */
	PRB_PH_SEEK,       /* rotational: random vs sequential small synchronous writes */
	PRB_PH_BLOCK,      /* linear chunk-size sweep: effective block size */
	PRB_PH_BCW,        /* rotational: BCW buffered-write profile */
	PRB_PH_COUNT
};

/* "seq-write" ... */
const char *prb_phase_name(enum prb_phase phase);

/* Values a probe can measure; bits of prb_result.have. */
enum prb_value {
	PRB_V_LATENCY,
	PRB_V_SEEK,
	PRB_V_SEQ_READ_BW,
	PRB_V_SEQ_WRITE_BW,
	PRB_V_RAND_READ_BW,
	PRB_V_RAND_WRITE_BW,
	PRB_V_IOPS,
	PRB_V_BLOCK_SIZE,
	PRB_V_BCW,
	PRB_V_COUNT
};

struct prb_opts {
	double time_budget;    /* seconds for the whole mount (> 0) */
	bool rotational;       /* also measure seek latency and the BCW profile */
	const volatile sig_atomic_t *cancel;  /* stop when *cancel != 0; may be NULL */
	/* Progress: the current phase and the fraction of the whole probe done.
	 * Called from the probing thread, at most every ~50 ms; may be NULL. */
	void (*progress)(void *ctx, enum prb_phase phase, double fraction);
	void *progress_ctx;
	uint64_t seed;         /* random offsets and buffer contents */
	double latency_raw;    /* > 0: measured already (prb_latency_joint()); the
				  latency phase is skipped and its time given to the others */
};

struct prb_result {
	uint32_t have;         /* (1u << PRB_V_*) for every value measured */
	double latency;        /* operation latency of a synchronous write, seconds */
	double latency_raw;    /* median duration of a 4 KiB append + fsync, seconds */
	double seek;           /* extra latency of a random small synchronous write, seconds */
	double seq_read_bw;    /* bytes/s */
	double seq_write_bw;   /* bytes/s */
	double rand_read_bw;   /* bytes/s, random 1 MiB I/Os */
	double rand_write_bw;  /* bytes/s, random 1 MiB I/Os */
	double read_iops;      /* 4 KiB random reads per second at queue depth */
	double write_iops;     /* 4 KiB random writes per second at queue depth */
	double iops;           /* max(read_iops, write_iops) */
	uint64_t block_size;   /* effective block size, bytes (detected or the hint) */
	bool block_detected;   /* block_size came from the sweep, not from a hint */
	double block_score;    /* mean log peak height of the detected block size */
	uint64_t block_hint;   /* max(st_blksize, statvfs f_bsize) */
	struct iosig_bcw bcw;  /* BCW profile when (have & PRB_V_BCW) */
	struct prb_bcw_info bcw_info;
	struct prb_fsinfo fs;  /* the session's view of the filesystem */
	uint64_t peak_usage;   /* most bytes the probe's files held at once */
	double elapsed;        /* seconds */
	char notes[512];       /* what was skipped or approximated, and why ("; "-separated) */
};

/*
 * Probes the filesystem of session `s` within opts->time_budget seconds and
 * the session's space budget.  Returns 0 (some values may be missing: see
 * ->have and ->notes), -ECANCELED when opts->cancel was set, or another
 * -errno with a message in *err (-ENOSPC, -EIO, -ENOENT when the mount went
 * away ...).  *ret is filled in every case with what was measured.
 */
int prb_run(struct prb_session *s, const struct prb_opts *opts, struct prb_result *ret,
	    struct iosig_error *err);

/*
 * The latency phase of several filesystems at once, side by side: 4 KiB
 * appends + fsync on one file per session (at most 10 % of its budget), the
 * sessions taking turns for `seconds` (each at least 5 ops).  On a shared
 * machine whose load varies over minutes this makes the latencies of the
 * mounts comparable with each other, as `iosig validate` measures them.
 * ret_raw[i] receives the median duration (0 if fewer than 5 ops) and
 * ret_status[i] 0 or the -errno that stopped mount i (the others go on).
 * Returns 0, -ECANCELED or -ENOMEM.  `tick` (may be NULL) gets the fraction
 * of the time done.
 */
int prb_latency_joint(struct prb_session *const *s, size_t n, double seconds,
		      const volatile sig_atomic_t *cancel, void (*tick)(void *ctx, double done),
		      void *tick_ctx, double *ret_raw, int *ret_status);
/* Share of a probe's time budget its latency phase takes. */
double prb_latency_weight(bool rotational);

/* ------------------------------------------------------------------------
 * What the probe and validate tools share (probe_cli.c)
 * ---------------------------------------------------------------------- */

/* Set to the signal number by SIGINT, SIGTERM or SIGHUP once
 * prb_cli_signals() ran; pass &prb_cli_stop as `cancel` to the engine. */
extern volatile sig_atomic_t prb_cli_stop;
/* Installs the handlers (no SA_RESTART).  A second signal before the first
 * was handled removes the active session directories and exits 128 + signal. */
void prb_cli_signals(void);
/* Registers a session directory in use (up to 64); NULL forgets them all. */
void prb_cli_active(const char *dir);

/*
 * Resolves MOUNT arguments to catalog mounts (in argument order, without
 * duplicates); with argc == 0, every eligible mount.  Each argument must be
 * an existing path that is a mount point of the catalog: -ENOENT or -EINVAL
 * otherwise, with a message naming the argument (and the mount it is on).
 * *ret_sel is malloc'ed.
 */
int prb_cli_select(const struct iosig_catalog *cat, int argc, char *const *argv,
		   const struct iosig_mount ***ret_sel, size_t *ret_n, struct iosig_error *err);
/* Why mount `m` cannot be measured right now (gone, replaced by another
 * filesystem, read-only), written to buf; NULL when it can. */
const char *prb_cli_unusable(const struct iosig_mount *m, char *buf, size_t size);
/* Where a session on `m` goes: its data directory when it exists and passes
 * the catalog's safety checks, else the mount point (a missing data
 * directory is not created: measuring leaves nothing behind). */
const char *prb_cli_parent(const struct iosig_mount *m);
/*
 * Opens a measuring session on mount `m` when it can be measured now
 * (prb_cli_unusable()), in prb_cli_parent(m), and registers its directory
 * with prb_cli_active().  Returns 0 with *ret_session and, if ret_parent is
 * not NULL, *ret_parent (the directory the session is in); else -ENODEV or
 * prb_session_open()'s -errno, with why the mount cannot be measured in
 * why[size].
 */
int prb_cli_session(const struct iosig_mount *m, uint64_t max_space,
		    struct prb_session **ret_session, const char **ret_parent, char *why,
		    size_t size);
/* Text of a progress bar that redraws itself ("\r[####....]  42%  label"). */
char *prb_cli_bar(char *buf, size_t size, double fraction, const char *label);

#endif /* IOSIG_PROBE_H */
