/* SPDX-License-Identifier: MIT */
/*
 * nvcache.c - memory storage (NVM or DRAM) as a cache of block storage, as
 * in "Towards High Performance Big Data Processing by Making Use of
 * Non-volatile Memory" (Oikawa, CLOSER 2015):
 *
 *  - reads whose data is in memory are served from it directly (path a);
 *  - sequential reads trigger read-ahead from the block device into memory
 *    (path b), so the next reads hit: a read of the block device, then a
 *    fill - a write of what it loaded to its place in memory;
 *  - a read miss bypasses the cache: it goes to the block device and its
 *    data is not cached (path c), so random reads do not pollute memory;
 *  - writes go to memory whenever there is free or clean space (a), dirty
 *    data is written back in the background (b); with no room left a write
 *    goes to the block device (c, write-through) and drops stale cached
 *    copies.
 *
 * Ours (the paper has no such rule, so it is off by default):
 * seq_bypass=N sends a write straight to the block device, as path (c),
 * once its stream has written N contiguous bytes up to and including it -
 * large sequential streams go home, where memory would only add a copy and
 * a write-back sharing the device with them (iosigd turns it on,
 * docs/tiers.md).  Contiguous writes queued for the block device go as one
 * command (up to max_merge), so a small-write stream bypassing the cache
 * is not one device command per call.  A write queued for the block device
 * that a program comes to wait for (expedite(): its fsync) goes ahead of the
 * others there, in the order they were waited for - so that writers
 * syncing one after another finish one after another, as with the kernel's
 * write-back, rather than all at the end of the queue's mix of them.
 *
 * The cache is fully associative and kept as extents of the home device
 * (byte ranges, not lines): a search tree by offset (and a list in the same
 * order) holds every cached extent, clean ones also sit in a list ordered by
 * last use (eviction takes the least recently used bytes first; data counts
 * as used when it is read, loaded or written back), dirty ones in a FIFO
 * (write-back takes the oldest first).  Adjacent extents in the same state merge, so a
 * sequential stream is one extent however long it is, and every request
 * costs O(log extents) whatever its length.  An earlier version kept a
 * set-associative array of 4 KiB lines: a 16 GiB tier meant 4 M line
 * records allocated up front and a hashed, cache-missing probe per line of
 * every request (~10 us per request); see docs/policies.md.
 *
 * A read hitting bytes that a read-ahead is still loading waits for it
 * (not for the fill after it: see readahead_done()).  A hit's memory access
 * is modelled as one command of the request's length, at the place the fill
 * of its bytes wrote them (mem_off()).
 * Dirty bytes rewritten while their write-back is in flight stay dirty and
 * are written back again only after that write-back completes, so two
 * write-backs of the same bytes are never in flight at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_builtin.h"
#include "pol_util.h"

#define SECT 512u
#define NV_POOL 256
#define NV_SLAB 1024   /* extent records allocated at a time */

enum ex_state { EX_LOADING, EX_CLEAN, EX_DIRTY };

/* One cached extent [start, start + len) of the home device. */
struct nv_ext {
	struct policy_tnode node;  /* by home offset: key = start, key2 = 0 */
	struct policy_list alink;  /* the same order as a list: neighbours in O(1) */
	struct policy_list lru;    /* EX_CLEAN: place in the LRU list (by last use) */
	struct policy_list dlink;  /* EX_DIRTY, no write-back in flight: place in the dirty
	                              FIFO, or in the held list */
	uint64_t len;
	uint64_t used;             /* EX_CLEAN: last use (c->tick), the LRU list's order */
	uint64_t dseq;             /* EX_DIRTY: when it joined the dirty FIFO */
	uint64_t dtime;            /* EX_DIRTY: the time (ns) it joined the dirty FIFO */
	uint64_t cmd;              /* EX_LOADING: id of the read-ahead filling it;
	                              EX_DIRTY: id of its write-back in flight, 0 = none */
	uint32_t gen;              /* bumped when the record is recycled (see struct nv_ref) */
	uint8_t state;             /* enum ex_state */
	bool held;                 /* EX_DIRTY: rewritten during a write-back of the same
	                              bytes; listed once that write-back completes */
};

struct nv_opts {
	uint64_t line;
	uint64_t cache_size;
	uint64_t ra_size;
	uint64_t wb_inflight;
	uint64_t max_merge;
	uint64_t wb_delay;
	uint64_t seq_bypass;
};

/* A remembered extent: a guess where the next lookup lands (valid while
 * the record is not recycled), so a sequential stream rarely searches. */
struct nv_ref {
	struct nv_ext *e;
	uint32_t gen;
};

struct nvs {                   /* per stream */
	uint64_t next_off;         /* where a sequential read would start */
	uint64_t ra_end;           /* read-ahead issued up to here */
	struct nv_ref near;        /* the extent its last request ended in or before */
	uint64_t wnext, wrun;      /* end of its last write, contiguous bytes written up to it */
};

