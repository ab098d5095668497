/* SPDX-License-Identifier: MIT */
/*
 * nvcache.c - memory storage (NVM or DRAM) as a cache of block storage, as
 * in "Towards High Performance Big Data Processing by Making Use of
 * Non-volatile Memory" (Oikawa, CLOSER 2015):
 *
 *  - reads whose data is in memory are served from it directly (path a);
 *  - sequential reads trigger read-ahead from the block device into memory
 *    (path b), so the next reads hit;
 *  - a read miss bypasses the cache: it goes to the block device and its
 *    data is not cached (path c), so random reads do not pollute memory;
 *  - writes go to memory whenever a line is free or clean (a), dirty lines
 *    are written back in the background (b); with no room left a write goes
 *    to the block device (c, write-through) and drops stale cached copies.
 *
 * The cache is set associative: `line`-byte lines, `ways` per set, LRU
 * within a set; a line keeps a 512-byte-sector valid mask and dirty mask,
 * so partial writes need no fill.  A read hitting lines that a read-ahead
 * is still loading waits for it.  Memory accesses go where the data is: a
 * request within one line is one memory command at that line's place, a
 * longer one is split into a piece per line (policy.h: pieces carry their
 * parent's data); a read-ahead reads the block device, then writes each
 * line it loaded to its place in memory (a fill) before the line is valid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_builtin.h"
#include "pol_util.h"

#define SECT 512u
#define NV_POOL 4096      /* read-aheads, their fills, write-backs */
#define NV_PIECES 4096    /* pieces of requests spanning lines */
#define NV_MAX_SPAN 256   /* lines one cached write may touch; longer ones go through */

enum { L_LOADING = 2, L_WB = 4, L_HOLD = 8 /* taken by the write being placed */ };

struct nv_opts {
	uint64_t line;
	uint64_t ways;
	uint64_t cache_size;
	uint64_t ra_size;
	uint64_t wb_inflight;
	uint64_t max_merge;
};

struct line {
	uint64_t tag;          /* home block number + 1 (0 = empty) */
	uint64_t valid, dirty; /* sector masks */
	uint64_t lru;          /* last use tick */
	uint32_t gen;          /* bumped by every write: a write-back that saw an
	                          older gen leaves the line dirty */
	uint32_t wb_gen;
	uint8_t flags;
	bool on_dirty;         /* in the dirty FIFO */
	struct policy_list dlink;
};

struct nvs {                   /* per stream: read-ahead state */
	uint64_t next_off;         /* where a sequential read would start */
	uint64_t ra_end;           /* read-ahead issued up to here */
};

struct nv {
	struct nv_opts o;
	struct policy_env *env;
	unsigned mem;              /* memory tier device */
	uint64_t nlines, nsets, spl;   /* lines, sets, sectors per line */
	struct line *lines;
	uint64_t tick;
	struct policy_list blk_q;  /* per home device would be more general; see init */
	struct policy_list mem_q;
	struct policy_tnode *parked; /* reads waiting for a read-ahead, by offset */
	uint64_t parked_maxlen;    /* longest read ever parked (range search) */
	struct policy_list dirty;  /* lines to write back, oldest first */
	unsigned home;             /* the block device */
	unsigned wb_now;           /* write-backs in flight */
	struct pol_pool internal;  /* read-ahead, fill and write-back commands */
	struct pol_pool pieces;    /* per-line pieces of multi-line hits and writes */
	struct pol_map streams;
	/* counters */
	uint64_t read_hits, read_misses, hit_bytes, bypass_bytes, ra_bytes, ra_cmds;
	uint64_t parked_reads, write_cached, write_cached_bytes, write_through;
	uint64_t write_through_bytes, wb_bytes, wb_cmds, evictions, fills;
};

static const struct policy_opt nv_opts[] = {
	{ .name = "line", .type = POLICY_OPT_SIZE, .off = offsetof(struct nv_opts, line),
	  .def = "4KiB", .min = 512, .max = 32 * 1024,
	  .help = "cache line size (a multiple of 512 bytes)" },
	{ .name = "ways", .type = POLICY_OPT_UINT, .off = offsetof(struct nv_opts, ways),
	  .def = "8", .min = 1, .max = 1024, .help = "lines per set (associativity)" },
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
	  .help = "largest write-back command built from contiguous dirty lines" },
	{ .name = NULL },
};

