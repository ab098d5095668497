/* SPDX-License-Identifier: MIT */
/*
 * bid_hybrid.c - BID-Hybrid (Mishra & Somani 2017): BID-HDD for the disk
 * plus initial tier placement on an SSD.
 *
 *  - Data location filter: a location table maps extents of the HDD that
 *    were placed on the SSD; a later read or update of such data goes to
 *    the SSD (a read straddling both tiers is split into pieces).
 *  - Tier categorisation: when a staging queue SQ_p is marked, its packing
 *    fraction PF = (write bytes / 512) / (write requests after merging) is
 *    computed, a request being a run of contiguous writes that also counts
 *    the process's contiguous bytes just before it (the paper's request
 *    queue merges bios before staging).  PF < pf_threshold: p is non-bulky, its writes go to the
 *    SSD (allocated append-only, recorded in the table); otherwise the
 *    queue flushes to the HDD as in BID-HDD.  Reads never change tier.
 *  - The SSD is served by per-process FIFOs in round robin (the paper's
 *    multi-queue FIFO).
 *  - use_hints=1 (signatures as priors, docs/design.md §7): a stream's declared
 *    size_per_io and pattern, taken from its first request, decide at once:
 *    size >= threshold -> bulky (HDD, no PF test); small and random ->
 *    non-bulky, its writes skip staging and go straight to the SSD; any
 *    other declaration (or none) is profiled as above.
 *
 * The SSD tier is append-only (an update of tiered data goes to a new
 * place too, so no copy is ever overwritten in place), each placement
 * aligned to the SSD's block size.  Migration (ours: the paper does not
 * describe one, so it is off by default - the paper's BID-Hybrid; iosigd
 * turns it on, docs/tiers.md) moves tiered extents back to the HDD, one
 * command at a time, lowest home offset first: when the HDD has been idle
 * for migrate_idle, or at any time once migrate_at of the tier's room is used;
 * a read from the SSD, then a write of that home range to the HDD, then the
 * table forgets the extent unless it was rewritten meanwhile.  When the
 * table is empty the SSD's space is used again from its start; until then,
 * past ssd_fill, tiering stops and everything goes to the HDD.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bid.h"
#include "pol_builtin.h"

#define SECTOR 512u
#define PIECE_POOL 4096
#define MIG_POOL 4

/* What a stream's signature says (use_hints); V_PROFILE = it said nothing
 * decisive, profile it as usual. */
enum verdict { V_UNKNOWN = 0, V_BULKY = 1, V_LIGHT = 2, V_PROFILE = 3 };

struct hyb_opts {
	struct bid_core_opts core;
	uint64_t pf_threshold;   /* sectors per request */
	double ssd_fill;
	bool use_hints;
	double migrate_at;       /* fraction of ssd_limit */
	uint64_t migrate_idle;   /* ns */
	bool bulky_home;         /* a bulky stream's next writes: POLICY_REQ_HOME */
};

/* The end of a process's latest write and the contiguous bytes up to it. */
struct wrun {
	uint64_t end, len;
	uint16_t dev;
	bool bulky;                /* its last queue was found bulky (bulky_home) */
};

/* One process's FIFO on the SSD. */
struct ssd_fifo {
	uint32_t stream;
	struct policy_list reqs;
	struct policy_list rr;
	bool on_rr;
};