struct nv {
	struct nv_opts o;
	struct policy_env *env;
	unsigned mem;              /* memory tier device */
	unsigned home;             /* the block device */
	uint64_t cap;              /* bytes of cache */
	struct policy_tnode *tree; /* every extent, by offset */
	struct policy_list exts;   /* every extent, by offset */
	struct policy_list lru;    /* clean extents, least recently used first */
	struct policy_list dirty;  /* dirty extents to write back, oldest first */
	struct policy_list held;   /* dirty extents waiting for a write-back of their bytes */
	uint64_t used, clean, dirty_bytes;  /* bytes in extents, clean and dirty */
	uint64_t tick, dseq;
	struct nv_ext *spare;      /* free extent records (linked by node.left) */
	unsigned nspare;
	struct nv_ext **slabs;
	size_t nslabs;
	uint64_t nexts, peak_exts;
	struct policy_list blk_q;  /* foreground block commands: misses, write-through, read-ahead */
	struct policy_list sync_q; /* writes of blk_q a program waits for, served before it */
	struct policy_list mem_q;  /* memory commands: hits, cached writes and fills */
	struct policy_tnode *parked; /* reads waiting for a read-ahead, by offset */
	uint64_t parked_maxlen;    /* longest read ever parked (range search) */
	struct policy_req *wb[1024]; /* write-backs in flight (wb_inflight <= 1024) */
	unsigned wb_now;
	struct pol_pool internal;  /* read-ahead, fill and write-back commands */
	struct pol_map streams;
	/* counters */
	uint64_t read_hits, read_misses, hit_bytes, bypass_bytes, ra_bytes, ra_cmds;
	uint64_t parked_reads, write_cached, write_cached_bytes, write_through;
	uint64_t write_through_bytes, wb_bytes, wb_cmds, evicted_bytes;
	uint64_t write_bypass, write_bypass_bytes, fill_cmds, fill_bytes;
	uint64_t given_home;       /* bypassed writes the engine took back (env->home) */
	uint64_t write_expedited;  /* block-device writes moved to sync_q */
};

static const struct policy_opt nv_opts[] = {
	{ .name = "line", .type = POLICY_OPT_SIZE, .off = offsetof(struct nv_opts, line),
	  .def = "4KiB", .min = 512, .max = 32 * 1024,
	  .help = "read-ahead unit: windows start and end on multiples of it (a multiple of 512 bytes)" },
	{ .name = "cache_size", .type = POLICY_OPT_SIZE, .off = offsetof(struct nv_opts, cache_size),
	  .def = "0", .min = 0, .max = 1ull << 44,
	  .help = "bytes of the memory tier used as cache (0 = all of it; the paper used 1 GiB)" },
	{ .name = "ra_size", .type = POLICY_OPT_SIZE, .off = offsetof(struct nv_opts, ra_size),
	  .def = "512KiB", .min = 0, .max = 1ull << 30,
	  .help = "read-ahead window of a sequential reader (0 = no read-ahead)" },
	{ .name = "wb_inflight", .type = POLICY_OPT_UINT, .off = offsetof(struct nv_opts, wb_inflight),
	  .def = "4", .min = 1, .max = 1024,
	  .help = "write-back commands in flight at once (the paper's write-back threads)" },
	{ .name = "max_merge", .type = POLICY_OPT_SIZE, .off = offsetof(struct nv_opts, max_merge),
	  .def = "512KiB", .min = 4096, .max = 1ull << 30,
	  .help = "largest write-back or fill command" },
	{ .name = "wb_delay", .type = POLICY_OPT_TIME, .off = offsetof(struct nv_opts, wb_delay),
	  .def = "0", .min = 0, .max = 3600ull * 1000000000ull,
	  .help = "dirty data is written back once it has been dirty this long (0 = at once)" },
	{ .name = "seq_bypass", .type = POLICY_OPT_SIZE, .off = offsetof(struct nv_opts, seq_bypass),
	  .def = "0", .min = 0, .max = 1ull << 40,
	  .help = "a write goes straight to the block device once its stream has written this many contiguous bytes with it (ours; 0 = never, the paper's policy; iosigd: 1MiB)" },
	{ .name = NULL },
};

