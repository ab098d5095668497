/* SPDX-License-Identifier: MIT */
/*
 * mios.c - MIOS, the mixed SSD-HDD I/O scheduler built on Buffer-Controlled
 * Writes (BCW) of the BCW/MIOS paper (Pangu hybrid storage), registered as
 * mios-d and mios-e.
 *
 * Workload requests live on the SSD (their home device).  An HDD next to it
 * absorbs writes in its controller buffer at micro-second latency while the
 * buffer has room: a write is Fast (F) until W_f bytes were written since
 * the buffer was empty, then a Slow (S) write (the buffer flushes, ms) is
 * followed by Mid (M) writes for W_m bytes, then S again, and so on.
 *
 *  - Predictor (paper Algorithm 1): next state F if ADW + size < W_f in F,
 *    M if ADW + size < W_m in M, after S comes M; a completed write slower
 *    than slow_lat is an observed S (state M, ADW 0).
 *  - BCW (Algorithm 2): writes go to the HDD one at a time, appended to a
 *    log area; when the next write would be S, padding PS (64 KiB of
 *    non-user data) is written to trigger it; while the HDD queue is empty
 *    in M, padding PF (4 KiB) keeps the write stream continuous (no padding
 *    in F).  A sequence ends after seq_pairs M/S pairs.  An interrupted or
 *    unknown state is recalibrated with PS until an S is seen; a sequence
 *    starts in F if the HDD was idle for idle_reset (or after a FLUSH with
 *    sync_start=1).
 *  - Steering (Algorithm 3): with l(t) = requests queued or in flight at the
 *    SSD, a write goes to the HDD if l(t) > L and the prediction is F or M;
 *    mios-e also sends it when the prediction is F whatever l(t); otherwise
 *    it goes to the SSD.
 *  - A location table maps SSD (home) extents whose newest data is on the
 *    HDD; reads follow it (split when straddling) and a read on the HDD
 *    interrupts BCW.
 *  - HDD GC: when BCW is off and the HDD has been idle gc_idle, or the log
 *    passed gc_threshold of its size, live log extents are read and written
 *    to the HDD's data area (offset log_size + home offset, the "original
 *    files"), then the log is recycled.
 *  - big_write (off by default): streams whose typical write is at least
 *    this big stay on the SSD (the paper's Fig. 9: large writes lose on the
 *    HDD).  The typical size is profiled (mean of the first profile_n
 *    writes), or with use_hints=1 taken from the stream's declared
 *    size_per_io on its first request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_builtin.h"
#include "pol_util.h"

#define MIOS_POOL 64
#define MIOS_PIECES 4096

enum { ST_F = 0, ST_M = 1, ST_S = 2 };
enum { MODE_D = 0, MODE_E = 1 };

struct mios_opts {
	uint64_t L;
	uint64_t w_fast, w_mid;
	uint64_t slow_lat;
	uint64_t pad_fast, pad_slow;
	uint64_t seq_pairs;
	uint64_t idle_reset;
	bool sync_start;
	uint64_t log_size;
	double gc_threshold;
	uint64_t gc_idle;
	uint64_t big_write;
	uint64_t profile_n;
	bool use_hints;
};

/* A run of user data appended to the log. */
struct chunk {
	uint64_t home_off, len, log_off;
};

struct mstream {
	uint64_t n, sum;      /* writes seen, their bytes (profiling) */
	uint64_t hint;        /* declared size_per_io of the first request */
	bool hinted;
};

struct mios {
	struct mios_opts o;
	struct policy_env *env;
	int mode;
	unsigned ssd, hdd;
	uint64_t wf, wm, slow_lat;

	struct policy_list ssd_q;     /* requests for the SSD (home offsets) */
	unsigned ssd_pending;
	struct policy_list hdd_reads; /* reads of data on the HDD; pdata[1] = HDD offset */
	struct policy_list hdd_writes; /* redirected writes, in order */
	uint64_t hdd_wq_bytes;
	bool hdd_busy;                /* BCW needs writes one at a time */
	uint64_t hdd_idle_since;

