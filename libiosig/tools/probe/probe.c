/* SPDX-License-Identifier: MIT */
/*
 * probe.c - a whole-mount probe: the phases, their share of the time
 * budget, their share of the space budget, and the values they yield
 * (probe.h; docs/probe.md describes each phase and what it measures).
 *
 * Time: phase p ends at t0 + budget x (weights of phases 0..p) / (all
 * weights), so a phase that finishes early leaves its time to the next ones
 * and the whole probe ends at the budget plus at most one queue of I/O.
 * Space: the latency file (at most 10 % of the budget) is closed before the
 * data file (85 % of the budget) is written; nothing else allocates.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "probe.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)

#define SMALL_IO (4 * KiB)        /* latency, seek, IOPS: one page */
#define LARGE_IO (1 * MiB)        /* bandwidth phases */
#define BW_QD 4                   /* queue depth of the bandwidth phases */
#define IOPS_QD 32                /* queue depth of the IOPS phase */
#define SWEEP_STEP (1 * KiB)      /* block-size sweep: linear steps of 1 KiB ... */
#define SWEEP_POINTS 72           /* ... up to 72 KiB (block sizes up to 23 KiB) */
#define SWEEP_OPS 3               /* writes per size and round */
#define SWEEP_ROUNDS 12           /* rounds at most */
#define BCW_IO (16 * KiB)         /* BCW profile: 16 KiB writes, as in the paper's Fig. 1 */
#define BCW_MAX_OPS 65536         /* at most 1 GiB of BCW writes */
#define BCW_MIN_RATIO 8.0         /* S must be this much slower than F/M to count */

/* Share of the time budget per phase (rotational-only phases get 0 on
 * other devices).  The sweep and the BCW trace need many small writes. */
static const double phase_weight[PRB_PH_COUNT] = {
	[PRB_PH_LATENCY] = 1.0,   [PRB_PH_SEQ_WRITE] = 2.0, [PRB_PH_SEQ_READ] = 1.5,
	[PRB_PH_RAND_WRITE] = 1.5, [PRB_PH_RAND_READ] = 1.5, [PRB_PH_IOPS] = 2.0,
	[PRB_PH_SEEK] = 1.0,      [PRB_PH_BLOCK] = 2.5,     [PRB_PH_BCW] = 2.0,
};

static const char *const phase_names[PRB_PH_COUNT] = {
	[PRB_PH_LATENCY] = "latency",     [PRB_PH_SEQ_WRITE] = "seq-write",
	[PRB_PH_SEQ_READ] = "seq-read",   [PRB_PH_RAND_WRITE] = "rand-write",
	[PRB_PH_RAND_READ] = "rand-read", [PRB_PH_IOPS] = "iops",
	[PRB_PH_SEEK] = "seek",           [PRB_PH_BLOCK] = "block-size",
	[PRB_PH_BCW] = "bcw",
};

const char *prb_phase_name(enum prb_phase phase)
{
	return (unsigned)phase < PRB_PH_COUNT ? phase_names[phase] : "?";
}

/* State of one prb_run(). */
struct run {
	struct prb_session *s;
	const struct prb_opts *o;
	const struct prb_fsinfo *fs;
	struct prb_result *res;
	struct iosig_error *err;
	double t0;                          /* start, prb_now() */
	double weight[PRB_PH_COUNT];        /* weights of the phases that run, else 0 */
	double wsum;                        /* their sum */
	double wend[PRB_PH_COUNT];          /* cumulative weight up to and including a phase */
	enum prb_phase phase;               /* current phase */
	double sub_lo, sub_hi;              /* part of the phase the current job covers */
	double last_report;                 /* prb_now() of the last progress call */
	double last_fraction;               /* last fraction reported (never goes back) */
	uint64_t rng;
	int fd;                             /* the data file (O_DIRECT when the session uses it) */
	uint64_t span;                      /* size the data file may reach */
	uint64_t filled;                    /* prefix of the data file written so far */
};