static int nv_init(struct policy *pol)
{
	struct policy_env *env = pol->env;
	struct nv *c;
	unsigned d, mem = env->ndev, home = env->ndev;

	for (d = 0; d < env->ndev; d++) {
		bool memory = env->dev[d].cls == IOSIG_CLASS_RAM || env->dev[d].cls == IOSIG_CLASS_NVM;

		if (memory && mem == env->ndev)
			mem = d;
		if (!memory && home == env->ndev)
			home = d;
	}
	if (mem == env->ndev || home == env->ndev) {
		pol_err(pol, "needs a memory device (ram or nvm) and a block device; the engine offers %s",
			mem == env->ndev ? "no memory device" : "no block device");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = *(struct nv_opts *)pol->opts;
	if (c->o.line % SECT) {
		pol_err(pol, "line %llu is not a multiple of 512 bytes", (unsigned long long)c->o.line);
		free(c);
		return -EINVAL;
	}
	c->env = env;
	c->mem = mem;
	c->home = home;
	c->cap = c->o.cache_size ? c->o.cache_size : env->dev[mem].capacity;
	if (c->cap > env->dev[mem].capacity)
		c->cap = env->dev[mem].capacity;
	if (c->cap < c->o.line) {
		pol_err(pol, "a %llu-byte cache is smaller than one line of %llu bytes",
			(unsigned long long)c->cap, (unsigned long long)c->o.line);
		free(c);
		return -EINVAL;
	}
	if (pol_pool_init(&c->internal, NV_POOL) < 0) {
		free(c);
		return -ENOMEM;
	}
	pol_list_init(&c->blk_q);
	pol_list_init(&c->sync_q);
	pol_list_init(&c->mem_q);
	pol_list_init(&c->exts);
	pol_list_init(&c->lru);
	pol_list_init(&c->dirty);
	pol_list_init(&c->held);
	pol_map_init(&c->streams);
	pol->priv = c;
	return 0;
}

/* ---- extent records ---- */

static struct nv_ext *ext_of(struct policy_tnode *n)
{
	return n ? pol_container_of(n, struct nv_ext, node) : NULL;
}

static struct nv_ext *lru_first(struct nv *c)
{
	return pol_list_empty(&c->lru) ? NULL : pol_container_of(c->lru.next, struct nv_ext, lru);
}

static uint64_t ext_start(const struct nv_ext *e)
{
	return e->node.key;
}

static uint64_t ext_end(const struct nv_ext *e)
{
	return e->node.key + e->len;
}

/* Makes sure n free records are at hand: 0 or -ENOMEM.  Operations reserve
 * what they may need first, so they never fail half way. */
static int reserve(struct nv *c, unsigned n)
{
	while (c->nspare < n) {
		struct nv_ext **slabs = realloc(c->slabs, (c->nslabs + 1) * sizeof(*slabs));
		struct nv_ext *s;

		if (!slabs)
			return -ENOMEM;
		c->slabs = slabs;
		s = calloc(NV_SLAB, sizeof(*s));
		if (!s)
			return -ENOMEM;
		c->slabs[c->nslabs++] = s;
		for (unsigned i = 0; i < NV_SLAB; i++) {
			s[i].node.left = c->spare ? &c->spare->node : NULL;
			c->spare = &s[i];
		}
		c->nspare += NV_SLAB;
	}
	return 0;
}

static struct nv_ref ref_of(struct nv_ext *e)
{
	return (struct nv_ref){ .e = e, .gen = e ? e->gen : 0 };
}

/* The remembered extent, or NULL if it was recycled since. */
static struct nv_ext *ref_get(struct nv_ref r)
{
	return r.e && r.e->gen == r.gen ? r.e : NULL;
}

/* A zeroed record (reserve() first). */
static struct nv_ext *ext_new(struct nv *c)
{
	struct nv_ext *e = c->spare;
	uint32_t gen = e->gen;

	c->spare = ext_of(e->node.left);
	c->nspare--;
	memset(e, 0, sizeof(*e));
	e->gen = gen;
	pol_list_init(&e->alink);
	pol_list_init(&e->lru);
	pol_list_init(&e->dlink);
	if (++c->nexts > c->peak_exts)
		c->peak_exts = c->nexts;
	return e;
}

/* e was used just now: it goes to the end of the LRU list. */
static void lru_add(struct nv *c, struct nv_ext *e)
{
	e->used = ++c->tick;
	pol_list_add_tail(&c->lru, &e->lru);
}

static void dirty_add(struct nv *c, struct nv_ext *e)
{
	e->dseq = ++c->dseq;
	e->dtime = c->env->now(c->env);
	pol_list_add_tail(&c->dirty, &e->dlink);
}

static bool listed(const struct nv_ext *e)
{
	return e->state == EX_DIRTY && !e->cmd && !e->held;
}

/* Adds e (start, len, state, cmd set) to the tree, its lists and the byte
 * counts; succ is the extent after it (NULL: none). */
static void attach(struct nv *c, struct nv_ext *e, struct nv_ext *succ)
{
	pol_list_add_tail(succ ? &succ->alink : &c->exts, &e->alink);
	e->node.key2 = 0;
	pol_tree_insert(&c->tree, &e->node);
	c->used += e->len;
	if (e->state == EX_CLEAN) {
		c->clean += e->len;
		lru_add(c, e);
	} else if (e->state == EX_DIRTY) {
		c->dirty_bytes += e->len;
		if (e->held)
			pol_list_add_tail(&c->held, &e->dlink);
		else if (!e->cmd)
			dirty_add(c, e);
	}
}

/* Takes e out of the tree and its list (byte counts unchanged). */
static void unlink_ext(struct nv *c, struct nv_ext *e)
{
	pol_tree_remove(&c->tree, &e->node);
	pol_list_del(&e->alink);
	if (e->state == EX_CLEAN)
		pol_list_del(&e->lru);
	else if (e->state == EX_DIRTY && !e->cmd)
		pol_list_del(&e->dlink);   /* dirty FIFO or held list */
}

static void free_ext(struct nv *c, struct nv_ext *e)
{
	e->gen++;
	e->node.left = c->spare ? &c->spare->node : NULL;
	c->spare = e;
	c->nspare++;
	c->nexts--;
}

/* Byte counts of e's state, by d. */
static void account(struct nv *c, const struct nv_ext *e, uint64_t d)
{
	c->used -= d;
	if (e->state == EX_CLEAN)
		c->clean -= d;
	else if (e->state == EX_DIRTY)
		c->dirty_bytes -= d;
}

/* Takes e out of everything and recycles it. */
static void ext_remove(struct nv *c, struct nv_ext *e)
{
	account(c, e, e->len);
	unlink_ext(c, e);
	free_ext(c, e);
}

/* e (loaded, or written back) holds clean data now. */
static void set_clean(struct nv *c, struct nv_ext *e)
{
	if (e->state == EX_DIRTY) {
		c->dirty_bytes -= e->len;
		if (!e->cmd)
			pol_list_del(&e->dlink);
	}
	e->state = EX_CLEAN;
	e->cmd = 0;
	e->held = false;
	c->clean += e->len;
	lru_add(c, e);
}

/* e loses its first d bytes (the tree order stays: nothing lies between). */
static void trim_front(struct nv *c, struct nv_ext *e, uint64_t d)
{
	e->node.key += d;
	e->len -= d;
	account(c, e, d);
}

static void trim_back(struct nv *c, struct nv_ext *e, uint64_t d)
{
	e->len -= d;
	account(c, e, d);
}

/* Splits e at `at` (inside it); the second half keeps e's state, write-back,
 * last use and place in the dirty FIFO.  Needs one reserved record. */
static struct nv_ext *split(struct nv *c, struct nv_ext *e, uint64_t at)
{
	struct nv_ext *n = ext_new(c);

	n->node.key = at;
	n->len = ext_end(e) - at;
	n->used = e->used;
	n->dseq = e->dseq;
	n->dtime = e->dtime;
	n->cmd = e->cmd;
	n->state = e->state;
	n->held = e->held;
	e->len = at - ext_start(e);
	pol_tree_insert(&c->tree, &n->node);
	pol_list_add_head(&e->alink, &n->alink);
	if (n->state == EX_CLEAN)
		pol_list_add_head(&e->lru, &n->lru);       /* same last use */
	if (n->state == EX_DIRTY && !n->cmd)
		pol_list_add_head(&e->dlink, &n->dlink);   /* right after e, in e's list */
	return n;
}

static struct nv_ext *ext_next(struct nv *c, struct nv_ext *e)
{
	return e->alink.next == &c->exts ? NULL : pol_container_of(e->alink.next, struct nv_ext, alink);
}

static struct nv_ext *ext_prev(struct nv *c, struct nv_ext *e)
{
	return e->alink.prev == &c->exts ? NULL : pol_container_of(e->alink.prev, struct nv_ext, alink);
}

/* The first extent ending after off, or NULL.  guess (may be NULL) is an
 * extent near off: when off lies in it, or between it and a neighbour, no
 * search is needed. */
static struct nv_ext *first_from(struct nv *c, uint64_t off, struct nv_ext *guess)
{
	struct nv_ext *e;

	if (guess) {
		if (ext_start(guess) <= off) {
			if (ext_end(guess) > off)
				return guess;
			e = ext_next(c, guess);
			if (!e || ext_end(e) > off)
				return e;
		} else {
			e = ext_prev(c, guess);
			if (!e || ext_end(e) <= off)
				return guess;
			if (ext_start(e) <= off)
				return e;
		}
	}
	e = ext_of(pol_tree_floor(c->tree, off, 0));
	if (e)
		return ext_end(e) > off ? e : ext_next(c, e);
	return pol_list_empty(&c->exts) ? NULL : pol_container_of(c->exts.next, struct nv_ext, alink);
}

/* Drops [off, off + len) from the cache, whatever its state; e is
 * first_from(off).  Returns the extent after the range (NULL: none).  Needs
 * one reserved record: at most one extent straddles both ends. */
static struct nv_ext *cut(struct nv *c, struct nv_ext *e, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	struct nv_ext *next;

	for (; e && ext_start(e) < end; e = next) {
		uint64_t s = ext_start(e), t = ext_end(e);

		next = ext_next(c, e);
		if (s < off && t > end) {
			next = split(c, e, end);
			trim_back(c, e, end - off);
			return next;
		}
		if (s < off)
			trim_back(c, e, t - off);
		else if (t > end)
			trim_front(c, e, end - s);
		else
			ext_remove(c, e);
	}
	return e;
}

/* Whether a and b (a right before b) may become one extent. */
static bool mergeable(const struct nv_ext *a, const struct nv_ext *b)
{
	return ext_end(a) == ext_start(b) && a->state == b->state && a->state != EX_LOADING &&
	       (a->state == EX_CLEAN || (listed(a) && listed(b)));
}

/* Joins b into a or a into b; returns the survivor, which keeps its place
 * in its list: clean extents the later last use, dirty ones the earlier
 * place in the FIFO. */
static struct nv_ext *join(struct nv *c, struct nv_ext *a, struct nv_ext *b)
{
	bool b_stays = a->state == EX_CLEAN ? b->used > a->used : b->dseq < a->dseq;
	struct nv_ext *keep = b_stays ? b : a, *gone = b_stays ? a : b;
	uint64_t start = ext_start(a), len = a->len + b->len;

	unlink_ext(c, gone);   /* keep takes over its bytes */
	free_ext(c, gone);
	keep->node.key = start;   /* the tree order stays: gone was the only one between */
	keep->len = len;
	return keep;
}

/* Merges e with its neighbours where it can; returns what e became. */
static struct nv_ext *merge(struct nv *c, struct nv_ext *e)
{
	struct nv_ext *p = ext_prev(c, e), *n;

	if (p && mergeable(p, e))
		e = join(c, p, e);
	n = ext_next(c, e);
	if (n && mergeable(e, n))
		e = join(c, e, n);
	return e;
}

/* Evicts least recently used clean bytes until need bytes are free.  The
 * caller checked that the clean bytes suffice. */
static void make_room(struct nv *c, uint64_t need)
{
	while (c->cap - c->used < need) {
		struct nv_ext *e = lru_first(c);
		uint64_t take = need - (c->cap - c->used);

		if (!e)
			return;
		if (take >= e->len) {
			c->evicted_bytes += e->len;
			ext_remove(c, e);
		} else {
			c->evicted_bytes += take;
			trim_front(c, e, take);
		}
	}
}

/* Bytes free or evictable. */
static uint64_t room(const struct nv *c)
{
	return c->cap - c->used + c->clean;
}

/* ---- lookups ---- */

enum look { HIT, WAIT, MISS };

/* Whether all of [off, off + len) is cached (HIT), cached or being loaded
 * (WAIT), or not (MISS); *ret_first = first_from(off). */
static enum look lookup(struct nv *c, uint64_t off, uint64_t len, struct nv_ext *guess,
			struct nv_ext **ret_first)
{
	enum look r = HIT;
	uint64_t pos = off, end = off + len;
	struct nv_ext *e = first_from(c, off, guess);

	for (*ret_first = e; pos < end; e = ext_next(c, e)) {
		if (!e || ext_start(e) > pos)
			return MISS;
		if (e->state == EX_LOADING)
			r = WAIT;
		pos = ext_end(e);
	}
	return r;
}

/* Marks the extents of [off, off + len), from e = first_from(off) on, as
 * just used. */
static void touch(struct nv *c, struct nv_ext *e, uint64_t off, uint64_t len)
{
	for (; e && ext_start(e) < off + len; e = ext_next(c, e)) {
		if (e->state == EX_CLEAN) {
			pol_list_del(&e->lru);
			lru_add(c, e);
		}
	}
}

/* Memory-device offset modelling an access to cached [off, off + len)
 * (where in memory does not change the memory model's timing). */
static uint64_t mem_off(struct nv *c, uint64_t off, uint64_t len)
{
	uint64_t cap = c->env->dev[c->mem].capacity;
	uint64_t o = off % cap;

	return o + len <= cap ? o : (len <= cap ? cap - len : 0);
}

/* Whether a write-back in flight overlaps [off, off + len). */
static bool wb_overlaps(const struct nv *c, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < c->wb_now; i++) {
		const struct policy_req *w = c->wb[i];

		if (w->offset < off + len && off < w->offset + w->len)
			return true;
	}
	return false;
}