struct hyb {
	struct bid bid;                /* first: on_mark gets it back */
	struct hyb_opts o;
	struct policy_env *env;
	unsigned ssd;                  /* tier device */
	uint64_t ssd_next, ssd_limit;  /* append-only allocation */
	struct pol_extmap loc;         /* HDD extents living on the SSD */
	struct pol_map fifos;          /* stream -> ssd_fifo */
	struct policy_list rr;         /* busy FIFOs */
	struct pol_map verdicts;       /* stream -> enum verdict (hints) */
	struct pol_map runs;           /* stream -> struct wrun */
	struct pol_splitter split;     /* pieces of reads straddling the tiers */
	struct policy_list waiting;    /* reads waiting for pieces */
	uint64_t align;                /* placements on the SSD start at multiples of it */
	/* migration: one step (read from the SSD, write to the HDD) at a time */
	struct pol_pool mig;
	struct policy_req *mig_req;    /* the step's request in flight, or NULL */
	struct policy_req *mig_write;  /* its write, waiting for room at the HDD */
	uint64_t mig_toff;             /* where the range was on the SSD */
	uint64_t hdd_idle_since;
	/* counters */
	uint64_t tiered_queues, bulky_queues, ssd_write_bytes, ssd_read_bytes;
	uint64_t ssd_writes, split_reads, hinted_light, hinted_bulky, tier_full;
	uint64_t migrated_bytes, migrations, recycles;
	uint64_t homed_late;           /* writes of a queue found bulky marked HOME then */
	uint64_t given_home;           /* writes the engine took back (env->home) */
};

static const struct policy_opt hyb_opts[] = {
	BID_CORE_OPTS,
	{ .name = "pf_threshold", .type = POLICY_OPT_UINT, .off = offsetof(struct hyb_opts, pf_threshold),
	  .def = "128", .min = 1, .max = 1u << 21,
	  .help = "packing fraction (512-byte sectors per write request) below which a queue is non-bulky and goes to the SSD" },
	{ .name = "ssd_fill", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct hyb_opts, ssd_fill),
	  .def = "0.9", .fmin = 0, .fmax = 1,
	  .help = "fraction of the SSD the tier may fill before tiering stops" },
	{ .name = "use_hints", .type = POLICY_OPT_BOOL, .off = offsetof(struct hyb_opts, use_hints),
	  .def = "0",
	  .help = "take bulkiness from the stream's declared size_per_io/pattern instead of profiling" },
	{ .name = "migrate_at", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct hyb_opts, migrate_at),
	  .def = "1", .fmin = 0, .fmax = 1,
	  .help = "fraction of the tier's room (ssd_fill) past which tiered extents move back to the HDD even while it is busy (ours; 1 = never; iosigd: 0.5)" },
	{ .name = "migrate_idle", .type = POLICY_OPT_TIME, .off = offsetof(struct hyb_opts, migrate_idle),
	  .def = "0", .min = 0, .max = 3600 * POLICY_NS_PER_S,
	  .help = "HDD idle time after which tiered extents move back to it (ours; 0 = never; iosigd: 1s)" },
	{ .name = "bulky_home", .type = POLICY_OPT_BOOL, .off = offsetof(struct hyb_opts, bulky_home),
	  .def = "0",
	  .help = "the writes of a queue found bulky, and of a stream whose last queue was, are marked POLICY_REQ_HOME (sent to the HDD as they are) and kept there should its queue be found non-bulky (ours; iosigd: 1)" },
	{ .name = NULL },
};

static struct hyb *hyb_of(struct bid *b)
{
	return pol_container_of(b, struct hyb, bid);
}

static struct ssd_fifo *fifo_get(struct hyb *y, uint32_t stream)
{
	struct ssd_fifo *f = pol_map_get(&y->fifos, stream);

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->stream = stream;
	pol_list_init(&f->reqs);
	pol_list_init(&f->rr);
	if (pol_map_put(&y->fifos, stream, f) < 0) {
		free(f);
		return NULL;
	}
	return f;
}

/* Queues req for the SSD at toff (its tier location). */
static int to_ssd(struct hyb *y, struct policy_req *req, uint64_t toff)
{
	struct ssd_fifo *f = fifo_get(y, req->stream);

	if (!f)
		return -ENOMEM;
	req->pdata[1] = toff;
	req->pptr = f;
	pol_list_add_tail(&f->reqs, &req->link);
	if (!f->on_rr) {
		pol_list_add_tail(&y->rr, &f->rr);
		f->on_rr = true;
	}
	if (req->op == POLICY_OP_WRITE) {
		y->ssd_write_bytes += req->len;
		y->ssd_writes++;
	} else {
		y->ssd_read_bytes += req->len;
	}
	return 0;
}