	bool bcw;                     /* a buffered-write sequence is running */
	bool syncing;                 /* a FLUSH is due or running */
	int state;                    /* ST_F or ST_M */
	uint64_t adw;                 /* bytes written in the current state */
	uint64_t pairs;               /* S events in this sequence */
	uint64_t since_s;             /* bytes written since the last S, FLUSH or recalibration */
	bool no_s;                    /* a sequence gave up waiting for an S (below) */

	uint64_t log_size, log_head;
	struct chunk *chunks;
	size_t nchunks, capchunks;
	bool gc;                      /* GC running */
	size_t gc_chunk;              /* next chunk to look at */
	uint64_t gc_pos;              /* home offset reached inside it */
	struct chunk gc_move;         /* the sub-range in flight: home, len, log offset */
	struct policy_req *gc_req;

	struct pol_extmap loc;        /* SSD extents whose data is on the HDD */
	struct pol_splitter split;
	struct policy_list waiting;   /* reads waiting for pieces */
	struct pol_pool internal;     /* padding, flush, GC */
	struct pol_map streams;

	/* counters */
	uint64_t ssd_write_bytes, ssd_writes, hdd_write_bytes, hdd_writes_n;
	uint64_t pad_bytes, pad_writes, s_events, sequences, recalibrations;
	uint64_t hdd_read_bytes, gc_bytes, gc_runs, log_peak, split_reads, big_kept, spilled;
	uint64_t s_missing;
};

static const struct policy_opt mios_opts[] = {
	{ .name = "L", .type = POLICY_OPT_UINT, .off = offsetof(struct mios_opts, L),
	  .def = "2", .min = 0, .max = 1u << 20,
	  .help = "SSD queue length above which writes are steered to the HDD (paper: 1-3 by workload)" },
	{ .name = "w_fast", .type = POLICY_OPT_SIZE, .off = offsetof(struct mios_opts, w_fast),
	  .def = "0", .min = 0, .max = 1ull << 40,
	  .help = "W_f, bytes of the Fast state (0 = the device's probed profile, else 16MiB as the paper's 10TB WD)" },
	{ .name = "w_mid", .type = POLICY_OPT_SIZE, .off = offsetof(struct mios_opts, w_mid),
	  .def = "0", .min = 0, .max = 1ull << 40,
	  .help = "W_m, bytes of each Mid state (0 = the device's profile, else 8MiB)" },
	{ .name = "slow_lat", .type = POLICY_OPT_TIME, .off = offsetof(struct mios_opts, slow_lat),
	  .def = "0", .min = 0, .max = 10 * POLICY_NS_PER_S,
	  .help = "a write at least this slow is an S write (0 = midway between the profile's L_m and L_s, else 2ms)" },
	{ .name = "pad_fast", .type = POLICY_OPT_SIZE, .off = offsetof(struct mios_opts, pad_fast),
	  .def = "4KiB", .min = 512, .max = 64ull << 20,
	  .help = "PF: padding written in the F/M states while the HDD queue is empty" },
	{ .name = "pad_slow", .type = POLICY_OPT_SIZE, .off = offsetof(struct mios_opts, pad_slow),
	  .def = "64KiB", .min = 512, .max = 64ull << 20,
	  .help = "PS: padding written to trigger the S state" },
	{ .name = "seq_pairs", .type = POLICY_OPT_UINT, .off = offsetof(struct mios_opts, seq_pairs),
	  .def = "10", .min = 1, .max = 1u << 20,
	  .help = "Mid/Slow stage pairs in one buffered-write sequence (paper: 1 Fast + 10 pairs)" },
	{ .name = "idle_reset", .type = POLICY_OPT_TIME, .off = offsetof(struct mios_opts, idle_reset),
	  .def = "200ms", .min = 0, .max = 3600 * POLICY_NS_PER_S,
	  .help = "HDD idle time after which its buffer counts as empty (a sequence starts in F)" },
	{ .name = "sync_start", .type = POLICY_OPT_BOOL, .off = offsetof(struct mios_opts, sync_start),
	  .def = "0",
	  .help = "start a sequence with a FLUSH (the paper's sync()) instead of PS recalibration" },
	{ .name = "log_size", .type = POLICY_OPT_SIZE, .off = offsetof(struct mios_opts, log_size),
	  .def = "0", .min = 0, .max = UINT64_MAX,
	  .help = "size of the HDD append log at the start of the HDD (0 = half the HDD)" },
	{ .name = "gc_threshold", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct mios_opts, gc_threshold),
	  .def = "0.7", .fmin = 0.01, .fmax = 1,
	  .help = "log fill that forces HDD GC (paper: 70%)" },
	{ .name = "gc_idle", .type = POLICY_OPT_TIME, .off = offsetof(struct mios_opts, gc_idle),
	  .def = "1s", .min = 0, .max = 3600 * POLICY_NS_PER_S,
	  .help = "HDD idle time after which GC runs" },
	{ .name = "big_write", .type = POLICY_OPT_SIZE, .off = offsetof(struct mios_opts, big_write),
	  .def = "0", .min = 0, .max = 1ull << 40,
	  .help = "streams whose typical write is this big stay on the SSD (0 = off; the paper's Fig. 9 suggests 256KiB)" },
	{ .name = "profile_n", .type = POLICY_OPT_UINT, .off = offsetof(struct mios_opts, profile_n),
	  .def = "8", .min = 1, .max = 1u << 20,
	  .help = "writes of a stream averaged before its typical size is known (big_write)" },
	{ .name = "use_hints", .type = POLICY_OPT_BOOL, .off = offsetof(struct mios_opts, use_hints),
	  .def = "0",
	  .help = "take a stream's typical write size from its declared size_per_io instead of profiling" },
	{ .name = NULL },
};