/* Caches write w: 1 = cached, 0 = no room (w's range is dropped from the
 * cache then: the caller writes it through), -ENOMEM.  *near is the
 * writer's remembered extent, updated. */
static int cache_write(struct nv *c, struct policy_req *w, struct nv_ref *near)
{
	uint64_t cached = 0, clean_in = 0, end = w->offset + w->len;
	struct nv_ext *first = first_from(c, w->offset, ref_get(*near)), *e;
	struct nv_ref after;
	bool fits;

	if (reserve(c, 2) < 0)
		return -ENOMEM;
	for (e = first; e && ext_start(e) < end; e = ext_next(c, e)) {
		uint64_t s = ext_start(e) > w->offset ? ext_start(e) : w->offset;
		uint64_t t = ext_end(e) < end ? ext_end(e) : end;

		cached += t - s;
		if (e->state == EX_CLEAN)
			clean_in += t - s;
	}
	fits = w->len - cached <= room(c) - clean_in;
	after = ref_of(cut(c, first, w->offset, w->len));
	if (!fits) {
		*near = after;
		return 0;
	}
	make_room(c, w->len);   /* may evict `after` */
	e = ext_new(c);
	e->node.key = w->offset;
	e->len = w->len;
	e->state = EX_DIRTY;
	e->held = wb_overlaps(c, w->offset, w->len);
	attach(c, e, first_from(c, w->offset, ref_get(after)));
	*near = ref_of(merge(c, e));
	return 1;
}