/* Places a write on the SSD, at a new place: allocate (aligned), record,
 * queue.  false = no room. */
static bool place_on_ssd(struct hyb *y, struct policy_req *w)
{
	uint64_t toff = y->ssd_next, size = (w->len + y->align - 1) / y->align * y->align;

	if (toff + size > y->ssd_limit) {
		y->tier_full++;
		return false;
	}
	if (pol_extmap_set(&y->loc, w->dev, w->offset, w->len, y->ssd, toff) < 0)
		return false;
	if (to_ssd(y, w, toff) < 0) {
		pol_extmap_clear(&y->loc, w->dev, w->offset, w->len);
		return false;
	}
	y->ssd_next += size;
	return true;
}

/*
 * Packing fraction of sq's writes in 512-byte sectors per request.  A
 * request is a run of contiguous writes (the kernel's "request" coalesced
 * from bios, at most max_merge).  A run that continues its process's
 * previous write, in an earlier queue, counts with the contiguous bytes
 * before it (req->pdata[1], set at submit): the paper's request queue
 * merges bios before staging, so a sequential writer whose queues happen
 * to be marked small still shows as bulky.
 */
static uint64_t packing_fraction(struct bid_sq *sq, uint64_t max_merge)
{
	struct policy_req *prev = NULL;
	uint64_t n = 0, run = 0, sum = 0;

	for (struct policy_req *r = bid_sq_first(sq); r; r = bid_sq_next(sq, r)) {
		if (r->op != POLICY_OP_WRITE)
			continue;
		if (prev && pol_can_merge(prev, r, run, max_merge)) {
			run += r->len;
		} else {
			if (prev)
				sum += run < max_merge ? run : max_merge;
			n++;
			run = r->len + r->pdata[1];
		}
		prev = r;
	}
	if (prev)
		sum += run < max_merge ? run : max_merge;
	return n ? sum / SECTOR / n : 0;
}

/* Contiguous write bytes of the stream just before req (see above); the
 * stream's record (NULL: out of memory). */
static struct wrun *note_run(struct hyb *y, struct policy_req *req)
{
	struct wrun *w = pol_map_get(&y->runs, req->stream);

	req->pdata[1] = 0;
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w || pol_map_put(&y->runs, req->stream, w) < 0) {
			free(w);
			return NULL;
		}
	}
	if (w->end == req->offset && w->dev == req->dev)
		req->pdata[1] = w->len;
	w->len = req->pdata[1] + req->len;
	w->end = req->offset + req->len;
	w->dev = req->dev;
	return w;
}

/*
 * A write marked POLICY_REQ_HOME, not in a queue: offered to the engine
 * (env->home), which may write it itself and hand its write-back over
 * later.  Taken, it is the engine's: copies of the range on the SSD are
 * stale, as at the mark of a bulky queue.
 */
static bool give_home(struct hyb *y, struct policy_req *r)
{
	if (!y->env->home || !y->env->home(y->env, r))
		return false;
	pol_extmap_clear(&y->loc, r->dev, r->offset, r->len);
	y->given_home++;
	return true;
}

/* bulky_home: whether the stream's next writes go home as they are. */
static void remember_bulky(struct hyb *y, uint32_t stream, bool bulky)
{
	struct wrun *w = pol_map_get(&y->runs, stream);

	if (w)
		w->bulky = bulky && y->o.bulky_home;
}