/* ---- set-up ---- */

static int mios_init_mode(struct policy *pol, int mode)
{
	struct policy_env *env = pol->env;
	struct mios *m;
	const struct policy_dev_info *hd;
	unsigned d, ssd = env->ndev, hdd = env->ndev;
	int r;

	for (d = 0; d < env->ndev; d++) {
		if (env->dev[d].cls == IOSIG_CLASS_SSD && ssd == env->ndev)
			ssd = d;
		if (env->dev[d].cls == IOSIG_CLASS_HDD && hdd == env->ndev)
			hdd = d;
	}
	if (ssd == env->ndev || hdd == env->ndev) {
		pol_err(pol, "needs an SSD and an HDD; the engine offers %s",
			ssd == env->ndev ? "no SSD" : "no HDD");
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->o = *(struct mios_opts *)pol->opts;
	m->env = env;
	m->mode = mode;
	m->ssd = ssd;
	m->hdd = hdd;
	hd = &env->dev[hdd];
	m->wf = m->o.w_fast ? m->o.w_fast : hd->bcw.wf >= 1 ? (uint64_t)hd->bcw.wf : 16ull << 20;
	m->wm = m->o.w_mid ? m->o.w_mid : hd->bcw.wm >= 1 ? (uint64_t)hd->bcw.wm : 8ull << 20;
	m->slow_lat = m->o.slow_lat ? m->o.slow_lat :
		      policy_s_to_ns(hd->bcw.ls) ?
		      (policy_s_to_ns(hd->bcw.lm) + policy_s_to_ns(hd->bcw.ls)) / 2 :
		      2 * POLICY_NS_PER_MS;
	m->log_size = m->o.log_size ? m->o.log_size : hd->capacity / 2;
	if (m->log_size >= hd->capacity ||
	    hd->capacity - m->log_size < env->dev[ssd].capacity) {
		pol_err(pol, "the HDD (%s) cannot hold a %llu-byte log plus a copy of the SSD's %llu bytes; lower log_size",
			hd->name ? hd->name : "?", (unsigned long long)m->log_size,
			(unsigned long long)env->dev[ssd].capacity);
		r = -EINVAL;
		goto out_free;
	}
	r = pol_extmap_init(&m->loc, env->ndev);
	if (r < 0)
		goto out_free;
	r = pol_splitter_init(&m->split, MIOS_PIECES);
	if (r < 0)
		goto out_loc;
	r = pol_pool_init(&m->internal, MIOS_POOL);
	if (r < 0)
		goto out_split;
	pol_list_init(&m->ssd_q);
	pol_list_init(&m->hdd_reads);
	pol_list_init(&m->hdd_writes);
	pol_list_init(&m->waiting);
	pol_map_init(&m->streams);
	m->hdd_idle_since = env->now(env);
	pol->priv = m;
	return 0;

out_split:
	pol_splitter_free(&m->split);
out_loc:
	pol_extmap_free(&m->loc);
out_free:
	free(m);
	return r;
}

static int mios_d_init(struct policy *pol)
{
	return mios_init_mode(pol, MODE_D);
}

static int mios_e_init(struct policy *pol)
{
	return mios_init_mode(pol, MODE_E);
}

/* ---- predictor and steering ---- */

/* Paper Algorithm 1, with `already` bytes counted ahead of this write. */
static int predict(const struct mios *m, uint64_t already, uint64_t size)
{
	if (m->syncing)
		return ST_S;
	if (m->state == ST_F)
		return m->adw + already + size < m->wf ? ST_F : ST_S;
	return m->adw + already + size < m->wm ? ST_M : ST_S;
}

static struct mstream *stream_get(struct mios *m, uint32_t id)
{
	struct mstream *s = pol_map_get(&m->streams, id);

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (s && pol_map_put(&m->streams, id, s) < 0) {
		free(s);
		s = NULL;
	}
	return s;
}

/* Whether the stream's writes are too big for the HDD (big_write). */
static bool too_big(struct mios *m, const struct policy_req *w)
{
	struct mstream *s;
	uint64_t typical = 0;

	if (!m->o.big_write)
		return false;
	s = stream_get(m, w->stream);
	if (!s)
		return false;
	if (!s->hinted) {
		s->hinted = true;
		s->hint = w->hint_size;
	}
	s->n++;
	s->sum += w->len;
	if (m->o.use_hints && s->hint)
		typical = s->hint;
	else if (s->n >= m->o.profile_n)
		typical = s->sum / s->n;
	return typical >= m->o.big_write && typical;
}

static bool hdd_usable(const struct mios *m, uint64_t len)
{
	return !m->gc && (!m->bcw || m->pairs < m->o.seq_pairs) &&
	       m->log_head + m->hdd_wq_bytes + len <= m->log_size &&
	       (double)(m->log_head + m->hdd_wq_bytes + len) <=
		       m->o.gc_threshold * (double)m->log_size;
}

/* Starts a buffered-write sequence; false when none may start now: the
 * disk's state is unknown and recalibrating it found no S the last time
 * (no_s) - only an idle disk, whose buffer is empty, starts one then. */
static bool bcw_start(struct mios *m, uint64_t now)
{
	bool idle = !m->hdd_busy && now - m->hdd_idle_since >= m->o.idle_reset;

	if (!idle && !m->o.sync_start && m->no_s)
		return false;
	m->bcw = true;
	m->pairs = 0;
	m->since_s = 0;
	m->sequences++;
	if (idle) {
		/* The buffer drained while the disk idled. */
		m->state = ST_F;
		m->adw = 0;
	} else if (m->o.sync_start) {
		m->syncing = true;
	} else {
		/* Unknown buffer state: pad with PS until an S shows. */
		m->state = ST_M;
		m->adw = m->wm;
		m->recalibrations++;
	}
	return true;
}

static void to_ssd_q(struct mios *m, struct policy_req *r)
{
	pol_list_add_tail(&m->ssd_q, &r->link);
	m->ssd_pending++;
}

/* Paper Algorithm 3: where a user write goes. */
static void steer_write(struct mios *m, struct policy_req *w)
{
	struct policy_env *env = m->env;
	unsigned l = m->ssd_pending + env->inflight(env, m->ssd);
	bool busy = l > m->o.L;
	int p;

	if (too_big(m, w)) {
		m->big_kept++;
		goto ssd;
	}
	if (!hdd_usable(m, w->len))
		goto ssd;
	if (!m->bcw) {
		if (!busy && m->mode != MODE_E)
			goto ssd;
		if (!bcw_start(m, env->now(env)))
			goto ssd;
	}
	p = predict(m, m->hdd_wq_bytes, w->len);
	if ((busy && p != ST_S) || (m->mode == MODE_E && p == ST_F)) {
		pol_list_add_tail(&m->hdd_writes, &w->link);
		m->hdd_wq_bytes += w->len;
		return;
	}
ssd:
	/* The newest data is on the SSD again. */
	pol_extmap_clear(&m->loc, w->dev, w->offset, w->len);
	to_ssd_q(m, w);
}

/* ---- reads ---- */

static void piece_home(void *ctx, struct policy_req *p)
{
	to_ssd_q(ctx, p);
}

static void piece_mapped(void *ctx, struct policy_req *p, unsigned tdev, uint64_t toff)
{
	struct mios *m = ctx;

	p->pdata[1] = toff;
	pol_list_add_tail(&m->hdd_reads, &p->link);
}

static const struct pol_split_ops mios_split_ops = { .home = piece_home, .mapped = piece_mapped };

static bool route_read(struct mios *m, struct policy_req *r)
{
	struct pol_ext *e = pol_extmap_first(&m->loc, r->dev, r->offset, r->len);

	if (!e) {
		to_ssd_q(m, r);
		return true;
	}
	if (pol_ext_off(e) <= r->offset && pol_ext_off(e) + e->len >= r->offset + r->len) {
		r->pdata[1] = e->toff + (r->offset - pol_ext_off(e));
		pol_list_add_tail(&m->hdd_reads, &r->link);
		return true;
	}
	if (pol_split_read(&m->split, &m->loc, r, m->env->now(m->env), &mios_split_ops, m) < 0)
		return false;
	m->split_reads++;
	return true;
}

static int mios_submit(struct policy *pol, struct policy_req *req)
{
	struct mios *m = pol->priv;

	if (req->dev != m->ssd || req->op == POLICY_OP_FLUSH)
		return -EINVAL;   /* workload data lives on the SSD; the HDD is MIOS's */
	if (req->op == POLICY_OP_WRITE) {
		steer_write(m, req);
		return 0;
	}
	if (!route_read(m, req))
		pol_list_add_tail(&m->waiting, &req->link);
	return 0;
}

/* ---- HDD: BCW, reads, GC ---- */

/* An internal request about [home_off, + len) of the SSD (the home range
 * it moves, policy.h); padding and FLUSH concern no home range. */
static struct policy_req *internal(struct mios *m, uint8_t op, uint64_t home_off, uint64_t len,
				   uint8_t flags)
{
	return pol_pool_get(&m->internal, op, (uint16_t)m->ssd, home_off, len, flags,
			    m->env->now(m->env));
}

/* Appends a user write or padding at the log head. */
static void log_append(struct mios *m, struct policy_req *r)
{
	uint64_t off = m->log_head;

	m->log_head += r->len;
	if (m->log_head > m->log_peak)
		m->log_peak = m->log_head;
	m->hdd_busy = true;
	if (r->flags & POLICY_REQ_PAD) {
		m->pad_bytes += r->len;
		m->pad_writes++;
	} else {
		struct chunk *c;

		if (m->nchunks == m->capchunks) {
			size_t cap = m->capchunks ? 2 * m->capchunks : 64;
			struct chunk *n = realloc(m->chunks, cap * sizeof(*n));

			if (n) {
				m->chunks = n;
				m->capchunks = cap;
			}
		}
		/* Without a chunk record (no memory) GC cannot move it, but the
		 * location table still finds it; reads stay correct. */
		if (m->nchunks < m->capchunks) {
			c = &m->chunks[m->nchunks++];
			c->home_off = r->offset;
			c->len = r->len;
			c->log_off = off;
		}
		pol_extmap_set(&m->loc, r->dev, r->offset, r->len, m->hdd, off);
		m->hdd_write_bytes += r->len;
		m->hdd_writes_n++;
	}
	pol_issue(m->env, r, m->hdd, off);
}

static bool pad(struct mios *m, uint64_t len)
{
	struct policy_req *p;

	if (m->log_head + len > m->log_size)
		return false;
	p = internal(m, POLICY_OP_WRITE, 0, len, POLICY_REQ_PAD);
	if (!p)
		return false;
	log_append(m, p);
	return true;
}

/* The live part of chunk c at or after home offset from, as (home, len,
 * log); false when nothing of c from there is still in the log. */
static bool live_range(struct mios *m, const struct chunk *c, uint64_t from, struct chunk *ret)
{
	uint64_t end = c->home_off + c->len;
	struct pol_ext *e;

	for (e = pol_extmap_first(&m->loc, m->ssd, from, end - from); e && pol_ext_off(e) < end;
	     e = pol_extmap_next(&m->loc, m->ssd, e)) {
		uint64_t s = pol_ext_off(e) > from ? pol_ext_off(e) : from;
		uint64_t t = pol_ext_off(e) + e->len < end ? pol_ext_off(e) + e->len : end;

		if (e->tdev == m->hdd && e->toff + (s - pol_ext_off(e)) == c->log_off + (s - c->home_off)) {
			ret->home_off = s;
			ret->len = t - s;
			ret->log_off = c->log_off + (s - c->home_off);
			return true;
		}
	}
	return false;
}

/* Next GC step: read the next live log range; false when GC is done. */
static bool gc_step(struct mios *m)
{
	while (m->gc_chunk < m->nchunks) {
		struct chunk *c = &m->chunks[m->gc_chunk];
		uint64_t from = m->gc_pos > c->home_off ? m->gc_pos : c->home_off;

		if (from < c->home_off + c->len && live_range(m, c, from, &m->gc_move)) {
			struct policy_req *r = internal(m, POLICY_OP_READ, m->gc_move.home_off,
							m->gc_move.len, 0);

			if (!r)
				return true;   /* retry when a request frees up */
			m->gc_pos = m->gc_move.home_off + m->gc_move.len;
			m->gc_req = r;
			m->hdd_busy = true;
			pol_issue(m->env, r, m->hdd, m->gc_move.log_off);
			return true;
		}
		m->gc_chunk++;
		m->gc_pos = 0;
	}
	/* Every live range moved: recycle the log. */
	m->gc = false;
	m->nchunks = 0;
	m->gc_chunk = 0;
	m->gc_pos = 0;
	m->log_head = 0;
	return false;
}

/* The log cannot take what BCW needs next (padding filled it): the
 * queued writes go to the SSD instead, and the sequence ends (GC may run).
 * Without this they waited for a completion that never came. */
static void spill_writes(struct mios *m)
{
	while (!pol_list_empty(&m->hdd_writes)) {
		struct policy_req *w = pol_container_of(m->hdd_writes.next, struct policy_req, link);

		pol_list_del(&w->link);
		m->hdd_wq_bytes -= w->len;
		pol_extmap_clear(&m->loc, w->dev, w->offset, w->len);
		to_ssd_q(m, w);
		m->spilled++;
	}
	m->bcw = false;
}

static void hdd_dispatch(struct mios *m)
{
	struct policy_env *env = m->env;
	uint64_t now = env->now(env);

	if (m->hdd_busy || !pol_dev_room(env, m->hdd))
		return;
	if (!pol_list_empty(&m->hdd_reads)) {
		struct policy_req *r = pol_container_of(m->hdd_reads.next, struct policy_req, link);

		pol_list_del(&r->link);
		m->hdd_busy = true;
		m->hdd_read_bytes += r->len;
		if (m->bcw) {
			/* A read breaks the write stream: recalibrate after it. */
			m->state = ST_M;
			m->adw = m->wm;
			m->since_s = 0;
			m->recalibrations++;
		}
		r->merge_next = NULL;
		pol_issue(env, r, m->hdd, r->pdata[1]);
		return;
	}
	if (m->bcw) {
		if (m->syncing) {
			struct policy_req *f = internal(m, POLICY_OP_FLUSH, 0, 0, 0);

			if (f) {
				m->hdd_busy = true;
				pol_issue(env, f, m->hdd, 0);
			}
			return;
		}
		if (m->since_s >= m->wf + m->wm) {
			/* No S after more than a whole buffer (W_f + W_m) since the
			 * last one (or since the state became unknown): the disk does not behave as its profile says -
			 * no write buffer (not a disk at all, as a loop device or an
			 * SSD), or a larger one.  PS padding would fill the log
			 * without ever seeing an S (seen: 344 MB of padding, the
			 * whole log, and not one write steered).  The sequence ends;
			 * until an S is seen again, only an idle disk starts one. */
			m->no_s = true;
			m->s_missing++;
			spill_writes(m);
			goto gc;
		}
		if (!pol_list_empty(&m->hdd_writes)) {
			struct policy_req *w = pol_container_of(m->hdd_writes.next, struct policy_req, link);

			if (m->log_head + w->len > m->log_size ||
			    (predict(m, 0, w->len) == ST_S &&
			     m->log_head + m->o.pad_slow + w->len > m->log_size)) {
				spill_writes(m);
				goto gc;
			}
			if (predict(m, 0, w->len) == ST_S) {
				pad(m, m->o.pad_slow);   /* skip the S state with padding */
				return;
			}
			pol_list_del(&w->link);
			m->hdd_wq_bytes -= w->len;
			w->merge_next = NULL;
			log_append(m, w);
			return;
		}
		if (m->pairs < m->o.seq_pairs && m->log_head + m->o.pad_slow <= m->log_size) {
			/* Nothing queued: near the end of a state, PS triggers the
			 * S now; in M, PF keeps the stream continuous; F needs no
			 * padding. */
			if (predict(m, 0, m->o.pad_fast) == ST_S)
				pad(m, m->o.pad_slow);
			else if (m->state == ST_M)
				pad(m, m->o.pad_fast);
			return;
		}
		m->bcw = false;   /* sequence over: the HDD is free for GC */
	}
gc:
	if (m->gc) {
		gc_step(m);
		return;
	}
	if (!m->nchunks && m->log_head) {
		/* Nothing but padding in the log: there is nothing to move, so it
		 * is recycled at once.  (GC starts only with chunks to move; a log
		 * that padding alone had filled - sequences with few writes to
		 * steer - stayed full, and every write went to the SSD for good.) */
		m->log_head = 0;
	}
	if (m->nchunks && ((double)m->log_head >= m->o.gc_threshold * (double)m->log_size ||
			   now - m->hdd_idle_since >= m->o.gc_idle)) {
		m->gc = true;
		m->gc_runs++;
		gc_step(m);
		return;
	}
	if (m->nchunks)
		env->wake_at(env, m->hdd_idle_since + m->o.gc_idle);
}

static void ssd_dispatch(struct mios *m)
{
	struct policy_env *env = m->env;

	while (!pol_list_empty(&m->ssd_q) && pol_dev_room(env, m->ssd)) {
		struct policy_req *r = pol_container_of(m->ssd_q.next, struct policy_req, link);

		pol_list_del(&r->link);
		m->ssd_pending--;
		if (r->op == POLICY_OP_WRITE) {
			m->ssd_write_bytes += r->len;
			m->ssd_writes++;
		}
		r->merge_next = NULL;
		pol_issue(env, r, m->ssd, r->offset);
	}
}

static void mios_dispatch(struct policy *pol)
{
	struct mios *m = pol->priv;

	hdd_dispatch(m);
	ssd_dispatch(m);
}

static void retry_waiting(struct mios *m)
{
	while (!pol_list_empty(&m->waiting)) {
		struct policy_req *w = pol_container_of(m->waiting.next, struct policy_req, link);

		pol_list_del(&w->link);
		if (!route_read(m, w)) {
			pol_list_add_head(&m->waiting, &w->link);
			break;
		}
	}
}

static void mios_complete(struct policy *pol, struct policy_req *req)
{
	struct mios *m = pol->priv;
	struct policy_env *env = m->env;
	uint64_t now = env->now(env);

	if (req->issued_dev == m->hdd) {
		m->hdd_busy = false;
		m->hdd_idle_since = now;
		if (req->op == POLICY_OP_FLUSH) {
			m->syncing = false;
			m->state = ST_F;
			m->adw = 0;
			m->since_s = 0;
		} else if (req->op == POLICY_OP_WRITE && req != m->gc_req) {
			if (now - req->issue_ns >= m->slow_lat) {
				/* Observed S: the buffer flushed; Mid writes follow. */
				m->no_s = false;
				m->since_s = 0;
				m->state = ST_M;
				m->adw = 0;
				m->pairs++;
				m->s_events++;
			} else {
				m->adw += req->len;
				m->since_s += req->len;
			}
		}
		if (req == m->gc_req) {
			m->gc_req = NULL;
			if (req->op == POLICY_OP_READ) {
				/* Now write it to its place in the HDD's data area. */
				struct policy_req *w = internal(m, POLICY_OP_WRITE, m->gc_move.home_off,
								 m->gc_move.len, 0);

				if (w) {
					m->gc_req = w;
					m->hdd_busy = true;
					pol_issue(env, w, m->hdd, m->log_size + m->gc_move.home_off);
				}
			} else {
				struct chunk *c = &m->gc_move;
				struct pol_ext *e = pol_extmap_first(&m->loc, m->ssd, c->home_off, c->len);

				/* Re-point the table unless the data changed meanwhile. */
				if (e && e->tdev == m->hdd && pol_ext_off(e) <= c->home_off &&
				    e->toff + (c->home_off - pol_ext_off(e)) == c->log_off &&
				    pol_ext_off(e) + e->len >= c->home_off + c->len)
					pol_extmap_set(&m->loc, m->ssd, c->home_off, c->len, m->hdd,
						       m->log_size + c->home_off);
				m->gc_bytes += c->len;
			}
		}
	}
	if (pol_splitter_owns(&m->split, req)) {
		int status;
		struct policy_req *parent = pol_split_done(&m->split, req, &status);

		if (parent)
			env->finish(env, parent, status);
		retry_waiting(m);
	} else if (pol_pool_owns(&m->internal, req)) {
		pol_pool_put(&m->internal, req);
	}
}

static void mios_tick(struct policy *pol)
{
}

static void mios_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct mios *m = pol->priv;

	emit(ctx, "ssd_write_bytes", (double)m->ssd_write_bytes);
	emit(ctx, "ssd_writes", (double)m->ssd_writes);
	emit(ctx, "hdd_user_write_bytes", (double)m->hdd_write_bytes);
	emit(ctx, "redirected_writes", (double)m->hdd_writes_n);
	emit(ctx, "padding_bytes", (double)m->pad_bytes);
	emit(ctx, "padding_writes", (double)m->pad_writes);
	emit(ctx, "s_events", (double)m->s_events);
	emit(ctx, "bcw_sequences", (double)m->sequences);
	emit(ctx, "recalibrations", (double)m->recalibrations);
	emit(ctx, "sequences_without_s", (double)m->s_missing);
	emit(ctx, "hdd_read_bytes", (double)m->hdd_read_bytes);
	emit(ctx, "gc_runs", (double)m->gc_runs);
	emit(ctx, "gc_bytes", (double)m->gc_bytes);
	emit(ctx, "log_peak_bytes", (double)m->log_peak);
	emit(ctx, "split_reads", (double)m->split_reads);
	emit(ctx, "big_writes_kept_on_ssd", (double)m->big_kept);
	emit(ctx, "writes_spilled_to_ssd", (double)m->spilled);
	emit(ctx, "w_fast", (double)m->wf);
	emit(ctx, "w_mid", (double)m->wm);
}