/* ---- read-ahead ---- */

static struct nvs *stream_of(struct nv *c, uint32_t id)
{
	struct nvs *s = pol_map_get(&c->streams, id);

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (s)
		s->next_off = UINT64_MAX;   /* its first read is not sequential */
	if (s && pol_map_put(&c->streams, id, s) < 0) {
		free(s);
		s = NULL;
	}
	return s;
}

/* Loads the first uncached run of [from, from + ra_size) into memory, in
 * whole lines, as far as there is room. */
static void read_ahead(struct nv *c, struct nvs *s, uint64_t from)
{
	uint64_t dcap = c->env->dev[c->home].capacity, line = c->o.line, end, len;
	struct nv_ext *e;
	struct nv_ref after;
	struct policy_req *r;

	end = from + c->o.ra_size;
	if (end > dcap)
		end = dcap;
	if (s->ra_end > from)
		from = s->ra_end;
	from = from / line * line;
	/* Skip what is cached or loading already; start at the next line. */
	for (e = first_from(c, from, ref_get(s->near)); e && ext_start(e) <= from;
	     e = ext_next(c, e))
		from = (ext_end(e) + line - 1) / line * line;
	if (from >= end)
		return;
	if (e && ext_start(e) < end)
		end = ext_start(e) / line * line;
	len = end > from ? end - from : 0;
	if (len > room(c))
		len = room(c) / line * line;
	if (!len || reserve(c, 1) < 0)
		return;
	r = pol_pool_get(&c->internal, POLICY_OP_READ, (uint16_t)c->home, from, len, 0,
			 c->env->now(c->env));
	if (!r)
		return;
	after = ref_of(e);
	make_room(c, len);      /* may evict `after` */
	e = ext_new(c);
	e->node.key = from;
	e->len = len;
	e->state = EX_LOADING;
	e->cmd = r->id;
	attach(c, e, first_from(c, from, ref_get(after)));
	r->pptr = e;            /* where the completion starts looking */
	r->pdata[0] = e->gen;
	s->ra_end = from + len;
	c->ra_bytes += len;
	c->ra_cmds++;
	pol_list_add_tail(&c->blk_q, &r->link);
}