/* Tier categorisation of a freshly marked staging queue. */
static void hyb_on_mark(struct bid *b, struct bid_sq *sq)
{
	struct hyb *y = hyb_of(b);
	uint64_t pf;
	enum verdict v = V_UNKNOWN;
	struct policy_req *r, *next;

	if (!sq->nwrite)
		return;   /* read-only queues bypass categorisation */
	if (y->o.use_hints)
		v = (enum verdict)(uintptr_t)pol_map_get(&y->verdicts, sq->stream);
	pf = packing_fraction(sq, b->o.max_merge);
	if (v != V_BULKY && pf < y->o.pf_threshold &&
	    y->ssd_next + sq->write_bytes <= y->ssd_limit) {
		y->tiered_queues++;
		sq->tiered = true;
		remember_bulky(y, sq->stream, false);
		for (r = bid_sq_first(sq); r; r = next) {
			next = bid_sq_next(sq, r);
			/* (A write marked for home goes there: bulky_home.) */
			if (r->op != POLICY_OP_WRITE || (r->flags & POLICY_REQ_HOME))
				continue;
			bid_sq_take(sq, r);
			if (!place_on_ssd(y, r))
				bid_sq_add(sq, r);   /* no memory for the table: HDD */
		}
		return;
	}
	y->bulky_queues++;
	remember_bulky(y, sq->stream, true);
	/* The data goes to the HDD: older copies on the SSD are stale now.
	 * With bulky_home its writes go there as they are from now on, and
	 * the engine may take them back (env->home). */
	for (r = bid_sq_first(sq); r; r = next) {
		next = bid_sq_next(sq, r);
		if (r->op != POLICY_OP_WRITE)
			continue;
		pol_extmap_clear(&y->loc, r->dev, r->offset, r->len);
		if (y->o.bulky_home && !(r->flags & POLICY_REQ_HOME)) {
			r->flags |= POLICY_REQ_HOME;
			y->homed_late++;
			bid_sq_take(sq, r);
			if (!give_home(y, r))
				bid_sq_add(sq, r);
		}
	}
}

static int hyb_init(struct policy *pol)
{
	struct policy_env *env = pol->env;
	struct hyb *y = calloc(1, sizeof(*y));
	unsigned d;
	int r;

	if (!y)
		return -ENOMEM;
	y->o = *(struct hyb_opts *)pol->opts;
	y->env = env;
	for (d = 0; d < env->ndev; d++)
		if (env->dev[d].cls == IOSIG_CLASS_SSD || env->dev[d].cls == IOSIG_CLASS_NVM)
			break;
	if (d == env->ndev) {
		pol_err(pol, "needs an SSD (or NVM) device for its tier; the engine offers none");
		r = -EINVAL;
		goto out_free;
	}
	y->ssd = d;
	y->ssd_limit = (uint64_t)(y->o.ssd_fill * (double)env->dev[d].capacity);
	y->align = env->dev[d].block_size > SECTOR ? env->dev[d].block_size : SECTOR;
	r = bid_core_init(&y->bid, env, &y->o.core);
	if (r < 0)
		goto out_free;
	y->bid.on_mark = hyb_on_mark;
	r = pol_extmap_init(&y->loc, env->ndev);
	if (r < 0)
		goto out_bid;
	r = pol_splitter_init(&y->split, PIECE_POOL);
	if (r < 0)
		goto out_loc;
	r = pol_pool_init(&y->mig, MIG_POOL);
	if (r < 0) {
		pol_splitter_free(&y->split);
		goto out_loc;
	}
	y->hdd_idle_since = env->now(env);
	pol_map_init(&y->fifos);
	pol_map_init(&y->verdicts);
	pol_map_init(&y->runs);
	pol_list_init(&y->rr);
	pol_list_init(&y->waiting);
	pol->priv = y;
	return 0;

out_loc:
	pol_extmap_free(&y->loc);
out_bid:
	bid_core_fini(&y->bid);
out_free:
	free(y);
	return r;
}

/* Learns a stream's verdict from the signature on its first request. */
static enum verdict hint_verdict(struct hyb *y, const struct policy_req *req)
{
	void *v = pol_map_get(&y->verdicts, req->stream);
	enum verdict out = V_UNKNOWN;