static int nv_init(struct policy *pol)
{
	struct policy_env *env = pol->env;
	struct nv *c;
	unsigned d, mem = env->ndev, home = env->ndev;
	uint64_t size;

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
	size = c->o.cache_size ? c->o.cache_size : env->dev[mem].capacity;
	if (size > env->dev[mem].capacity)
		size = env->dev[mem].capacity;
	c->spl = c->o.line / SECT;
	c->nsets = size / c->o.line / c->o.ways;
	if (!c->nsets) {
		pol_err(pol, "a %llu-byte cache holds not even one set of %llu lines of %llu bytes",
			(unsigned long long)size, (unsigned long long)c->o.ways,
			(unsigned long long)c->o.line);
		free(c);
		return -EINVAL;
	}
	c->nlines = c->nsets * c->o.ways;
	c->lines = calloc(c->nlines, sizeof(*c->lines));
	if (!c->lines || pol_pool_init(&c->internal, NV_POOL) < 0) {
		free(c->lines);
		free(c);
		return -ENOMEM;
	}
	if (pol_pool_init(&c->pieces, NV_PIECES) < 0) {
		pol_pool_free(&c->internal);
		free(c->lines);
		free(c);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < c->nlines; i++)
		pol_list_init(&c->lines[i].dlink);
	pol_list_init(&c->blk_q);
	pol_list_init(&c->mem_q);
	pol_list_init(&c->dirty);
	pol_map_init(&c->streams);
	pol->priv = c;
	return 0;
}

/* ---- the cache ---- */

static uint64_t set_of(const struct nv *c, uint64_t blk)
{
	uint64_t z = blk * 0x9e3779b97f4a7c15ull;

	return (z ^ (z >> 29)) % c->nsets;
}

static struct line *find(struct nv *c, uint64_t blk)
{
	struct line *s = &c->lines[set_of(c, blk) * c->o.ways];

	for (uint64_t w = 0; w < c->o.ways; w++)
		if (s[w].tag == blk + 1)
			return &s[w];
	return NULL;
}

/* The way blk would take in its set: empty, or the LRU clean idle line.
 * NULL when every way is dirty or busy.  Nothing changes yet. */
static struct line *alloc_victim(struct nv *c, uint64_t blk)
{
	struct line *s = &c->lines[set_of(c, blk) * c->o.ways], *victim = NULL;

	for (uint64_t w = 0; w < c->o.ways; w++) {
		struct line *l = &s[w];

		if (!l->tag)
			return l;
		if (!l->dirty && !(l->flags & (L_LOADING | L_WB | L_HOLD)) &&
		    (!victim || l->lru < victim->lru))
			victim = l;
	}
	return victim;
}

/* Re-tags line l for blk (its old content is dropped). */
static void claim(struct nv *c, struct line *l, uint64_t blk)
{
	bool on_dirty = l->on_dirty;

	l->tag = blk + 1;
	l->valid = l->dirty = 0;
	l->flags = 0;
	l->gen = l->wb_gen = 0;
	l->on_dirty = on_dirty;   /* clean lines are never on the dirty list */
}

/* A line for blk: present, or a claimed victim (counted as an eviction). */
static struct line *alloc_line(struct nv *c, uint64_t blk)
{
	struct line *l = find(c, blk);

	if (l)
		return l;
	l = alloc_victim(c, blk);
	if (!l)
		return NULL;
	if (l->tag)
		c->evictions++;
	claim(c, l, blk);
	return l;
}

static uint64_t line_index(const struct nv *c, const struct line *l)
{
	return (uint64_t)(l - c->lines);
}