/*
 * Queues the fill of [off, off + len), which a read-ahead loaded: internal
 * writes of that home range to its place in memory, at most max_merge bytes
 * each (iosigd puts at most 1 MiB of a fill in its tier, tiers.c's CHUNK;
 * the default read-ahead is 512 KiB).  All or nothing: false when the pool
 * lacks commands for it.
 */
static bool fill(struct nv *c, uint64_t off, uint64_t len)
{
	uint64_t n = (len + c->o.max_merge - 1) / c->o.max_merge, k;

	if (c->internal.cap - c->internal.used < n)
		return false;
	for (uint64_t pos = off; pos < off + len; pos += k) {
		struct policy_req *r;

		k = off + len - pos < c->o.max_merge ? off + len - pos : c->o.max_merge;
		r = pol_pool_get(&c->internal, POLICY_OP_WRITE, (uint16_t)c->home, pos, k, 0,
				 c->env->now(c->env));
		r->pdata[1] = mem_off(c, pos, k);
		pol_list_add_tail(&c->mem_q, &r->link);
	}
	c->fill_cmds += n;
	c->fill_bytes += len;
	return true;
}

/* ---- requests ---- */

/* Sends read r where its data is; guess as for first_from().  Returns the
 * extent holding (or following) its start. */
static struct nv_ext *route_read(struct nv *c, struct policy_req *r, struct nv_ext *guess)
{
	struct nv_ext *first;

	switch (lookup(c, r->offset, r->len, guess, &first)) {
	case HIT:
		c->read_hits++;
		c->hit_bytes += r->len;
		touch(c, first, r->offset, r->len);
		r->pdata[1] = mem_off(c, r->offset, r->len);
		pol_list_add_tail(&c->mem_q, &r->link);
		break;
	case WAIT:
		c->parked_reads++;
		r->tnode.key = r->offset;
		r->tnode.key2 = r->id;
		pol_tree_insert(&c->parked, &r->tnode);
		if (r->len > c->parked_maxlen)
			c->parked_maxlen = r->len;
		break;
	case MISS:
		c->read_misses++;
		c->bypass_bytes += r->len;
		pol_list_add_tail(&c->blk_q, &r->link);
		break;
	}
	return first;
}

static int nv_submit(struct policy *pol, struct policy_req *req)
{
	struct nv *c = pol->priv;
	struct nvs *s;
	int r;

	if (req->dev != c->home || req->op == POLICY_OP_FLUSH)
		return -EINVAL;
	s = stream_of(c, req->stream);
	if (!s)
		return -ENOMEM;
	if (req->op == POLICY_OP_READ) {
		bool seq = s->next_off == req->offset;

		if (!seq)
			s->ra_end = 0;   /* the reader jumped: its old window is useless */
		if (c->o.ra_size && seq)
			read_ahead(c, s, req->offset + req->len);
		s->next_off = req->offset + req->len;
		s->near = ref_of(route_read(c, req, ref_get(s->near)));
		return 0;
	}
	s->wrun = s->wnext == req->offset ? s->wrun + req->len : req->len;
	s->wnext = req->offset + req->len;
	if (c->o.seq_bypass && s->wrun >= c->o.seq_bypass &&
	    !wb_overlaps(c, req->offset, req->len)) {
		/* A large sequential stream: home, older cached copies dropped
		 * (a write-back in flight over the range keeps it cached, so two
		 * writes of those bytes are never at the device at once). */
		if (reserve(c, 1) < 0)
			return -ENOMEM;
		s->near = ref_of(cut(c, first_from(c, req->offset, ref_get(s->near)), req->offset,
				     req->len));
		c->write_bypass++;
		c->write_bypass_bytes += req->len;
		req->flags |= POLICY_REQ_HOME;
		/* The engine may write it itself (env->home): its write-back
		 * comes back later as a write of its own. */
		if (c->env->home && c->env->home(c->env, req)) {
			c->given_home++;
			return 0;
		}
		pol_list_add_tail(&c->blk_q, &req->link);
		return 0;
	}
	r = cache_write(c, req, &s->near);
	if (r < 0)
		return r;
	if (r) {
		c->write_cached++;
		c->write_cached_bytes += req->len;
		req->pdata[1] = mem_off(c, req->offset, req->len);
		pol_list_add_tail(&c->mem_q, &req->link);
	} else {
		c->write_through++;
		c->write_through_bytes += req->len;
		req->flags |= POLICY_REQ_HOME;
		pol_list_add_tail(&c->blk_q, &req->link);
	}
	return 0;
}