static void note(struct prb_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct prb_result *res, const char *fmt, ...)
{
	size_t len = strlen(res->notes);
	va_list ap;

	if (len + 4 >= sizeof(res->notes))
		return;
	if (len) {
		strcpy(res->notes + len, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(res->notes + len, sizeof(res->notes) - len, fmt, ap);
	va_end(ap);
}

static int fail(struct run *ru, int r, const char *what)
{
	if (r == -ECANCELED || !ru->err)
		return r;
	memset(ru->err, 0, sizeof(*ru->err));
	if (r == -ENOSPC || r == -EDQUOT)
		snprintf(ru->err->msg, sizeof(ru->err->msg),
			 "%s: ran out of space (did something else fill the filesystem during "
			 "the probe?)", what);
	else if (r == -ENOENT || r == -ESTALE || r == -ENODEV || r == -ENXIO)
		snprintf(ru->err->msg, sizeof(ru->err->msg),
			 "%s: the filesystem went away during the probe (%s)", what, strerror(-r));
	else
		snprintf(ru->err->msg, sizeof(ru->err->msg), "%s: %s", what, strerror(-r));
	return r;
}

static double deadline(const struct run *ru)
{
	return ru->t0 + ru->o->time_budget * ru->wend[ru->phase] / ru->wsum;
}

/* Progress within the current phase, done in [0, 1]. */
static void report(struct run *ru, double done, bool force)
{
	double now = prb_now();
	double before = ru->wend[ru->phase] - ru->weight[ru->phase];
	double f;

	if (!ru->o->progress || (!force && now - ru->last_report < 0.05))
		return;
	ru->last_report = now;
	done = ru->sub_lo + (done < 0 ? 0 : done > 1 ? 1 : done) * (ru->sub_hi - ru->sub_lo);
	f = (before + done * (ru->wend[ru->phase] - before)) / ru->wsum;
	/* Phases that end early or late must not move the bar backwards. */
	if (f < ru->last_fraction)
		f = ru->last_fraction;
	ru->last_fraction = f > 1 ? 1 : f;
	ru->o->progress(ru->o->progress_ctx, ru->phase, ru->last_fraction);
}

static void tick(void *ctx, double done)
{
	report(ctx, done, false);
}

static void time_tick(struct run *ru)
{
	double start = ru->t0 + ru->o->time_budget *
		       (ru->wend[ru->phase] - ru->weight[ru->phase]) / ru->wsum;
	double end = deadline(ru);

	report(ru, end > start ? (prb_now() - start) / (end - start) : 1.0, false);
}

static bool cancelled(const struct run *ru)
{
	return ru->o->cancel && *ru->o->cancel;
}

/*
 * Runs a synchronous job in batches until `until` (0: the phase deadline;
 * after at least min_total ops) or max_total ops, appending each op's duration to
 * *out and reporting progress between batches.
 */
static int sync_loop(struct run *ru, struct prb_sync_job job, unsigned batch, size_t min_total,
		     size_t max_total, double until, struct prb_samples *out)
{
	size_t start = out->n;
	struct prb_sync_stats st;
	int r;

	job.cancel = ru->o->cancel;
	job.rng = &ru->rng;
	job.deadline = until > 0 ? until : deadline(ru);
	job.cpu_time = ru->fs->memory;
	while (out->n - start < max_total) {
		size_t done = out->n - start;

		if (done >= min_total && prb_now() >= job.deadline)
			break;
		job.max_ops = (unsigned)(max_total - done < batch ? max_total - done : batch);
		job.min_ops = done < min_total ? (unsigned)(min_total - done < job.max_ops ?
							     min_total - done : job.max_ops) : 0;
		r = prb_samples_grow(out, job.max_ops);
		if (r < 0)
			return r;
		job.times = out->v + out->n;
		r = prb_sync_run(&job, &st);
		out->n += st.ops;
		if (r < 0)
			return r;
		if (!st.ops)
			break;
		job.start = st.next;
		/* Later batches continue the file instead of starting over. */
		job.drop_cache = false;
		time_tick(ru);
	}
	return 0;
}

/* Sets or clears O_DIRECT on the data file: the synchronous phases use the
 * page cache as applications do, the queued phases bypass it. */
static int set_direct(struct run *ru, bool on)
{
	int fl = fcntl(ru->fd, F_GETFL);

	if (!ru->fs->direct)
		return 0;
	if (fl < 0 || fcntl(ru->fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) < 0)
		return -errno;
	return 0;
}

/* Buffered I/O on a disk: push written data out and drop it from the page
 * cache so that reads reach the device.  Memory filesystems keep their pages
 * (they are the storage). */
static int drop_cache(struct run *ru)
{
	if (ru->fs->direct || ru->fs->memory)
		return 0;
	if (fdatasync(ru->fd) < 0)
		return -errno;
	posix_fadvise(ru->fd, 0, 0, POSIX_FADV_DONTNEED);
	return 0;
}

static void track_usage(struct run *ru, int fd)
{
	uint64_t u = prb_file_usage(fd);

	if (u > ru->res->peak_usage)
		ru->res->peak_usage = u;
}

/* Operation latency: median duration of 4 KiB appends, each followed by
 * fsync, on a file of its own (at most 10 % of the budget). */
static int phase_latency(struct run *ru)
{
	struct prb_samples s = { 0 };
	struct prb_sync_job job = {
		.ds = SMALL_IO, .pattern = PRB_APPEND, .fsync = true,
		.span = ru->fs->budget / 10 / SMALL_IO * SMALL_IO,
	};
	void *buf = prb_buffer(SMALL_IO, ru->rng);
	int fd = -1, r;

	if (!buf)
		return -ENOMEM;
	r = prb_session_file(ru->s, false, &fd);
	if (r < 0)
		goto out_free;
	job.fd = fd;
	job.buf = buf;
	r = sync_loop(ru, job, 16, 5, 4000, 0, &s);
	track_usage(ru, fd);
	if (r < 0)
		goto out_close;
	if (s.n >= 5) {
		ru->res->latency_raw = prb_quantile_of(s.v, s.n, 0.5);
		ru->res->latency = ru->res->latency_raw;
		ru->res->have |= 1u << PRB_V_LATENCY;
	} else {
		note(ru->res, "latency: only %zu synchronous writes within the time budget", s.n);
	}
out_close:
	close(fd);
out_free:
	free(buf);
	free(s.v);
	return r;
}

/*
 * Buffered fallback of a queued phase (no O_DIRECT): the same I/Os one at a
 * time with pread/pwrite - a queue adds nothing when the page cache absorbs
 * them, and io_uring would hand buffered writes to worker threads - with
 * the written data made durable by an fdatasync inside the timed interval.
 */
static int buffered(struct run *ru, bool write, bool random, uint32_t bs, uint64_t span,
		    uint64_t max_bytes, double until, struct prb_uring_stats *ret)
{
	struct prb_samples s = { 0 };
	struct prb_sync_job job = {
		.fd = ru->fd, .ds = bs, .read = !write, .span = span / bs * bs,
		.pattern = random ? PRB_RANDOM : PRB_SEQ,
	};
	void *buf = prb_buffer(bs, ru->rng);
	double t0;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!buf)
		return -ENOMEM;
	job.buf = buf;
	t0 = prb_now();
	r = sync_loop(ru, job, 64, 1, max_bytes / bs, until, &s);
	if (r == 0 && write && fdatasync(ru->fd) < 0)
		r = -errno;
	ret->elapsed = prb_now() - t0;
	if (ru->fs->memory) {
		/* The CPU time of the copies (fdatasync does nothing there). */
		ret->elapsed = 0;
		for (size_t i = 0; i < s.n; i++)
			ret->elapsed += s.v[i];
	}
	ret->ops = s.n;
	ret->bytes = s.n * bs;
	ret->next = s.n * bs % job.span;
	free(buf);
	free(s.v);
	return r;
}

/* One queued phase on the data file, ending at `until` (0: the phase
 * deadline). */
static int queued(struct run *ru, bool write, bool random, uint32_t bs, unsigned qd,
		  uint64_t span, uint64_t max_bytes, double until, struct prb_uring_stats *ret)
{
	struct prb_uring_job job = {
		.fd = ru->fd, .write = write, .random = random, .bs = bs, .qd = qd,
		.span = span / bs * bs, .max_bytes = max_bytes,
		.deadline = until > 0 ? until : deadline(ru), .cancel = ru->o->cancel,
		.rng = &ru->rng, .tick = tick, .tick_ctx = ru,
	};
	int r;

	if (!write) {
		r = drop_cache(ru);
		if (r < 0)
			return r;
	}
	if (!ru->fs->direct)
		return buffered(ru, write, random, bs, span, max_bytes, until, ret);
	return prb_uring_run(&job, ret);
}

static double rate(const struct prb_uring_stats *st, uint64_t min_ops, double per_op)
{
	if (st->ops < min_ops || !(st->elapsed > 0))
		return 0;
	return (double)st->ops * per_op / st->elapsed;
}

static int phase_seq_write(struct run *ru)
{
	struct prb_uring_stats st;
	int r = queued(ru, true, false, LARGE_IO, BW_QD, ru->span, 4 * ru->span, 0, &st);

	ru->filled = st.bytes >= ru->span ? ru->span : st.bytes / LARGE_IO * LARGE_IO;
	track_usage(ru, ru->fd);
	if (r < 0)
		return r;
	ru->res->seq_write_bw = rate(&st, 4, LARGE_IO);
	if (ru->res->seq_write_bw > 0)
		ru->res->have |= 1u << PRB_V_SEQ_WRITE_BW;
	else
		note(ru->res, "seq-write: too few writes within the time budget");
	return 0;
}

/* The queued phases after seq-write read and overwrite what it wrote. */
static int phase_queued(struct run *ru, bool write, bool random, double *ret_bw,
			enum prb_value v)
{
	struct prb_uring_stats st;
	int r;

	if (ru->filled < 2 * LARGE_IO) {
		note(ru->res, "%s: seq-write wrote too little to work on", prb_phase_name(ru->phase));
		return 0;
	}
	r = queued(ru, write, random, LARGE_IO, BW_QD, ru->filled, 4 * ru->filled, 0, &st);
	if (r < 0)
		return r;
	*ret_bw = rate(&st, 4, LARGE_IO);
	if (*ret_bw > 0)
		ru->res->have |= 1u << v;
	else
		note(ru->res, "%s: too few I/Os within the time budget", prb_phase_name(ru->phase));
	return 0;
}

/* IOPS: 4 KiB random reads, then writes, at queue depth 32, half the phase
 * each. */
static int phase_iops(struct run *ru)
{
	struct prb_uring_stats st;
	uint64_t max = 262144 * SMALL_IO;
	int r;

	if (ru->filled < 2 * LARGE_IO) {
		note(ru->res, "iops: seq-write wrote too little to work on");
		return 0;
	}
	ru->sub_hi = 0.5;
	r = queued(ru, false, true, SMALL_IO, IOPS_QD, ru->filled, max,
		   (prb_now() + deadline(ru)) / 2, &st);
	if (r < 0)
		return r;
	ru->res->read_iops = rate(&st, 64, 1.0);
	ru->sub_lo = 0.5;
	ru->sub_hi = 1;
	r = queued(ru, true, true, SMALL_IO, IOPS_QD, ru->filled, max, 0, &st);
	if (r < 0)
		return r;
	ru->res->write_iops = rate(&st, 64, 1.0);
	ru->res->iops = fmax(ru->res->read_iops, ru->res->write_iops);
	if (ru->res->iops > 0)
		ru->res->have |= 1u << PRB_V_IOPS;
	else
		note(ru->res, "iops: too few I/Os within the time budget");
	return 0;
}

/* Seek: 4 KiB overwrites + fsync at random offsets against the same at
 * sequential offsets, in alternating groups so that drift hits both. */
static int phase_seek(struct run *ru)
{
	struct prb_samples rnd = { 0 }, seq = { 0 };
	struct prb_sync_job job = {
		.fd = ru->fd, .ds = SMALL_IO, .span = ru->filled, .fsync = true,
	};
	void *buf = prb_buffer(SMALL_IO, ru->rng);
	uint64_t next = 0;
	int r, rd;

	if (!buf)
		return -ENOMEM;
	if (ru->filled < 2 * LARGE_IO) {
		note(ru->res, "seek: seq-write wrote too little to work on");
		r = 0;
		goto out_free;
	}
	job.buf = buf;
	r = set_direct(ru, false);
	if (r < 0)
		goto out_free;
	while (!cancelled(ru) && prb_now() < deadline(ru)) {
		job.pattern = PRB_RANDOM;
		r = sync_loop(ru, job, 4, 4, 4, 0, &rnd);
		if (r < 0)
			goto out_direct;
		job.pattern = PRB_SEQ;
		job.start = next;
		r = sync_loop(ru, job, 4, 4, 4, 0, &seq);
		if (r < 0)
			goto out_direct;
		next += 4 * SMALL_IO;
	}
	if (cancelled(ru)) {
		r = -ECANCELED;
		goto out_direct;
	}
	if (rnd.n >= 8 && seq.n >= 8) {
		ru->res->seek = fmax(0, prb_quantile_of(rnd.v, rnd.n, 0.5) -
					       prb_quantile_of(seq.v, seq.n, 0.5));
		ru->res->have |= 1u << PRB_V_SEEK;
	} else {
		note(ru->res, "seek: too few synchronous writes within the time budget");
	}
out_direct:
	rd = set_direct(ru, true);
	if (r == 0)
		r = rd;
out_free:
	free(buf);
	free(rnd.v);
	free(seq.v);
	return r;
}

/*
 * Effective block size (IOSIG Sect. 7.1): buffered writes of k KiB
 * (k = 1..72) at random multiples of their size into the written, uncached
 * data file.  A write that covers only part of a block must first read it
 * (read-modify-write), so sizes that are multiples of the block size run
 * faster than their neighbours.  Rounds repeat the whole sweep; per size
 * the median write time counts.
 */
static int phase_block(struct run *ru)
{
	struct prb_samples per[SWEEP_POINTS] = { 0 };
	double tput[SWEEP_POINTS];
	void *buf = prb_buffer(SWEEP_POINTS * SWEEP_STEP, ru->rng);
	unsigned rounds = 0;
	uint64_t bs;
	int r = 0, rd;

	if (!buf)
		return -ENOMEM;
	if (ru->filled < 4 * SWEEP_POINTS * SWEEP_STEP) {
		note(ru->res, "block-size: seq-write wrote too little to work on");
		goto out_free;
	}
	r = set_direct(ru, false);
	if (r < 0)
		goto out_free;
	while (rounds < SWEEP_ROUNDS && !cancelled(ru) && prb_now() < deadline(ru)) {
		size_t k;

		/* Untimed: written pages out of the cache, so partial writes read. */
		if (fdatasync(ru->fd) < 0) {
			r = -errno;
			goto out_direct;
		}
		posix_fadvise(ru->fd, 0, 0, POSIX_FADV_DONTNEED);
		for (k = 0; k < SWEEP_POINTS && prb_now() < deadline(ru); k++) {
			struct prb_sync_job job = {
				.fd = ru->fd, .buf = buf, .ds = (k + 1) * SWEEP_STEP,
				.pattern = PRB_RANDOM, .span = ru->filled,
			};

			r = sync_loop(ru, job, SWEEP_OPS, SWEEP_OPS, SWEEP_OPS, 0, &per[k]);
			if (r < 0)
				goto out_direct;
		}
		/* Only complete rounds count: a round cut by the deadline leaves
		 * some sizes with one sample less, which the medians tolerate. */
		if (k == SWEEP_POINTS)
			rounds++;
		time_tick(ru);
	}
	if (cancelled(ru)) {
		r = -ECANCELED;
		goto out_direct;
	}
	if (!rounds) {
		note(ru->res, "block-size: the sweep did not complete once within the time budget");
		goto out_direct;
	}
	for (size_t k = 0; k < SWEEP_POINTS; k++)
		tput[k] = (double)((k + 1) * SWEEP_STEP) / prb_quantile_of(per[k].v, per[k].n, 0.5);
	/* Sizes are measured in order, so a sweep cut short by the deadline
	 * leaves the largest ones with fewer samples, never with none. */
	if (prb_block_detect(tput, SWEEP_POINTS, SWEEP_STEP, log(1.2), &bs,
			     &ru->res->block_score) == 0) {
		ru->res->block_size = bs;
		ru->res->block_detected = true;
		ru->res->have |= 1u << PRB_V_BLOCK_SIZE;
	} else {
		note(ru->res, "block-size: no read-modify-write peaks in the sweep (%u rounds)",
		     rounds);
	}
out_direct:
	rd = set_direct(ru, true);
	if (r == 0)
		r = rd;
out_free:
	if (!ru->res->block_detected)
		ru->res->block_size = ru->res->block_hint;
	for (size_t k = 0; k < SWEEP_POINTS; k++)
		free(per[k].v);
	free(buf);
	return r;
}

/* BCW profile: after a flush and a pause (empty drive buffer), sustained
 * 16 KiB sequential O_DIRECT writes without fsync, each timed. */
static int phase_bcw(struct run *ru)
{
	struct prb_samples s = { 0 };
	struct prb_sync_job job = {
		.fd = ru->fd, .ds = BCW_IO, .pattern = PRB_SEQ, .span = ru->filled,
	};
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	void *buf = prb_buffer(BCW_IO, ru->rng);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	if (!ru->fs->direct) {
		note(ru->res, "bcw: needs O_DIRECT (buffered writes would time the page cache)");
		goto out_free;
	}
	if (ru->filled < 2 * LARGE_IO) {
		note(ru->res, "bcw: seq-write wrote too little to work on");
		goto out_free;
	}
	/* The BCW paper starts every buffered-write sequence with a sync. */
	if (fdatasync(ru->fd) < 0) {
		r = -errno;
		goto out_free;
	}
	nanosleep(&pause, NULL);
	job.buf = buf;
	r = sync_loop(ru, job, 256, 16, BCW_MAX_OPS, 0, &s);
	if (r < 0)
		goto out_free;
	if (prb_bcw_classify(s.v, s.n, BCW_IO, BCW_MIN_RATIO, &ru->res->bcw,
			     &ru->res->bcw_info) == 0)
		ru->res->have |= 1u << PRB_V_BCW;
	else
		note(ru->res, "bcw: no fast/mid/slow staircase in %zu writes (slow/fast ratio %.1f)",
		     s.n, ru->res->bcw_info.ratio);
out_free:
	free(buf);
	free(s.v);
	return r;
}

static int run_phase(struct run *ru, enum prb_phase p)
{
	int r = 0;

	if (ru->weight[p] == 0)
		return 0;
	if (cancelled(ru))
		return -ECANCELED;
	ru->phase = p;
	ru->sub_lo = 0;
	ru->sub_hi = 1;
	report(ru, 0, true);
	switch (p) {
	case PRB_PH_LATENCY:
		r = phase_latency(ru);
		break;
	case PRB_PH_SEQ_WRITE:
		r = phase_seq_write(ru);
		break;
	case PRB_PH_SEQ_READ:
		r = phase_queued(ru, false, false, &ru->res->seq_read_bw, PRB_V_SEQ_READ_BW);
		break;
	case PRB_PH_RAND_WRITE:
		r = phase_queued(ru, true, true, &ru->res->rand_write_bw, PRB_V_RAND_WRITE_BW);
		break;
	case PRB_PH_RAND_READ:
		r = phase_queued(ru, false, true, &ru->res->rand_read_bw, PRB_V_RAND_READ_BW);
		break;
	case PRB_PH_IOPS:
		r = phase_iops(ru);
		break;
	case PRB_PH_SEEK:
		r = phase_seek(ru);
		break;
	case PRB_PH_BLOCK:
		r = phase_block(ru);
		break;
	case PRB_PH_BCW:
		r = phase_bcw(ru);
		break;
	case PRB_PH_COUNT:
		break;
	}
	if (r == -ENOSYS) {
		/* io_uring is disabled (io_uring_disabled sysctl, seccomp):
		 * the queued phases cannot run; the others still can. */
		note(ru->res, "%s: io_uring is unavailable", prb_phase_name(p));
		r = 0;
	}
	report(ru, 1, true);
	return r;
}

int prb_run(struct prb_session *s, const struct prb_opts *opts, struct prb_result *ret,
	    struct iosig_error *err)
{
	struct run ru = { .s = s, .o = opts, .res = ret, .err = err, .fd = -1 };
	double w = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	ru.fs = prb_session_info(s);
	ret->fs = *ru.fs;
	if (!(opts->time_budget > 0)) {
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->msg, sizeof(err->msg), "the time budget must be positive");
		}
		return -EINVAL;
	}
	ru.rng = opts->seed ? opts->seed : 0x105167;
	ret->block_hint = ru.fs->blksize > ru.fs->fs_bsize ? ru.fs->blksize : ru.fs->fs_bsize;
	for (int p = 0; p < PRB_PH_COUNT; p++) {
		bool rot_only = p == PRB_PH_SEEK || p == PRB_PH_BCW;

		if ((!rot_only || opts->rotational) &&
		    !(p == PRB_PH_LATENCY && opts->latency_raw > 0))
			ru.weight[p] = phase_weight[p];
		w += ru.weight[p];
		ru.wend[p] = w;
	}
	ru.wsum = w;
	/* 85 % of the budget for the data file; the rest covers the latency file
	 * (which is gone before the data file grows) and filesystem metadata. */
	ru.span = ru.fs->budget / 100 * 85 / LARGE_IO * LARGE_IO;
	if (!ru.fs->direct)
		note(ret, ru.fs->memory ? "memory filesystem: buffered I/O (the page cache is the "
			  "storage)" : "no O_DIRECT (unsupported, or --buffered): buffered I/O with "
			  "fdatasync, page cache dropped before reads");
	ru.t0 = prb_now();

	if (opts->latency_raw > 0) {
		/* Measured side by side with other mounts (prb_latency_joint()). */
		ret->latency_raw = ret->latency = opts->latency_raw;
		ret->have |= 1u << PRB_V_LATENCY;
	}
	r = run_phase(&ru, PRB_PH_LATENCY);
	if (r < 0) {
		fail(&ru, r, "latency");
		goto out;
	}
	r = prb_session_file(s, true, &ru.fd);
	if (r < 0) {
		fail(&ru, r, "creating the data file");
		goto out;
	}
	for (enum prb_phase p = PRB_PH_SEQ_WRITE; p < PRB_PH_COUNT; p++) {
		r = run_phase(&ru, p);
		if (r < 0) {
			fail(&ru, r, prb_phase_name(p));
			break;
		}
	}
	track_usage(&ru, ru.fd);
	close(ru.fd);