/* Sector mask of [off, off + len) within block blk. */
static uint64_t mask_of(const struct nv *c, uint64_t blk, uint64_t off, uint64_t len)
{
	uint64_t bs = blk * c->o.line, be = bs + c->o.line;
	uint64_t s = off > bs ? off : bs, e = off + len < be ? off + len : be;
	uint64_t first = (s - bs) / SECT, last = (e - bs + SECT - 1) / SECT;
	uint64_t n = last - first;

	return (n >= 64 ? ~0ull : ((1ull << n) - 1)) << first;
}

enum look { HIT, WAIT, MISS };

/* Whether every sector of [off, off + len) is valid (HIT), valid or being
 * loaded (WAIT), or not (MISS). */
static enum look lookup(struct nv *c, uint64_t off, uint64_t len)
{
	enum look r = HIT;

	for (uint64_t b = off / c->o.line; b * c->o.line < off + len; b++) {
		struct line *l = find(c, b);
		uint64_t m = mask_of(c, b, off, len);

		if (!l)
			return MISS;
		if ((l->valid & m) == m)
			continue;
		if (l->flags & L_LOADING)
			r = WAIT;
		else
			return MISS;
	}
	return r;
}

static void touch(struct nv *c, uint64_t off, uint64_t len)
{
	c->tick++;
	for (uint64_t b = off / c->o.line; b * c->o.line < off + len; b++) {
		struct line *l = find(c, b);

		if (l)
			l->lru = c->tick;
	}
}

/* Memory-device place of home byte off (its line must be cached). */
static uint64_t mem_place(struct nv *c, uint64_t off)
{
	struct line *l = find(c, off / c->o.line);

	return (l ? line_index(c, l) * c->o.line : 0) + off % c->o.line;
}

/* Queues r (all of it in one line) for the memory device at its place. */
static void mem_queue(struct nv *c, struct policy_req *r)
{
	r->pdata[1] = mem_place(c, r->offset);
	pol_list_add_tail(&c->mem_q, &r->link);
}

/* Queues req, whose lines are all cached, for the memory device: one
 * command if it lies in one line, else a piece per line (each at its
 * line's place).  false when the pool lacks pieces (nothing queued). */
static bool to_mem(struct nv *c, struct policy_req *req)
{
	uint64_t first = req->offset / c->o.line, last = (req->offset + req->len - 1) / c->o.line;
	uint64_t now = c->env->now(c->env);

	if (first == last) {
		mem_queue(c, req);
		return true;
	}
	if (c->pieces.cap - c->pieces.used < last - first + 1)
		return false;
	pol_pieces_begin(req, last - first + 1);
	for (uint64_t b = first; b <= last; b++) {
		uint64_t s = b == first ? req->offset : b * c->o.line;
		uint64_t e = b == last ? req->offset + req->len : (b + 1) * c->o.line;

		mem_queue(c, pol_piece_get(&c->pieces, req, s, e - s, now));
	}
	return true;
}

/* Caches a write: true when every line took it. */
static bool cache_write(struct nv *c, struct policy_req *w)
{
	uint64_t first = w->offset / c->o.line, last = (w->offset + w->len - 1) / c->o.line;

	struct { struct line *l; struct line old; } taken[NV_MAX_SPAN];
	unsigned ntaken = 0;

	if (last - first >= NV_MAX_SPAN)
		return false;
	/* All or nothing: take every line first (held, so that taking the
	 * next one cannot evict it); if one is missing, put back the lines
	 * taken, including what they held before. */
	for (uint64_t b = first; b <= last; b++) {
		struct line *l = find(c, b);

		if (!l) {
			l = alloc_victim(c, b);
			if (!l) {
				while (ntaken--) {
					taken[ntaken].l->flags &= (uint8_t)~L_HOLD;
					*taken[ntaken].l = taken[ntaken].old;
				}
				for (uint64_t u = first; u < b; u++) {
					struct line *h = find(c, u);

					if (h)
						h->flags &= (uint8_t)~L_HOLD;
				}
				return false;
			}
			taken[ntaken].l = l;
			taken[ntaken].old = *l;
			ntaken++;
			claim(c, l, b);
		}
		l->flags |= L_HOLD;
	}
	for (unsigned i = 0; i < ntaken; i++)
		if (taken[i].old.tag)
			c->evictions++;
	c->tick++;
	for (uint64_t b = first; b <= last; b++) {
		struct line *l = find(c, b);
		uint64_t m = mask_of(c, b, w->offset, w->len);

		l->flags &= (uint8_t)~L_HOLD;
		l->valid |= m;
		l->dirty |= m;
		l->gen++;
		l->lru = c->tick;
		if (!l->on_dirty) {
			pol_list_add_tail(&c->dirty, &l->dlink);
			l->on_dirty = true;
		}
	}
	return true;
}