/* One write-back command: the oldest dirty extent, at most max_merge bytes
 * of it, once it has been dirty for wb_delay.  false when nothing could be
 * started. */
static bool write_back(struct nv *c)
{
	struct nv_ext *e;
	struct policy_req *r;
	uint64_t len;

	if (pol_list_empty(&c->dirty) || reserve(c, 1) < 0)
		return false;
	e = pol_container_of(c->dirty.next, struct nv_ext, dlink);
	if (c->o.wb_delay && c->env->now(c->env) < e->dtime + c->o.wb_delay) {
		c->env->wake_at(c->env, e->dtime + c->o.wb_delay);   /* the oldest is not due yet */
		return false;
	}
	len = e->len < c->o.max_merge ? e->len : c->o.max_merge;
	r = pol_pool_get(&c->internal, POLICY_OP_WRITE, (uint16_t)c->home, ext_start(e), len, 0,
			 c->env->now(c->env));
	if (!r)
		return false;
	if (len < e->len)
		split(c, e, ext_start(e) + len);
	pol_list_del(&e->dlink);
	e->cmd = r->id;
	r->pptr = e;            /* where the completion starts looking */
	r->pdata[0] = e->gen;
	c->wb[c->wb_now++] = r;
	c->wb_cmds++;
	c->wb_bytes += len;
	r->merge_next = NULL;
	pol_issue(c->env, r, c->home, r->offset);
	return true;
}

/* Issues the block commands of q while the block device has room. */
static void issue_blk(struct nv *c, struct policy_list *q)
{
	struct policy_env *env = c->env;

	while (!pol_list_empty(q) && pol_dev_room(env, c->home)) {
		struct policy_req *r = pol_container_of(q->next, struct policy_req, link);
		struct policy_req *last = r;
		uint64_t total = r->len;

		pol_list_del(&r->link);
		r->merge_next = NULL;
		/* Writes queued back to back that continue each other: one command. */
		while (r->op == POLICY_OP_WRITE && !pol_list_empty(q)) {
			struct policy_req *n = pol_container_of(q->next, struct policy_req, link);

			if (!pol_can_merge(last, n, total, c->o.max_merge))
				break;
			pol_list_del(&n->link);
			n->merge_next = NULL;
			last->merge_next = n;
			last = n;
			total += n->len;
		}
		pol_issue(env, r, c->home, r->offset);
	}
}

static void nv_dispatch(struct policy *pol)
{
	struct nv *c = pol->priv;
	struct policy_env *env = c->env;

	while (!pol_list_empty(&c->mem_q) && pol_dev_room(env, c->mem)) {
		struct policy_req *r = pol_container_of(c->mem_q.next, struct policy_req, link);

		pol_list_del(&r->link);
		r->merge_next = NULL;
		/* The room was checked, so a refusal is a bad request: a fill
		 * goes back to the pool (its bytes stay cached; an engine
		 * serves a read of them from wherever their data is). */
		if (pol_issue(env, r, c->mem, r->pdata[1]) < 0 && pol_pool_owns(&c->internal, r))
			pol_pool_put(&c->internal, r);
	}
	/* Foreground first (waited writes, then misses, write-through,
	 * read-ahead), then write-back in the background. */
	issue_blk(c, &c->sync_q);
	issue_blk(c, &c->blk_q);
	while (pol_list_empty(&c->sync_q) && pol_list_empty(&c->blk_q) && c->wb_now < c->o.wb_inflight &&
	       pol_dev_room(env, c->home) && write_back(c))
		;
}

/* The extent an internal command was made for, if its record still is. */
static struct nv_ext *cmd_guess(const struct policy_req *req)
{
	return ref_get((struct nv_ref){ .e = req->pptr, .gen = (uint32_t)req->pdata[0] });
}

/*
 * A read-ahead landed: what it loaded goes into memory (a fill) and is clean
 * cache from now on; reads that waited for it go on.  Bytes written since it
 * was issued are not its any more (the write cut them out of its extent, and
 * is cached or went home itself), so only what is still loading for it is
 * filled.  A read-ahead that failed, or whose fill finds no command, loaded
 * nothing into memory: its bytes leave the cache and their reads miss.
 *
 * The bytes count as in memory from now, not from the fill's completion:
 * the fill goes into the memory queue ahead of the reads this completion
 * releases, and iosigd serves any read from the newest copy wherever it is,
 * so a hit never depends on it; making reads wait for the fill would only
 * add a memory write to their latency.
 */
static void readahead_done(struct nv *c, struct policy_req *req)
{
	uint64_t end = req->offset + req->len;
	struct nv_ext *first, *after;

	/* Merging joins neighbours only, so the walk goes on after the survivor. */
	for (struct nv_ext *e = first_from(c, req->offset, cmd_guess(req)); e && ext_start(e) < end;
	     e = after) {
		after = ext_next(c, e);
		if (e->state != EX_LOADING || e->cmd != req->id)
			continue;
		if (req->status == 0 && fill(c, ext_start(e), e->len)) {
			set_clean(c, e);
			after = ext_next(c, merge(c, e));
		} else {
			ext_remove(c, e);
		}
	}
	for (struct policy_req *r = pol_req_of_tnode(pol_tree_lower_bound(c->parked,
			req->offset > c->parked_maxlen ? req->offset - c->parked_maxlen : 0, 0)),
	     *next; r && r->offset < end; r = next) {
		next = pol_req_of_tnode(pol_tree_next(c->parked, &r->tnode));
		if (lookup(c, r->offset, r->len, NULL, &first) != WAIT) {
			pol_tree_remove(&c->parked, &r->tnode);
			route_read(c, r, NULL);
		}
	}
}