	if (v)
		return (enum verdict)(uintptr_t)v;
	if (req->hint_size && req->hint_size >= y->o.pf_threshold * SECTOR) {
		out = V_BULKY;
		y->hinted_bulky++;
	} else if (req->hint_size && req->hint_pattern == POLICY_PATTERN_RANDOM) {
		out = V_LIGHT;
		y->hinted_light++;
	}
	/* Remember "profile it" too, so only the first request's hint counts. */
	pol_map_put(&y->verdicts, req->stream, (void *)(uintptr_t)(out ? out : V_PROFILE));
	return out;
}

static void piece_home(void *ctx, struct policy_req *p)
{
	struct hyb *y = ctx;

	bid_core_stage(&y->bid, p);   /* staged with the reader's process */
}

static void piece_mapped(void *ctx, struct policy_req *p, unsigned tdev, uint64_t toff)
{
	to_ssd(ctx, p, toff);
}

static const struct pol_split_ops hyb_split_ops = { .home = piece_home, .mapped = piece_mapped };

/* Splits a read straddling the tiers; false = wait for free pieces. */
static bool split_read(struct hyb *y, struct policy_req *req)
{
	if (pol_split_read(&y->split, &y->loc, req, y->env->now(y->env), &hyb_split_ops, y) < 0)
		return false;
	y->split_reads++;
	return true;
}

static int hyb_submit(struct policy *pol, struct policy_req *req)
{
	struct hyb *y = pol->priv;
	struct pol_ext *e;
	enum verdict v = V_UNKNOWN;

	if (req->dev >= y->env->ndev || req->dev == y->ssd || req->op == POLICY_OP_FLUSH)
		return -EINVAL;   /* the SSD tier belongs to the policy */
	if (y->o.use_hints)
		v = hint_verdict(y, req);
	e = pol_extmap_first(&y->loc, req->dev, req->offset, req->len);
	if (e && pol_ext_off(e) <= req->offset &&
	    pol_ext_off(e) + e->len >= req->offset + req->len) {
		/* Entirely on the SSD: read it there; an update goes to a new
		 * place on the SSD (or, with no room, to the HDD). */
		if (req->op == POLICY_OP_READ)
			return to_ssd(y, req, e->toff + (req->offset - pol_ext_off(e)));
		if (place_on_ssd(y, req))
			return 0;
		pol_extmap_clear(&y->loc, req->dev, req->offset, req->len);
		return bid_core_stage(&y->bid, req);
	}
	if (e && req->op == POLICY_OP_READ) {
		if (!split_read(y, req))
			pol_list_add_tail(&y->waiting, &req->link);
		return 0;
	}
	if (v == V_LIGHT && req->op == POLICY_OP_WRITE && place_on_ssd(y, req))
		return 0;
	if (req->op == POLICY_OP_WRITE) {
		struct wrun *w = note_run(y, req);
		/* Joining a queue already categorised: follow its verdict. */
		struct bid_sq *sq = bid_core_find(&y->bid, req->dev, req->stream);

		if (sq && sq->marked) {
			if (sq->tiered && place_on_ssd(y, req))
				return 0;
			pol_extmap_clear(&y->loc, req->dev, req->offset, req->len);
		}
		/* A bulky stream's write (by its hint, or its queue's verdict,
		 * or with bulky_home its last queue's) goes to the HDD as it
		 * is: hyb_on_mark() never tiers a queue of a V_BULKY stream,
		 * nor a write marked so. */
		if (v == V_BULKY || (sq && sq->marked && !sq->tiered) || (w && w->bulky)) {
			req->flags |= POLICY_REQ_HOME;
			if (give_home(y, req))
				return 0;
		}
	}
	return bid_core_stage(&y->bid, req);
}

/* The first tiered extent (lowest home device, then offset), or NULL. */
static struct pol_ext *first_tiered(struct hyb *y, unsigned *ret_home)
{
	for (unsigned h = 0; h < y->env->ndev; h++) {
		struct pol_ext *e = h == y->ssd ? NULL : pol_extmap_first(&y->loc, h, 0, UINT64_MAX);

		if (e) {
			*ret_home = h;
			return e;
		}
	}
	return NULL;
}