/* Drops cached copies of [off, off + len) (a write-through made them stale). */
static void invalidate(struct nv *c, uint64_t off, uint64_t len)
{
	for (uint64_t b = off / c->o.line; b * c->o.line < off + len; b++) {
		struct line *l = find(c, b);
		uint64_t m;

		if (!l)
			continue;
		m = mask_of(c, b, off, len);
		l->valid &= ~m;
		l->dirty &= ~m;
		l->gen++;
		if (!l->dirty && l->on_dirty) {
			pol_list_del(&l->dlink);
			l->on_dirty = false;
		}
	}
}

/* ---- read-ahead ---- */

static struct nvs *stream_of(struct nv *c, uint32_t id)
{
	struct nvs *s = pol_map_get(&c->streams, id);

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (s && pol_map_put(&c->streams, id, s) < 0) {
		free(s);
		s = NULL;
	}
	return s;
}

/* Loads [from, from + ra_size) into lines not yet holding it. */
static void read_ahead(struct nv *c, struct nvs *s, uint64_t from)
{
	uint64_t cap = c->env->dev[c->home].capacity, end = from + c->o.ra_size, start;
	struct policy_req *r;

	if (s->ra_end > from)
		from = s->ra_end;
	from = from / c->o.line * c->o.line;
	if (end > cap)
		end = cap;
	/* Skip what is cached already; stop at the first line we cannot take. */
	while (from < end && lookup(c, from, c->o.line) != MISS)
		from += c->o.line;
	start = from;
	while (from < end) {
		struct line *l = find(c, from / c->o.line);

		if (l && (l->valid || (l->flags & (L_LOADING | L_WB)) || l->dirty))
			break;
		if (!l && !(l = alloc_line(c, from / c->o.line)))
			break;
		l->flags |= L_LOADING;
		from += c->o.line;
	}
	if (from == start)
		return;
	r = pol_pool_get(&c->internal, POLICY_OP_READ, (uint16_t)c->home, start, from - start, 0,
			 c->env->now(c->env));
	if (!r) {
		for (uint64_t o = start; o < from; o += c->o.line) {
			struct line *l = find(c, o / c->o.line);

			l->flags &= (uint8_t)~L_LOADING;
			if (!l->valid)
				l->tag = 0;
		}
		return;
	}
	s->ra_end = from;
	c->ra_bytes += from - start;
	c->ra_cmds++;
	pol_list_add_tail(&c->blk_q, &r->link);
}

/* ---- requests ---- */