out:
	/* Eq. 3 charges a 4 KiB write l + 4 KiB / wbw: take the transfer out of
	 * the measured time (keeping at least a quarter of it). */
	if ((ret->have & (1u << PRB_V_LATENCY)) && ret->seq_write_bw > 0)
		ret->latency = fmax(ret->latency_raw - (double)SMALL_IO / ret->seq_write_bw,
				    0.25 * ret->latency_raw);
	if (ret->block_size == 0)
		ret->block_size = ret->block_hint;
	ret->elapsed = prb_now() - ru.t0;
	return r;
}

double prb_latency_weight(bool rotational)
{
	double w = 0;

	for (int p = 0; p < PRB_PH_COUNT; p++)
		if (rotational || (p != PRB_PH_SEEK && p != PRB_PH_BCW))
			w += phase_weight[p];
	return phase_weight[PRB_PH_LATENCY] / w;
}

int prb_latency_joint(struct prb_session *const *s, size_t n, double seconds,
		      const volatile sig_atomic_t *cancel, void (*progress)(void *ctx, double done),
		      void *progress_ctx, double *ret_raw, int *ret_status)
{
	struct prb_samples *t = calloc(n ? n : 1, sizeof(*t));
	uint64_t *pos = calloc(n ? n : 1, sizeof(*pos));
	int *fd = calloc(n ? n : 1, sizeof(*fd));
	void *buf = prb_buffer(SMALL_IO, 5);
	double t0 = prb_now(), end = t0 + seconds, last = 0;
	int r = 0;

	if (!t || !pos || !fd || !buf) {
		r = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		ret_raw[i] = 0;
		ret_status[i] = prb_session_file(s[i], false, &fd[i]);
		if (ret_status[i] < 0)
			fd[i] = -1;
	}
	for (unsigned turn = 0;; turn++) {
		bool any = false;

		for (size_t j = 0; j < n; j++) {
			/* Rotate who goes first, so no mount always follows another. */
			size_t i = (j + turn) % n;
			const struct prb_fsinfo *fi = prb_session_info(s[i]);
			struct prb_sync_stats st;
			double d;
			struct prb_sync_job job = {
				.fd = fd[i], .buf = buf, .ds = SMALL_IO, .pattern = PRB_APPEND,
				.span = fi->budget / 10 / SMALL_IO * SMALL_IO, .start = pos[i],
				.fsync = true, .min_ops = 1, .max_ops = 1, .cancel = cancel,
				.times = &d, .cpu_time = fi->memory,
			};

			if (fd[i] < 0 || t[i].n >= 4000 || (t[i].n >= 5 && prb_now() >= end))
				continue;
			r = prb_sync_run(&job, &st);
			if (r == -ECANCELED)
				goto out_close;
			if (r < 0) {
				/* This mount fails; the others go on. */
				ret_status[i] = r;
				close(fd[i]);
				fd[i] = -1;
				r = 0;
				continue;
			}
			pos[i] = st.next;
			r = prb_samples_grow(&t[i], 1);
			if (r < 0)
				goto out_close;
			t[i].v[t[i].n++] = d;
			any = true;
		}
		if (!any)
			break;
		if (progress && prb_now() - last >= 0.05) {
			last = prb_now();
			progress(progress_ctx, seconds > 0 ? fmin(1, (last - t0) / seconds) : 1);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (ret_status[i] == 0 && t[i].n >= 5)
			ret_raw[i] = prb_quantile_of(t[i].v, t[i].n, 0.5);
out_close:
	for (size_t i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
out_free:
	for (size_t i = 0; t && i < n; i++)
		free(t[i].v);
	free(t);
	free(pos);
	free(fd);
	free(buf);
	return r;
}