/* Starts the next migration step when it is time (see the head). */
static void migrate(struct hyb *y)
{
	struct policy_env *env = y->env;
	uint64_t now = env->now(env);
	struct policy_req *r;
	struct pol_ext *e;
	unsigned home;
	bool pressure, idle;

	if (y->mig_write && pol_dev_room(env, y->mig_write->dev)) {
		r = y->mig_write;
		y->mig_write = NULL;
		pol_issue(env, r, r->dev, r->offset);
		return;
	}
	if (y->mig_req || y->mig_write)
		return;
	e = first_tiered(y, &home);
	if (!e) {
		if (y->ssd_next) {
			y->ssd_next = 0;   /* nothing lives on the SSD: start again */
			y->recycles++;
		}
		return;
	}
	pressure = y->o.migrate_at < 1 &&
		   (double)y->ssd_next >= y->o.migrate_at * (double)y->ssd_limit;
	idle = y->o.migrate_idle && !env->inflight(env, home) &&
	       now - y->hdd_idle_since >= y->o.migrate_idle;
	if (!pressure && !idle) {
		if (y->o.migrate_idle && !env->inflight(env, home))
			env->wake_at(env, y->hdd_idle_since + y->o.migrate_idle);
		return;
	}
	if (!pol_dev_room(env, y->ssd))
		return;
	r = pol_pool_get(&y->mig, POLICY_OP_READ, (uint16_t)home, pol_ext_off(e),
			 e->len < y->bid.o.max_merge || !y->bid.o.max_merge ? e->len : y->bid.o.max_merge,
			 0, now);
	if (!r)
		return;
	y->mig_req = r;
	y->mig_toff = e->toff;
	y->migrations++;
	pol_issue(env, r, y->ssd, e->toff);
}

/* A migration step's request completed. */
static void migrate_done(struct hyb *y, struct policy_req *req)
{
	struct policy_env *env = y->env;
	uint64_t off = req->offset, len = req->len;
	unsigned home = req->dev;

	pol_pool_put(&y->mig, req);
	y->mig_req = NULL;
	if (req->op == POLICY_OP_READ) {
		struct policy_req *w;

		if (req->status)
			return;
		/* Now the home range to the HDD, at its own place. */
		w = pol_pool_get(&y->mig, POLICY_OP_WRITE, (uint16_t)home, off, len, 0, env->now(env));
		if (!w)
			return;
		y->mig_req = w;
		if (pol_dev_room(env, home))
			pol_issue(env, w, home, off);
		else
			y->mig_write = w;
		return;
	}
	if (!req->status) {
		struct pol_ext *e = pol_extmap_first(&y->loc, home, off, len);

		/* Forget the extent unless the range was written meanwhile (it
		 * would have a new place on the SSD, or be at home already). */
		if (e && e->tdev == y->ssd && pol_ext_off(e) <= off &&
		    pol_ext_off(e) + e->len >= off + len &&
		    e->toff + (off - pol_ext_off(e)) == y->mig_toff)
			pol_extmap_clear(&y->loc, home, off, len);
		y->migrated_bytes += len;
	}
}

static void hyb_dispatch(struct policy *pol)
{
	struct hyb *y = pol->priv;
	struct policy_env *env = y->env;

	bid_core_dispatch(&y->bid);
	migrate(y);
	while (!pol_list_empty(&y->rr) && pol_dev_room(env, y->ssd)) {
		struct ssd_fifo *f = pol_container_of(y->rr.next, struct ssd_fifo, rr);
		struct policy_req *r = pol_container_of(f->reqs.next, struct policy_req, link);

		pol_list_del(&r->link);
		pol_list_del(&f->rr);
		f->on_rr = false;
		if (!pol_list_empty(&f->reqs)) {
			pol_list_add_tail(&y->rr, &f->rr);   /* round robin */
			f->on_rr = true;
		}
		r->merge_next = NULL;
		pol_issue(env, r, y->ssd, r->pdata[1]);
	}
}