static void route_read(struct nv *c, struct policy_req *r)
{
	switch (lookup(c, r->offset, r->len)) {
	case HIT:
		if (!to_mem(c, r)) {
			/* No pieces left: read it from the block device. */
			c->read_misses++;
			c->bypass_bytes += r->len;
			pol_list_add_tail(&c->blk_q, &r->link);
			break;
		}
		c->read_hits++;
		c->hit_bytes += r->len;
		touch(c, r->offset, r->len);
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
}

static int nv_submit(struct policy *pol, struct policy_req *req)
{
	struct nv *c = pol->priv;

	if (req->dev != c->home || req->op == POLICY_OP_FLUSH)
		return -EINVAL;
	if (req->op == POLICY_OP_READ) {
		struct nvs *s = stream_of(c, req->stream);
		bool seq = s && s->next_off == req->offset;

		if (s && !seq)
			s->ra_end = 0;   /* the reader jumped: its old window is useless */
		if (s && c->o.ra_size && seq)
			read_ahead(c, s, req->offset + req->len);
		if (s)
			s->next_off = req->offset + req->len;
		route_read(c, req);
		return 0;
	}
	if (c->pieces.cap - c->pieces.used >= req->len / c->o.line + 2 && cache_write(c, req)) {
		c->write_cached++;
		c->write_cached_bytes += req->len;
		to_mem(c, req);
	} else {
		c->write_through++;
		c->write_through_bytes += req->len;
		invalidate(c, req->offset, req->len);
		pol_list_add_tail(&c->blk_q, &req->link);
	}
	return 0;
}

/* One write-back command: the oldest dirty line plus the contiguous fully
 * dirty lines after it.  false when nothing could be started. */
static bool write_back(struct nv *c)
{
	struct line *l, *n;
	uint64_t blk, first, last, off, len;
	struct policy_req *r;

	if (pol_list_empty(&c->dirty))
		return false;
	l = pol_container_of(c->dirty.next, struct line, dlink);
	blk = l->tag - 1;
	/* The dirty sectors of the first line, as one contiguous range (any
	 * clean sectors between them are valid, rewriting them is harmless). */
	first = (uint64_t)__builtin_ctzll(l->dirty);
	last = 63 - (uint64_t)__builtin_clzll(l->dirty);
	off = blk * c->o.line + first * SECT;
	len = (last - first + 1) * SECT;
	r = pol_pool_get(&c->internal, POLICY_OP_WRITE, (uint16_t)c->home, off, len, 0,
			 c->env->now(c->env));
	if (!r)
		return false;
	pol_list_del(&l->dlink);
	l->on_dirty = false;
	l->flags |= L_WB;
	l->wb_gen = l->gen;
	/* A range ending at the line's end continues into following lines
	 * that are entirely dirty. */
	if (last == c->spl - 1) {
		uint64_t full = c->spl >= 64 ? ~0ull : (1ull << c->spl) - 1;

		while ((n = find(c, ++blk)) && n->dirty == full && !(n->flags & L_WB) &&
		       r->len + c->o.line <= c->o.max_merge) {
			pol_list_del(&n->dlink);
			n->on_dirty = false;
			n->flags |= L_WB;
			n->wb_gen = n->gen;
			r->len += c->o.line;
		}
	}
	c->wb_now++;
	c->wb_cmds++;
	c->wb_bytes += r->len;
	r->merge_next = NULL;
	pol_issue(c->env, r, c->home, r->offset);
	return true;
}

static void nv_dispatch(struct policy *pol)
{
	struct nv *c = pol->priv;
	struct policy_env *env = c->env;

	while (!pol_list_empty(&c->mem_q) && pol_dev_room(env, c->mem)) {
		struct policy_req *r = pol_container_of(c->mem_q.next, struct policy_req, link);

		pol_list_del(&r->link);
		r->merge_next = NULL;
		pol_issue(env, r, c->mem, r->pdata[1]);
	}
	/* Foreground first (misses, write-through, read-ahead), then write-back
	 * in the background. */
	while (!pol_list_empty(&c->blk_q) && pol_dev_room(env, c->home)) {
		struct policy_req *r = pol_container_of(c->blk_q.next, struct policy_req, link);

		pol_list_del(&r->link);
		r->merge_next = NULL;
		pol_issue(env, r, c->home, r->offset);
	}
	while (pol_list_empty(&c->blk_q) && c->wb_now < c->o.wb_inflight &&
	       pol_dev_room(env, c->home) && write_back(c))
		;
}

/* Reads parked on lines of [off, off + len) that are loaded now go on. */
static void unpark(struct nv *c, uint64_t off, uint64_t len)
{
	for (struct policy_req *r = pol_req_of_tnode(pol_tree_lower_bound(c->parked,
			off > c->parked_maxlen ? off - c->parked_maxlen : 0, 0)),
	     *next; r && r->offset < off + len; r = next) {
		next = pol_req_of_tnode(pol_tree_next(c->parked, &r->tnode));
		if (lookup(c, r->offset, r->len) != WAIT) {
			pol_tree_remove(&c->parked, &r->tnode);
			route_read(c, r);
		}
	}
}

static void loaded(struct nv *c, struct line *l)
{
	l->flags &= (uint8_t)~L_LOADING;
	l->valid |= c->spl >= 64 ? ~0ull : (1ull << c->spl) - 1;
}

static void nv_complete(struct policy *pol, struct policy_req *req)
{
	struct nv *c = pol->priv;
	uint64_t now = c->env->now(c->env);

	if (pol_pool_owns(&c->pieces, req)) {
		int status;
		struct policy_req *parent = pol_piece_done(&c->pieces, req, &status);

		if (parent)
			c->env->finish(c->env, parent, status);
		return;
	}
	if (!pol_pool_owns(&c->internal, req))
		return;
	if (req->op == POLICY_OP_READ) {
		/* Read-ahead landed: each line it loaded is written to its place
		 * in memory (a fill), and valid once there. */
		for (uint64_t o = req->offset; o < req->offset + req->len; o += c->o.line) {
			struct line *l = find(c, o / c->o.line);
			struct policy_req *f;

			if (!l || !(l->flags & L_LOADING))
				continue;
			f = pol_pool_get(&c->internal, POLICY_OP_WRITE, (uint16_t)c->home,
					 o / c->o.line * c->o.line, c->o.line, 0, now);
			if (!f) {
				loaded(c, l);   /* no request left: valid without a fill */
				continue;
			}
			c->fills++;
			mem_queue(c, f);
		}
		unpark(c, req->offset, req->len);
	} else if (req->issued_dev == c->mem) {
		/* A fill: its line is valid now. */
		struct line *l = find(c, req->offset / c->o.line);

		if (l && (l->flags & L_LOADING))
			loaded(c, l);
		unpark(c, req->offset, req->len);
	} else {
		/* Write-back done: lines not rewritten meanwhile are clean. */
		for (uint64_t o = req->offset / c->o.line * c->o.line; o < req->offset + req->len;
		     o += c->o.line) {
			struct line *l = find(c, o / c->o.line);

			if (!l || !(l->flags & L_WB))
				continue;
			l->flags &= (uint8_t)~L_WB;
			if (l->gen == l->wb_gen)
				l->dirty = 0;
			if (l->dirty && !l->on_dirty) {
				pol_list_add_tail(&c->dirty, &l->dlink);
				l->on_dirty = true;
			}
		}
		c->wb_now--;
	}
	pol_pool_put(&c->internal, req);
}

static void nv_tick(struct policy *pol)
{
}

static void nv_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct nv *c = pol->priv;
	uint64_t dirty = 0;

	for (struct policy_list *p = c->dirty.next; p != &c->dirty; p = p->next)
		dirty++;
	emit(ctx, "read_hits", (double)c->read_hits);
	emit(ctx, "read_misses", (double)c->read_misses);
	emit(ctx, "hit_bytes", (double)c->hit_bytes);
	emit(ctx, "bypass_bytes", (double)c->bypass_bytes);
	emit(ctx, "parked_reads", (double)c->parked_reads);
	emit(ctx, "readahead_bytes", (double)c->ra_bytes);
	emit(ctx, "readahead_cmds", (double)c->ra_cmds);
	emit(ctx, "writes_cached", (double)c->write_cached);
	emit(ctx, "write_cached_bytes", (double)c->write_cached_bytes);
	emit(ctx, "writes_through", (double)c->write_through);
	emit(ctx, "write_through_bytes", (double)c->write_through_bytes);
	emit(ctx, "writeback_bytes", (double)c->wb_bytes);
	emit(ctx, "writeback_cmds", (double)c->wb_cmds);
	emit(ctx, "evictions", (double)c->evictions);
	emit(ctx, "fills", (double)c->fills);
	emit(ctx, "dirty_lines", (double)dirty);
}

static void nv_fini(struct policy *pol)
{
	struct nv *c = pol->priv;

	if (!c)
		return;
	for (size_t i = 0; i < c->streams.cap; i++)
		free(c->streams.vals[i]);
	pol_map_free(&c->streams);
	pol_pool_free(&c->internal);
	pol_pool_free(&c->pieces);
	free(c->lines);
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
};