/* A write-back finished: what it wrote is clean unless rewritten meanwhile;
 * rewritten bytes it held back may be written back now. */
static void writeback_done(struct nv *c, struct policy_req *req)
{
	uint64_t end = req->offset + req->len;

	for (unsigned i = 0; i < c->wb_now; i++)
		if (c->wb[i] == req) {
			c->wb[i] = c->wb[--c->wb_now];
			break;
		}
	for (struct nv_ext *e = first_from(c, req->offset, cmd_guess(req)); e && ext_start(e) < end;
	     e = ext_next(c, e)) {
		if (e->state == EX_DIRTY && e->cmd == req->id) {
			set_clean(c, e);
			e = merge(c, e);
		}
	}
	for (struct policy_list *p = c->held.next, *next; p != &c->held; p = next) {
		struct nv_ext *e = pol_container_of(p, struct nv_ext, dlink);

		next = p->next;
		if (!wb_overlaps(c, ext_start(e), e->len)) {
			pol_list_del(&e->dlink);
			e->held = false;
			dirty_add(c, e);
		}
	}
}

static void nv_complete(struct policy *pol, struct policy_req *req)
{
	struct nv *c = pol->priv;

	if (!pol_pool_owns(&c->internal, req))
		return;
	/* Internal writes to the block device are write-backs, to memory
	 * fills (whose bytes count as cached since their read-ahead landed). */
	if (req->op == POLICY_OP_READ)
		readahead_done(c, req);
	else if (req->issued_dev != c->mem)
		writeback_done(c, req);
	pol_pool_put(&c->internal, req);
}

static void nv_tick(struct policy *pol)
{
}

/* A program waits for req: a workload write queued for the block device
 * (the only requests of blk_q with POLICY_REQ_HOME) moves to sync_q. */
static void nv_expedite(struct policy *pol, struct policy_req *req)
{
	struct nv *c = pol->priv;

	if (req->op == POLICY_OP_WRITE && (req->flags & POLICY_REQ_HOME) &&
	    !pol_pool_owns(&c->internal, req)) {
		pol_list_del(&req->link);
		pol_list_add_tail(&c->sync_q, &req->link);
		c->write_expedited++;
	}
}

static void nv_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct nv *c = pol->priv;

	emit(ctx, "read_hits", (double)c->read_hits);
	emit(ctx, "read_misses", (double)c->read_misses);
	emit(ctx, "hit_bytes", (double)c->hit_bytes);
	emit(ctx, "bypass_bytes", (double)c->bypass_bytes);
	emit(ctx, "parked_reads", (double)c->parked_reads);
	emit(ctx, "readahead_bytes", (double)c->ra_bytes);
	emit(ctx, "readahead_cmds", (double)c->ra_cmds);
	emit(ctx, "fill_cmds", (double)c->fill_cmds);
	emit(ctx, "fill_bytes", (double)c->fill_bytes);
	emit(ctx, "writes_cached", (double)c->write_cached);
	emit(ctx, "write_cached_bytes", (double)c->write_cached_bytes);
	emit(ctx, "writes_through", (double)c->write_through);
	emit(ctx, "write_through_bytes", (double)c->write_through_bytes);
	emit(ctx, "writes_bypassed", (double)c->write_bypass);
	emit(ctx, "writes_given_home", (double)c->given_home);
	emit(ctx, "write_bypass_bytes", (double)c->write_bypass_bytes);
	emit(ctx, "write_expedited", (double)c->write_expedited);
	emit(ctx, "writeback_bytes", (double)c->wb_bytes);
	emit(ctx, "writeback_cmds", (double)c->wb_cmds);
	emit(ctx, "evicted_bytes", (double)c->evicted_bytes);
	emit(ctx, "dirty_bytes", (double)c->dirty_bytes);
	emit(ctx, "cached_bytes", (double)c->used);
	emit(ctx, "extents", (double)c->nexts);
	emit(ctx, "peak_extents", (double)c->peak_exts);
}

static void nv_fini(struct policy *pol)
{
	struct nv *c = pol->priv;

	if (!c)
		return;
	pol_map_free_vals(&c->streams);
	pol_pool_free(&c->internal);
	for (size_t i = 0; i < c->nslabs; i++)
		free(c->slabs[i]);
	free(c->slabs);
	free(c);
	pol->priv = NULL;
}

const struct policy_ops pol_nvcache_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "nvcache",
	.summary = "memory tier as cache of block storage: direct hits, read-ahead, read-miss bypass, write-back",
	.opts = nv_opts,
	.opts_size = sizeof(struct nv_opts),
	.init = nv_init,
	.submit = nv_submit,
	.dispatch = nv_dispatch,
	.complete = nv_complete,
	.tick = nv_tick,
	.fini = nv_fini,
	.report = nv_report,
	.expedite = nv_expedite,
};