static void hyb_complete(struct policy *pol, struct policy_req *req)
{
	struct hyb *y = pol->priv;
	struct policy_req *parent;
	int status;

	if (req->issued_dev != y->ssd && !y->env->inflight(y->env, req->issued_dev))
		y->hdd_idle_since = y->env->now(y->env);
	if (pol_pool_owns(&y->mig, req)) {
		migrate_done(y, req);
		return;
	}
	if (!pol_splitter_owns(&y->split, req))
		return;
	parent = pol_split_done(&y->split, req, &status);
	if (parent)
		y->env->finish(y->env, parent, status);
	/* Pieces came free: retry reads that waited for them. */
	while (!pol_list_empty(&y->waiting)) {
		struct policy_req *w = pol_container_of(y->waiting.next, struct policy_req, link);

		pol_list_del(&w->link);
		if (!split_read(y, w)) {
			pol_list_add_head(&y->waiting, &w->link);
			break;
		}
	}
}

static void hyb_tick(struct policy *pol)
{
	struct hyb *y = pol->priv;

	bid_core_expire(&y->bid);
}

/* A program waits for req: a staged request's queue is marked now (as
 * bid-hdd does); one queued for the SSD or waiting to be split goes as soon
 * as it can anyway. */
static void hyb_expedite(struct policy *pol, struct policy_req *req)
{
	struct hyb *y = pol->priv;

	if (req->pptr && req->pptr != pol_map_get(&y->fifos, req->stream))
		bid_core_expedite(&y->bid, req);
}

static void hyb_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct hyb *y = pol->priv;

	bid_core_report(&y->bid, emit, ctx);
	emit(ctx, "tiered_queues", (double)y->tiered_queues);
	emit(ctx, "bulky_queues", (double)y->bulky_queues);
	emit(ctx, "ssd_write_bytes", (double)y->ssd_write_bytes);
	emit(ctx, "ssd_writes", (double)y->ssd_writes);
	emit(ctx, "ssd_read_bytes", (double)y->ssd_read_bytes);
	emit(ctx, "split_reads", (double)y->split_reads);
	emit(ctx, "location_extents", (double)y->loc.count);
	emit(ctx, "ssd_tier_used_bytes", (double)y->ssd_next);
	emit(ctx, "tier_full_events", (double)y->tier_full);
	emit(ctx, "hinted_light_streams", (double)y->hinted_light);
	emit(ctx, "hinted_bulky_streams", (double)y->hinted_bulky);
	emit(ctx, "migrations", (double)y->migrations);
	emit(ctx, "migrated_bytes", (double)y->migrated_bytes);
	emit(ctx, "recycles", (double)y->recycles);
	emit(ctx, "homed_late_writes", (double)y->homed_late);
	emit(ctx, "writes_given_home", (double)y->given_home);
}

static void hyb_fini(struct policy *pol)
{
	struct hyb *y = pol->priv;

	if (!y)
		return;
	pol_map_free_vals(&y->fifos);
	pol_map_free(&y->verdicts);
	pol_map_free_vals(&y->runs);
	pol_splitter_free(&y->split);
	pol_pool_free(&y->mig);
	pol_extmap_free(&y->loc);
	bid_core_fini(&y->bid);
	free(y);
	pol->priv = NULL;
}

const struct policy_ops pol_bid_hybrid_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "bid-hybrid",
	.summary = "BID-Hybrid: BID-HDD plus packing-fraction tiering of non-bulky writes to an SSD",
	.opts = hyb_opts,
	.opts_size = sizeof(struct hyb_opts),
	.init = hyb_init,
	.submit = hyb_submit,
	.dispatch = hyb_dispatch,
	.complete = hyb_complete,
	.tick = hyb_tick,
	.fini = hyb_fini,
	.report = hyb_report,
	.expedite = hyb_expedite,
};