static void mios_fini(struct policy *pol)
{
	struct mios *m = pol->priv;

	if (!m)
		return;
	pol_map_free_vals(&m->streams);
	pol_pool_free(&m->internal);
	pol_splitter_free(&m->split);
	pol_extmap_free(&m->loc);
	free(m->chunks);
	free(m);
	pol->priv = NULL;
}

/* mios-d and mios-e share everything but their name, summary and init
 * (which sets the mode). */
#define MIOS_OPS(NAME, SUMMARY, INIT)                                        \
	{                                                                    \
		.version = POLICY_OPS_VERSION, .name = NAME,           \
		.summary = SUMMARY, .opts = mios_opts,                       \
		.opts_size = sizeof(struct mios_opts), .init = INIT,         \
		.submit = mios_submit, .dispatch = mios_dispatch,            \
		.complete = mios_complete, .tick = mios_tick,                \
		.fini = mios_fini, .report = mios_report,                    \
	}

const struct policy_ops pol_mios_d_ops = MIOS_OPS("mios-d",
	"MIOS_D: SSD writes steered to HDD buffered writes (BCW) when the SSD queue exceeds L",
	mios_d_init);

const struct policy_ops pol_mios_e_ops = MIOS_OPS("mios-e",
	"MIOS_E: as mios-d, and also uses the HDD's Fast state when the SSD queue is short",
	mios_e_init);
